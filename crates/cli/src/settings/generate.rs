//! The settings of `generate clusterconfig`: the template's options, every problem with them
//! said at once, and the Kubernetes version checked against the catalog render and create would
//! use (the embedded one, or `--bundles`').

use super::{SettingsError, read_text};
use crate::{args::GenerateClusterconfigArgs, output};
use snow_api::release::{Bundles, ReleaseInputs};
use snow_api::template::TemplateOptions;

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
        let options = TemplateOptions {
            name: args.name.clone(),
            devices: args.devices.clone(),
            endpoint: args.endpoint.clone(),
            kubernetes_version: args.kubernetes_version.clone(),
            os: args.os.into(),
            instance_type: args.instance_type.clone(),
            ssh_key_name: args.ssh_key_name.clone(),
            gitops_url: args.gitops_url.clone(),
        };
        let problems: Vec<String> = (options.problems().into_iter())
            .map(|(option, problem)| match option {
                "name" => problem.to_string(),
                _ => format!("--{option}: {problem}"),
            })
            .collect();
        if !problems.is_empty() {
            return Err(SettingsError::Usages(problems));
        }
        catalog_has(&options, args.bundles.as_deref())?;
        Ok(ClusterconfigSettings { options })
    }
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
