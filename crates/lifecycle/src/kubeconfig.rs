//! Writing the workload cluster's kubeconfig where EKS Anywhere puts it,
//! `<dir>/<cluster>/<cluster>-eks-a-cluster.kubeconfig`, readable by its owner only, and never
//! over a different file unless asked.

use super::LifecycleError;
use std::{
    fs,
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

/// Writes `content` for `cluster` under `dir` with mode 0600.
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
    let outcome = match fs::read(&path) {
        Ok(old) if old == content.as_bytes() => return Ok((path, Written::Unchanged)),
        Ok(_) if !force => return Err(LifecycleError::KubeconfigFileExists { path }),
        Ok(_) => Written::Replaced,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Written::Created,
        Err(e) => return Err(failed(e)),
    };
    let parent = path.parent().unwrap_or(dir);
    fs::create_dir_all(parent).map_err(failed)?;
    // A new file beside the old one, renamed over it: a reader never sees half a kubeconfig. The
    // temporary file is created exclusively (O_EXCL, a fresh random name, mode 0600 from the
    // start), so an existing file or a symlink planted there is never written through.
    let mut file = tempfile::Builder::new()
        .prefix(".kubeconfig-")
        .tempfile_in(parent)
        .map_err(failed)?;
    file.write_all(content.as_bytes()).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(&path).map_err(|e| failed(e.error))?;
    Ok((path, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            .filter(|n| n.starts_with(".kubeconfig-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
