//! The support bundle's file: a gzip-compressed tar of the files given, in their order, written
//! safely: mode 0600 from the start (it describes a cluster), to a temporary name created
//! exclusively beside the target (never following a link planted there), then linked or
//! renamed into place, so a reader never sees half a bundle and nothing is written through a
//! link. An existing file is never replaced unless asked, and a link or anything but a regular
//! file at the target, or a link as its directory, is always refused.

use crate::tar;
use flate2::{Compression, write::GzEncoder};
use std::{
    fs,
    io::{self, BufWriter, Write},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

/// Why the bundle's file was not written.
#[derive(Debug, thiserror::Error)]
pub enum SupportArchiveError {
    /// A file is there already, and replacing was not asked.
    #[error("{} exists, and replacing it was not asked: choose another file", path.display())]
    Exists {
        /// The target.
        path: PathBuf,
    },
    /// A link, a directory or a special file is there.
    #[error("{} is not a regular file (a link, a directory or a device); snowctl does not write through or over it: choose another file", path.display())]
    NotAFile {
        /// The target.
        path: PathBuf,
    },
    /// The directory the file would go into is a symbolic link.
    #[error("{} is a symbolic link; snowctl does not write through a link it did not make: give the directory it points to", path.display())]
    LinkedDirectory {
        /// The directory.
        path: PathBuf,
    },
    /// A file name is not fit for a tar header.
    #[error("the bundle's entry {0}")]
    Name(String),
    /// Writing failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file written.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// Writes `files` (relative paths and contents, in order) as a `.tar.gz` at `path`; its parent
/// directory is made when missing. Replaces a regular file there only with `replace`. Returns
/// the size written.
pub fn write(
    path: &Path,
    files: &[(String, Vec<u8>)],
    replace: bool,
) -> Result<u64, SupportArchiveError> {
    let io_err = |p: &Path| {
        let p = p.to_owned();
        move |source| SupportArchiveError::Io { path: p, source }
    };
    check_target(path, replace)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    // The directory itself must not be a link (a link planted at `./<cluster>` would send an
    // automatic bundle elsewhere); missing, it is made.
    match fs::symlink_metadata(&dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(SupportArchiveError::LinkedDirectory { path: dir });
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        }
        Err(e) => return Err(io_err(&dir)(e)),
    }
    let name = path
        .file_name()
        .ok_or_else(|| SupportArchiveError::NotAFile {
            path: path.to_owned(),
        })?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{}.{}.{nanos}.partial",
        name.to_string_lossy(),
        std::process::id()
    ));
    // create_new is O_CREAT|O_EXCL: a link planted at the name is not followed.
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .map_err(io_err(&temp))?;
    let written = fill(file, files).and_then(|size| {
        place(&temp, path, replace)?;
        Ok(size)
    });
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Refuses a target that is a link or not a regular file, and an existing one unless `replace`
/// (checked again by [`write`]; for callers that check before the work of making the files).
pub fn check_target(path: &Path, replace: bool) -> Result<(), SupportArchiveError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => Err(SupportArchiveError::NotAFile {
            path: path.to_owned(),
        }),
        Ok(_) if !replace => Err(SupportArchiveError::Exists {
            path: path.to_owned(),
        }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(SupportArchiveError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The tar.gz bytes into `file`, synced; its size.
fn fill(file: fs::File, files: &[(String, Vec<u8>)]) -> Result<u64, SupportArchiveError> {
    let temp_err = |source| SupportArchiveError::Io {
        path: PathBuf::from("the bundle's temporary file"),
        source,
    };
    let mut gz = GzEncoder::new(BufWriter::new(file), Compression::default());
    for (name, body) in files {
        let header =
            tar::file_header(name, body.len() as u64).map_err(SupportArchiveError::Name)?;
        gz.write_all(&header).map_err(temp_err)?;
        gz.write_all(body).map_err(temp_err)?;
        let pad = tar::padded(body.len() as u64) - body.len() as u64;
        gz.write_all(&vec![0u8; pad as usize]).map_err(temp_err)?;
    }
    // The end of a tar: two zero blocks.
    gz.write_all(&[0u8; 2 * tar::BLOCK as usize])
        .map_err(temp_err)?;
    let file = gz
        .finish()
        .map_err(temp_err)?
        .into_inner()
        .map_err(|e| temp_err(e.into_error()))?;
    file.sync_all().map_err(temp_err)?;
    file.metadata().map(|m| m.len()).map_err(temp_err)
}

/// Moves the temporary file to `path`: a hard link (which fails if anything appeared there
/// meanwhile) unless replacing, then a rename.
fn place(temp: &Path, path: &Path, replace: bool) -> Result<(), SupportArchiveError> {
    let err = |source| SupportArchiveError::Io {
        path: path.to_owned(),
        source,
    };
    if replace {
        // Checked again just before: a link that appeared is replaced by the rename, never
        // written through.
        check_target(path, true)?;
        return fs::rename(temp, path).map_err(err);
    }
    match fs::hard_link(temp, path) {
        Ok(()) => fs::remove_file(temp).map_err(err),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(SupportArchiveError::Exists {
            path: path.to_owned(),
        }),
        Err(e) => Err(err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn files() -> Vec<(String, Vec<u8>)> {
        vec![
            ("summary.txt".into(), b"hello\n".to_vec()),
            ("a/b.json".into(), b"{}".to_vec()),
        ]
    }

    fn untar(path: &Path) -> String {
        let out = std::process::Command::new("tar")
            .arg("-tzvf")
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn gnu_tar_reads_the_bundle_in_order_and_it_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/b.tar.gz");
        write(&path, &files(), false).unwrap();
        let listing = untar(&path);
        let names: Vec<&str> = listing
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .collect();
        assert_eq!(names, ["summary.txt", "a/b.json"], "{listing}");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let left: Vec<_> = fs::read_dir(dir.path().join("new")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
    }

    #[test]
    fn an_existing_file_is_kept_unless_replacing_and_a_link_always_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.tar.gz");
        fs::write(&path, "mine").unwrap();
        let err = write(&path, &files(), false).unwrap_err();
        assert!(matches!(err, SupportArchiveError::Exists { .. }), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "mine");
        write(&path, &files(), true).unwrap();
        assert!(untar(&path).contains("summary.txt"));
        let target = dir.path().join("target");
        fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link.tar.gz");
        symlink(&target, &link).unwrap();
        for replace in [false, true] {
            let err = write(&link, &files(), replace).unwrap_err();
            assert!(matches!(err, SupportArchiveError::NotAFile { .. }), "{err}");
        }
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
        // A dangling link is refused as well: it would send the file elsewhere.
        let dangling = dir.path().join("dangling.tar.gz");
        symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(write(&dangling, &files(), false).is_err());
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn a_linked_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        symlink(elsewhere.path(), dir.path().join("edge")).unwrap();
        let err = write(&dir.path().join("edge/b.tar.gz"), &files(), false).unwrap_err();
        assert!(
            matches!(err, SupportArchiveError::LinkedDirectory { .. }),
            "{err}"
        );
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}
