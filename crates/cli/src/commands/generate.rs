//! `snowctl generate clusterconfig NAME --provider snow`, and `snowctl crds`: text snowctl writes
//! for the user to start from or apply.

use crate::{
    args::{GenerateCommand, OsArg},
    exit::{self, Outcome},
    output::Io,
};
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
            "name" => io.err(&format!("error: {problem}\n")),
            _ => io.err(&format!("error: --{option}: {problem}\n")),
        }
    }
    if !problems.is_empty() {
        return Err(ExitCode::from(exit::USAGE));
    }
    print(cluster_config(&opts), io)
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
