//! The little of the tar format the archives need: writing ustar headers (base-256 sizes past
//! 8 GiB, as GNU tar and Go's archive/tar read them), and scanning an archive's headers without
//! reading its data (ustar prefixes, PAX `path`/`size` records, GNU long names, links), so an
//! entry can be read later at its offset.

use std::{fs::File, os::unix::fs::FileExt};

/// A tar block.
pub(crate) const BLOCK: u64 = 512;

/// `size` rounded up to whole blocks.
pub(crate) fn padded(size: u64) -> u64 {
    size.div_ceil(BLOCK) * BLOCK
}

/// The largest size the 11 octal digits of a ustar header hold.
const OCTAL_SIZE_MAX: u64 = 0o77_777_777_777;

fn put_octal(field: &mut [u8], value: u64) {
    let width = field.len() - 1;
    let text = format!("{value:0width$o}");
    field[..width].copy_from_slice(&text.as_bytes()[text.len() - width..]);
    field[width] = 0;
}

/// A regular-file header for `name` of `size` bytes (mode 0644, owner 0, mtime 0 so that the
/// same content gives the same archive). Names longer than 100 bytes are split into the ustar
/// prefix; a name that does not fit is refused.
pub(crate) fn file_header(name: &str, size: u64) -> Result<[u8; 512], String> {
    header(name, size, 0o644, EntryType::File)
}

/// What a written header describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryType {
    /// A regular file of the header's size.
    File,
    /// A directory (its size 0; its name should end in `/`).
    Dir,
}

/// A header for `name` of `size` bytes with permission bits `mode`, owner 0:0 and mtime 0, as
/// [`file_header`] (an image layer's files and directories).
pub(crate) fn header(
    name: &str,
    size: u64,
    mode: u32,
    kind: EntryType,
) -> Result<[u8; 512], String> {
    let mut h = [0u8; 512];
    let bytes = name.as_bytes();
    if bytes.len() <= 100 {
        h[..bytes.len()].copy_from_slice(bytes);
    } else {
        let split = (0..bytes.len())
            .rev()
            .find(|&i| bytes[i] == b'/' && i <= 155 && bytes.len() - i - 1 <= 100)
            .ok_or_else(|| format!("the archive path `{name}` is too long for a tar header"))?;
        h[345..345 + split].copy_from_slice(&bytes[..split]);
        let rest = &bytes[split + 1..];
        h[..rest.len()].copy_from_slice(rest);
    }
    put_octal(&mut h[100..108], u64::from(mode & 0o7777));
    put_octal(&mut h[108..116], 0);
    put_octal(&mut h[116..124], 0);
    if size <= OCTAL_SIZE_MAX {
        put_octal(&mut h[124..136], size);
    } else {
        // GNU base-256: the top bit of the first byte set, the number big-endian.
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    put_octal(&mut h[136..148], 0);
    h[156] = match kind {
        EntryType::File => b'0',
        EntryType::Dir => b'5',
    };
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    set_checksum(&mut h);
    Ok(h)
}

fn set_checksum(h: &mut [u8; 512]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    let text = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(text.as_bytes());
}

fn checksum_ok(h: &[u8; 512]) -> bool {
    let Some(stored) = parse_octal(&h[148..156]) else {
        return false;
    };
    let mut unsigned: u64 = 0;
    let mut signed: i64 = 0;
    for (i, &b) in h.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { b };
        unsigned += u64::from(b);
        signed += i64::from(b as i8);
    }
    stored == unsigned || i64::try_from(stored).ok() == Some(signed)
}

fn parse_octal(field: &[u8]) -> Option<u64> {
    let text: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|&b| b == b' ' || b == 0)
        .take_while(|&b| b != b' ' && b != 0)
        .collect();
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(std::str::from_utf8(&text).ok()?, 8).ok()
}

fn parse_number(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        if field[0] & 0x40 != 0 {
            return None; // negative
        }
        let mut value: u64 = u64::from(field[0] & 0x3f);
        for &b in &field[1..] {
            value = value.checked_mul(256)?.checked_add(u64::from(b))?;
        }
        return Some(value);
    }
    parse_octal(field)
}

fn cstr(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// `./a/b` and `a//b` → `a/b`.
pub(crate) fn normalize(name: &str) -> String {
    name.split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A symbolic or hard link to this archive path (already resolved against the entry's
    /// directory for a symbolic link).
    Link(String),
    /// A directory or anything else without content of its own.
    Other,
}

/// One entry of a scanned archive.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The path, normalized.
    pub(crate) name: String,
    /// Where its (first) header starts, extension headers included.
    pub(crate) header_offset: u64,
    /// Where its data starts.
    pub(crate) offset: u64,
    /// Its data size.
    pub(crate) size: u64,
    pub(crate) kind: Kind,
}

/// How a scan ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum End {
    /// The two zero blocks that end an archive, at this offset.
    Marker(u64),
    /// The file ended at a block boundary without the end marker.
    Eof(u64),
    /// An entry's header or data goes past the end of the file.
    Truncated {
        /// Where the entry starts.
        header_offset: u64,
        /// The entry, when its header could be read.
        name: Option<String>,
        /// The bytes the entry needs (header and data) from its start.
        needed: u64,
        /// The file's length.
        length: u64,
    },
    /// A block that is not a tar header (bad checksum or magic).
    BadHeader(u64),
    /// The entry at this offset would be one more than the most asked for.
    TooMany(u64),
}

/// The entries of an archive and how the scan ended.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    pub(crate) entries: Vec<Entry>,
    pub(crate) end: End,
}

/// The most bytes of a PAX or GNU long-name extension read.
const EXTENSION_MAX: u64 = 1 << 20;

fn pax_records(data: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let Some(space) = rest.iter().position(|&b| b == b' ') else {
            break;
        };
        let Some(len) = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|t| t.parse::<usize>().ok())
        else {
            break;
        };
        if len <= space || len > rest.len() {
            break;
        }
        let record = &rest[space + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(eq) = record.iter().position(|&b| b == b'=') {
            out.push((
                String::from_utf8_lossy(&record[..eq]).into_owned(),
                String::from_utf8_lossy(&record[eq + 1..]).into_owned(),
            ));
        }
        rest = &rest[len..];
    }
    out
}

/// Reads every header of the archive in `file` (of `length` bytes), seeking over the data; stops
/// before entry `max_entries + 1` ([`End::TooMany`]).
pub(crate) fn scan(file: &File, length: u64, max_entries: usize) -> std::io::Result<Scan> {
    let mut entries = Vec::new();
    let mut offset = 0u64;
    let mut long_name: Option<String> = None;
    let mut pax: Vec<(String, String)> = Vec::new();
    let mut start: Option<u64> = None;
    let end = loop {
        if offset == length {
            break End::Eof(offset);
        }
        if offset + BLOCK > length {
            break End::Truncated {
                header_offset: start.unwrap_or(offset),
                name: None,
                needed: BLOCK,
                length,
            };
        }
        let mut h = [0u8; 512];
        file.read_exact_at(&mut h, offset)?;
        if h.iter().all(|&b| b == 0) {
            break End::Marker(offset);
        }
        if !checksum_ok(&h) {
            break End::BadHeader(offset);
        }
        let header_offset = start.unwrap_or(offset);
        let pax_size = pax
            .iter()
            .rev()
            .find(|(k, _)| k == "size")
            .and_then(|(_, v)| v.parse::<u64>().ok());
        let Some(size) = pax_size.or_else(|| parse_number(&h[124..136])) else {
            break End::BadHeader(offset);
        };
        let kind_flag = h[156];
        let mut name = cstr(&h[..100]);
        // POSIX ustar has a name prefix; old GNU headers ("ustar  ") keep times there.
        if &h[257..263] == b"ustar\0" {
            let prefix = cstr(&h[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        if let Some(long) = long_name.take() {
            name = long;
        }
        if let Some((_, path)) = pax.iter().rev().find(|(k, _)| k == "path") {
            name = path.clone();
        }
        let data = offset + BLOCK;
        let next = data.saturating_add(padded(size));
        if data.saturating_add(size) > length {
            break End::Truncated {
                header_offset,
                name: Some(normalize(&name)),
                needed: data.saturating_add(size) - header_offset,
                length,
            };
        }
        match kind_flag {
            b'x' | b'L' => {
                if size > EXTENSION_MAX {
                    break End::BadHeader(offset);
                }
                let mut buf = vec![0u8; usize::try_from(size).unwrap_or(0)];
                file.read_exact_at(&mut buf, data)?;
                if kind_flag == b'x' {
                    pax = pax_records(&buf);
                } else {
                    long_name = Some(cstr(&buf));
                }
                start.get_or_insert(offset);
                offset = next;
                continue;
            }
            b'g' | b'K' => {
                start.get_or_insert(offset);
                offset = next;
                continue;
            }
            _ => {}
        }
        let link = || {
            let mut target = cstr(&h[157..257]);
            if let Some((_, path)) = pax.iter().rev().find(|(k, _)| k == "linkpath") {
                target = path.clone();
            }
            target
        };
        if entries.len() == max_entries {
            break End::TooMany(header_offset);
        }
        let kind = match kind_flag {
            b'0' | 0 | b'7' => Kind::File,
            b'1' => Kind::Link(normalize(&link())),
            b'2' => {
                let target = link();
                let dir = normalize(&name);
                let dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
                Kind::Link(resolve(dir, &target))
            }
            _ => Kind::Other,
        };
        entries.push(Entry {
            name: normalize(&name),
            header_offset,
            offset: data,
            size,
            kind,
        });
        pax.clear();
        start = None;
        offset = next;
    };
    Ok(Scan { entries, end })
}

/// A symbolic link's target from the directory `dir`, as an archive path.
fn resolve(dir: &str, target: &str) -> String {
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(entries: &[(&str, &[u8])]) -> tempfile_like::Temp {
        let mut bytes = Vec::new();
        for (name, data) in entries {
            bytes.extend_from_slice(&file_header(name, data.len() as u64).unwrap());
            bytes.extend_from_slice(data);
            bytes.resize(padded(bytes.len() as u64) as usize, 0);
        }
        bytes.extend_from_slice(&[0u8; 1024]);
        tempfile_like::Temp::with(&bytes)
    }

    /// A file in the system temp directory, removed on drop (no dev-dependency for it).
    mod tempfile_like {
        pub(super) struct Temp(pub(super) std::path::PathBuf);
        impl Temp {
            pub(super) fn with(bytes: &[u8]) -> Temp {
                static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let path = std::env::temp_dir().join(format!(
                    "snow-images-tar-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                ));
                std::fs::write(&path, bytes).unwrap();
                Temp(path)
            }
        }
        impl Drop for Temp {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

    #[test]
    fn headers_round_trip_and_long_names_use_the_prefix() {
        let long = format!("snowctl/manifests/{}/file.yaml", "d".repeat(120));
        let t = archive(&[("oci-layout", b"{}"), (&long, b"abc"), ("x", b"")]);
        let file = File::open(&t.0).unwrap();
        let len = file.metadata().unwrap().len();
        let scan = scan(&file, len, 10).unwrap();
        let names: Vec<&str> = scan.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["oci-layout", long.as_str(), "x"]);
        assert_eq!(scan.entries[1].size, 3);
        assert_eq!(scan.entries[1].offset, 3 * BLOCK);
        assert_eq!(scan.end, End::Marker(5 * BLOCK));
        assert!(file_header(&"n".repeat(300), 1).is_err());
    }

    #[test]
    fn big_sizes_are_base_256() {
        let h = file_header("big", 20 << 30).unwrap();
        assert_eq!(h[124], 0x80);
        assert_eq!(parse_number(&h[124..136]), Some(20 << 30));
        assert!(checksum_ok(&h));
        let small = file_header("small", 0o777).unwrap();
        assert_eq!(&small[124..136], b"00000000777\0");
    }

    #[test]
    fn truncation_bad_headers_and_links_are_reported() {
        let t = archive(&[("a", &[7u8; 600])]);
        let bytes = std::fs::read(&t.0).unwrap();
        let cut = tempfile_like::Temp::with(&bytes[..900]);
        let file = File::open(&cut.0).unwrap();
        let scan_cut = scan(&file, 900, 10).unwrap();
        assert!(
            matches!(scan_cut.end, End::Truncated { name: Some(ref n), needed: 1112, length: 900, .. } if n == "a")
        );
        let junk = tempfile_like::Temp::with(&[b'x'; 2048]);
        let file = File::open(&junk.0).unwrap();
        assert_eq!(scan(&file, 2048, 10).unwrap().end, End::BadHeader(0));
        assert_eq!(resolve("abc", "../def/layer.tar"), "def/layer.tar");
        assert_eq!(normalize("./blobs//sha256/x"), "blobs/sha256/x");
        let pax = b"28 path=some/long/name/here\n".to_vec();
        assert_eq!(
            pax_records(&pax),
            [("path".into(), "some/long/name/here".into())]
        );
    }

    #[test]
    fn entries_past_the_most_asked_for_stop_the_scan() {
        let t = archive(&[("a", b"1"), ("b", b"2"), ("c", b"3")]);
        let file = File::open(&t.0).unwrap();
        let len = file.metadata().unwrap().len();
        let stopped = scan(&file, len, 2).unwrap();
        assert_eq!(stopped.entries.len(), 2);
        assert_eq!(stopped.end, End::TooMany(4 * BLOCK));
        assert_eq!(scan(&file, len, 3).unwrap().end, End::Marker(6 * BLOCK));
    }
}
