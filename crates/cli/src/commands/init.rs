//! `snowctl init`: the Snow provider stack on a cluster (the work is `snow_lifecycle::init`).

use crate::{
    args::{InitArgs, OptionalDeviceFiles},
    exit::{self, Outcome},
    output::Io,
    settings::{self, GlobalSettings},
};
use snow_credentials::ClusterctlEnv;
use snow_lifecycle::{
    Event, Milestones,
    init::{self, InitOptions},
};
use std::process::ExitCode;

/// Runs `snowctl init`.
pub fn run(args: InitArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let inputs = settings::release_inputs(&args.release, io)?;
    let bundle = init::source::versions_bundle(&inputs.bundles, args.kubernetes_version.as_deref())
        .map_err(|err| exit::lifecycle(io, &err))?;
    let credentials = match &args.device_files {
        OptionalDeviceFiles {
            credentials: Some(c),
            ca_bundle: Some(b),
        } => settings::load_secrets(c, b, io).map(|(c, b)| Some(ClusterctlEnv::new(&c, &b)))?,
        _ => None,
    };
    let values = init::snow_values(bundle, credentials.as_ref(), std::env::vars().collect());
    let prepared = init::source::wanted(bundle)
        .and_then(|wanted| init::source::from_dir(&args.components_dir, &wanted))
        .and_then(|sources| init::prepare(&sources, &values));
    let prepared = prepared.map_err(|err| exit::lifecycle(io, &err))?;
    if args.dry_run {
        io.out(&init::to_yaml(&prepared, args.show_secrets));
        return Ok(ExitCode::SUCCESS);
    }
    let management = settings::management(&args.management, io)?;
    let options = InitOptions {
        deployment_timeout: Some(args.wait_timeout),
        poll: args.poll_interval,
        ..InitOptions::default()
    };
    let outcome = exit::runtime(io, false)?.block_on(async {
        let mgmt = management.connect(io).await?;
        let mut milestones = Milestones::new(global.verbose > 0);
        let mut print = |event: Event| {
            if let Some(line) = milestones.line(&event) {
                io.err(&format!("{line}\n"));
            }
        };
        init::init(&mgmt, &prepared, &options, &mut print).await
    });
    let done = outcome.map_err(|err| exit::lifecycle(io, &err))?;
    io.out(&done.to_string());
    io.err(if done.unchanged() {
        "✅ Every component was installed already: nothing changed\n"
    } else {
        "🎉 The Snow provider stack is installed\n"
    });
    Ok(ExitCode::SUCCESS)
}
