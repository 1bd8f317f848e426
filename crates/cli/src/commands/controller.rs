//! `snowctl controller`: the long-running reconciler, with structured logs on stderr.

use crate::{
    args::{ControllerArgs, LogFormat},
    commands::render,
    controller::{self, BootstrapCredentials, Context, FIELD_MANAGER, LeaderElection, RunOptions},
    exit,
    lifecycle::Management,
    output::Io,
};
use std::{process::ExitCode, sync::Arc};
use tracing_subscriber::EnvFilter;

/// Runs `snowctl controller` until SIGTERM or SIGINT.
pub fn run(args: ControllerArgs, verbose: u8, io: &mut Io<'_>) -> ExitCode {
    let Some(inputs) = render::release_inputs(args.bundles.as_deref(), &args.eksd_releases, io)
    else {
        return ExitCode::from(exit::USAGE);
    };
    let default = if verbose > 0 { "debug" } else { "info" };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{default},kube=warn,hyper=warn,tower=warn")));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match args.log_format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
    if let Err(e) = installed {
        io.err(&format!("error: cannot set up logging: {e}\n"));
        return ExitCode::from(exit::USAGE);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            io.err(&format!("error: cannot start the async runtime: {e}\n"));
            return ExitCode::from(exit::FINDINGS);
        }
    };
    let outcome = runtime.block_on(async move {
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
        });
        let leader = (!args.no_leader_election)
            .then(|| LeaderElection::new(&args.leader_election_namespace, identity()));
        let options = RunOptions {
            concurrency: args.concurrency,
            health: Some(args.health_addr),
            leader,
        };
        controller::run(ctx, options, termination()).await
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "controller stopped");
            if let controller::ControllerError::Lifecycle(l) = &e
                && let Some(hint) = l.hint()
            {
                io.err(&format!("error: {e}\n  hint: {hint}\n"));
            } else {
                io.err(&format!("error: {e}\n"));
            }
            ExitCode::from(exit::FINDINGS)
        }
    }
}

/// This replica's name in the Lease: the pod's (or host's) name and the process id.
fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_owned())
        })
        .unwrap_or_else(|| "snowctl".into());
    format!("{host}_{}", std::process::id())
}

/// Resolves on SIGTERM (Kubernetes stopping the pod) or SIGINT (Ctrl-C).
async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tracing::debug!("SIGTERM and SIGINT handlers installed");
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                    _ = int.recv() => tracing::info!("SIGINT: shutting down"),
                }
            }
            _ => std::future::pending::<()>().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
