//! `standing`: what a command will not do to a cluster, known from one read of the management
//! cluster, before anything the command would need to do it (a tool on `PATH`, the devices, a
//! release download).
//!
//! [`Standing::read`] reads the live Cluster API Cluster of a name in `eksa-system` (under
//! either contract) and the `AWSSnowCluster` its `infrastructureRef` names; [`Standing::judge`]
//! gives the refusal for an [`Action`], first found first:
//! 1. the cluster is not there ([`LifecycleError::NotFound`]), for an action that needs it
//!    ([`Action::needs_cluster`]: not a create, a delete (nothing to delete is not an error) or a
//!    move to another management cluster, which may only have its end left to do there);
//! 2. it was imported observe-only ([`LifecycleError::Imported`]: the Cluster labelled
//!    [`crate::IMPORTED_LABEL`], or its AWSSnowCluster annotated
//!    [`crate::MANAGED_BY_ANNOTATION`] with snowctl's value);
//! 3. its infrastructure is managed by another system ([`LifecycleError::ManagedElsewhere`]: the
//!    annotation with any other value; Cluster API's infrastructure providers skip such an
//!    object, `util/annotations.IsExternallyManaged`);
//! 4. it is paused by someone else ([`LifecycleError::Paused`]: `spec.paused: true` or the
//!    [`crate::PAUSED`] annotation, unless the pause is a move's own,
//!    [`crate::move_cluster::MOVE_PAUSE`]), for an action that changes the cluster.
//!
//! [`refusal`] is both in one call, for a command right after it connects. The operations keep
//! their own checks (an imported cluster is refused by create, upgrade, delete, move and
//! renew whether or not [`refusal`] was called first).

use crate::{LifecycleError, Management, PAUSED};
use capi_render::NAMESPACE;
use serde_json::{Value, json};
use snow_api::names::MANAGED_BY_ANNOTATION;
use snow_api::release::INFRA_API_VERSION;
use snow_kube::live::{MANAGED_BY_VALUE, find_cluster, is_imported};

/// What a command would do to a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Create it (or converge an existing one).
    Create,
    /// Upgrade it.
    Upgrade,
    /// Plan an upgrade: reads only, so a pause is no refusal.
    UpgradePlan,
    /// Delete it.
    Delete,
    /// Roll its control plane to renew the certificates.
    RenewCertificates,
    /// Move it to another management cluster.
    Move,
    /// Write its objects to a directory.
    Backup,
}

impl Action {
    /// The action in the words of a refusal (`upgrade cluster is refused`).
    pub fn words(self) -> &'static str {
        match self {
            Action::Create => "create cluster",
            Action::Upgrade => "upgrade cluster",
            Action::UpgradePlan => "upgrade plan",
            Action::Delete => "delete cluster",
            Action::RenewCertificates => "renew certificates",
            Action::Move => "move cluster",
            Action::Backup => "backup",
        }
    }

    /// Whether the cluster must be there: not for a create, nor for a delete (nothing to
    /// delete), nor for a move to another management cluster (an interrupted move may have
    /// taken it from here already and only have to unpause it there).
    pub fn needs_cluster(self) -> bool {
        !matches!(self, Action::Create | Action::Delete | Action::Move)
    }

    /// Whether the action writes to the cluster (a pause is then a refusal).
    pub fn changes(self) -> bool {
        self != Action::UpgradePlan
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.words())
    }
}

/// A cluster as the refusals see it.
#[derive(Debug, Clone, Default)]
pub struct Standing {
    /// The Cluster API Cluster, when it is there.
    pub cluster: Option<Value>,
    /// The AWSSnowCluster it names (its `infrastructureRef`), when it is there.
    pub infrastructure: Option<Value>,
}

impl Standing {
    /// Reads cluster `name` in `eksa-system`: its Cluster (either contract), then the
    /// AWSSnowCluster its `infrastructureRef` names (GETs only).
    pub async fn read(mgmt: &Management, name: &str) -> Result<Standing, LifecycleError> {
        let (_, cluster) = find_cluster(mgmt, name, None).await?;
        let Some(cluster) = cluster else {
            return Ok(Standing::default());
        };
        let infrastructure = match infrastructure_ref(&cluster, name) {
            Some((api_version, namespace, infra)) => {
                mgmt.get(&api_version, "AWSSnowCluster", Some(&namespace), &infra)
                    .await?
            }
            None => None,
        };
        Ok(Standing {
            cluster: Some(cluster),
            infrastructure,
        })
    }

    /// The refusal of `action` on cluster `name`, if any (the module's order).
    pub fn judge(&self, name: &str, action: Action) -> Result<(), LifecycleError> {
        let Some(cluster) = &self.cluster else {
            return match action.needs_cluster() {
                true => Err(LifecycleError::NotFound {
                    what: format!("cluster {name}"),
                }),
                false => Ok(()),
            };
        };
        let manager = self.infrastructure.as_ref().and_then(managed_by);
        if is_imported(cluster) || manager == Some(MANAGED_BY_VALUE) {
            return Err(LifecycleError::Imported {
                cluster: name.to_owned(),
                action: action.words().to_owned(),
            });
        }
        if let Some(manager) = manager {
            return Err(LifecycleError::ManagedElsewhere {
                cluster: name.to_owned(),
                action: action.words().to_owned(),
                manager: manager.to_owned(),
            });
        }
        if action.changes()
            && let Some(how) = paused_by_someone(cluster)
        {
            return Err(LifecycleError::Paused {
                cluster: name.to_owned(),
                action: action.words().to_owned(),
                how,
            });
        }
        Ok(())
    }
}

/// Reads cluster `name` ([`Standing::read`]) and refuses `action` ([`Standing::judge`]); the
/// cluster as read when nothing is refused.
pub async fn refusal(
    mgmt: &Management,
    name: &str,
    action: Action,
) -> Result<Standing, LifecycleError> {
    let standing = Standing::read(mgmt, name).await?;
    standing.judge(name, action)?;
    Ok(standing)
}

/// `(apiVersion, namespace, name)` of the AWSSnowCluster a Cluster names: its
/// `infrastructureRef` (v1beta1: `apiVersion` and `namespace`; v1beta2: `apiGroup`, the
/// Cluster's namespace), or the Cluster's own name when it names none; `None` when it names
/// another kind.
fn infrastructure_ref(cluster: &Value, name: &str) -> Option<(String, String, String)> {
    let reference = &cluster["spec"]["infrastructureRef"];
    let namespace = (reference["namespace"].as_str())
        .or(cluster["metadata"]["namespace"].as_str())
        .unwrap_or(NAMESPACE);
    if reference.is_null() {
        return Some((INFRA_API_VERSION.into(), namespace.into(), name.into()));
    }
    if reference["kind"] != "AWSSnowCluster" {
        return None;
    }
    let api_version = match reference["apiVersion"].as_str() {
        Some(v) if v.starts_with("infrastructure.cluster.x-k8s.io/") => v,
        _ => INFRA_API_VERSION,
    };
    let infra = reference["name"].as_str().unwrap_or(name);
    Some((api_version.into(), namespace.into(), infra.into()))
}

/// The value of the pause annotation a move sets: a pause `move_cluster` made (and may undo),
/// which is no one else's pause.
pub const MOVE_PAUSE: &str = "snowctl-move";

/// The value of [`MANAGED_BY_ANNOTATION`] on an infrastructure object, when it has it
/// (its presence is what counts: an empty value is still a manager).
pub fn managed_by(infrastructure: &Value) -> Option<&str> {
    infrastructure["metadata"]["annotations"][MANAGED_BY_ANNOTATION].as_str()
}

/// How a Cluster is paused by someone other than a move of snowctl's
/// ([`crate::move_cluster::MOVE_PAUSE`]): `spec.paused: true` and/or the [`PAUSED`] annotation,
/// said; `None` when it is not paused, or paused by a move.
pub fn paused_by_someone(cluster: &Value) -> Option<String> {
    let annotation = &cluster["metadata"]["annotations"][PAUSED];
    if annotation == MOVE_PAUSE {
        return None;
    }
    let mut how = Vec::new();
    if cluster["spec"]["paused"] == json!(true) {
        how.push("spec.paused: true".to_owned());
    }
    if let Some(value) = annotation.as_str() {
        how.push(format!("annotation {PAUSED}: {value:?}"));
    }
    (!how.is_empty()).then(|| how.join(", "))
}

/// Refuses `action` when `cluster` (the live Cluster of `name`, if any) was imported.
pub(crate) fn refuse_live(
    cluster: Option<&Value>,
    name: &str,
    action: &str,
) -> Result<(), LifecycleError> {
    match cluster {
        Some(cluster) if is_imported(cluster) => Err(LifecycleError::Imported {
            cluster: name.to_owned(),
            action: action.to_owned(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snow_kube::live::IMPORTED_LABEL;

    fn cluster(metadata: Value, spec: Value) -> Value {
        let mut metadata = metadata;
        metadata["name"] = json!("edge");
        metadata["namespace"] = json!(NAMESPACE);
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": metadata, "spec": spec})
    }

    fn infra(annotations: Value) -> Value {
        json!({"apiVersion": INFRA_API_VERSION, "kind": "AWSSnowCluster", "metadata": {"name": "edge", "namespace": NAMESPACE, "annotations": annotations}})
    }

    fn standing(cluster: Value, infrastructure: Option<Value>) -> Standing {
        Standing {
            cluster: Some(cluster),
            infrastructure,
        }
    }

    const ALL: [Action; 7] = [
        Action::Create,
        Action::Upgrade,
        Action::UpgradePlan,
        Action::Delete,
        Action::RenewCertificates,
        Action::Move,
        Action::Backup,
    ];

    #[test]
    fn an_absent_cluster_is_refused_only_where_it_must_be_there() {
        let absent = Standing::default();
        for action in ALL {
            let judged = absent.judge("edge", action);
            match action {
                Action::Create | Action::Delete | Action::Move => {
                    assert!(judged.is_ok(), "{action}")
                }
                _ => assert!(
                    matches!(&judged, Err(LifecycleError::NotFound { what }) if what == "cluster edge"),
                    "{action}: {judged:?}"
                ),
            }
        }
    }

    #[test]
    fn a_plain_cluster_is_refused_nothing() {
        let plain = standing(
            cluster(json!({}), json!({"paused": false})),
            Some(infra(json!({}))),
        );
        for action in ALL {
            assert!(plain.judge("edge", action).is_ok(), "{action}");
        }
        // No AWSSnowCluster found (another tool's infrastructure, or not made yet): nothing to say.
        assert!(
            standing(cluster(json!({}), json!({})), None)
                .judge("edge", Action::Upgrade)
                .is_ok()
        );
    }

    #[test]
    fn an_imported_cluster_is_refused_every_action_by_its_label_or_its_annotation() {
        let labelled = standing(
            cluster(json!({"labels": {IMPORTED_LABEL: "true"}}), json!({})),
            None,
        );
        let annotated = standing(
            cluster(json!({}), json!({})),
            Some(infra(json!({MANAGED_BY_ANNOTATION: MANAGED_BY_VALUE}))),
        );
        for s in [labelled, annotated] {
            for action in ALL {
                let err = s.judge("edge", action).unwrap_err();
                assert!(
                    matches!(&err, LifecycleError::Imported { cluster, action: a } if cluster == "edge" && a == action.words()),
                    "{err:?}"
                );
                assert!(
                    err.to_string()
                        .contains(&format!("{} is refused", action.words())),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn another_systems_infrastructure_is_refused_naming_the_system() {
        let s = standing(
            cluster(json!({}), json!({})),
            Some(infra(json!({MANAGED_BY_ANNOTATION: "fleet-operator"}))),
        );
        for action in ALL {
            let err = s.judge("edge", action).unwrap_err();
            assert!(
                matches!(&err, LifecycleError::ManagedElsewhere { manager, .. } if manager == "fleet-operator"),
                "{err:?}"
            );
            assert!(err.to_string().contains("fleet-operator"), "{err}");
        }
        // Presence counts: an empty value is another system too.
        let empty = standing(
            cluster(json!({}), json!({})),
            Some(infra(json!({MANAGED_BY_ANNOTATION: ""}))),
        );
        assert!(matches!(
            empty.judge("edge", Action::Delete),
            Err(LifecycleError::ManagedElsewhere { .. })
        ));
    }

    #[test]
    fn a_pause_of_someone_else_refuses_what_writes_and_a_moves_own_does_not() {
        let by_spec = standing(cluster(json!({}), json!({"paused": true})), None);
        let by_annotation = standing(
            cluster(json!({"annotations": {PAUSED: "maintenance"}}), json!({})),
            None,
        );
        for (s, said) in [
            (&by_spec, "spec.paused: true"),
            (
                &by_annotation,
                "annotation cluster.x-k8s.io/paused: \"maintenance\"",
            ),
        ] {
            for action in ALL {
                let judged = s.judge("edge", action);
                if action == Action::UpgradePlan {
                    assert!(judged.is_ok(), "a plan reads only");
                    continue;
                }
                let err = judged.unwrap_err();
                assert!(
                    matches!(&err, LifecycleError::Paused { how, .. } if how == said),
                    "{action}: {err:?}"
                );
                assert!(
                    err.to_string()
                        .contains(&format!("{} is refused", action.words())),
                    "{err}"
                );
            }
        }
        let by_move = standing(
            cluster(
                json!({"annotations": {PAUSED: MOVE_PAUSE}}),
                json!({"paused": true}),
            ),
            None,
        );
        for action in ALL {
            assert!(by_move.judge("edge", action).is_ok(), "{action}");
        }
    }

    #[test]
    fn the_refusals_come_in_order_absent_imported_elsewhere_paused() {
        let both = standing(
            cluster(
                json!({"labels": {IMPORTED_LABEL: "true"}}),
                json!({"paused": true}),
            ),
            Some(infra(json!({MANAGED_BY_ANNOTATION: "fleet"}))),
        );
        assert!(matches!(
            both.judge("edge", Action::Upgrade),
            Err(LifecycleError::Imported { .. })
        ));
        let elsewhere_paused = standing(
            cluster(json!({}), json!({"paused": true})),
            Some(infra(json!({MANAGED_BY_ANNOTATION: "fleet"}))),
        );
        assert!(matches!(
            elsewhere_paused.judge("edge", Action::Upgrade),
            Err(LifecycleError::ManagedElsewhere { .. })
        ));
    }

    #[test]
    fn the_infrastructure_is_found_from_either_contracts_reference() {
        let v1beta1 = cluster(
            json!({}),
            json!({"infrastructureRef": {"apiVersion": INFRA_API_VERSION, "kind": "AWSSnowCluster", "name": "edge-infra", "namespace": "other"}}),
        );
        assert_eq!(
            infrastructure_ref(&v1beta1, "edge"),
            Some((
                INFRA_API_VERSION.into(),
                "other".into(),
                "edge-infra".into()
            ))
        );
        let v1beta2 = cluster(
            json!({}),
            json!({"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowCluster", "name": "edge"}}),
        );
        assert_eq!(
            infrastructure_ref(&v1beta2, "edge"),
            Some((INFRA_API_VERSION.into(), NAMESPACE.into(), "edge".into()))
        );
        let none = cluster(json!({}), json!({}));
        assert_eq!(
            infrastructure_ref(&none, "edge"),
            Some((INFRA_API_VERSION.into(), NAMESPACE.into(), "edge".into()))
        );
        let other = cluster(
            json!({}),
            json!({"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "edge"}}),
        );
        assert_eq!(infrastructure_ref(&other, "edge"), None);
    }
}
