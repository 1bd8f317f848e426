//! The settings of `controller`: the management cluster's kubeconfig when one is found (else the
//! pod's service account), the release catalog it reconciles with, and where Cilium's manifest
//! comes from.

use super::{
    Catalog, Noted, ReleaseDefault, SettingsError, catalog, check_kubeconfig, find_kubeconfig,
    read_cni_manifest,
};
use crate::{args::ControllerArgs, env::Environment};
use snow_provision::{CniManifest, KubeconfigSource};

/// Where the controller's Cilium manifest comes from, before the catalog's archive is opened
/// for its charts.
pub enum CniSettings {
    /// `--cni-stored`: the manifests `store cilium` stored.
    Stored,
    /// `--cni-manifest`, read and parsed.
    Manifest(CniManifest),
    /// helm, with the charts of `--artifacts` when given, else pulled.
    Helm,
}

/// `controller`, resolved from its flags and the environment.
pub struct ControllerSettings {
    /// The kubeconfig found (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`), else none: the
    /// in-cluster service account.
    pub kubeconfig: Option<KubeconfigSource>,
    /// The release catalog (the newest published unless the flags name one).
    pub catalog: Catalog,
    /// Where Cilium's manifest comes from.
    pub cni: CniSettings,
}

impl ControllerSettings {
    /// From `controller`'s flags: the kubeconfig's warnings and the catalog's notes as notices.
    pub fn resolve(
        args: &ControllerArgs,
        environment: &Environment,
    ) -> Result<Noted<ControllerSettings>, SettingsError> {
        let kubeconfig = find_kubeconfig(&args.management, environment);
        let mut notices = match &kubeconfig {
            Some(source) => check_kubeconfig(source)?.notices,
            None => Vec::new(),
        };
        let default = ReleaseDefault::Published {
            kube_version: None,
            cache_dir: None,
            ca_certs: &[],
        };
        let catalog =
            catalog(&args.release, default, environment).map_err(|e| e.after(notices.clone()))?;
        notices.extend(catalog.notices);
        let cni = match &args.cni_manifest {
            _ if args.cni_stored => CniSettings::Stored,
            Some(path) => CniSettings::Manifest(
                read_cni_manifest(path).map_err(|e| e.after(notices.clone()))?,
            ),
            None => CniSettings::Helm,
        };
        Ok(Noted {
            value: ControllerSettings {
                kubeconfig,
                catalog: catalog.value,
                cni,
            },
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    fn args(line: &[&str]) -> ControllerArgs {
        let mut full = vec!["snowctl", "controller"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Controller(args) => args,
            other => panic!("{other:?}"),
        }
    }

    /// An EKS Anywhere Bundles manifest: the embedded sample's, written into `dir`.
    fn bundles_file(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("bundles.yaml");
        std::fs::write(
            &path,
            snow_api::release::ReleaseInputs::embedded_bundles_yaml(),
        )
        .unwrap();
        path
    }

    #[test]
    fn the_kubeconfig_flag_wins_over_the_variable_and_none_is_in_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let bundles = bundles_file(dir.path());
        let flag = crate::settings::cluster::tests::kubeconfig_file(&dir.path().join("flag"));
        let listed = crate::settings::cluster::tests::kubeconfig_file(&dir.path().join("listed"));
        let bundles_flag = ["--bundles", bundles.to_str().unwrap(), "--cni-stored"];
        let bare = Environment::new(dir.path());
        let got = ControllerSettings::resolve(&args(&bundles_flag), &bare).unwrap();
        assert!(got.value.kubeconfig.is_none());
        assert!(matches!(got.value.cni, CniSettings::Stored));
        let listing = bare.with(crate::env::KUBECONFIG, listed.to_str().unwrap());
        let got = ControllerSettings::resolve(&args(&bundles_flag), &listing).unwrap();
        assert_eq!(got.value.kubeconfig.unwrap().paths, vec![listed]);
        let mut line = bundles_flag.to_vec();
        line.extend(["--kubeconfig", flag.to_str().unwrap()]);
        let got = ControllerSettings::resolve(&args(&line), &listing).unwrap();
        assert_eq!(got.value.kubeconfig.unwrap().paths, vec![flag]);
    }

    #[test]
    fn an_unparsable_cni_manifest_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let bundles = bundles_file(dir.path());
        let manifest = dir.path().join("cilium.yaml");
        std::fs::write(&manifest, "kind: [").unwrap();
        let line = [
            "--bundles",
            bundles.to_str().unwrap(),
            "--cni-manifest",
            manifest.to_str().unwrap(),
        ];
        let got = ControllerSettings::resolve(&args(&line), &Environment::new(dir.path()));
        assert!(matches!(got, Err(SettingsError::Usage(_))));
    }
}
