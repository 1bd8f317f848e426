//! What a controller process needs from its surroundings: a name for the Lease, and a signal to
//! stop on.

/// This replica's name in the Lease: the pod's (or host's) name and the process id.
pub fn replica_identity() -> String {
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
pub async fn termination() {
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
