//! The serving certificate: `tls.crt` (the chain, PEM) and `tls.key` (PEM) of a directory, read
//! again at the first handshake after either file changes, since cert-manager renews the Secret
//! it mounts there (controller-runtime's certwatcher does the same job).

use rustls::{crypto::CryptoProvider, server::ClientHello, sign::CertifiedKey};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

/// The certificate file in the directory.
pub(super) const CERT_FILE: &str = "tls.crt";
/// The key file in the directory.
pub(super) const KEY_FILE: &str = "tls.key";
/// The most bytes read of either file (a chain is a few KiB).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// What identifies a version of the two files: length, modification time and inode of each
/// (a Secret volume swaps a symbolic link, which changes the inode).
type Stamp = [(u64, Option<SystemTime>, u64); 2];
/// The stamp of files that cannot be looked at.
const UNREADABLE: Stamp = [(0, None, 0); 2];

/// Why the certificate cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct CertificateError {
    /// The file (or directory).
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

fn stamp(dir: &Path) -> Result<Stamp, CertificateError> {
    let one = |name: &str| {
        let path = dir.join(name);
        std::fs::metadata(&path)
            .map(|m| {
                use std::os::unix::fs::MetadataExt as _;
                (m.len(), m.modified().ok(), m.ino())
            })
            .map_err(|e| CertificateError {
                path,
                reason: e.to_string(),
            })
    };
    Ok([one(CERT_FILE)?, one(KEY_FILE)?])
}

fn read(path: &Path) -> Result<Vec<u8>, CertificateError> {
    use std::io::Read as _;
    let error = |reason: String| CertificateError {
        path: path.to_owned(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| error(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(error(format!(
            "larger than {MAX_FILE_BYTES} bytes: not a certificate file"
        )));
    }
    Ok(bytes)
}

/// Reads and checks the pair: a chain of at least one certificate and a key that matches it.
fn load(dir: &Path, provider: &CryptoProvider) -> Result<CertifiedKey, CertificateError> {
    let cert_path = dir.join(CERT_FILE);
    let key_path = dir.join(KEY_FILE);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&read(&cert_path)?)
        .collect::<Result<_, _>>()
        .map_err(|e| CertificateError {
            path: cert_path.clone(),
            reason: format!("not PEM certificates: {e}"),
        })?;
    if chain.is_empty() {
        return Err(CertificateError {
            path: cert_path,
            reason: "holds no certificate (PEM `CERTIFICATE` block)".into(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(&read(&key_path)?).map_err(|e| CertificateError {
        path: key_path.clone(),
        reason: format!("not a PEM private key: {e}"),
    })?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| CertificateError {
        path: key_path,
        reason: format!("cannot serve with this key and {CERT_FILE}: {e}"),
    })
}

/// The current certificate of a directory, for rustls.
#[derive(Debug)]
pub(super) struct ServingCertificate {
    dir: PathBuf,
    provider: Arc<CryptoProvider>,
    current: Mutex<(Stamp, Arc<CertifiedKey>)>,
}

impl ServingCertificate {
    /// Reads the pair once; an unreadable pair is an error (nothing to serve with).
    pub(super) fn new(
        dir: &Path,
        provider: Arc<CryptoProvider>,
    ) -> Result<ServingCertificate, CertificateError> {
        let stamp = stamp(dir)?;
        let key = load(dir, &provider)?;
        Ok(ServingCertificate {
            dir: dir.to_owned(),
            provider,
            current: Mutex::new((stamp, Arc::new(key))),
        })
    }

    /// The certificate to serve: the files again when they changed. A changed pair that cannot
    /// be read (a half-written renewal) keeps the previous one, said once per change.
    fn current(&self) -> Arc<CertifiedKey> {
        let mut current = match self.current.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Unreadable files count as one more version, so that too is said once.
        let (now, unreadable) = match stamp(&self.dir) {
            Ok(now) => (now, None),
            Err(e) => (UNREADABLE, Some(e)),
        };
        if now != current.0 {
            current.0 = now;
            match unreadable.map_or_else(|| load(&self.dir, &self.provider), Err) {
                Ok(key) => {
                    tracing::info!(dir = %self.dir.display(), "webhook certificate read again");
                    current.1 = Arc::new(key);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "webhook certificate changed but cannot be read; serving the previous one")
                }
            }
        }
        current.1.clone()
    }
}

impl rustls::server::ResolvesServerCert for ServingCertificate {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}
