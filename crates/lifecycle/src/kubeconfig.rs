//! Writing the workload cluster's kubeconfig where EKS Anywhere puts it,
//! `<dir>/<cluster>/<cluster>-eks-a-cluster.kubeconfig`, readable by its owner only, and never
//! over a different file unless asked.

use super::LifecycleError;
use crate::files::{self, Existing};
use std::{
    io::Write,
    path::{Path, PathBuf},
};

/// What happened to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// It did not exist.
    Created,
    /// It already held this kubeconfig.
    Unchanged,
    /// It held another one and `force` replaced it.
    Replaced,
}

/// The file for `cluster` under `dir`.
pub fn path_for(dir: &Path, cluster: &str) -> PathBuf {
    dir.join(cluster)
        .join(format!("{cluster}-eks-a-cluster.kubeconfig"))
}

/// The most bytes of an existing kubeconfig file read to compare it with the new one: far above
/// any kubeconfig Cluster API publishes (a few KiB); a larger file is a different file.
const MAX_EXISTING_BYTES: u64 = 1 << 20;

/// Writes `content` for `cluster` under `dir` with mode 0600 (through [`crate::files`]: a link or
/// FIFO planted at the path is replaced, never written through or read).
pub fn write(
    dir: &Path,
    cluster: &str,
    content: &str,
    force: bool,
) -> Result<(PathBuf, Written), LifecycleError> {
    let path = path_for(dir, cluster);
    let failed = |e: std::io::Error| LifecycleError::Write {
        path: path.clone(),
        reason: e.to_string(),
    };
    let outcome = match files::existing(&path, MAX_EXISTING_BYTES).map_err(failed)? {
        Existing::File(old) if old == content.as_bytes() => {
            return Ok((path, Written::Unchanged));
        }
        Existing::Absent => Written::Created,
        _ if !force => return Err(LifecycleError::KubeconfigFileExists { path }),
        _ => Written::Replaced,
    };
    let relative = Path::new(cluster).join(path.file_name().unwrap_or_default());
    files::write_under(dir, &relative, |f| f.write_all(content.as_bytes())).map_err(failed)?;
    Ok((path, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn writes_once_keeps_a_different_file_and_replaces_it_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let (path, w) = write(dir.path(), "edge", "a: 1\n", false).unwrap();
        assert_eq!(w, Written::Created);
        assert_eq!(path, dir.path().join("edge/edge-eks-a-cluster.kubeconfig"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(
            write(dir.path(), "edge", "a: 1\n", false).unwrap().1,
            Written::Unchanged
        );
        assert!(matches!(
            write(dir.path(), "edge", "b: 2\n", false),
            Err(LifecycleError::KubeconfigFileExists { .. })
        ));
        assert_eq!(fs::read_to_string(&path).unwrap(), "a: 1\n");
        assert_eq!(
            write(dir.path(), "edge", "b: 2\n", true).unwrap().1,
            Written::Replaced
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "b: 2\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_link_at_the_path_is_not_read_and_is_replaced_only_with_force() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("edge")).unwrap();
        let path = path_for(dir.path(), "edge");
        // Reading a FIFO blocks until a writer comes: it must not be opened.
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success());
        assert!(matches!(
            write(dir.path(), "edge", "a: 1\n", false),
            Err(LifecycleError::KubeconfigFileExists { .. })
        ));
        assert_eq!(
            write(dir.path(), "edge", "a: 1\n", true).unwrap().1,
            Written::Replaced
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "a: 1\n");
        // A link to a file elsewhere: that file is kept, the link replaced.
        let target = dir.path().join("elsewhere");
        fs::write(&target, "keep me\n").unwrap();
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert_eq!(
            write(dir.path(), "edge", "b: 2\n", true).unwrap().1,
            Written::Replaced
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_file_or_symlink_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, "keep me\n").unwrap();
        fs::create_dir_all(dir.path().join("edge")).unwrap();
        // The temporary name an older snowctl used, as a symlink to another file.
        let planted = dir.path().join("edge/edge-eks-a-cluster.kubeconfig.tmp");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let (path, _) = write(dir.path(), "edge", "secret: 1\n", false).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
        assert_eq!(fs::read_to_string(&path).unwrap(), "secret: 1\n");
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("edge"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".snowctl-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
