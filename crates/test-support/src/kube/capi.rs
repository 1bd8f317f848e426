//! Simulated Cluster API controllers.

use super::Shared;
use std::sync::Arc;
use std::time::Duration;

/// Options of the simulation.
#[derive(Debug, Clone)]
pub struct CapiOptions {
    /// Delay between steps.
    pub step: Duration,
    /// Objects that never become ready.
    pub stall: Vec<(String, String)>,
}

/// A running simulation.
#[derive(Debug)]
pub struct CapiHandle {
    task: tokio::task::JoinHandle<()>,
}

pub(crate) fn start(shared: Arc<Shared>, options: CapiOptions) -> CapiHandle {
    let _ = (shared, options);
    CapiHandle {
        task: tokio::spawn(async {}),
    }
}

impl Drop for CapiHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}
