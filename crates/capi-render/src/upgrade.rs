//! Upgrades: which template names change, and why (EKS Anywhere's template-name bumping).
//!
//! Machine templates and worker KubeadmConfigTemplates are treated as immutable: when what snowctl
//! would render differs from what is on the management cluster, the template gets the next `-N`
//! name, and the machines that use it roll. Counts live on the KCP, EtcdadmCluster and
//! MachineDeployments, which keep their names, so a count change renames nothing.

use crate::{
    Names, RenderError, RenderOptions, RenderedObject,
    names::{InvalidTemplateName, WorkerTemplateNames, bump},
};
use serde_json::Value;
use snow_api::{ValidSpec, names::ref_name, release::ClusterRelease};
use std::collections::BTreeMap;

/// Objects now on the management cluster, as JSON (e.g. from `kubectl get -o json`), keyed by
/// `(kind, name)`.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    objects: BTreeMap<(String, String), Value>,
}

impl Existing {
    /// Adds a live object.
    pub fn insert(&mut self, object: Value) {
        let kind = object["kind"].as_str().unwrap_or("").to_owned();
        let name = object["metadata"]["name"].as_str().unwrap_or("").to_owned();
        self.objects.insert((kind, name), object);
    }

    /// Reads a multi-document YAML stream of live objects.
    pub fn from_yaml(text: &str) -> Result<Existing, String> {
        let mut existing = Existing::default();
        let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| e.to_string())?;
        for doc in docs {
            match doc {
                Value::Object(_) => existing.insert(doc),
                Value::Null => {}
                other => return Err(format!("expected Kubernetes objects, found {other}")),
            }
        }
        Ok(existing)
    }

    fn get(&self, kind: &str, name: &str) -> Option<&Value> {
        self.objects.get(&(kind.to_owned(), name.to_owned()))
    }

    /// Every object, by kind and name.
    pub fn objects(&self) -> impl Iterator<Item = &Value> {
        self.objects.values()
    }
}

/// One change an upgrade makes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// `Kind/name` of the new object.
    pub object: String,
    /// The object it replaces, when renamed.
    pub replaces: Option<String>,
    /// Why, and which machines roll.
    pub reason: String,
    /// The template's fields (below `spec.template.spec`) that differ from the live template's.
    pub fields: Vec<crate::diff::FieldChange>,
}

/// The outcome: names to render with, the objects, and the changes.
#[derive(Debug, Clone)]
pub struct UpgradePlan {
    /// The template names.
    pub names: Names,
    /// Every object, rendered with those names.
    pub objects: Vec<RenderedObject>,
    /// The template renames and why.
    pub changes: Vec<Change>,
}

impl UpgradePlan {
    /// The plan as lines: each template change with the machines it rolls, or that none rolls.
    pub fn lines(&self) -> Vec<String> {
        change_lines(&self.changes)
    }
}

/// Template changes as lines (`upgrade: KIND/NAME (replaces OLD): why`), or one line saying
/// that no machine rolls.
pub fn change_lines(changes: &[Change]) -> Vec<String> {
    if changes.is_empty() {
        return vec!["upgrade: no template changes; no machine will roll".to_owned()];
    }
    changes
        .iter()
        .map(|change| {
            let replaces = change
                .replaces
                .as_deref()
                .map(|r| format!(" (replaces {r})"))
                .unwrap_or_default();
            format!("upgrade: {}{replaces}: {}", change.object, change.reason)
        })
        .collect()
}

/// Upgrade errors.
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    /// Rendering failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A live template name does not end in `-N`.
    #[error(transparent)]
    Name(#[from] InvalidTemplateName),
}

/// `new` is a semantic derivative of `old`: every value set in `new` equals the one in `old`
/// (unset, empty strings, lists and maps in `new` are ignored; a shorter list must match as a
/// prefix).
pub fn derivative(new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Null, _) => true,
        (Value::String(n), _) if n.is_empty() => true,
        (Value::Array(n), _) if n.is_empty() => true,
        (Value::Object(n), _) if n.is_empty() => true,
        (Value::Object(n), Value::Object(o)) => n
            .iter()
            .all(|(k, v)| derivative(v, o.get(k).unwrap_or(&Value::Null))),
        (Value::Array(n), Value::Array(o)) => {
            n.len() <= o.len() && n.iter().zip(o).all(|(a, b)| derivative(a, b))
        }
        (n, o) => n == o,
    }
}

fn template_spec(yaml: &str) -> Value {
    serde_saphyr::from_str::<Value>(yaml)
        .map(|v| v["spec"]["template"]["spec"].clone())
        .unwrap_or(Value::Null)
}

/// The machine template may keep its name: same device count and a derivative spec.
fn machine_template_unchanged(new: &Value, old: &Value) -> Result<(), String> {
    let devices = |v: &Value| v["devices"].as_array().map_or(0, Vec::len);
    if devices(new) != devices(old) {
        return Err(format!(
            "the device list changed ({} → {} devices)",
            devices(old),
            devices(new)
        ));
    }
    if !derivative(new, old) {
        let fields = crate::diff::fields_text(&crate::diff::field_changes(new, old));
        return Err(format!("the machine spec changed ({fields})"));
    }
    Ok(())
}

fn taints_sorted(v: &Value) -> Vec<String> {
    let mut t: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(Value::to_string)
        .collect();
    t.sort();
    t
}

/// The worker KubeadmConfigTemplate may keep its name: taints (any order), kubelet args and files
/// equal, the rest derivative.
fn config_template_unchanged(new: &Value, old: &Value) -> Result<(), String> {
    let join = |v: &Value| v["joinConfiguration"]["nodeRegistration"].clone();
    if taints_sorted(&join(new)["taints"]) != taints_sorted(&join(old)["taints"]) {
        return Err("the taints changed".into());
    }
    if join(new)["kubeletExtraArgs"] != join(old)["kubeletExtraArgs"] {
        return Err("the kubelet arguments (labels) changed".into());
    }
    if new["files"] != old["files"] {
        return Err("the node files changed".into());
    }
    if !derivative(new, old) {
        return Err("the bootstrap configuration changed".into());
    }
    Ok(())
}

fn find<'a>(objects: &'a [RenderedObject], kind: &str, name: &str) -> Option<&'a RenderedObject> {
    objects.iter().find(|o| o.kind == kind && o.name == name)
}

/// Decides the template names against the live objects and renders with them.
pub fn plan(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    opts: &RenderOptions<'_>,
    existing: &Existing,
) -> Result<UpgradePlan, UpgradeError> {
    let fresh = crate::render(
        spec,
        release,
        &RenderOptions {
            names: None,
            ..*opts
        },
    )?;
    let cluster = spec.name();
    let groups: Vec<String> = spec
        .cluster
        .spec
        .worker_node_group_configurations
        .iter()
        .flatten()
        .map(|g| g.name.clone().unwrap_or_default())
        .collect();
    let initial = Names::initial(cluster, &groups);
    let mut names = initial.clone();
    let mut changes = Vec::new();

    // Compares one template: keep the live name, or bump it. Returns the final name.
    let mut decide = |kind: &str,
                      live_name: Option<&str>,
                      desired: &str,
                      check: &dyn Fn(&Value, &Value) -> Result<(), String>,
                      rolls: &str|
     -> Result<String, UpgradeError> {
        let Some(live_name) = live_name else {
            return Ok(desired.to_owned());
        };
        let Some(live) = existing.get(kind, live_name) else {
            return Ok(live_name.to_owned());
        };
        let new = find(&fresh, kind, desired)
            .map(|o| template_spec(&o.yaml))
            .unwrap_or(Value::Null);
        // Both template kinds keep their content under spec.template.spec.
        let old = live["spec"]["template"]["spec"].clone();
        match check(&new, &old) {
            Ok(()) => Ok(live_name.to_owned()),
            Err(reason) => {
                let bumped = bump(live_name)?;
                changes.push(Change {
                    object: format!("{kind}/{bumped}"),
                    replaces: Some(format!("{kind}/{live_name}")),
                    reason: format!("{reason}: {rolls} will roll"),
                    fields: crate::diff::field_changes(&new, &old),
                });
                Ok(bumped)
            }
        }
    };

    if let Some(kcp) = existing.get("KubeadmControlPlane", cluster) {
        let infra = if kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"].is_object() {
            &kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]
        } else {
            &kcp["spec"]["machineTemplate"]["infrastructureRef"]
        };
        names.control_plane_template = decide(
            "AWSSnowMachineTemplate",
            ref_name(infra),
            &initial.control_plane_template,
            &machine_template_unchanged,
            "the control plane machines",
        )?;
    }
    if let Some(etcd) = existing.get("EtcdadmCluster", &initial.etcd_cluster) {
        names.etcd_template = decide(
            "AWSSnowMachineTemplate",
            ref_name(&etcd["spec"]["infrastructureTemplate"]),
            &initial.etcd_template,
            &machine_template_unchanged,
            "the etcd machines",
        )?;
    }
    for group in &groups {
        let Some(md) = existing.get("MachineDeployment", &format!("{cluster}-{group}")) else {
            continue;
        };
        let Some(defaults) = initial.workers.get(group) else {
            continue;
        };
        let tspec = &md["spec"]["template"]["spec"];
        let machine_template = decide(
            "AWSSnowMachineTemplate",
            ref_name(&tspec["infrastructureRef"]),
            &defaults.machine_template,
            &machine_template_unchanged,
            &format!("the machines of worker group {group}"),
        )?;
        let config_template = decide(
            "KubeadmConfigTemplate",
            ref_name(&tspec["bootstrap"]["configRef"]),
            &defaults.config_template,
            &config_template_unchanged,
            &format!("the machines of worker group {group}"),
        )?;
        names.workers.insert(
            group.clone(),
            WorkerTemplateNames {
                machine_template,
                config_template,
            },
        );
    }
    let objects = crate::render(
        spec,
        release,
        &RenderOptions {
            names: Some(&names),
            ..*opts
        },
    )?;
    Ok(UpgradePlan {
        names,
        objects,
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn derivative_ignores_unset_and_empty_values_in_the_new_spec() {
        let old = json!({"a": "x", "b": [1, 2], "c": {"d": true}});
        assert!(derivative(&json!({"a": "x"}), &old));
        assert!(derivative(&json!({"a": "", "b": [1]}), &old));
        assert!(!derivative(&json!({"a": "y"}), &old));
        assert!(!derivative(&json!({"c": {"d": false}}), &old));
        assert!(!derivative(&json!({"b": [1, 2, 3]}), &old));
    }

    #[test]
    fn device_count_changes_roll_machines() {
        let old = json!({"devices": ["1.1.1.1", "1.1.1.2"], "instanceType": "sbe-c.large"});
        assert!(
            machine_template_unchanged(
                &json!({"devices": ["1.1.1.1", "1.1.1.2"], "instanceType": "sbe-c.large"}),
                &old
            )
            .is_ok()
        );
        assert!(
            machine_template_unchanged(
                &json!({"devices": ["1.1.1.1"], "instanceType": "sbe-c.large"}),
                &old
            )
            .is_err()
        );
        let err = machine_template_unchanged(
            &json!({"devices": ["1.1.1.1", "1.1.1.2"], "instanceType": "sbe-c.xlarge"}),
            &old,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "the machine spec changed (instanceType: sbe-c.large → sbe-c.xlarge)"
        );
    }
}
