//! What every test of the stand-in needs: a kube client from a kubeconfig text, and a deadline
//! that ends a hung test with an error.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::future::Future;
use std::time::Duration;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> =
    std::result::Result<T, E>;

/// A client for `kubeconfig` (the stand-in's admin, or a ServiceAccount's).
pub(crate) async fn client_with(kubeconfig: &str) -> Result<Client> {
    let config = Config::from_custom_kubeconfig(
        Kubeconfig::from_yaml(kubeconfig)?,
        &KubeConfigOptions::default(),
    )
    .await?;
    Ok(Client::try_from(config)?)
}

/// Runs `test`, failing it after `seconds`.
pub(crate) async fn bounded(seconds: u64, test: impl Future<Output = Result>) -> Result {
    tokio::time::timeout(Duration::from_secs(seconds), test)
        .await
        .map_err(|_| format!("timed out after {seconds}s"))?
}
