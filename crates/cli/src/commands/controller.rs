//! `snowctl controller`: the long-running reconciler, with structured logs on stderr.

use crate::{
    args::{ControllerArgs, LogFormat},
    exit::{self, Outcome},
    output::Io,
    settings::{self, GlobalSettings},
};
use snow_controller::{
    BootstrapCredentials, CniSource, Context, ControllerError, FIELD_MANAGER, LeaderElection,
    RunOptions,
};
use snow_lifecycle::Management;
use std::{process::ExitCode, sync::Arc};
use tracing_subscriber::EnvFilter;

/// Runs `snowctl controller` until SIGTERM or SIGINT.
pub fn run(args: ControllerArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let inputs = settings::release_inputs(&args.release, io)?;
    let cni = match &args.cni_manifest {
        Some(path) => CniSource::Manifest(settings::read_cni_manifest(path, io)?),
        None => CniSource::helm_on_path(),
    };
    let default = if global.verbose > 0 { "debug" } else { "info" };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{default},kube=warn,hyper=warn,tower=warn")));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match args.log_format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
    installed.map_err(|e| exit::usage(io, format!("cannot set up logging: {e}")))?;
    let outcome = exit::runtime(io, true)?.block_on(async move {
        let mgmt = match &args.management.kubeconfig {
            Some(path) => {
                Management::connect_for_watches(path, args.management.context.as_deref()).await?
            }
            None => Management::infer().await?,
        };
        let ctx = Arc::new(Context {
            mgmt,
            inputs,
            devices: BootstrapCredentials::default(),
            manager: FIELD_MANAGER.to_owned(),
            namespace: args.namespace.clone(),
            cni,
        });
        let leader = (!args.no_leader_election).then(|| {
            LeaderElection::new(
                &args.leader_election_namespace,
                snow_controller::replica_identity(),
            )
        });
        let options = RunOptions {
            concurrency: args.concurrency,
            health: Some(args.health_addr),
            leader,
        };
        snow_controller::run(ctx, options, snow_controller::termination()).await
    });
    outcome.map(|()| ExitCode::SUCCESS).map_err(|e| {
        tracing::error!(error = %e, "controller stopped");
        match &e {
            ControllerError::Lifecycle(l) => exit::lifecycle(io, l),
            _ => exit::failed(io, e),
        }
    })
}
