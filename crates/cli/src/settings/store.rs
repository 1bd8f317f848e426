//! The settings of `store cilium`: the management cluster, the spec and its mirror's login, a
//! given Cilium manifest (read and checked before anything is fetched) and the release catalog.

use super::{
    Catalog, Management, Noted, ReleaseDefault, SettingsError, catalog, load_spec, management,
    read_text, required_registry_login,
};
use crate::{args::StoreCiliumArgs, env::Environment, output};
use snow_api::ValidSpec;
use snow_credentials::RegistryCredentials;
use snow_provision::CniManifest;

/// `store cilium`, resolved from its flags and the environment.
pub struct StoreCiliumSettings {
    /// The management cluster.
    pub management: Management,
    /// The spec, checked.
    pub spec: ValidSpec,
    /// The mirror's login, for helm to pull through an authenticated mirror.
    pub login: Option<RegistryCredentials>,
    /// `--cni-manifest`'s text, checked to parse.
    pub given: Option<String>,
    /// The release catalog (the spec's Kubernetes version's unless the flags name one).
    pub catalog: Catalog,
}

impl StoreCiliumSettings {
    /// From `store cilium`'s flags: the kubeconfig's warnings, then the catalog's notes.
    pub fn resolve(
        args: &StoreCiliumArgs,
        environment: &Environment,
    ) -> Result<Noted<StoreCiliumSettings>, SettingsError> {
        let Noted {
            value: management,
            mut notices,
        } = management(&args.management, environment)?;
        let resolved = (|| {
            let spec = load_spec(&args.file, environment)?.spec;
            let login = required_registry_login(&spec, environment)?;
            // A given manifest is read and checked before anything is fetched.
            let given = match &args.cni_manifest {
                Some(path) => {
                    let text = read_text(path, "the CNI manifest")?;
                    CniManifest::parse(&text).map_err(|e| {
                        SettingsError::Usage(format!("{}: {e}", output::source_name(path)))
                    })?;
                    Some(text)
                }
                None => None,
            };
            let default = ReleaseDefault::Published {
                kube_version: Some(spec.kubernetes_version()),
                cache_dir: None,
                ca_certs: &[],
            };
            let catalog = catalog(&args.release, default, environment)?;
            Ok((spec, login, given, catalog))
        })();
        let (spec, login, given, catalog) =
            resolved.map_err(|e: SettingsError| e.after(notices.clone()))?;
        notices.extend(catalog.notices);
        Ok(Noted {
            value: StoreCiliumSettings {
                management,
                spec,
                login,
                given,
                catalog: catalog.value,
            },
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, StoreCommand};
    use crate::settings::{
        Notice,
        cluster::tests::{kubeconfig_file, spec_file},
    };
    use clap::Parser;

    fn args(line: &[&str]) -> StoreCiliumArgs {
        let mut full = vec!["snowctl", "store", "cilium"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Store(StoreCommand::Cilium(args)) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_manifest_is_refused_after_the_kubeconfig_warning_before_any_fetch() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_file(dir.path());
        let kubeconfig = kubeconfig_file(&dir.path().join("mgmt"));
        let text = std::fs::read_to_string(&kubeconfig).unwrap();
        std::fs::write(
            &kubeconfig,
            text.replace(
                "    server:",
                "    insecure-skip-tls-verify: true\n    server:",
            ),
        )
        .unwrap();
        let manifest = dir.path().join("cilium.yaml");
        std::fs::write(&manifest, "kind: [").unwrap();
        let environment =
            Environment::new(dir.path()).with(crate::env::KUBECONFIG, kubeconfig.to_str().unwrap());
        // No release flag: a fetch would be needed, and none is made.
        let line = [
            "-f",
            spec.to_str().unwrap(),
            "--cni-manifest",
            manifest.to_str().unwrap(),
        ];
        let Err(SettingsError::Noted { notices, error }) =
            StoreCiliumSettings::resolve(&args(&line), &environment)
        else {
            panic!("not an error after the warning");
        };
        assert!(
            matches!(&notices[..], [Notice::Note(n)] if n.contains("insecure-skip-tls-verify"))
        );
        let SettingsError::Usage(message) = *error else {
            panic!("not a usage error");
        };
        let expected = format!("{}: ", manifest.display());
        assert!(message.starts_with(&expected), "{message}");
    }

    #[test]
    fn no_kubeconfig_is_said_first() {
        let dir = tempfile::tempdir().unwrap();
        let line = ["-f", "/nonexistent/spec.yaml"];
        let got = StoreCiliumSettings::resolve(&args(&line), &Environment::new(dir.path()));
        let Err(SettingsError::Usage(message)) = got else {
            panic!("not a usage error");
        };
        assert!(message.contains("found no kubeconfig"), "{message}");
    }
}
