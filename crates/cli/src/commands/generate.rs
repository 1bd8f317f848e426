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
    match cmd {
        GenerateCommand::Clusterconfig(args) => clusterconfig(args, io),
    }
}

fn clusterconfig(args: GenerateClusterconfigArgs, io: &mut Io<'_>) -> ExitCode {
    let mut problems = Vec::new();
    for device in &args.devices {
        if device.parse::<std::net::IpAddr>().is_err() {
            problems.push(format!("--devices: `{device}` is not an IP address"));
        }
    }
    if let Some(endpoint) = args
        .endpoint
        .as_deref()
        .filter(|e| e.parse::<std::net::IpAddr>().is_err())
    {
        problems.push(format!("--endpoint: `{endpoint}` is not an IP address"));
    }
    if let Some(v) = args.kubernetes_version.as_deref()
        && snow_api::validate::syntax::KubeVersion::parse(v).is_none()
    {
        problems.push(format!(
            "--kubernetes-version: `{v}` is not of the form 1.NN (e.g. 1.33)"
        ));
    }
    if let Some(t) = args.instance_type.as_deref()
        && !snow_api::validate::syntax::is_snow_instance_type(t)
    {
        problems.push(format!(
            "--instance-type: `{t}` is not a Snow instance type (e.g. sbe-c.large, sbe-c.xlarge)"
        ));
    }
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
    if let Err(err) = snow_api::template::check_cluster_name(&opts.name) {
        problems.insert(0, err.to_string());
    }
    if !problems.is_empty() {
        for p in problems {
            io.err(&format!("error: {p}\n"));
        }
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
