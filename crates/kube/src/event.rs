//! Progress of a lifecycle step, reported as it happens.

use std::fmt;

/// What a wait is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// The external etcd cluster.
    Etcd,
    /// The control plane (KubeadmControlPlane).
    ControlPlane,
    /// One worker group (its MachineDeployment).
    Workers(String),
    /// The deletion of the cluster and its machines.
    Deletion,
    /// A management component's workload (`Deployment namespace/name`).
    Rollout(String),
    /// The control plane's first API server (Cluster API's "initialized").
    ControlPlaneInitialized,
    /// A CNI workload on the workload cluster (`DaemonSet kube-system/cilium`).
    Cni(String),
    /// The Cluster as a whole.
    Cluster,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Etcd => f.write_str("External etcd"),
            Stage::ControlPlane => f.write_str("Control plane"),
            Stage::Workers(group) => write!(f, "Worker group {group}"),
            Stage::Deletion => f.write_str("Cluster deletion"),
            Stage::Rollout(object) => f.write_str(object),
            Stage::ControlPlaneInitialized => f.write_str("Control plane initialization"),
            Stage::Cni(object) => write!(f, "CNI {object}"),
            Stage::Cluster => f.write_str("Cluster"),
        }
    }
}

/// One thing that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A step begins.
    Step(String),
    /// An object was applied.
    Applied {
        /// `Kind/name`.
        object: String,
    },
    /// An object was deleted.
    Deleted {
        /// `Kind/name`.
        object: String,
    },
    /// A wait saw new numbers.
    Waiting {
        /// What is waited for.
        stage: Stage,
        /// Ready so far.
        ready: u32,
        /// Wanted.
        total: u32,
        /// What the object says (conditions, phase).
        detail: String,
    },
    /// A wait finished.
    Ready {
        /// What was waited for.
        stage: Stage,
        /// Ready.
        ready: u32,
        /// Wanted.
        total: u32,
    },
    /// Something worth saying that is not a failure.
    Note(String),
}

impl Event {
    /// Whether the event is detail (shown with `-v`) rather than a milestone.
    pub fn is_detail(&self) -> bool {
        matches!(
            self,
            Event::Applied { .. } | Event::Deleted { .. } | Event::Waiting { .. }
        )
    }
}

/// The lines a person follows: every milestone, and every event with `verbose`; without it, a
/// wait says only when its count moves (`⏳ Control plane: 2/3 ready`), so a long wait is
/// visibly alive without a line per poll.
#[derive(Debug, Default)]
pub struct Milestones {
    verbose: bool,
    last: Option<(Stage, u32)>,
}

impl Milestones {
    /// All events as lines with `verbose`, else milestones and moving counts.
    pub fn new(verbose: bool) -> Milestones {
        Milestones {
            verbose,
            last: None,
        }
    }

    /// The line to show for `event`, if any.
    pub fn line(&mut self, event: &Event) -> Option<String> {
        match event {
            Event::Waiting {
                stage,
                ready,
                total,
                ..
            } if !self.verbose => {
                let now = Some((stage.clone(), *ready));
                if now == self.last {
                    return None;
                }
                self.last = now;
                Some(match stage {
                    Stage::Deletion => format!("⏳ Cluster deletion: {ready} object(s) left"),
                    _ => format!("⏳ {stage}: {ready}/{total} ready"),
                })
            }
            _ if self.verbose || !event.is_detail() => Some(event.to_string()),
            _ => None,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Step(text) => f.write_str(text),
            Event::Applied { object } => write!(f, "  applied {object}"),
            Event::Deleted { object } => write!(f, "  deleted {object}"),
            Event::Waiting {
                stage: Stage::Deletion,
                ready,
                detail,
                ..
            } => write!(f, "⏳ Cluster deletion: {ready} object(s) left ({detail})"),
            Event::Waiting {
                stage,
                ready,
                total,
                detail,
            } => write!(f, "⏳ {stage}: {ready}/{total} ready ({detail})"),
            Event::Ready {
                stage: Stage::Deletion,
                ..
            } => f.write_str("✅ Cluster and machines deleted"),
            Event::Ready {
                stage: Stage::ControlPlaneInitialized,
                ..
            } => f.write_str("✅ Control plane initialized"),
            Event::Ready {
                stage,
                ready,
                total,
            } => write!(f, "✅ {stage} ready ({ready}/{total})"),
            Event::Note(text) => f.write_str(text),
        }
    }
}
