//! The default SSH key pair EKS Anywhere makes when a machine config has an empty `sshKeyName`:
//! RSA-4096, the private key as PEM (PKCS#8, which OpenSSH reads), the public key as an
//! `authorized_keys` line (`ssh-rsa AAAA… comment`). Pure crypto: the caller writes the files.

use crate::secret::SecretBytes;
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair, KeySize, PublicKeyComponents};
use aws_lc_rs::signature::KeyPair as _;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use std::fmt;
use std::io;

/// A generated key pair. `Debug` shows the public line only; the private key is zeroed on drop
/// and reaches nothing but a writer ([`SshKeyPair::write_private_pem`]).
pub struct SshKeyPair {
    private_pem: SecretBytes,
    public_line: String,
}

/// Key generation failed in the crypto library.
#[derive(Debug, thiserror::Error)]
#[error("generating an RSA-4096 key pair failed: {0}")]
pub struct KeyGenError(String);

impl SshKeyPair {
    /// Generates an RSA-4096 key pair; `comment` ends the public line (a key pair name, say).
    pub fn generate_rsa4096(comment: &str) -> Result<SshKeyPair, KeyGenError> {
        let pair = KeyPair::generate(KeySize::Rsa4096).map_err(|e| KeyGenError(e.to_string()))?;
        let der = pair.as_der().map_err(|e| KeyGenError(e.to_string()))?;
        let components = PublicKeyComponents::<Vec<u8>>::from(pair.public_key());
        Ok(SshKeyPair {
            private_pem: SecretBytes::new(pem("PRIVATE KEY", der.as_ref())),
            public_line: authorized_keys_line(&components.e, &components.n, comment),
        })
    }

    /// The `authorized_keys` line, without a trailing newline (what `ImportKeyPair` takes).
    pub fn public_line(&self) -> &str {
        &self.public_line
    }

    /// Writes the private key (PEM, PKCS#8) to `out`.
    pub fn write_private_pem(&self, out: &mut dyn io::Write) -> io::Result<()> {
        out.write_all(self.private_pem.expose_for_encoding())
    }
}

impl fmt::Debug for SshKeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SshKeyPair")
            .field("public_line", &self.public_line)
            .field("private_pem", &self.private_pem)
            .finish()
    }
}

/// EKS Anywhere's name for the default key: `eksa-default-<cluster>-<uuid4>`.
pub fn default_key_name(cluster: &str) -> Result<String, KeyGenError> {
    let mut b = [0u8; 16];
    aws_lc_rs::rand::fill(&mut b).map_err(|e| KeyGenError(e.to_string()))?;
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "eksa-default-{cluster}-{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// `ssh-rsa <base64 of the SSH wire encoding: string "ssh-rsa", mpint e, mpint n> comment`
/// (RFC 4253 §6.6).
fn authorized_keys_line(e: &[u8], n: &[u8], comment: &str) -> String {
    let mut blob = Vec::with_capacity(n.len() + 32);
    ssh_string(&mut blob, b"ssh-rsa");
    ssh_mpint(&mut blob, e);
    ssh_mpint(&mut blob, n);
    let mut line = format!("ssh-rsa {}", STANDARD.encode(&blob));
    if !comment.is_empty() {
        line.push(' ');
        line.push_str(comment);
    }
    line
}

fn ssh_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// An unsigned big-endian integer as an SSH mpint: no leading zero bytes, then one zero byte
/// back when the high bit is set (it would read as negative).
fn ssh_mpint(out: &mut Vec<u8>, unsigned: &[u8]) {
    let trimmed = &unsigned[unsigned.iter().take_while(|b| **b == 0).count()..];
    if trimmed.first().is_some_and(|b| b & 0x80 != 0) {
        let mut padded = Vec::with_capacity(trimmed.len() + 1);
        padded.push(0);
        padded.extend_from_slice(trimmed);
        ssh_string(out, &padded);
    } else {
        ssh_string(out, trimmed);
    }
}

/// PEM with 64-character lines.
fn pem(label: &str, der: &[u8]) -> Vec<u8> {
    let body = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_uuid4() {
        let name = default_key_name("edge").unwrap();
        let uuid = name.strip_prefix("eksa-default-edge-").unwrap();
        let parts: Vec<&str> = uuid.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"));
        assert_ne!(name, default_key_name("edge").unwrap());
    }

    #[test]
    fn mpints_follow_rfc4253() {
        let mut out = Vec::new();
        ssh_mpint(&mut out, &[0x00, 0x80, 0x01]);
        assert_eq!(out, [0, 0, 0, 3, 0x00, 0x80, 0x01]);
        out.clear();
        ssh_mpint(&mut out, &[0x01, 0x00, 0x01]);
        assert_eq!(out, [0, 0, 0, 3, 0x01, 0x00, 0x01]);
    }

    #[test]
    fn a_generated_pair_is_rsa_4096_and_never_prints_its_private_half() {
        let pair = SshKeyPair::generate_rsa4096("eksa-default-edge-x").unwrap();
        let line = pair.public_line();
        let mut parts = line.split(' ');
        assert_eq!(parts.next(), Some("ssh-rsa"));
        let blob = STANDARD.decode(parts.next().unwrap()).unwrap();
        assert_eq!(parts.next(), Some("eksa-default-edge-x"));
        // string "ssh-rsa" (4+7), mpint e = 65537 (4+3), mpint n: 4 + 1 (sign pad) + 512 bytes.
        assert_eq!(&blob[..11], b"\0\0\0\x07ssh-rsa");
        assert_eq!(&blob[11..18], [0, 0, 0, 3, 1, 0, 1]);
        assert_eq!(&blob[18..22], 513u32.to_be_bytes());
        assert_eq!(blob.len(), 22 + 513);
        let mut pem = Vec::new();
        pair.write_private_pem(&mut pem).unwrap();
        let pem = String::from_utf8(pem).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        let shown = format!("{pair:?}");
        let body_line = pem.lines().nth(1).unwrap();
        assert!(!shown.contains(body_line) && shown.contains("ssh-rsa"));
        openssh_reads(&pem, line);
    }

    /// OpenSSH derives the same public key from the PEM (`ssh-keygen`, from openssh-client, which
    /// `.ci/run` installs).
    fn openssh_reads(pem: &str, line: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id_rsa");
        std::fs::write(&path, pem).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let out = std::process::Command::new("ssh-keygen")
            .arg("-y")
            .arg("-f")
            .arg(&path)
            .output()
            .expect("ssh-keygen runs (install openssh-client)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let derived = String::from_utf8(out.stdout).unwrap();
        let key = |l: &str| l.split(' ').take(2).collect::<Vec<_>>().join(" ");
        assert_eq!(key(derived.trim()), key(line));
    }
}
