//! The settings of `import cluster` and `get clusters`: the management cluster, the imported
//! cluster's kubeconfig, and the device clients when the device files are given (by flag or
//! environment), their findings noted.

use super::{DeviceFiles, Management, Noted, SettingsError, management, optional_fleet};
use crate::{
    args::{GetClustersArgs, ImportClusterArgs},
    env::Environment,
};
use snow_provision::WorkloadKubeconfig;
use snow_validate::FilesFleet;

/// `import cluster`, resolved from its flags and the environment.
pub struct ImportClusterSettings {
    /// The management cluster.
    pub management: Management,
    /// `--workload-kubeconfig`, read.
    pub workload: WorkloadKubeconfig,
    /// The device clients, with the device files.
    pub fleet: Option<FilesFleet>,
}

impl ImportClusterSettings {
    /// From `import cluster`'s flags: the kubeconfig's warnings, then the device files'
    /// findings, as notices.
    pub fn resolve(
        args: &ImportClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<ImportClusterSettings>, SettingsError> {
        let Noted {
            value: management,
            mut notices,
        } = management(&args.management, environment)?;
        let workload = WorkloadKubeconfig::read(&args.workload_kubeconfig)
            .map_err(|e| SettingsError::Lifecycle(e).after(notices.clone()))?;
        let files = DeviceFiles::resolve(&args.device_files, environment);
        let fleet = optional_fleet(&args.devices, &files, args.timeout)
            .map_err(|e| e.after(notices.clone()))?;
        notices.extend(fleet.notices);
        Ok(Noted {
            value: ImportClusterSettings {
                management,
                workload,
                fleet: fleet.value,
            },
            notices,
        })
    }
}

/// `get clusters`, resolved from its flags and the environment.
pub struct GetClustersSettings {
    /// The management cluster.
    pub management: Management,
    /// The device clients, with the device files.
    pub fleet: Option<FilesFleet>,
}

impl GetClustersSettings {
    /// From `get clusters`' flags: the kubeconfig's warnings, then the device files'
    /// findings, as notices.
    pub fn resolve(
        args: &GetClustersArgs,
        environment: &Environment,
    ) -> Result<Noted<GetClustersSettings>, SettingsError> {
        let Noted {
            value: management,
            mut notices,
        } = management(&args.management, environment)?;
        let files = DeviceFiles::resolve(&args.device_files, environment);
        let fleet = optional_fleet(&args.devices, &files, args.timeout)
            .map_err(|e| e.after(notices.clone()))?;
        notices.extend(fleet.notices);
        Ok(Noted {
            value: GetClustersSettings {
                management,
                fleet: fleet.value,
            },
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, GetCommand};
    use crate::settings::cluster::tests::kubeconfig_file;
    use clap::Parser;

    #[test]
    fn the_credentials_variable_names_a_file_that_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = kubeconfig_file(&dir.path().join("mgmt"));
        let line = [
            "snowctl",
            "get",
            "clusters",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ];
        let Command::Get(GetCommand::Clusters(args)) = Cli::try_parse_from(line).unwrap().command
        else {
            panic!("not get clusters");
        };
        // Without device files: no fleet, no device read.
        let bare = Environment::new(dir.path());
        assert!(
            GetClustersSettings::resolve(&args, &bare)
                .unwrap()
                .value
                .fleet
                .is_none()
        );
        // The variable alone names the credentials: the devices are then read through them
        // (here a file that is not there), never left out.
        let missing = dir.path().join("missing.ini");
        let named = bare.with(crate::env::CREDENTIALS_FILE, missing.to_str().unwrap());
        let got = GetClustersSettings::resolve(&args, &named);
        assert!(
            !matches!(&got, Ok(noted) if noted.value.fleet.is_none()),
            "the variable was not read"
        );
    }
}
