//! Why a lifecycle step failed, with what to do about it.

use snow_api::Finding;
use snow_kube::KubeError;
use std::path::PathBuf;

/// A lifecycle failure. Every variant says what failed, in the library's terms (its fields are
/// the data a caller needs to say what to do).
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// A request to a cluster, a kubeconfig, a wait (snow-kube's client).
    #[error(transparent)]
    Kube(#[from] KubeError),
    /// Cluster API, CAPAS or etcdadm are not installed (or not available) on the management
    /// cluster.
    #[error("the management cluster cannot run Snow clusters yet:\n  - {}", .missing.join("\n  - "))]
    ProvidersMissing {
        /// What is missing, one line each.
        missing: Vec<String>,
    },
    /// The cluster could not be rendered.
    #[error("cannot render the cluster: {0}")]
    Render(#[from] capi_render::RenderError),
    /// The upgrade's objects could not be named and rendered against the live ones.
    #[error("cannot render the cluster: {0}")]
    UpgradePlan(#[from] capi_render::upgrade::UpgradeError),
    /// A document snowctl made or read (a rendered object, the spec's documents, a record)
    /// could not be encoded or decoded.
    #[error("{what}: {reason}")]
    Document {
        /// Which document.
        what: String,
        /// The encoder's or parser's words.
        reason: String,
    },
    /// The spec changes what cannot change on an existing cluster, or the cluster is missing.
    #[error("the spec cannot be applied to cluster {cluster}: {} finding(s)", .findings.len())]
    Rejected {
        /// The cluster.
        cluster: String,
        /// Every reason, as findings with field paths.
        findings: Vec<Finding>,
    },
    /// The default SSH key could not be put on every device (the findings name each device).
    #[error("the default SSH key pair {name} is not on every device: {} device(s) failed", .findings.len())]
    DefaultKey {
        /// The key pair name.
        name: String,
        /// One per device that failed, or the device files' problem.
        findings: Vec<Finding>,
    },
    /// `create` found the cluster already there with different templates.
    #[error(
        "cluster {cluster} already exists and differs from the spec:\n  - {}",
        .changes.join("\n  - ")
    )]
    ExistsDiffers {
        /// The cluster.
        cluster: String,
        /// The template changes an upgrade would make.
        changes: Vec<String>,
    },
    /// The cluster was imported (observe-only): snowctl does not act on its infrastructure.
    #[error(
        "cluster {cluster} was imported observe-only (its AWSSnowCluster is annotated cluster.x-k8s.io/managed-by: snowctl): {action} is refused; snowctl never changes or removes what an imported cluster runs on"
    )]
    Imported {
        /// The cluster.
        cluster: String,
        /// What was refused (`upgrade cluster`, `delete cluster`, …).
        action: String,
    },
    /// The cluster's infrastructure is managed by another system (its AWSSnowCluster carries
    /// Cluster API's externally-managed annotation with a value other than snowctl's import).
    #[error(
        "cluster {cluster} is managed by another system (its AWSSnowCluster is annotated cluster.x-k8s.io/managed-by: {manager:?}): {action} is refused; Cluster API's infrastructure provider leaves such a cluster to that system, and so does snowctl: change it through that system"
    )]
    ManagedElsewhere {
        /// The cluster.
        cluster: String,
        /// What was refused (`upgrade cluster`, `delete cluster`, …).
        action: String,
        /// The annotation's value: the system that manages it.
        manager: String,
    },
    /// The cluster is paused by someone else (not by a move of snowctl's).
    #[error(
        "cluster {cluster} is paused ({how}) and not by snowctl: {action} is refused; Cluster API does not act on a paused cluster, and snowctl never lifts a pause it did not make: unpause it once whoever paused it is done"
    )]
    Paused {
        /// The cluster.
        cluster: String,
        /// What was refused (`upgrade cluster`, `delete cluster`, …).
        action: String,
        /// How it is paused (`spec.paused: true`, the annotation and its value).
        how: String,
    },
    /// A move or backup found no Cluster of the name because the Cluster API CRDs lack
    /// clusterctl's label, by which a move finds the kinds it carries (Cluster API installed by
    /// something other than clusterctl); the cluster itself is there.
    #[error(
        "cluster {cluster} is on the management cluster, but a move cannot find its objects: {} Cluster API CRD(s) lack clusterctl's label clusterctl.cluster.x-k8s.io, by which a move finds the kinds it carries (Cluster API was installed by something other than clusterctl); label them as clusterctl does (nothing was changed):\n  kubectl label crd {} clusterctl.cluster.x-k8s.io=",
        .crds.len(),
        .crds.join(" ")
    )]
    UnlabelledCrds {
        /// The cluster.
        cluster: String,
        /// The names of the Cluster API CRDs without the label, sorted.
        crds: Vec<String>,
    },
    /// An import-only step met a cluster that was not imported.
    #[error("cluster {cluster}: {reason}")]
    NotImported {
        /// The cluster.
        cluster: String,
        /// What is in the way.
        reason: String,
    },
    /// The object asked for is not there.
    #[error("{what} is not on the management cluster")]
    NotFound {
        /// `cluster NAME`.
        what: String,
    },
    /// Variables of the components manifests have neither a value nor a default.
    #[error(
        "variables without a value or a default (nothing was applied):\n  - {}",
        .missing.iter().map(|(c, v)| format!("{c}: {}", missing_listed(v))).collect::<Vec<_>>().join("\n  - ")
    )]
    MissingVariables {
        /// By component label: the variables it lacks.
        missing: Vec<(String, Vec<String>)>,
    },
    /// A component's manifest could not be found or read.
    #[error("cannot use the {component} {version} components ({origin}): {reason}")]
    Components {
        /// The component (`cluster-api`, `infrastructure-snow`, `cert-manager`, …).
        component: String,
        /// Its version.
        version: String,
        /// The file or URI.
        origin: String,
        /// Why.
        reason: String,
    },
    /// Providers of other versions than the bundle's are installed.
    #[error(
        "the management cluster runs other versions of the providers (nothing was applied):\n  - {}",
        .differences.join("\n  - ")
    )]
    ProviderVersionDiffers {
        /// One line per provider.
        differences: Vec<String>,
    },
    /// A component's CRD or Deployment did not become ready in time.
    #[error(
        "timed out after {after} waiting for {object}: {condition} never became true ({detail})"
    )]
    ComponentNotReady {
        /// `Kind namespace/name`.
        object: String,
        /// `Established` or `Available`.
        condition: String,
        /// What it said last.
        detail: String,
        /// How long was waited.
        after: String,
    },
    /// A move (or restore) cannot start: every reason.
    #[error("cannot move {cluster}:\n  - {}", .reasons.join("\n  - "))]
    MoveRefused {
        /// The cluster (or the backup directory).
        cluster: String,
        /// Why, one line each.
        reasons: Vec<String>,
    },
    /// A backup directory could not be read.
    #[error("cannot restore from {}: {reason}", .path.display())]
    Backup {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong, one line per file.
        reason: String,
    },
    /// The backup before an upgrade failed: nothing of the upgrade was applied.
    #[error(
        "the backup of cluster {cluster} before the upgrade failed (nothing was upgraded): {cause}"
    )]
    BackupFailed {
        /// The cluster.
        cluster: String,
        /// Why.
        cause: Box<LifecycleError>,
    },
    /// The workload cluster refused or failed a request, or could not be reached.
    #[error("on the workload cluster of {cluster}: {reason}")]
    Workload {
        /// The cluster.
        cluster: String,
        /// What failed.
        reason: String,
    },
    /// A create or upgrade was asked without the CNI manifest it installs.
    #[error(
        "no CNI manifest: snowctl installs Cilium on the workload cluster from a rendered manifest, and none was given (nothing was applied)"
    )]
    NoCniManifest,
    /// A Cilium manifest cannot be stored on the management cluster (too large, or not a Cilium
    /// manifest).
    #[error("cannot store the Cilium manifest {name}: {reason}")]
    CiliumStore {
        /// The ConfigMap it would be.
        name: String,
        /// Why.
        reason: String,
    },
    /// The CAPAS identity Secret is not on the management cluster and no credentials were given.
    #[error(
        "the CAPAS identity Secret {namespace}/{name} is not on the management cluster and no device credentials were given (nothing was applied)"
    )]
    NoIdentity {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// A local file could not be written.
    #[error("cannot write {}: {reason}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A local file could not be read, or what it holds cannot be used.
    #[error("cannot read {}: {reason}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A tool the kind bootstrap cluster needs is not installed.
    #[error(
        "`{tool}` was not found ({searched}): the built-in bootstrap cluster runs kind, which needs kind and docker; an existing cluster (k3s, kind, any Kubernetes) can be the bootstrap cluster instead"
    )]
    ToolMissing {
        /// `kind` or `docker`.
        tool: String,
        /// Where it was looked for.
        searched: String,
    },
    /// A tool failed.
    #[error("`{command}` failed ({status}){}", tail(.stderr))]
    Command {
        /// The command line.
        command: String,
        /// The exit status, or why it could not run.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// A tool did not finish in time and was stopped.
    #[error("`{command}` did not finish within {after} and was stopped{}", tail(.stderr))]
    CommandTimeout {
        /// The command line.
        command: String,
        /// How long it was given.
        after: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The release bundle lacks something the step needs.
    #[error("{0}")]
    Release(#[from] snow_api::release::ReleaseError),
}

/// Missing variables named per component in [`LifecycleError::MissingVariables`]; the rest are
/// counted ("… and N more"). A real stack lacks two at most (the device credentials).
pub const MAX_MISSING_LISTED: usize = 20;

/// The first [`MAX_MISSING_LISTED`] names, then how many more.
fn missing_listed(names: &[String]) -> String {
    let max = MAX_MISSING_LISTED;
    let mut text = names[..names.len().min(max)].join(", ");
    if names.len() > max {
        text.push_str(&format!(", … and {} more", names.len() - max));
    }
    text
}

/// `: <stderr>` when there is one.
fn tail(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(":\n{stderr}")
    }
}

impl LifecycleError {
    /// Whether the input given cannot be used (a kubeconfig, the components, a backup
    /// directory), as opposed to a failure of the work.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            LifecycleError::Kube(KubeError::Kubeconfig { .. })
                | LifecycleError::Components { .. }
                | LifecycleError::Backup { .. }
        )
    }

    /// The findings behind the error, with what they are about (`spec`, `devices`).
    pub fn findings(&self) -> Option<(&'static str, &[Finding])> {
        match self {
            LifecycleError::Rejected { findings, .. } => Some(("spec", findings)),
            LifecycleError::DefaultKey { findings, .. } => Some(("devices", findings)),
            _ => None,
        }
    }
}

/// The text of an error and its causes, URL user information redacted (snow-kube's).
pub(crate) use snow_kube::error::chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_variables_are_listed_up_to_a_bound() {
        let names = |n: usize| (0..n).map(|i| format!("VARIABLE_{i}")).collect::<Vec<_>>();
        let err = |n| {
            LifecycleError::MissingVariables {
                missing: vec![
                    ("cluster-api".into(), names(n)),
                    ("infrastructure-snow".into(), names(2)),
                ],
            }
            .to_string()
        };
        let few = err(20);
        assert!(
            few.contains("cluster-api: VARIABLE_0, VARIABLE_1,")
                && few.ends_with("- infrastructure-snow: VARIABLE_0, VARIABLE_1"),
            "{few}"
        );
        assert!(!few.contains("more"), "{few}");
        // 50,000 names made one 1.5 MB line.
        let many = err(50_000);
        assert!(many.contains("VARIABLE_19, … and 49980 more\n"), "{many}");
        assert!(many.len() < 1000, "{} bytes", many.len());
    }
}
