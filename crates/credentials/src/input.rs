//! Reading the two files from disk: a size limit, clear errors, and a permission warning.

use crate::bundle::CaBundle;
use crate::ini::CredentialsFile;
use snow_api::{Finding, Location};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use zeroize::Zeroizing;

pub use crate::limits::{MAX_CA_BUNDLE_BYTES, MAX_CREDENTIALS_BYTES};

/// A file that could not be read at all (exit code 2 in the CLI).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// No such file.
    #[error("{path}: the file does not exist")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// A directory was given.
    #[error("{path}: is a directory, not a file")]
    IsDirectory {
        /// The path as given.
        path: String,
    },
    /// Reading failed (permissions, IO).
    #[error("{path}: cannot be read: {source}")]
    Unreadable {
        /// The path as given.
        path: String,
        /// Why.
        source: io::Error,
    },
}

impl InputError {
    /// The path as given.
    pub fn path(&self) -> &str {
        match self {
            InputError::NotFound { path }
            | InputError::IsDirectory { path }
            | InputError::Unreadable { path, .. } => path,
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            InputError::NotFound { .. } | InputError::IsDirectory { .. } => {
                "give the path of the file itself (the credentials INI file or the CA bundle PEM)"
            }
            InputError::Unreadable { .. } => {
                "check the file's permissions (the owner needs read access)"
            }
        }
    }

    /// The error as a finding (`check` = `<prefix>.unreadable`), for JSON reports.
    pub fn to_finding(&self, prefix: &str) -> Finding {
        Finding::error(format!("{prefix}.unreadable"), self.to_string())
            .object(self.path())
            .hint(self.hint())
    }
}

struct FileRead {
    bytes: Zeroizing<Vec<u8>>,
    too_large: bool,
    group_or_other_readable: bool,
}

fn read_limited(path: &Path, limit: u64) -> Result<FileRead, InputError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => InputError::NotFound {
            path: shown.clone(),
        },
        _ => InputError::Unreadable {
            path: shown.clone(),
            source,
        },
    })?;
    let meta = file.metadata().map_err(|source| InputError::Unreadable {
        path: shown.clone(),
        source,
    })?;
    if meta.is_dir() {
        return Err(InputError::IsDirectory { path: shown });
    }
    #[cfg(unix)]
    let group_or_other_readable = {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o044 != 0
    };
    #[cfg(not(unix))]
    let group_or_other_readable = false;

    // Allocate once, so no reallocation leaves a copy of the secret behind.
    let capacity = usize::try_from(meta.len().min(limit) + 1).unwrap_or(0);
    let mut bytes = Zeroizing::new(Vec::with_capacity(capacity));
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Unreadable {
            path: shown.clone(),
            source,
        })?;
    let too_large = bytes.len() as u64 > limit;
    Ok(FileRead {
        bytes,
        too_large,
        group_or_other_readable,
    })
}

fn too_large(check: &str, path: &str, limit: u64, what: &str) -> Finding {
    Finding::error(
        check,
        format!(
            "the file is larger than {} KiB; it is not read (a {what} for 64 devices is far smaller)",
            limit / 1024
        ),
    )
    .object(path)
    .hint("check that the path points at the right file")
    .at(Location { line: 1, column: 1 })
}

/// Reads and parses the credentials file. A file readable by group or others gets a warning.
pub fn load_credentials(path: &Path) -> Result<(CredentialsFile, Vec<Finding>), InputError> {
    let shown = path.display().to_string();
    let read = read_limited(path, MAX_CREDENTIALS_BYTES)?;
    let mut findings = Vec::new();
    let (file, parse_findings) = if read.too_large {
        findings.push(too_large(
            "credentials.too-large",
            &shown,
            MAX_CREDENTIALS_BYTES,
            "credentials file",
        ));
        CredentialsFile::parse(shown.clone(), Vec::new())
    } else {
        let mut bytes = read.bytes;
        CredentialsFile::parse(shown.clone(), std::mem::take(&mut *bytes))
    };
    if read.group_or_other_readable {
        findings.push(
            Finding::warning(
                "credentials.file-permissions",
                "the file is readable by group or others, and it holds secret keys",
            )
            .object(shown.as_str())
            .hint(format!("restrict it to its owner: `chmod 600 {shown}`")),
        );
    }
    if read.too_large {
        // Only the size finding: "no device profile" would be noise.
        return Ok((file, findings));
    }
    findings.extend(parse_findings);
    Ok((file, findings))
}

/// Reads and parses the CA bundle.
pub fn load_ca_bundle(path: &Path) -> Result<(CaBundle, Vec<Finding>), InputError> {
    let shown = path.display().to_string();
    let read = read_limited(path, MAX_CA_BUNDLE_BYTES)?;
    if read.too_large {
        let finding = too_large(
            "ca-bundle.too-large",
            &shown,
            MAX_CA_BUNDLE_BYTES,
            "CA bundle",
        );
        let (bundle, _) = CaBundle::parse(shown, Vec::new());
        let bundle = bundle.with_problem(finding.message.clone());
        return Ok((bundle, vec![finding]));
    }
    let mut bytes = read.bytes;
    Ok(CaBundle::parse(shown, std::mem::take(&mut *bytes)))
}
