//! `snowctl generate clusterconfig NAME --provider snow`.

use crate::{
    args::{GenerateClusterconfigArgs, GenerateCommand, OsArg},
    exit,
    output::Io,
};
use snow_api::template::{OsFamily, TemplateOptions, cluster_config};
use std::process::ExitCode;

/// Runs `snowctl generate …`.
pub fn run(cmd: GenerateCommand, io: &mut Io<'_>) -> ExitCode {
    let GenerateCommand::Clusterconfig(args) = cmd;
    clusterconfig(args, io)
}

fn clusterconfig(args: GenerateClusterconfigArgs, io: &mut Io<'_>) -> ExitCode {
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
        return ExitCode::from(exit::USAGE);
    }
    match cluster_config(&opts) {
        Ok(yaml) => {
            io.out(&yaml);
            ExitCode::SUCCESS
        }
        Err(err) => {
            io.err(&format!("error: {err}\n"));
            ExitCode::from(exit::USAGE)
        }
    }
}
