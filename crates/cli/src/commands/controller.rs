//! `snowctl controller`: the long-running reconciler, with structured logs on stderr.

use crate::{
    args::{ControllerArgs, LogFormat},
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::{
        GlobalSettings,
        controller::{CniSettings, ControllerSettings},
    },
};
use snow_controller::{
    BootstrapCredentials, CniSource, Context, ControllerError, FIELD_MANAGER, LeaderElection,
    RunOptions,
    webhook::{WebhookError, WebhookOptions},
};
use snow_provision::Management;
use std::{process::ExitCode, sync::Arc};
use tracing_subscriber::EnvFilter;

/// Runs `snowctl controller` until SIGTERM or SIGINT.
pub fn run(
    args: ControllerArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let ControllerSettings {
        kubeconfig: source,
        catalog,
        cni,
    } = exit::noted(io, ControllerSettings::resolve(&args, environment))?;
    // Kept for the controller's lifetime: the chart files are removed when it returns. The
    // charts come from the archive the catalog was read from, opened once.
    let (cni, charts) = match (cni, &catalog.archive) {
        (CniSettings::Stored, _) => (CniSource::Stored, None),
        (CniSettings::Manifest(manifest), _) => (CniSource::Manifest(manifest), None),
        (CniSettings::Helm, Some(archive)) => {
            let charts = snow_images::charts::cilium_charts_of(archive, &catalog.inputs);
            let charts = charts.map_err(|e| exit::charts(io, &e))?;
            let from = archive.path().display().to_string();
            let cni = CniSource::chart_files_on_path(charts.files.clone(), from);
            (cni, Some(charts))
        }
        (CniSettings::Helm, None) => (CniSource::helm_on_path(), None),
    };
    let inputs = catalog.inputs;
    let default = global.log_filter(true).unwrap_or("info");
    let filter =
        EnvFilter::try_from_env(crate::env::RUST_LOG).unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(crate::logging::RedactedStderr);
    let installed = match args.log_format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
    installed.map_err(|e| exit::usage(io, format!("cannot set up logging: {e}")))?;
    if let (Some(charts), Some(archive)) = (&charts, &args.release.artifacts) {
        for (chart, file) in &charts.files {
            tracing::info!(%chart, archive = %archive.display(), file = %file.display(), "Cilium chart taken from the archive");
        }
    }
    let outcome = exit::runtime(io, true)?.block_on(async move {
        let mgmt = match &source {
            Some(source) => Management::connect_for_watches(source).await?,
            None => Management::in_cluster().await?,
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
            webhook: (args.webhook_cert_dir.clone()).map(|cert_dir| WebhookOptions {
                addr: args.webhook_addr,
                cert_dir,
            }),
        };
        snow_controller::run(ctx, options, snow_controller::termination()).await
    });
    outcome.map(|()| ExitCode::SUCCESS).map_err(|e| {
        tracing::error!(error = %e, "controller stopped");
        match &e {
            ControllerError::Lifecycle(l) => exit::lifecycle(io, l),
            // Unreadable input: what the flag names cannot be served with.
            ControllerError::Webhook(WebhookError::Certificate(_)) => exit::usage(io, e),
            _ => exit::failed(io, e),
        }
    })
}
