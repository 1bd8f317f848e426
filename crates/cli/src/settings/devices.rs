//! The settings of `devices describe|images|import-key|cleanup`: the devices chosen (`-f SPEC`,
//! `--devices`, or every profile of the credentials file) with their clients from the device
//! files (by flag or environment), the files' findings noted; `import-key`'s public key, and
//! `cleanup`'s management cluster when one is found.

use super::{
    DeviceFiles, Noted, SettingsError, check_kubeconfig, file_findings, find_kubeconfig, load_spec,
    read_text,
};
use crate::{
    args::{DeviceTargets, DevicesCleanupArgs, DevicesImportKeyArgs, ManagementArgs},
    env::Environment,
    output,
};
use snow_provision::KubeconfigSource;
use snow_validate::{FilesFleet, Plan, chores::PublicKey, fleet_from_files};

/// `devices describe` and `devices images`: the devices chosen, with their clients.
pub struct DeviceFleetSettings {
    /// The clients of the chosen devices, and those without credentials.
    pub fleet: FilesFleet,
}

impl DeviceFleetSettings {
    /// From the device flags: the files' findings as notices; files that cannot be used are
    /// one finding about the devices.
    pub fn resolve(
        targets: &DeviceTargets,
        environment: &Environment,
    ) -> Result<Noted<DeviceFleetSettings>, SettingsError> {
        let devices = match &targets.spec {
            Some(path) => Plan::from_spec(&load_spec(path, environment)?.spec).devices(),
            None => targets.devices.clone(),
        };
        let files = DeviceFiles::resolve(&targets.device_files, environment);
        let loaded = snow_provision::preflight::device_files(files.paths(), targets.timeout);
        let fleet = loaded.and_then(|loaded| fleet_from_files(loaded, &devices));
        let fleet = fleet.map_err(|finding| SettingsError::Diagnostic {
            finding,
            about: "devices".into(),
            text: None,
        })?;
        Ok(Noted {
            notices: file_findings(&fleet.findings, "devices", &files)
                .into_iter()
                .collect(),
            value: DeviceFleetSettings { fleet },
        })
    }
}

/// `devices import-key`: the public key, and the devices.
pub struct ImportKeySettings {
    /// `--public-key`, read and parsed.
    pub key: PublicKey,
    /// The devices chosen.
    pub fleet: FilesFleet,
}

impl ImportKeySettings {
    /// From `devices import-key`'s flags: the key first (a key that cannot be used is said
    /// before any device file is read).
    pub fn resolve(
        args: &DevicesImportKeyArgs,
        environment: &Environment,
    ) -> Result<Noted<ImportKeySettings>, SettingsError> {
        let text = read_text(&args.public_key, "the public key")?;
        let key = PublicKey::parse(text.as_bytes()).map_err(|e| {
            SettingsError::Usage(format!("{}: {e}", output::source_name(&args.public_key)))
        })?;
        let Noted { value, notices } = DeviceFleetSettings::resolve(&args.targets, environment)?;
        Ok(Noted {
            value: ImportKeySettings {
                key,
                fleet: value.fleet,
            },
            notices,
        })
    }
}

/// `devices cleanup`: the management cluster that may still have the cluster, and the devices.
pub struct CleanupSettings {
    /// The kubeconfig found (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`), checked; none
    /// when there is none (the plan then asks no management cluster).
    pub management: Option<KubeconfigSource>,
    /// The devices chosen, with their files' findings; said once the management cluster is
    /// connected (which refuses a cleanup while it still has the cluster), as before.
    pub fleet: Result<Noted<FilesFleet>, SettingsError>,
}

impl CleanupSettings {
    /// From `devices cleanup`'s flags: the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &DevicesCleanupArgs,
        environment: &Environment,
    ) -> Result<Noted<CleanupSettings>, SettingsError> {
        let flags = ManagementArgs {
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.clone(),
        };
        let management = find_kubeconfig(&flags, environment);
        let notices = match &management {
            Some(source) => check_kubeconfig(source)?.notices,
            None => Vec::new(),
        };
        let fleet = DeviceFleetSettings::resolve(&args.targets, environment);
        let fleet = fleet.map(|Noted { value, notices }| Noted {
            value: value.fleet,
            notices,
        });
        Ok(Noted {
            value: CleanupSettings { management, fleet },
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, DevicesCommand};
    use clap::Parser;

    fn command(line: &[&str]) -> DevicesCommand {
        let mut full = vec!["snowctl", "devices"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Devices(cmd) => cmd,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn device_files_come_from_the_flags_else_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let DevicesCommand::Describe(args) = command(&["describe", "--devices", "10.0.0.1"]) else {
            panic!("not describe");
        };
        // Neither: the input finding names both ways of giving the credentials.
        let bare = Environment::new(dir.path());
        let Err(SettingsError::Diagnostic { finding, about, .. }) =
            DeviceFleetSettings::resolve(&args.targets, &bare)
        else {
            panic!("not the input finding");
        };
        assert_eq!(about, "devices");
        assert_eq!(finding.check, snow_provision::preflight::INPUT_CHECK);
        // The variables name files: those are read (here, not there).
        let missing = dir.path().join("from-env.ini");
        let named = bare
            .with(crate::env::CREDENTIALS_FILE, missing.to_str().unwrap())
            .with(crate::env::CA_BUNDLES_FILE, missing.to_str().unwrap());
        let Err(SettingsError::Diagnostic { finding, .. }) =
            DeviceFleetSettings::resolve(&args.targets, &named)
        else {
            panic!("not a finding");
        };
        assert!(
            finding.message.contains("from-env.ini"),
            "{}",
            finding.message
        );
    }

    #[test]
    fn an_unusable_public_key_is_said_before_the_device_files() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key.pub");
        std::fs::write(&key, "not a key").unwrap();
        let line = ["import-key", "k", "--public-key", key.to_str().unwrap()];
        let DevicesCommand::ImportKey(args) = command(&line) else {
            panic!("not import-key");
        };
        let got = ImportKeySettings::resolve(&args, &Environment::new(dir.path()));
        let Err(SettingsError::Usage(message)) = got else {
            panic!("not a usage error");
        };
        assert!(message.starts_with(key.to_str().unwrap()), "{message}");
    }
}
