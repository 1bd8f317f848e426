//! `snowctl init`: the Snow provider stack on a cluster (the work is `snow_lifecycle::init`).

use crate::{
    args::{InitArgs, OptionalDeviceFiles},
    exit,
    output::Io,
    settings::{self, GlobalSettings},
};
use snow_credentials::ClusterctlEnv;
use snow_lifecycle::{
    Event, LifecycleError,
    init::{self, InitOptions},
};
use std::process::ExitCode;

/// Runs `snowctl init`.
pub fn run(args: InitArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    let inputs = match settings::release_inputs(&args.release, io) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let bundle =
        match init::source::versions_bundle(&inputs.bundles, args.kubernetes_version.as_deref()) {
            Ok(b) => b,
            Err(err) => return failed(&err, io),
        };
    let credentials = match &args.device_files {
        OptionalDeviceFiles {
            credentials: Some(c),
            ca_bundle: Some(b),
        } => match settings::load_secrets(c, b, io) {
            Ok((c, b)) => Some(ClusterctlEnv::new(&c, &b)),
            Err(code) => return code,
        },
        _ => None,
    };
    let values = init::snow_values(bundle, credentials.as_ref(), std::env::vars().collect());
    let prepared = init::source::wanted(bundle)
        .and_then(|wanted| init::source::from_dir(&args.components_dir, &wanted))
        .and_then(|sources| init::prepare(&sources, &values));
    let prepared = match prepared {
        Ok(p) => p,
        Err(err) => return failed(&err, io),
    };
    if args.dry_run {
        io.out(&init::to_yaml(&prepared, args.show_secrets));
        return ExitCode::SUCCESS;
    }
    let management = match settings::management(&args.management, io) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let options = InitOptions {
        deployment_timeout: Some(args.wait_timeout),
        poll: args.poll_interval,
        ..InitOptions::default()
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            io.err(&format!("error: cannot start the async runtime: {e}\n"));
            return ExitCode::from(exit::FINDINGS);
        }
    };
    let outcome = runtime.block_on(async {
        let mgmt = management.connect(io).await?;
        let mut print = |event: Event| {
            if global.verbose > 0 || !event.is_detail() {
                io.err(&format!("{event}\n"));
            }
        };
        init::init(&mgmt, &prepared, &options, &mut print).await
    });
    match outcome {
        Ok(done) => {
            io.out(&done.to_string());
            io.err(if done.unchanged() {
                "✅ Every component was installed already: nothing changed\n"
            } else {
                "🎉 The Snow provider stack is installed\n"
            });
            ExitCode::SUCCESS
        }
        Err(err) => failed(&err, io),
    }
}

fn failed(err: &LifecycleError, io: &mut Io<'_>) -> ExitCode {
    io.err(&format!("❌ error: {err}\n"));
    if let Some(hint) = err.hint() {
        io.err(&format!("  hint: {hint}\n"));
    }
    match err {
        LifecycleError::Kubeconfig { .. } | LifecycleError::Components { .. } => {
            ExitCode::from(exit::USAGE)
        }
        _ => ExitCode::from(exit::FINDINGS),
    }
}
