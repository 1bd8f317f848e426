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
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(failed)?;
    }
    // A new file beside the old one, renamed over it: a reader never sees half a kubeconfig.
    let temp = path.with_extension("kubeconfig.tmp");
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&temp).map_err(failed)?;
    file.write_all(content.as_bytes()).map_err(failed)?;
    file.sync_all().map_err(failed)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&temp, fs::Permissions::from_mode(0o600)).map_err(failed)?;
    }
    fs::rename(&temp, &path).map_err(failed)?;
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
}
