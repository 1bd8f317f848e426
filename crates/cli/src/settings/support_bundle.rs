//! The settings of `support-bundle`: the management cluster and the device files (by flag or
//! environment) whose devices the bundle describes.

use super::{DeviceFiles, Management, Noted, SettingsError, management};
use crate::{args::SupportBundleArgs, env::Environment};

/// `support-bundle`, resolved from its flags and the environment.
pub struct SupportBundleSettings {
    /// The management cluster.
    pub management: Management,
    /// The device files, when given.
    pub devices: DeviceFiles,
}

impl SupportBundleSettings {
    /// From `support-bundle`'s flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &SupportBundleArgs,
        environment: &Environment,
    ) -> Result<Noted<SupportBundleSettings>, SettingsError> {
        let found = management(&args.management, environment)?;
        Ok(Noted {
            value: SupportBundleSettings {
                management: found.value,
                devices: DeviceFiles::resolve(&args.device_files, environment),
            },
            notices: found.notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use crate::settings::cluster::tests::kubeconfig_file;
    use clap::Parser;

    #[test]
    fn the_device_files_are_the_flags_else_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = kubeconfig_file(&dir.path().join("mgmt"));
        let parse = |extra: &[&str]| {
            let mut line = vec![
                "snowctl",
                "support-bundle",
                "edge",
                "--output-file",
                "b.tar.gz",
            ];
            line.extend(["--kubeconfig", kubeconfig.to_str().unwrap()]);
            line.extend(extra);
            match Cli::try_parse_from(line).unwrap().command {
                Command::SupportBundle(args) => args,
                other => panic!("{other:?}"),
            }
        };
        let environment = Environment::new(dir.path())
            .with(crate::env::CREDENTIALS_FILE, "env.ini")
            .with(crate::env::CA_BUNDLES_FILE, "env.pem");
        let got = SupportBundleSettings::resolve(&parse(&[]), &environment).unwrap();
        assert_eq!(got.value.devices.names(), ["env.ini", "env.pem"]);
        let got =
            SupportBundleSettings::resolve(&parse(&["--credentials", "flag.ini"]), &environment);
        assert_eq!(got.unwrap().value.devices.names(), ["flag.ini", "env.pem"]);
        assert_eq!(
            SupportBundleSettings::resolve(&parse(&[]), &Environment::new(dir.path()))
                .unwrap()
                .value
                .devices,
            DeviceFiles::default()
        );
    }
}
