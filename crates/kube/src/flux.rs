//! What Flux's objects say about a sync, read from their status alone: a GitRepository's
//! fetched revision and a Kustomization's applied one, with the `Ready` condition Flux writes
//! (its reason and message, which say why a fetch or an apply failed). Pure.

use serde_json::Value;

/// `source.toolkit.fluxcd.io/v1`, the GitRepository's API version.
pub const SOURCE_API_VERSION: &str = "source.toolkit.fluxcd.io/v1";
/// `kustomize.toolkit.fluxcd.io/v1`, the Kustomization's API version.
pub const KUSTOMIZE_API_VERSION: &str = "kustomize.toolkit.fluxcd.io/v1";
/// The annotation that asks Flux to reconcile an object now (what `flux reconcile` sets); Flux
/// echoes the value it handled in `status.lastHandledReconcileAt`.
pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";

/// The revision Flux writes for a commit of a branch: `<branch>@sha1:<commit>`.
pub fn revision(branch: &str, commit: &str) -> String {
    format!("{branch}@sha1:{commit}")
}

/// What a Flux object's status says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FluxStatus {
    /// The `Ready` condition's status (`None`: no such condition yet).
    pub ready: Option<bool>,
    /// Its reason.
    pub reason: String,
    /// Its message (Flux's words: why a fetch or an apply failed).
    pub message: String,
    /// Whether the status is for the object's current spec (`observedGeneration`).
    pub current: bool,
    /// The last `requestedAt` value handled.
    pub handled: String,
    /// A GitRepository's fetched revision (`artifact.revision`); a Kustomization's
    /// `lastAppliedRevision`.
    pub revision: String,
    /// A Kustomization's `lastAttemptedRevision` (empty for a GitRepository).
    pub attempted: String,
}

impl FluxStatus {
    /// Reads a GitRepository's or a Kustomization's status.
    pub fn read(object: &Value) -> FluxStatus {
        let status = &object["status"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let ready = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready");
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
        let revision = match object["kind"].as_str() {
            Some("GitRepository") => text(&status["artifact"]["revision"]),
            _ => text(&status["lastAppliedRevision"]),
        };
        FluxStatus {
            ready: ready.map(|c| c["status"] == "True"),
            reason: ready.map(|c| text(&c["reason"])).unwrap_or_default(),
            message: ready.map(|c| text(&c["message"])).unwrap_or_default(),
            current: status["observedGeneration"].as_i64().unwrap_or(-1) >= generation,
            handled: text(&status["lastHandledReconcileAt"]),
            revision,
            attempted: text(&status["lastAttemptedRevision"]),
        }
    }

    /// Ready for its current spec, at `revision`.
    pub fn ready_at(&self, revision: &str) -> bool {
        self.ready == Some(true) && self.current && self.revision == revision
    }

    /// `Ready=False (reason): message`, or that Flux has said nothing yet.
    pub fn detail(&self) -> String {
        match self.ready {
            None => "Flux has not reported on it yet".into(),
            Some(ready) => {
                let mut text = format!("Ready={}", if ready { "True" } else { "False" });
                if !self.reason.is_empty() {
                    text.push_str(&format!(" ({})", self.reason));
                }
                if !self.message.is_empty() {
                    text.push_str(&format!(": {}", self.message));
                }
                if !self.revision.is_empty() {
                    text.push_str(&format!("; at {}", self.revision));
                }
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_kustomization_is_ready_at_the_revision_it_applied() {
        let ks = json!({"kind": "Kustomization", "metadata": {"generation": 2},
            "status": {"observedGeneration": 2, "lastAppliedRevision": "main@sha1:ab",
                "lastAttemptedRevision": "main@sha1:cd",
                "conditions": [{"type": "Ready", "status": "False", "reason": "ReconciliationFailed",
                    "message": "Cluster/default/x dry-run failed: denied"}]}});
        let status = FluxStatus::read(&ks);
        assert_eq!(status.ready, Some(false));
        assert_eq!(status.attempted, "main@sha1:cd");
        assert!(!status.ready_at("main@sha1:ab"));
        assert_eq!(
            status.detail(),
            "Ready=False (ReconciliationFailed): Cluster/default/x dry-run failed: denied; at main@sha1:ab"
        );
        let mut ok = ks.clone();
        ok["status"]["conditions"][0]["status"] = "True".into();
        assert!(FluxStatus::read(&ok).ready_at("main@sha1:ab"));
        ok["metadata"]["generation"] = 3.into();
        assert!(!FluxStatus::read(&ok).ready_at("main@sha1:ab"));
    }

    #[test]
    fn a_git_repository_says_its_artifact() {
        let repo = json!({"kind": "GitRepository", "metadata": {"generation": 1},
            "status": {"observedGeneration": 1, "artifact": {"revision": revision("main", "ab")},
                "lastHandledReconcileAt": "x"}});
        let status = FluxStatus::read(&repo);
        assert_eq!(status.revision, "main@sha1:ab");
        assert_eq!(status.handled, "x");
        assert_eq!(status.ready, None);
        assert_eq!(status.detail(), "Flux has not reported on it yet");
    }
}
