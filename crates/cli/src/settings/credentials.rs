//! The settings of `credentials check|encode|create-scoped-user`: the two device files (by flag
//! or environment; for `check` and `encode` both required, each missing one named), and for
//! `create-scoped-user` the user's name, the root files loaded and the devices of `-f SPEC`.

use super::{DeviceFiles, Noted, SettingsError, file_findings, load_spec};
use crate::{
    args::{CreateScopedUserArgs, CredentialsFilesArgs},
    env::Environment,
};
use snow_validate::{LoadedFiles, scoped_user::UserName};
use std::path::PathBuf;

/// `credentials check` and `credentials encode`: the two files.
pub struct CredentialsFilesSettings {
    /// The credentials INI.
    pub credentials: PathBuf,
    /// The CA bundle.
    pub ca_bundle: PathBuf,
}

impl CredentialsFilesSettings {
    /// From the flags, else the environment; both are required.
    pub fn resolve(
        args: &CredentialsFilesArgs,
        environment: &Environment,
    ) -> Result<CredentialsFilesSettings, SettingsError> {
        let (credentials, ca_bundle) = DeviceFiles::required(args, environment)?;
        Ok(CredentialsFilesSettings {
            credentials,
            ca_bundle,
        })
    }
}

/// `credentials create-scoped-user`: the user, the root files and the devices of a spec.
pub struct ScopedUserSettings {
    /// `--user`, checked.
    pub user: UserName,
    /// The root credentials file and CA bundle, loaded.
    pub root: LoadedFiles,
    /// `-f SPEC`'s devices; none without a spec (then `--devices`, else every profile).
    pub spec_devices: Option<Vec<snow_api::DeviceIp>>,
}

impl ScopedUserSettings {
    /// From `create-scoped-user`'s flags: the user's name, the root files (their findings as
    /// notices; files that cannot be used are one finding about the credentials), the output
    /// file not being the root credentials file, then the spec's devices.
    pub fn resolve(
        args: &CreateScopedUserArgs,
        environment: &Environment,
    ) -> Result<Noted<ScopedUserSettings>, SettingsError> {
        let user = UserName::parse(&args.user)
            .map_err(|e| SettingsError::Usage(format!("--user: {e}")))?;
        let targets = &args.targets;
        let files = DeviceFiles::resolve(&targets.device_files, environment);
        let loaded = snow_provision::preflight::device_files(files.paths(), targets.timeout);
        let root = loaded
            .and_then(snow_validate::load_files)
            .map_err(|finding| SettingsError::Diagnostic {
                finding,
                about: "credentials".into(),
                text: None,
            })?;
        let notices: Vec<_> = file_findings(&root.findings, "credentials", &files)
            .into_iter()
            .collect();
        let input = files.credentials.as_deref();
        if input.is_some_and(|input| snow_credentials::write::same_file(&args.output_file, input)) {
            let why = format!(
                "--output-file {} is the root credentials file: write the scoped credentials to a new file",
                args.output_file.display()
            );
            return Err(SettingsError::Usage(why).after(notices));
        }
        let spec_devices = match &targets.spec {
            Some(path) => Some(
                load_spec(path, environment)
                    .map(|spec| snow_validate::Plan::from_spec(&spec.spec).devices())
                    .map_err(|e| e.after(notices.clone()))?,
            ),
            None => None,
        };
        Ok(Noted {
            value: ScopedUserSettings {
                user,
                root,
                spec_devices,
            },
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, CredentialsCommand};
    use clap::Parser;

    fn command(line: &[&str]) -> CredentialsCommand {
        let mut full = vec!["snowctl", "credentials"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Credentials(cmd) => cmd,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn check_takes_each_file_from_its_flag_else_its_variable() {
        let CredentialsCommand::Check(args) = command(&["check", "--credentials", "flag.ini"])
        else {
            panic!("not check");
        };
        let environment = Environment::new("/w")
            .with(crate::env::CREDENTIALS_FILE, "env.ini")
            .with(crate::env::CA_BUNDLES_FILE, "env.pem");
        let got = CredentialsFilesSettings::resolve(&args.files, &environment).unwrap();
        assert_eq!(got.credentials, PathBuf::from("flag.ini"));
        assert_eq!(got.ca_bundle, PathBuf::from("env.pem"));
        let CredentialsCommand::Encode(files) = command(&["encode"]) else {
            panic!("not encode");
        };
        let Err(SettingsError::Usage(message)) =
            CredentialsFilesSettings::resolve(&files, &Environment::new("/w"))
        else {
            panic!("not a usage error");
        };
        assert!(message.contains("--credentials FILE") && message.contains("--ca-bundle FILE"));
    }

    #[test]
    fn a_bad_user_name_is_said_before_any_file_is_read() {
        let line = [
            "create-scoped-user",
            "--user",
            "bad name!",
            "--output-file",
            "o.ini",
        ];
        let CredentialsCommand::CreateScopedUser(args) = command(&line) else {
            panic!("not create-scoped-user");
        };
        let got = ScopedUserSettings::resolve(&args, &Environment::new("/w"));
        let Err(SettingsError::Usage(message)) = got else {
            panic!("not a usage error");
        };
        assert!(message.starts_with("--user: "), "{message}");
    }
}
