//! The settings of `generate clusterconfig`: the template's options, every problem with them
//! said at once, and the Kubernetes version checked against the catalog render and create would
//! use (the embedded one, or `--bundles`').

use super::{SettingsError, read_text};
use crate::{args::GenerateClusterconfigArgs, output};
use snow_api::release::{Bundles, ReleaseInputs};
use snow_api::template::TemplateOptions;
use snow_api::types::cluster::{OciNamespace, RegistryMirrorConfiguration};

/// `generate clusterconfig`, resolved from its flags.
pub struct ClusterconfigSettings {
    /// The template's options.
    pub options: TemplateOptions,
}

impl ClusterconfigSettings {
    /// From `generate clusterconfig`'s flags: each problem with the options (the name is a
    /// positional argument: its message names it; the others name their flag), else a
    /// Kubernetes version the catalog lacks, with what to do.
    pub fn resolve(
        args: &GenerateClusterconfigArgs,
    ) -> Result<ClusterconfigSettings, SettingsError> {
        let (registry_mirror, mirror_problems) = match registry_mirror(args) {
            Ok(mirror) => (mirror, Vec::new()),
            Err(problems) => (None, problems),
        };
        let options = TemplateOptions {
            name: args.name.clone(),
            devices: args.devices.clone(),
            endpoint: args.endpoint.clone(),
            kubernetes_version: args.kubernetes_version.clone(),
            os: args.os.into(),
            instance_type: args.instance_type.clone(),
            ssh_key_name: args.ssh_key_name.clone(),
            gitops_url: args.gitops_url.clone(),
            registry_mirror,
        };
        let problems: Vec<String> = (options.problems().into_iter())
            .map(|(option, problem)| match option {
                "name" => problem.to_string(),
                _ => format!("--{option}: {problem}"),
            })
            .chain(mirror_problems)
            .collect();
        if !problems.is_empty() {
            return Err(SettingsError::Usages(problems));
        }
        catalog_has(&options, args.bundles.as_deref())?;
        Ok(ClusterconfigSettings { options })
    }
}

/// `--registry-mirror HOST:PORT`, `--registry-mirror-ca FILE` and `--oci-namespace
/// REGISTRY=NAMESPACE` as the spec's registryMirrorConfiguration, or every problem with them.
fn registry_mirror(
    args: &GenerateClusterconfigArgs,
) -> Result<Option<RegistryMirrorConfiguration>, Vec<String>> {
    let Some(mirror) = args.registry_mirror.as_deref() else {
        return Ok(None);
    };
    let mut problems = Vec::new();
    let flag = format!("--registry-mirror {mirror}");
    let (host, port) = match mirror.rsplit_once(':') {
        Some((host, port)) => (host.trim_start_matches('[').trim_end_matches(']'), port),
        None => (mirror, ""),
    };
    if port.is_empty() {
        problems.push(format!("{flag}: not HOST:PORT (e.g. 10.0.0.5:5000)"));
    } else if !port.parse::<u16>().is_ok_and(|p| p > 0) {
        problems.push(format!("{flag}: port {port} is not from 1 to 65535"));
    }
    if !snow_api::validate::syntax::is_host(host) {
        problems.push(format!(
            "{flag}: `{host}` is not an IP address or host name"
        ));
    }
    let ca = args.registry_mirror_ca.as_deref().and_then(|path| {
        let text = read_text(path, "the registry mirror CA")
            .map_err(|e| problems.push(format!("--registry-mirror-ca: {e}")))
            .ok()?;
        let name = output::source_name(path);
        let (bundle, _) = snow_credentials::CaBundle::parse(&name, text.clone().into_bytes());
        if bundle.certificates().is_empty() {
            problems.push(format!(
                "--registry-mirror-ca {name}: not a PEM certificate ({}): give the CA certificate that signed the mirror's (`registry serve --state-dir DIR` writes DIR/ca.crt)",
                bundle.problem().unwrap_or("no certificate in it")
            ));
            return None;
        }
        Some(text)
    });
    let mut namespaces = Vec::new();
    for pair in &args.oci_namespaces {
        match pair.split_once('=') {
            Some((registry, namespace)) if !registry.is_empty() && !namespace.is_empty() => {
                namespaces.push(OciNamespace {
                    registry: registry.to_owned(),
                    namespace: namespace.to_owned(),
                });
            }
            _ => problems.push(format!(
                "--oci-namespace {pair}: not REGISTRY=NAMESPACE (e.g. public.ecr.aws=eks-anywhere)"
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Some(RegistryMirrorConfiguration {
        endpoint: Some(host.to_owned()),
        port: Some(port.to_owned()),
        ca_cert_content: ca,
        oci_namespaces: (!namespaces.is_empty()).then_some(namespaces),
        ..Default::default()
    }))
}

/// Refuses a Kubernetes version the catalog lacks (render and create would refuse the spec):
/// the embedded catalog's, or `--bundles`'.
fn catalog_has(
    opts: &TemplateOptions,
    bundles: Option<&std::path::Path>,
) -> Result<(), SettingsError> {
    let (catalog, named) = match bundles {
        Some(path) => {
            let text = read_text(path, "the bundles manifest")?;
            let bundles = Bundles::from_yaml(&text)
                .map_err(|e| SettingsError::Usage(format!("{}: {e}", output::source_name(path))))?;
            (bundles, output::source_name(path))
        }
        None => (
            ReleaseInputs::embedded()
                .map_err(|e| SettingsError::Failed(e.to_string()))?
                .bundles,
            "snowctl's embedded catalog".to_owned(),
        ),
    };
    let version = opts
        .kubernetes_version
        .as_deref()
        .unwrap_or(snow_api::template::DEFAULT_KUBERNETES_VERSION);
    if catalog.versions_bundle(version).is_ok() {
        return Ok(());
    }
    let given = if opts.kubernetes_version.is_some() {
        "Kubernetes"
    } else {
        "the default Kubernetes version,"
    };
    let hint = match bundles {
        Some(_) => "pick one of those versions, or a Bundles manifest that has this one".to_owned(),
        None => "pick one of those versions, or pass --bundles FILE with an EKS Anywhere Bundles manifest that has this one (render and create need it too)".to_owned(),
    };
    Err(SettingsError::Hinted {
        what: format!(
            "--kubernetes-version: {given} {version} is not in {named} (it has {})",
            catalog.kube_versions().join(", ")
        ),
        hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, GenerateCommand};
    use clap::Parser;

    fn resolve(line: &[&str]) -> Result<ClusterconfigSettings, SettingsError> {
        let mut full = vec!["snowctl", "generate", "clusterconfig"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Generate(GenerateCommand::Clusterconfig(args)) => {
                ClusterconfigSettings::resolve(&args)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_problem_is_named_at_once() {
        let Err(SettingsError::Usages(problems)) =
            resolve(&["Bad_Name", "--endpoint", "not-an-ip", "--provider", "snow"])
        else {
            panic!("not usage errors");
        };
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[1].starts_with("--endpoint: "), "{problems:?}");
    }

    #[test]
    fn a_version_the_catalog_lacks_is_refused_with_what_to_do() {
        let Err(SettingsError::Hinted { what, hint }) =
            resolve(&["edge", "--kubernetes-version", "1.99", "--provider", "snow"])
        else {
            panic!("not refused");
        };
        assert!(what.starts_with("--kubernetes-version: Kubernetes 1.99 is not in snowctl's embedded catalog (it has "), "{what}");
        assert!(hint.contains("--bundles FILE"), "{hint}");
        assert!(resolve(&["edge", "--provider", "snow"]).is_ok());
    }
}
