//! The registry mirror's login: the user name and password EKS Anywhere reads from
//! `REGISTRY_USERNAME` and `REGISTRY_PASSWORD` when `registryMirrorConfiguration.authenticate` is
//! true. The password leaves only through [`RegistryLogin::write_password`] (for a program's
//! stdin, e.g. `helm registry login --password-stdin`) and is blanked out of any text by
//! [`RegistryLogin::redact`].

use crate::secret::{REDACTED, SecretString};
use std::io::{self, Write};

/// A registry user name and password. `Debug` shows the user name only.
#[derive(Clone, Debug)]
pub struct RegistryLogin {
    /// The user name (not a secret: it goes on command lines, as EKS Anywhere passes it).
    pub username: String,
    password: SecretString,
}

impl RegistryLogin {
    /// A login from its parts.
    pub fn new(username: String, password: SecretString) -> Self {
        RegistryLogin { username, password }
    }

    /// Whether the password is empty (or only whitespace).
    pub fn password_is_blank(&self) -> bool {
        self.password.is_blank()
    }

    /// Writes the password, and nothing else, to `out` (a child process's stdin).
    pub fn write_password(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(self.password.expose_for_signing().as_bytes())
    }

    /// `text` with every occurrence of the password replaced by `<redacted>`, for showing output
    /// of a program that was handed the password.
    pub fn redact(&self, text: &str) -> String {
        let password = self.password.expose_for_signing();
        if password.is_empty() {
            return text.to_owned();
        }
        text.replace(password, REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_leaves_only_through_stdin_writing() {
        let login = RegistryLogin::new("admin".into(), SecretString::new("hunter2-pw".into()));
        assert!(!format!("{login:?}").contains("hunter2-pw"));
        let mut out = Vec::new();
        login.write_password(&mut out).unwrap();
        assert_eq!(out, b"hunter2-pw");
        assert_eq!(
            login.redact("denied for admin:hunter2-pw"),
            "denied for admin:<redacted>"
        );
        assert!(!login.password_is_blank());
    }
}
