//! Why a request to a cluster, a kubeconfig or a wait failed.

use std::path::PathBuf;

/// A failure of the client: every variant says what failed in the client's terms (its fields are
/// the data a caller needs to say what to do). `snow_lifecycle::LifecycleError` carries it as
/// its `Kube` variant.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// The kubeconfig could not be read or used.
    #[error("cannot use the kubeconfig {path}: {reason}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The management cluster's API server did not answer.
    #[error("cannot reach the management cluster at {server}: {reason}")]
    Unreachable {
        /// The API server URL.
        server: String,
        /// The transport error.
        reason: String,
    },
    /// The API server refused or failed a request.
    #[error("{action} {object} on the management cluster failed: {message} (HTTP {code})")]
    Api {
        /// What was being done (`apply`, `get`, `delete`, `list`).
        action: &'static str,
        /// `Kind/name` or the resource.
        object: String,
        /// The HTTP status.
        code: u16,
        /// The server's message.
        message: String,
    },
    /// A wait did not finish in time.
    #[error(
        "timed out after {after} waiting for {object}: {condition} never became true ({detail})"
    )]
    Timeout {
        /// `Kind/name`.
        object: String,
        /// The condition waited for.
        condition: String,
        /// What the object said last.
        detail: String,
        /// How long was waited.
        after: String,
    },
    /// A document to apply (a rendered object) could not be read.
    #[error("{what}: {reason}")]
    Document {
        /// Which document.
        what: String,
        /// The parser's words.
        reason: String,
    },
    /// A kubeconfig read out of a Secret does not read, or authenticates otherwise than with an
    /// inline token or client certificate (see [`crate::kubeconfig::Published`]): never used.
    #[error("the kubeconfig in Secret {secret} cannot be used: {reason}")]
    SecretKubeconfig {
        /// `namespace/name`.
        secret: String,
        /// What is wrong.
        reason: String,
    },
    /// A kubeconfig file is in the way.
    #[error("{} exists and holds another kubeconfig", .path.display())]
    KubeconfigFileExists {
        /// The file.
        path: PathBuf,
    },
    /// A workload kubeconfig file could not be written.
    #[error("cannot write {}: {reason}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A workload kubeconfig file in the way could not be read.
    #[error("cannot read {}: {reason}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The text of an error and its causes, for messages (kube errors wrap the real reason), with
/// the user information of any URL in it redacted (a kubeconfig's server URL can hold a
/// password, and a transport error may quote it).
pub fn chain(err: &dyn std::error::Error) -> String {
    snow_api::redact::redact_userinfo(&snow_api::error_chain(err)).into_owned()
}
