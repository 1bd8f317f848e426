//! The one way the libraries write a file of their own (a workload kubeconfig, the kind bootstrap
//! cluster's files, a backup): readable by its owner only from the start, whole or not at all,
//! and never through a link.
//!
//! A file is written to a fresh temporary name in its directory (created exclusively, O_EXCL,
//! mode 0600) and renamed over its path: a symbolic link, a FIFO or a file planted at the path
//! is replaced, never written through, and a reader never sees half a file. The directories
//! made on the way are created one by one, and one that is there already must be a directory,
//! not a link to one: a link planted there would send the file somewhere else.

use std::{
    fs,
    io::{self, Read, Write},
    path::{Component, Path, PathBuf},
};

/// What is at a path before it is written.
#[derive(Debug, PartialEq, Eq)]
pub enum Existing {
    /// Nothing.
    Absent,
    /// A regular file (not a link) of at most the limit given, with these bytes.
    File(Vec<u8>),
    /// Something else: a link, a directory, a FIFO or device, a file over the limit. It is not
    /// read (a FIFO would block, a device never end).
    Other,
}

/// What is at `path`, read only when it is a regular file of at most `limit` bytes.
pub fn existing(path: &Path, limit: u64) -> io::Result<Existing> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Absent),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_file() || meta.len() > limit {
        return Ok(Existing::Other);
    }
    match read_bounded(path, limit) {
        Ok(bytes) => Ok(Existing::File(bytes)),
        // It grew between the look and the read.
        Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Ok(Existing::Other),
        Err(e) => Err(e),
    }
}

/// The bytes of the file at `path`, at most `limit` of them: a larger file is an error
/// ([`io::ErrorKind::FileTooLarge`]), never cut short. The one bounded reader of this crate.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it is larger than {limit} bytes, the most snowctl reads from it"),
        ));
    }
    Ok(bytes)
}

/// Makes `root` (which the caller chose, and may itself be a link) and the directories of
/// `relative` under it, and returns `root/relative`. `relative` must be plain names (no `..`, no root): an
/// error otherwise, as it is for a name that exists and is a link or not a directory.
pub fn make_dirs(root: &Path, relative: &Path) -> io::Result<PathBuf> {
    let parts = plain_parts(relative)?;
    if !root.as_os_str().is_empty() {
        fs::create_dir_all(root)?;
    }
    let mut dir = root.to_owned();
    for part in parts {
        dir.push(part);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.file_type().is_dir() => {}
            Ok(meta) => return Err(not_a_directory(&dir, meta.file_type().is_symlink())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(&dir) {
                Ok(()) => {}
                // Made meanwhile: use it only if it is a directory.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let meta = fs::symlink_metadata(&dir)?;
                    if !meta.file_type().is_dir() {
                        return Err(not_a_directory(&dir, meta.file_type().is_symlink()));
                    }
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Ok(dir)
}

/// Writes the file `relative` under `root` (see [`make_dirs`] for the directories), replacing
/// whatever is at its path.
pub fn write_under(
    root: &Path,
    relative: &Path,
    body: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<PathBuf> {
    let name = relative
        .file_name()
        .filter(|_| {
            matches!(
                relative.components().next_back(),
                Some(Component::Normal(_))
            )
        })
        .ok_or_else(|| not_plain(relative))?;
    let dir = make_dirs(root, relative.parent().unwrap_or(Path::new("")))?;
    let path = dir.join(name);
    replace(&path, body)?;
    Ok(path)
}

/// Writes `path` (its directory exists): a temporary file beside it, created exclusively with
/// mode 0600, filled by `body`, synced and renamed over `path`. On failure the temporary file is
/// removed and `path` is as it was.
pub fn replace(path: &Path, body: impl FnOnce(&mut fs::File) -> io::Result<()>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // tempfile creates with O_EXCL, a random name and mode 0600.
    let mut file = tempfile::Builder::new()
        .prefix(".snowctl-")
        .tempfile_in(dir)?;
    body(file.as_file_mut())?;
    file.as_file_mut().flush()?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The names of `relative`; an error for `..`, a root or a prefix.
fn plain_parts(relative: &Path) -> io::Result<Vec<&std::ffi::OsStr>> {
    relative
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(not_plain(relative)),
        })
        .collect()
}

fn not_plain(relative: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is not a relative path of plain names (no `..`, not absolute)",
            relative.display()
        ),
    )
}

fn not_a_directory(dir: &Path, link: bool) -> io::Error {
    let what = if link {
        "a symbolic link; snowctl does not write through a link it did not make: remove it"
    } else {
        "not a directory"
    };
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} is {what}", dir.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn write_text(root: &Path, relative: &str, text: &str) -> io::Result<PathBuf> {
        write_under(root, Path::new(relative), |f| f.write_all(text.as_bytes()))
    }

    #[test]
    fn writes_a_private_file_making_its_directories() {
        let root = tempfile::tempdir().unwrap();
        let path = write_text(root.path(), "a/b/c.yaml", "x: 1\n").unwrap();
        assert_eq!(path, root.path().join("a/b/c.yaml"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "x: 1\n");
        assert_eq!(mode(&path), 0o600);
        // Written again: replaced, still 0600, no temporary file left.
        write_text(root.path(), "a/b/c.yaml", "x: 2\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "x: 2\n");
        let names: Vec<_> = fs::read_dir(root.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["c.yaml"]);
    }

    #[test]
    fn a_link_at_the_file_is_replaced_not_written_through() {
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("outside");
        fs::write(&outside, "keep me\n").unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
        fs::create_dir(root.path().join("g")).unwrap();
        symlink(&outside, root.path().join("g/f")).unwrap();
        let path = write_text(root.path(), "g/f", "secret\n").unwrap();
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep me\n");
        assert_eq!(mode(&outside), 0o644, "the link's target keeps its mode");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
        assert_eq!(fs::read_to_string(&path).unwrap(), "secret\n");
    }

    #[test]
    fn a_linked_directory_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join("g")).unwrap();
        symlink(outside.path(), root.path().join("g/certs.d")).unwrap();
        let err = write_text(root.path(), "g/certs.d/r/hosts.toml", "login\n").unwrap_err();
        assert!(
            err.to_string().contains("g/certs.d is a symbolic link"),
            "{err}"
        );
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn paths_out_of_the_root_are_refused() {
        let root = tempfile::tempdir().unwrap();
        for bad in ["../x", "a/../../x", "/abs/x", "a/.."] {
            let err = write_text(root.path(), bad, "x").unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad}: {err}");
        }
    }

    #[test]
    fn only_a_regular_file_within_the_limit_is_read() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        assert_eq!(existing(&file, 10).unwrap(), Existing::Absent);
        fs::write(&file, "abc").unwrap();
        assert_eq!(
            existing(&file, 10).unwrap(),
            Existing::File(b"abc".to_vec())
        );
        assert_eq!(existing(&file, 2).unwrap(), Existing::Other);
        let link = root.path().join("l");
        symlink(&file, &link).unwrap();
        assert_eq!(existing(&link, 10).unwrap(), Existing::Other);
        assert_eq!(
            existing(Path::new("/dev/zero"), 10).unwrap(),
            Existing::Other
        );
    }
}
