//! `snowctl generate clusterconfig NAME --provider snow`, and `snowctl crds`: text snowctl writes
//! for the user to start from or apply.

use crate::{
    args::{GenerateCommand, OsArg},
    exit::{self, Outcome},
    output::Io,
    settings,
};
use snow_api::release::{Bundles, ReleaseInputs};
use snow_api::template::{OsFamily, TemplateOptions, cluster_config};
use std::process::ExitCode;

/// Runs `snowctl generate …`.
pub fn run(cmd: GenerateCommand, io: &mut Io<'_>) -> Outcome {
    let GenerateCommand::Clusterconfig(args) = cmd;
    let opts = TemplateOptions {
        name: args.name,
        devices: args.devices,
        endpoint: args.endpoint,
        kubernetes_version: args.kubernetes_version,
        os: match args.os {
            OsArg::Ubuntu => OsFamily::Ubuntu,
            OsArg::Bottlerocket => OsFamily::Bottlerocket,
        },
        instance_type: args.instance_type,
        ssh_key_name: args.ssh_key_name,
    };
    let problems = opts.problems();
    for (option, problem) in &problems {
        match *option {
            // The name is a positional argument: its message names it.
            "name" => exit::say(io, problem, None),
            _ => exit::say(io, format!("--{option}: {problem}"), None),
        }
    }
    if !problems.is_empty() {
        return Err(ExitCode::from(exit::USAGE));
    }
    catalog_has(&opts, args.bundles.as_deref(), io)?;
    print(cluster_config(&opts), io)
}

/// Refuses a Kubernetes version the catalog lacks (render and create would refuse the spec):
/// the embedded catalog's, or `--bundles`'.
fn catalog_has(
    opts: &TemplateOptions,
    bundles: Option<&std::path::Path>,
    io: &mut Io<'_>,
) -> Result<(), ExitCode> {
    let (catalog, named) = match bundles {
        Some(path) => {
            let text = settings::read_text(path, "the bundles manifest", io)?;
            let bundles = Bundles::from_yaml(&text).map_err(|e| {
                exit::usage(io, format!("{}: {e}", crate::output::source_name(path)))
            })?;
            (bundles, crate::output::source_name(path))
        }
        None => (
            ReleaseInputs::embedded()
                .map_err(|e| exit::failed(io, e))?
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
    exit::say(
        io,
        format!(
            "--kubernetes-version: {given} {version} is not in {named} (it has {})",
            catalog.kube_versions().join(", ")
        ),
        Some(&hint),
    );
    Err(ExitCode::from(exit::USAGE))
}

/// Runs `snowctl crds`: the four CRDs of the EKS Anywhere Snow kinds, for `kubectl apply -f -`.
pub fn crds(io: &mut Io<'_>) -> Outcome {
    print(snow_api::crds_yaml(), io)
}

fn print<E: std::fmt::Display>(text: Result<String, E>, io: &mut Io<'_>) -> Outcome {
    match text {
        Ok(text) => {
            io.out(&text);
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => Err(exit::usage(io, err)),
    }
}
