//! EKS Anywhere's default SSH key for machine configs with an empty `sshKeyName`: one RSA-4096
//! key pair per cluster, written as `<dir>/<cluster>/eks-a-id_rsa` and `eks-a-id_rsa.pub`
//! (mode 0600, created exclusively, never overwritten), named `eksa-default-<cluster>-<uuid4>`.
//!
//! The name is recorded in the cluster's inventory ConfigMap (and as the comment of the public
//! key line), so a re-run or an upgrade reuses the name and the files instead of making a second
//! key. Importing the key on the devices is `snow_validate::chores::import_default_key`.

use super::{Event, Inventory, LifecycleError, Management};
use snow_api::ClusterSpec;
use snow_credentials::SshKeyPair;
use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
};

/// The private key's file name (EKS Anywhere's).
pub const PRIVATE_KEY_FILE: &str = "eks-a-id_rsa";
/// The public key's file name.
pub const PUBLIC_KEY_FILE: &str = "eks-a-id_rsa.pub";
/// The largest public key file read back (an RSA-4096 line is under 1 KiB).
const MAX_PUBLIC_KEY_BYTES: u64 = 16 * 1024;

/// The default key of a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultKey {
    /// The key pair name on the devices and in the machine templates.
    pub name: String,
    /// The private key file.
    pub private_key: PathBuf,
    /// The public key's `authorized_keys` line (no newline); `None` when the files are not in
    /// this directory (the name came from the inventory: the devices should have it already).
    pub public_key: Option<String>,
    /// Whether this run generated the key pair.
    pub generated: bool,
}

/// Whether a machine config of `spec` has an empty `sshKeyName`.
pub fn needs_default_key(spec: &ClusterSpec) -> bool {
    spec.machine_configs.values().any(|m| {
        m.spec
            .ssh_key_name
            .as_deref()
            .is_none_or(|k| k.trim().is_empty())
    })
}

/// Where the two files of `cluster` go under `dir`: `(private, public)`.
pub fn paths(dir: &Path, cluster: &str) -> (PathBuf, PathBuf) {
    let base = dir.join(cluster);
    (base.join(PRIVATE_KEY_FILE), base.join(PUBLIC_KEY_FILE))
}

/// The default key of `spec`'s cluster, or `None` when every machine config names its key:
/// the name recorded in the inventory, else the one in the public key file's comment, else a
/// new `eksa-default-<cluster>-<uuid4>`; the files in `<dir>/<cluster>/` are reused when both
/// are there, generated when neither is (unless the inventory has a name: a new pair would not
/// match the devices' copies). Reports where the private key is and how to use it.
pub async fn default_key(
    mgmt: &Management,
    spec: &ClusterSpec,
    dir: &Path,
    on_event: &mut dyn FnMut(Event),
) -> Result<Option<DefaultKey>, LifecycleError> {
    if !needs_default_key(spec) {
        return Ok(None);
    }
    let cluster = spec.name();
    let recorded = Inventory::load(mgmt, cluster)
        .await?
        .and_then(|i| i.ssh_key_name);
    let key = files(dir, cluster, recorded)?;
    on_event(Event::Note(usage_line(&key)));
    Ok(Some(key))
}

/// The default key pair name the inventory records for `cluster`, if any (a dry run's answer:
/// no files, no devices).
pub async fn recorded_name(
    mgmt: &Management,
    cluster: &str,
) -> Result<Option<String>, LifecycleError> {
    Ok(Inventory::load(mgmt, cluster)
        .await?
        .and_then(|i| i.ssh_key_name))
}

/// What a render or dry run says about the key a create would use, when one is needed.
pub fn dry_run_note(spec: &ClusterSpec) -> Option<String> {
    let empty: Vec<&str> = spec
        .machine_configs
        .iter()
        .filter(|(_, m)| {
            m.spec
                .ssh_key_name
                .as_deref()
                .is_none_or(|k| k.trim().is_empty())
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if empty.is_empty() {
        return None;
    }
    let cluster = spec.name();
    Some(format!(
        "sshKeyName is empty in SnowMachineConfig {}: rendered empty here. create uses the key pair name recorded in the inventory ConfigMap eksa-system/{} if there is one, else eksa-default-{cluster}-<uuid4>; it reuses ./{cluster}/{PRIVATE_KEY_FILE} and {PUBLIC_KEY_FILE}, or generates an RSA-4096 pair there, and imports it on each of those machine configs' devices that lacks it",
        empty.join(", "),
        Inventory::name_for(cluster),
    ))
}

/// [`default_key`] without the management cluster: `recorded` is the inventory's name.
pub fn files(
    dir: &Path,
    cluster: &str,
    recorded: Option<String>,
) -> Result<DefaultKey, LifecycleError> {
    let (private, public) = paths(dir, cluster);
    let exists = |p: &Path| fs::symlink_metadata(p).is_ok();
    match (exists(&private), exists(&public)) {
        (true, true) => {
            let line = read_public(&public)?;
            let from_file = line
                .split_whitespace()
                .nth(2)
                .filter(|c| c.starts_with(&format!("eksa-default-{cluster}-")))
                .map(str::to_owned);
            let name = match recorded.or(from_file) {
                Some(name) => name,
                None => new_name(cluster, &private)?,
            };
            Ok(DefaultKey {
                name,
                private_key: private,
                public_key: Some(line),
                generated: false,
            })
        }
        (false, false) => match recorded {
            Some(name) => Ok(DefaultKey {
                name,
                private_key: private,
                public_key: None,
                generated: false,
            }),
            None => generate(cluster, &private, &public),
        },
        (true, false) | (false, true) => {
            let (there, gone) = if exists(&private) {
                (&private, &public)
            } else {
                (&public, &private)
            };
            Err(LifecycleError::Write {
                path: gone.clone(),
                reason: format!(
                    "{} exists without it; snowctl never overwrites a key file: restore {}, or remove {} to generate a new key pair",
                    there.display(),
                    gone.display(),
                    there.display()
                ),
            })
        }
    }
}

fn new_name(cluster: &str, path: &Path) -> Result<String, LifecycleError> {
    snow_credentials::default_key_name(cluster).map_err(|e| LifecycleError::Write {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

fn generate(cluster: &str, private: &Path, public: &Path) -> Result<DefaultKey, LifecycleError> {
    let name = new_name(cluster, private)?;
    let failed = |path: &Path, e: std::io::Error| LifecycleError::Write {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let pair = SshKeyPair::generate_rsa4096(&name).map_err(|e| LifecycleError::Write {
        path: private.to_owned(),
        reason: e.to_string(),
    })?;
    if let Some(parent) = private.parent() {
        fs::create_dir_all(parent).map_err(|e| failed(parent, e))?;
    }
    let mut file = create_exclusive(private).map_err(|e| failed(private, e))?;
    pair.write_private_pem(&mut file)
        .and_then(|()| file.sync_all())
        .map_err(|e| failed(private, e))?;
    let mut file = create_exclusive(public).map_err(|e| failed(public, e))?;
    file.write_all(format!("{}\n", pair.public_line()).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| failed(public, e))?;
    Ok(DefaultKey {
        name,
        private_key: private.to_owned(),
        public_key: Some(pair.public_line().to_owned()),
        generated: true,
    })
}

/// A new file, mode 0600 from the start; an existing file or symlink is an error (O_EXCL).
fn create_exclusive(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)
}

fn read_public(path: &Path) -> Result<String, LifecycleError> {
    let failed = |reason: String| LifecycleError::Read {
        path: path.to_owned(),
        reason,
    };
    // A longer file is refused, not cut: a cut key line could still look like one.
    let bytes = crate::files::read_bounded(path, MAX_PUBLIC_KEY_BYTES)
        .map_err(|e| failed(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| failed("it is not UTF-8 text".into()))?;
    let line = text.trim();
    if !line.starts_with("ssh-rsa ") || line.lines().count() != 1 {
        return Err(failed(
            "it is not one `ssh-rsa …` line as snowctl writes it; restore it, or remove both key files to generate a new pair".into(),
        ));
    }
    Ok(line.to_owned())
}

/// EKS Anywhere's line after generating the key, or where the kept key is.
fn usage_line(key: &DefaultKey) -> String {
    let path = key.private_key.display();
    let how =
        format!("Use 'ssh -i {path} <username>@<Node-IP-Address>' to login to your cluster node");
    match (key.generated, &key.public_key) {
        (true, _) => format!("Private key saved to {path}. {how}"),
        (false, Some(_)) => format!(
            "Using the key pair {} from an earlier run: private key {path}. {how}",
            key.name
        ),
        (false, None) => format!(
            "Using the key pair {} recorded for the cluster; its private key is not in this directory ({path})",
            key.name
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn one_pair_per_cluster_0600_reused_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let first = files(dir.path(), "edge", None).unwrap();
        assert!(first.generated && first.name.starts_with("eksa-default-edge-"));
        assert!(usage_line(&first).starts_with(&format!(
            "Private key saved to {}. Use 'ssh -i {} <username>@<Node-IP-Address>' to login to your cluster node",
            first.private_key.display(),
            first.private_key.display()
        )));
        let (private, public) = paths(dir.path(), "edge");
        for p in [&private, &public] {
            assert_eq!(fs::metadata(p).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let pem = fs::read(&private).unwrap();
        // A re-run (even before the inventory recorded the name) reuses the files and the name.
        let again = files(dir.path(), "edge", None).unwrap();
        assert_eq!(
            (again.name.as_str(), again.generated),
            (first.name.as_str(), false)
        );
        assert_eq!(again.public_key, first.public_key);
        // The inventory's name wins; the files are still not rewritten.
        let recorded = files(dir.path(), "edge", Some("eksa-default-edge-old".into())).unwrap();
        assert_eq!(recorded.name, "eksa-default-edge-old");
        assert_eq!(fs::read(&private).unwrap(), pem);
        // One file without the other is refused, not regenerated over.
        fs::remove_file(&public).unwrap();
        let err = files(dir.path(), "edge", None).unwrap_err().to_string();
        assert!(err.contains("never overwrites"), "{err}");
        assert_eq!(fs::read(&private).unwrap(), pem);
    }

    /// A public key file past the limit is refused: read cut at the limit, its first line would
    /// have passed for a key.
    #[test]
    fn a_public_key_file_past_the_limit_is_refused_not_cut() {
        let dir = tempfile::tempdir().unwrap();
        let first = files(dir.path(), "edge", None).unwrap();
        let (_, public) = paths(dir.path(), "edge");
        let line = first.public_key.clone().unwrap();
        let long = format!("{line}{}", "A".repeat(MAX_PUBLIC_KEY_BYTES as usize));
        fs::write(&public, long).unwrap();
        let err = files(dir.path(), "edge", None).unwrap_err();
        assert!(
            matches!(&err, LifecycleError::Read { path, .. } if *path == public),
            "{err:?}"
        );
        assert!(err.to_string().contains("larger than 16384 bytes"), "{err}");
    }

    #[test]
    fn a_recorded_name_without_files_generates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let key = files(dir.path(), "edge", Some("eksa-default-edge-1".into())).unwrap();
        assert_eq!(key.public_key, None);
        assert!(!dir.path().join("edge").exists());
    }
}
