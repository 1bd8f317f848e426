//! Writing a credentials file: one profile per device, created with mode 0600, replaced
//! atomically, and never over a file this writer did not write unless the caller says so.
//!
//! "Did not write" is decided from the bytes: an existing file is ours when rendering its parsed
//! profiles gives back exactly its bytes (the header comment, the profiles in IP order, each with
//! both keys and `region = snow`, nothing else). A comment, another key, another order or a
//! profile without keys makes it a file a person wrote, and replacing it would lose that.

use crate::ini::{CredentialsFile, DeviceCredentials, SNOW_REGION};
use crate::input::{InputError, load_credentials};
use crate::limits::MAX_CREDENTIALS_BYTES;
use crate::secret::SecretString;
use snow_api::DeviceIp;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The first line of every file [`CredentialsWriter`] writes.
pub const WRITTEN_HEADER: &str =
    "# Written by snowctl: one profile per Snow device, for EKSA_AWS_CREDENTIALS_FILE.";

/// An access key: its id and its secret, both held as secrets (`Debug` prints `<redacted>`).
#[derive(Clone)]
pub struct AccessKey {
    id: SecretString,
    secret: SecretString,
}

impl AccessKey {
    /// An access key as IAM's `CreateAccessKey` returned it.
    pub fn new(id: SecretString, secret: SecretString) -> Self {
        AccessKey { id, secret }
    }

    /// Whether this key's id is `id` (to match it against `ListAccessKeys`).
    pub fn id_is(&self, id: &str) -> bool {
        self.id.expose_for_signing() == id
    }

    /// Whether `profile` holds this key (the same access key id).
    pub fn is_key_of(&self, profile: &DeviceCredentials) -> bool {
        profile.access_key_id_is(self.id.expose_for_signing())
    }
}

impl fmt::Debug for AccessKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessKey(<redacted>)")
    }
}

/// Writing the file failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The existing file is not one this writer wrote; replacing it would lose what is in it.
    #[error(
        "{path} exists and is not a file snowctl wrote (it has other content than one complete profile per device); refusing to overwrite it"
    )]
    Different {
        /// The file.
        path: String,
    },
    /// The path is a link, a FIFO, a device or a directory, not a regular file.
    #[error(
        "{path} is not a regular file (a link, FIFO, device or directory); snowctl writes a regular file there and replaces nothing else"
    )]
    NotAFile {
        /// The path.
        path: String,
    },
    /// The file changed on disk since it was read (another program, another run).
    #[error("{path} changed on disk while snowctl was updating it; not overwriting it")]
    Changed {
        /// The file.
        path: String,
    },
    /// The existing file could not be read.
    #[error(transparent)]
    Read(#[from] InputError),
    /// Writing or renaming failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A credentials file being written: the profiles it holds now and what is on disk.
///
/// [`CredentialsWriter::open`] reads the file if it exists; [`CredentialsWriter::set`] adds or
/// replaces one device's profile and writes the whole file at once (a temporary file in the same
/// directory, mode 0600, then a rename), so a crash leaves either the old or the new file.
pub struct CredentialsWriter {
    path: PathBuf,
    profiles: BTreeMap<DeviceIp, AccessKey>,
    /// The bytes on disk as this writer last saw or wrote them (`None`: no file).
    on_disk: Option<Zeroizing<Vec<u8>>>,
}

impl fmt::Debug for CredentialsWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CredentialsWriter")
            .field("path", &self.path)
            .field("devices", &self.profiles.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Whether `output` is the file `input` names, however either is spelled (relative, through a
/// link): a writer must not replace the root credentials file it was given to read. A path that
/// does not exist yet is no file, so not the same.
pub fn same_file(output: &Path, input: &Path) -> bool {
    match (std::fs::canonicalize(output), std::fs::canonicalize(input)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

impl CredentialsWriter {
    /// Opens `path` for writing. An absent file starts empty. An existing file is taken over with
    /// its profiles when this writer wrote it; any other file is [`WriteError::Different`],
    /// unless `overwrite`, in which case it starts empty and is replaced at the first write.
    pub fn open(path: &Path, overwrite: bool) -> Result<CredentialsWriter, WriteError> {
        let shown = path.display().to_string();
        let on_disk = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(WriteError::Io {
                    path: shown,
                    source,
                });
            }
            // A link, FIFO or device is not a file this writer wrote, and reading it could block
            // (a FIFO) or never end (/dev/zero); the rename would replace it, so it is refused
            // even with `overwrite`.
            Ok(meta) if !meta.file_type().is_file() => {
                return Err(WriteError::NotAFile { path: shown });
            }
            Ok(_) => Some(read_all(path)?.ok_or_else(|| WriteError::Io {
                path: shown.clone(),
                source: std::io::Error::other(format!(
                    "it is larger than {} KiB, more than any credentials file; remove it or choose another path",
                    MAX_CREDENTIALS_BYTES >> 10
                )),
            })?),
        };
        let mut writer = CredentialsWriter {
            path: path.to_owned(),
            profiles: BTreeMap::new(),
            on_disk,
        };
        let Some(bytes) = writer.on_disk.clone() else {
            return Ok(writer);
        };
        let (file, _) = load_credentials(path)?;
        let profiles = profiles_of(&file);
        match profiles {
            Some(profiles) if *render(&profiles) == *bytes => writer.profiles = profiles,
            _ if overwrite => {}
            _ => return Err(WriteError::Different { path: shown }),
        }
        Ok(writer)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key of `device` in the file, if it has a profile.
    pub fn key(&self, device: DeviceIp) -> Option<&AccessKey> {
        self.profiles.get(&device)
    }

    /// The devices with a profile, in IP order.
    pub fn devices(&self) -> impl Iterator<Item = DeviceIp> + '_ {
        self.profiles.keys().copied()
    }

    /// Sets `device`'s profile to `key` and writes the file.
    pub fn set(&mut self, device: DeviceIp, key: AccessKey) -> Result<(), WriteError> {
        let previous = self.profiles.insert(device, key);
        let result = self.write();
        if result.is_err() {
            // Keep the in-memory profiles equal to the file.
            match previous {
                Some(old) => self.profiles.insert(device, old),
                None => self.profiles.remove(&device),
            };
        }
        result
    }

    fn write(&mut self) -> Result<(), WriteError> {
        let shown = self.path.display().to_string();
        let io = |source| WriteError::Io {
            path: shown.clone(),
            source,
        };
        let bytes = render(&self.profiles);
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "credentials".to_owned());
        let temp = dir.join(format!(".{name}.snowctl-{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        let written = (|| {
            let mut file = create_private(&temp)?;
            file.write_all(&bytes)?;
            file.sync_all()
        })();
        if let Err(source) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(io(source));
        }
        let placed = match &self.on_disk {
            // No file yet: a hard link fails if one appeared meanwhile, where a rename would
            // replace it.
            None => std::fs::hard_link(&temp, &self.path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    WriteError::Changed {
                        path: shown.clone(),
                    }
                } else {
                    io(e)
                }
            }),
            Some(expected) => {
                // Only our own last version is replaced (a window between this read and the
                // rename remains; two snowctl runs on one file are not supported).
                match read_bounded(&self.path) {
                    Ok(Some(now)) if now == *expected => {
                        std::fs::rename(&temp, &self.path).map_err(io)
                    }
                    Ok(_) => Err(WriteError::Changed {
                        path: shown.clone(),
                    }),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        std::fs::hard_link(&temp, &self.path).map_err(io)
                    }
                    Err(e) => Err(io(e)),
                }
            }
        };
        let _ = std::fs::remove_file(&temp);
        placed?;
        self.on_disk = Some(bytes);
        Ok(())
    }
}

/// The file's bytes, or `None` when it is larger than [`MAX_CREDENTIALS_BYTES`] (so not one this
/// writer wrote).
fn read_all(path: &Path) -> Result<Option<Zeroizing<Vec<u8>>>, WriteError> {
    read_bounded(path).map_err(|source| WriteError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn read_bounded(path: &Path) -> std::io::Result<Option<Zeroizing<Vec<u8>>>> {
    use std::io::Read as _;
    let mut bytes = Zeroizing::new(Vec::new());
    std::fs::File::open(path)?
        .take(MAX_CREDENTIALS_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= MAX_CREDENTIALS_BYTES).then_some(bytes))
}

#[cfg(unix)]
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Every profile of `file` with both keys, or `None` when one lacks a key.
fn profiles_of(file: &CredentialsFile) -> Option<BTreeMap<DeviceIp, AccessKey>> {
    let mut profiles = BTreeMap::new();
    for device in file.devices() {
        let (id, secret) = device.keys()?;
        profiles.insert(device.ip(), AccessKey::new(id.clone(), secret.clone()));
    }
    Some(profiles)
}

/// The file's bytes: the header, then one profile per device in IP order.
fn render(profiles: &BTreeMap<DeviceIp, AccessKey>) -> Zeroizing<Vec<u8>> {
    let mut text = Zeroizing::new(String::with_capacity(64 + profiles.len() * 160));
    text.push_str(WRITTEN_HEADER);
    text.push('\n');
    for (ip, key) in profiles {
        text.push('\n');
        text.push_str(&format!("[{ip}]\n"));
        text.push_str("aws_access_key_id = ");
        text.push_str(key.id.expose_for_signing());
        text.push_str("\naws_secret_access_key = ");
        text.push_str(key.secret.expose_for_signing());
        text.push_str(&format!("\nregion = {SNOW_REGION}\n"));
    }
    Zeroizing::new(text.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_file_is_found_through_a_link_and_a_new_path_is_not() {
        use super::same_file;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("credentials");
        std::fs::write(&root, "[192.168.1.11]\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        assert!(same_file(&link, &root));
        assert!(same_file(&dir.path().join(".").join("credentials"), &root));
        assert!(!same_file(&dir.path().join("scoped"), &root));
    }

    use super::*;

    fn ip(s: &str) -> DeviceIp {
        s.parse().unwrap()
    }

    fn key(id: &str, secret: &str) -> AccessKey {
        AccessKey::new(
            SecretString::new(id.to_owned()),
            SecretString::new(secret.to_owned()),
        )
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn writes_one_profile_per_device_0600_and_takes_its_own_file_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scoped");
        let mut w = CredentialsWriter::open(&path, false).unwrap();
        w.set(ip("192.168.1.11"), key("AKID2", "secret2")).unwrap();
        w.set(ip("192.168.1.10"), key("AKID1", "secret1")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!(
                "{WRITTEN_HEADER}\n\n[192.168.1.10]\naws_access_key_id = AKID1\naws_secret_access_key = secret1\nregion = snow\n\n[192.168.1.11]\naws_access_key_id = AKID2\naws_secret_access_key = secret2\nregion = snow\n"
            )
        );
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
        // The file parses as a credentials file with both devices complete.
        let (file, findings) = load_credentials(&path).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        assert!(file.devices().iter().all(|d| d.is_complete()));
        // Reopened: its profiles are known; replacing one keeps the other.
        let mut again = CredentialsWriter::open(&path, false).unwrap();
        assert!(again.key(ip("192.168.1.10")).unwrap().id_is("AKID1"));
        again
            .set(ip("192.168.1.10"), key("AKID3", "secret3"))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("AKID3") && text.contains("AKID2") && !text.contains("AKID1"));
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_fifo_or_device_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "keep\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        for path in [link.as_path(), fifo.as_path(), Path::new("/dev/zero")] {
            for overwrite in [false, true] {
                let err = CredentialsWriter::open(path, overwrite).unwrap_err();
                assert!(matches!(err, WriteError::NotAFile { .. }), "{err}");
            }
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
        // A regular file past the bound is not read whole.
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_CREDENTIALS_BYTES + 1)
            .unwrap();
        let err = CredentialsWriter::open(&big, true).unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
    }

    #[test]
    fn a_file_a_person_wrote_is_never_replaced_unless_told() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials");
        let mine = "# my devices\n[192.168.1.10]\naws_access_key_id = AKID1\naws_secret_access_key = s\nregion = snow\n";
        std::fs::write(&path, mine).unwrap();
        let err = CredentialsWriter::open(&path, false).unwrap_err();
        assert!(matches!(err, WriteError::Different { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
        // Told to: it starts empty and replaces the file at the first write.
        let mut w = CredentialsWriter::open(&path, true).unwrap();
        assert!(w.key(ip("192.168.1.10")).is_none());
        w.set(ip("192.168.1.10"), key("AKID9", "s9")).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("AKID9"));
    }

    #[test]
    fn a_file_changed_behind_the_writer_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scoped");
        let mut w = CredentialsWriter::open(&path, false).unwrap();
        w.set(ip("192.168.1.10"), key("AKID1", "s1")).unwrap();
        std::fs::write(&path, "edited\n").unwrap();
        let err = w.set(ip("192.168.1.11"), key("AKID2", "s2")).unwrap_err();
        assert!(matches!(err, WriteError::Changed { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "edited\n");
        assert!(w.key(ip("192.168.1.11")).is_none());
        // A file that appeared before the first write is not replaced either.
        let other = dir.path().join("other");
        let mut w = CredentialsWriter::open(&other, false).unwrap();
        std::fs::write(&other, "mine\n").unwrap();
        assert!(matches!(
            w.set(ip("192.168.1.10"), key("AKID1", "s1")),
            Err(WriteError::Changed { .. })
        ));
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "mine\n");
    }

    #[test]
    fn keys_never_print() {
        let k = key("AKIDVISIBLE", "topsecret");
        assert_eq!(format!("{k:?}"), "AccessKey(<redacted>)");
        let dir = tempfile::tempdir().unwrap();
        let mut w = CredentialsWriter::open(&dir.path().join("f"), false).unwrap();
        w.set(ip("192.168.1.10"), k).unwrap();
        let shown = format!("{w:?}");
        assert!(
            !shown.contains("AKIDVISIBLE") && !shown.contains("topsecret"),
            "{shown}"
        );
    }
}
