//! The device files, the credentials INI and the CA bundle, in uv's order: the flag
//! (`--credentials`, `--ca-bundle`), else the variable EKS Anywhere names it by
//! (`EKSA_AWS_CREDENTIALS_FILE`, `EKSA_AWS_CA_BUNDLES_FILE`), read from the [`Environment`]
//! given; an empty variable is none. Every command that reads them resolves them here.

use super::SettingsError;
use crate::{
    args::{CredentialsFilesArgs, OptionalDeviceFiles},
    env::{self, Environment},
};
use snow_provision::DevicePaths;
use std::path::PathBuf;

/// The device files a command was given, by flag or environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceFiles {
    /// The credentials INI.
    pub credentials: Option<PathBuf>,
    /// The CA bundle.
    pub ca_bundle: Option<PathBuf>,
}

/// `flag`, else the variable `name` when set and not empty.
fn flag_or_variable(
    flag: Option<&PathBuf>,
    name: &str,
    environment: &Environment,
) -> Option<PathBuf> {
    flag.cloned()
        .or_else(|| environment.path(name).filter(|p| !p.as_os_str().is_empty()))
}

impl DeviceFiles {
    /// From the flags, else the environment.
    pub fn resolve(args: &OptionalDeviceFiles, environment: &Environment) -> DeviceFiles {
        DeviceFiles {
            credentials: flag_or_variable(
                args.credentials.as_ref(),
                env::CREDENTIALS_FILE,
                environment,
            ),
            ca_bundle: flag_or_variable(args.ca_bundle.as_ref(), env::CA_BUNDLES_FILE, environment),
        }
    }

    /// Both files, for a command that cannot go on without them (`credentials check|encode`):
    /// each one missing named, both at once.
    pub fn required(
        args: &CredentialsFilesArgs,
        environment: &Environment,
    ) -> Result<(PathBuf, PathBuf), SettingsError> {
        let credentials = flag_or_variable(
            args.credentials.as_ref(),
            env::CREDENTIALS_FILE,
            environment,
        );
        let ca_bundle =
            flag_or_variable(args.ca_bundle.as_ref(), env::CA_BUNDLES_FILE, environment);
        match (credentials, ca_bundle) {
            (Some(credentials), Some(ca_bundle)) => Ok((credentials, ca_bundle)),
            (credentials, ca_bundle) => {
                let mut missing = Vec::new();
                if credentials.is_none() {
                    missing.push(format!(
                        "no credentials file: pass --credentials FILE or set {}",
                        env::CREDENTIALS_FILE
                    ));
                }
                if ca_bundle.is_none() {
                    missing.push(format!(
                        "no CA bundle: pass --ca-bundle FILE or set {}",
                        env::CA_BUNDLES_FILE
                    ));
                }
                Err(SettingsError::Usage(missing.join("; ")))
            }
        }
    }

    /// The paths, as the libraries take them.
    pub fn paths(&self) -> DevicePaths<'_> {
        DevicePaths {
            credentials: self.credentials.as_deref(),
            ca_bundle: self.ca_bundle.as_deref(),
        }
    }

    /// The files given, as findings about them name them.
    pub fn names(&self) -> Vec<String> {
        [&self.credentials, &self.ca_bundle]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn optional(credentials: Option<&str>, ca_bundle: Option<&str>) -> OptionalDeviceFiles {
        OptionalDeviceFiles {
            credentials: credentials.map(PathBuf::from),
            ca_bundle: ca_bundle.map(PathBuf::from),
        }
    }

    #[test]
    fn a_flag_wins_over_its_variable_and_an_empty_variable_is_none() {
        let bare = Environment::new("/w");
        let set = bare
            .clone()
            .with(env::CREDENTIALS_FILE, "env.ini")
            .with(env::CA_BUNDLES_FILE, "env.pem");
        // Nothing given: none.
        assert_eq!(
            DeviceFiles::resolve(&optional(None, None), &bare),
            DeviceFiles::default()
        );
        // The variables when no flag.
        let got = DeviceFiles::resolve(&optional(None, None), &set);
        assert_eq!(got.credentials, Some(PathBuf::from("env.ini")));
        assert_eq!(got.ca_bundle, Some(PathBuf::from("env.pem")));
        assert_eq!(got.names(), ["env.ini", "env.pem"]);
        // Each flag over its variable, the other still from the environment.
        let got = DeviceFiles::resolve(&optional(Some("flag.ini"), None), &set);
        assert_eq!(got.credentials, Some(PathBuf::from("flag.ini")));
        assert_eq!(got.paths().ca_bundle, Some(std::path::Path::new("env.pem")));
        // Set but empty: as unset.
        let empty = bare.with(env::CREDENTIALS_FILE, "");
        let got = DeviceFiles::resolve(&optional(None, None), &empty);
        assert_eq!(got.credentials, None);
    }

    #[test]
    fn required_files_missing_are_named_at_once() {
        let args = |c: Option<&str>, b: Option<&str>| CredentialsFilesArgs {
            credentials: c.map(PathBuf::from),
            ca_bundle: b.map(PathBuf::from),
        };
        let bare = Environment::new("/w");
        let Err(SettingsError::Usage(message)) = DeviceFiles::required(&args(None, None), &bare)
        else {
            panic!("not a usage error");
        };
        assert_eq!(
            message,
            "no credentials file: pass --credentials FILE or set EKSA_AWS_CREDENTIALS_FILE; no CA bundle: pass --ca-bundle FILE or set EKSA_AWS_CA_BUNDLES_FILE"
        );
        // One given by flag, the other by variable.
        let set = bare.with(env::CA_BUNDLES_FILE, "env.pem");
        let got = DeviceFiles::required(&args(Some("c.ini"), None), &set).unwrap();
        assert_eq!(got, (PathBuf::from("c.ini"), PathBuf::from("env.pem")));
        let Err(SettingsError::Usage(message)) =
            DeviceFiles::required(&args(None, Some("b.pem")), &set)
        else {
            panic!("not a usage error");
        };
        assert!(message.starts_with("no credentials file"), "{message}");
        assert!(!message.contains("CA bundle"), "{message}");
    }
}
