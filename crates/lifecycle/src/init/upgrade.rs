//! `snowctl upgrade management-components`: bring an installed stack to the bundle's versions.
//!
//! [`plan`] compares what is installed with the prepared stack (as `clusterctl upgrade plan`
//! does); [`apply`] then, for each component whose version differs, in install order: applies
//! the new objects as [`super::init`] does (server-side, CRDs Established first, webhooks
//! last), deletes the objects the old version had and the new one has not, waits for the
//! Deployments and records the new version in the inventory. Missing components are installed
//! as `init` installs them; a component at the bundle's version is left alone.
//!
//! Never deleted: CustomResourceDefinitions, Namespaces and custom resources of the providers'
//! kinds (no data loss; a CRD the new version no longer has stays, and an event says so).
//!
//! Where it differs from `clusterctl upgrade apply`: clusterctl scales every upgrading
//! provider to zero, deletes all its objects, then installs the new ones; here the new objects
//! are applied first and only the leftovers are deleted, so the controllers keep running (with
//! their webhooks) during the upgrade.
//!
//! Re-running converges: the inventory is written last, so a run interrupted before it sees
//! the old version again, applies again (server-side apply is idempotent), prunes and records.

use super::components::{
    CERT_MANAGER_VERSION_ANNOTATION, CLUSTERCTL_LABEL, CORE_LABEL, Component, ComponentObjects,
    PROVIDER_LABEL, describe,
};
use super::install::Installer;
use super::{InitOptions, inventory};
use crate::{Event, LifecycleError, Management};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt;

/// What is installed of a component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// This version (a provider: its inventory entry; cert-manager: the version annotation
    /// clusterctl and `snowctl init` put on each of its objects, read from its Deployments).
    Version(String),
    /// Nothing (no inventory entry; cert-manager: none of its Deployments).
    NotInstalled,
    /// cert-manager runs but without the version annotation: installed by something else, so
    /// its version cannot be known and it is left alone (as clusterctl leaves it).
    Unmanaged,
}

/// What [`apply`] does to a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Already at the bundle's version: nothing.
    UpToDate,
    /// Apply the new version, delete what it dropped, wait, record.
    Upgrade,
    /// Install it as `snowctl init` does (not there, or an interrupted install).
    Install,
    /// Not managed by clusterctl or snowctl: nothing.
    LeaveAlone,
    /// The installed version is newer than the bundle's: [`apply`] refuses.
    Downgrade,
}

/// One line of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRow {
    /// Which component.
    pub component: Component,
    /// Its namespace.
    pub namespace: String,
    /// What is installed.
    pub current: Current,
    /// The bundle's version.
    pub next: String,
    /// What [`apply`] does.
    pub action: Action,
}

/// Every component of the stack, in install order, with what [`apply`] does to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradePlan {
    /// One row per component.
    pub rows: Vec<PlanRow>,
}

impl UpgradePlan {
    /// Whether [`apply`] has nothing to do.
    pub fn up_to_date(&self) -> bool {
        self.rows
            .iter()
            .all(|r| matches!(r.action, Action::UpToDate | Action::LeaveAlone))
    }

    fn labels(&self, action: Action) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.action == action)
            .map(|r| r.component.label())
            .collect()
    }
}

/// `(major, minor, patch)` of `vX.Y.Z` (build metadata and pre-release ignored).
fn semver(version: &str) -> Option<(u64, u64, u64)> {
    let core = version.strip_prefix('v').unwrap_or(version);
    let core = core.split(['+', '-']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

fn action_for(current: &Current, next: &str, complete: bool) -> Action {
    match current {
        Current::NotInstalled => Action::Install,
        Current::Unmanaged => Action::LeaveAlone,
        Current::Version(v) if v == next && complete => Action::UpToDate,
        Current::Version(v) if v == next => Action::Install,
        Current::Version(v) => match (semver(v), semver(next)) {
            (Some(have), Some(want)) if have > want => Action::Downgrade,
            _ => Action::Upgrade,
        },
    }
}

/// cert-manager's installed version, from the version annotation of the manifest's
/// Deployments; and whether all of them are there.
async fn cert_manager_version(
    mgmt: &Management,
    component: &ComponentObjects,
) -> Result<(Current, bool), LifecycleError> {
    let mut versions = Vec::new();
    let mut complete = true;
    for (namespace, name) in component.deployments() {
        match mgmt
            .get("apps/v1", "Deployment", Some(&namespace), &name)
            .await?
        {
            Some(d) => versions.push(
                d["metadata"]["annotations"][CERT_MANAGER_VERSION_ANNOTATION]
                    .as_str()
                    .map(str::to_owned),
            ),
            None => complete = false,
        }
    }
    let current = if versions.is_empty() {
        Current::NotInstalled
    } else if versions.iter().any(Option::is_none) {
        Current::Unmanaged
    } else {
        // An interrupted upgrade leaves some at the new version: the other one is current.
        let found: Vec<String> = versions.into_iter().flatten().collect();
        Current::Version(
            found
                .iter()
                .find(|v| **v != component.version)
                .unwrap_or(&found[0])
                .clone(),
        )
    };
    Ok((current, complete))
}

/// Compares the installed components with `prepared` (from [`super::prepare`], in install
/// order). Reads only.
pub async fn plan(
    mgmt: &Management,
    prepared: &[ComponentObjects],
) -> Result<UpgradePlan, LifecycleError> {
    let installed = inventory::installed(mgmt).await?;
    let recorded = match prepared
        .iter()
        .any(|c| c.component == Component::Controller)
    {
        true => super::controller::installed(mgmt).await?,
        false => None,
    };
    let mut rows = Vec::new();
    for c in prepared {
        if c.component == Component::Controller {
            let (current, action) = match &recorded {
                None => (Current::NotInstalled, Action::Install),
                Some(r) => {
                    let current = Current::Version(r.version.clone());
                    // Another image of the same version (another mirror) is applied too.
                    let action = match action_for(&current, &c.version, true) {
                        Action::UpToDate if !r.is(c) => Action::Upgrade,
                        action => action,
                    };
                    (current, action)
                }
            };
            rows.push(PlanRow {
                component: c.component,
                namespace: c.namespace.clone(),
                current,
                next: c.version.clone(),
                action,
            });
            continue;
        }
        let (current, complete, namespace) = match c.component {
            Component::CertManager => {
                let (current, complete) = cert_manager_version(mgmt, c).await?;
                (current, complete, c.namespace.clone())
            }
            Component::Provider { .. } | Component::Controller => {
                match installed.iter().find(|i| i.is(c.component)) {
                    Some(i) => (
                        Current::Version(i.version.clone()),
                        true,
                        i.namespace.clone(),
                    ),
                    None => (Current::NotInstalled, true, c.namespace.clone()),
                }
            }
        };
        rows.push(PlanRow {
            component: c.component,
            namespace,
            action: action_for(&current, &c.version, complete),
            current,
            next: c.version.clone(),
        });
    }
    Ok(UpgradePlan { rows })
}

/// What happened to one component in [`apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// The plan's row.
    pub row: PlanRow,
    /// Objects applied.
    pub applied: usize,
    /// `Kind namespace/name` of each object deleted (the old version had it, the new has not).
    pub deleted: Vec<String>,
}

/// What [`apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgraded {
    /// Each component, in install order.
    pub components: Vec<Upgrade>,
}

impl Upgraded {
    /// Whether nothing had to be done.
    pub fn unchanged(&self) -> bool {
        self.components
            .iter()
            .all(|c| matches!(c.row.action, Action::UpToDate | Action::LeaveAlone))
    }
}

/// Kinds a provider stack is made of, looked at for leftovers besides the new manifest's own
/// kinds. The manifest's kinds alone would miss a kind only the old version used; listing
/// every kind the server serves (as clusterctl does) costs a discovery walk and a list per
/// kind on every run; so: the kinds provider manifests are made of, plus whatever the new one
/// adds.
const USUAL_KINDS: [(&str, &str); 13] = [
    ("apps/v1", "Deployment"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
    ),
    ("cert-manager.io/v1", "Certificate"),
    ("cert-manager.io/v1", "Issuer"),
];

fn group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// `(group, kind)` of every CRD in `objects`.
fn crd_kinds(objects: &[Value]) -> impl Iterator<Item = (String, String)> + '_ {
    objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .map(|crd| {
            (
                text(&crd["spec"]["group"]).to_owned(),
                text(&crd["spec"]["names"]["kind"]).to_owned(),
            )
        })
}

/// The label selector of a component's objects (clusterctl's labels).
fn selector(component: Component) -> String {
    match component {
        Component::CertManager => format!("{CORE_LABEL}=cert-manager"),
        Component::Controller => format!(
            "{}={}",
            capi_render::controller::LABEL,
            capi_render::controller::NAME
        ),
        Component::Provider { .. } => {
            format!("{CLUSTERCTL_LABEL},{PROVIDER_LABEL}={}", component.label())
        }
    }
}

/// Deletes the objects of `c`'s labels that its new manifest has not; never a CRD, a
/// Namespace or a custom resource of `protected` kinds. Says which CRDs the new version
/// dropped (kept).
async fn prune(
    mgmt: &Management,
    c: &ComponentObjects,
    protected: &BTreeSet<(String, String)>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<String>, LifecycleError> {
    let selector = selector(c.component);
    let key = |o: &Value| {
        (
            group(text(&o["apiVersion"])).to_owned(),
            text(&o["kind"]).to_owned(),
            text(&o["metadata"]["namespace"]).to_owned(),
            text(&o["metadata"]["name"]).to_owned(),
        )
    };
    let keep: BTreeSet<_> = c.objects.iter().map(key).collect();
    let mut kinds: Vec<(String, String)> = Vec::new();
    let manifest = c
        .objects
        .iter()
        .map(|o| (text(&o["apiVersion"]), text(&o["kind"])));
    for (api_version, kind) in USUAL_KINDS.into_iter().chain(manifest) {
        let id = (group(api_version).to_owned(), kind.to_owned());
        let skip = matches!(kind, "Namespace" | "CustomResourceDefinition")
            || protected.contains(&id)
            || kinds.iter().any(|(a, k)| group(a) == id.0 && *k == id.1);
        if !skip {
            kinds.push((api_version.to_owned(), kind.to_owned()));
        }
    }
    let mut deleted = Vec::new();
    for (api_version, kind) in &kinds {
        for old in mgmt.list(api_version, kind, None, Some(&selector)).await? {
            if keep.contains(&key(&old)) {
                continue;
            }
            let namespace = old["metadata"]["namespace"].as_str();
            let name = text(&old["metadata"]["name"]);
            if mgmt.delete(api_version, kind, namespace, name).await? {
                let object = describe(&old);
                on_event(Event::Deleted {
                    object: object.clone(),
                });
                deleted.push(object);
            }
        }
    }
    let crds = mgmt
        .list(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            Some(&selector),
        )
        .await?;
    for crd in crds.iter().filter(|crd| !keep.contains(&key(crd))) {
        on_event(Event::Note(format!(
            "ℹ️ {} {} has no CustomResourceDefinition {}: kept with its custom resources (delete it yourself once nothing uses it)",
            c.component,
            c.version,
            text(&crd["metadata"]["name"])
        )));
    }
    Ok(deleted)
}

/// Upgrades the installed stack to `prepared` (from [`super::prepare`], in install order):
/// see the module documentation. Refuses, before anything is applied, when a component is
/// newer than the bundle's.
pub async fn apply(
    mgmt: &Management,
    prepared: &[ComponentObjects],
    options: &InitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Upgraded, LifecycleError> {
    let plan = plan(mgmt, prepared).await?;
    let newer: Vec<String> = plan
        .rows
        .iter()
        .filter(|r| r.action == Action::Downgrade)
        .map(|r| {
            format!(
                "{}: {} is installed (namespace {}), newer than the bundle's {}; snowctl does not downgrade",
                r.component, r.current, r.namespace, r.next
            )
        })
        .collect();
    if !newer.is_empty() {
        return Err(LifecycleError::ProviderVersionDiffers { differences: newer });
    }
    // Custom resources of these kinds are users' data (clusters, machines, …): never deleted.
    // cert-manager's kinds (Certificate, Issuer) are the providers' own objects and pruned
    // with them, but not when cert-manager itself is pruned.
    let provider_kinds: BTreeSet<(String, String)> = prepared
        .iter()
        .filter(|c| c.component != Component::CertManager)
        .flat_map(|c| crd_kinds(&c.objects))
        .collect();
    let mut installer = Installer::new(mgmt, options, prepared);
    let mut components = Vec::new();
    for (row, c) in plan.rows.into_iter().zip(prepared) {
        let mut done = Upgrade {
            row,
            applied: 0,
            deleted: Vec::new(),
        };
        let row = &done.row;
        match row.action {
            Action::UpToDate | Action::LeaveAlone | Action::Downgrade => {
                on_event(Event::Note(format!(
                    "✅ {} {} {} (namespace {})",
                    c.component,
                    row.current,
                    if row.action == Action::UpToDate {
                        "is up to date"
                    } else {
                        "is not managed by clusterctl or snowctl: left alone"
                    },
                    row.namespace
                )));
            }
            Action::Install => {
                done.applied = installer.install(c, on_event).await?;
            }
            Action::Upgrade => {
                on_event(Event::Step(format!(
                    "Upgrading {} from {} to {} ({} objects, namespace {})",
                    c.component,
                    row.current,
                    c.version,
                    c.objects.len(),
                    c.namespace
                )));
                done.applied = installer.apply(c, on_event).await?;
                let mut protected = provider_kinds.clone();
                protected.extend(crd_kinds(&c.objects));
                done.deleted = prune(mgmt, c, &protected, on_event).await?;
                installer.finish(c, on_event).await?;
            }
        }
        components.push(done);
    }
    Ok(Upgraded { components })
}

impl fmt::Display for Current {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Current::Version(v) => v,
            Current::NotInstalled => "not installed",
            Current::Unmanaged => "unknown",
        })
    }
}

fn type_of(component: Component) -> &'static str {
    match component {
        Component::CertManager => "CertManager",
        Component::Controller => "SnowctlController",
        Component::Provider { kind, .. } => kind.as_str(),
    }
}

impl UpgradePlan {
    /// The plan as JSON (camelCase keys): one entry per component with its name, namespace,
    /// type, current and new version and what `apply` does (`upToDate`, `upgrade`, `install`,
    /// `leaveAlone`, `downgrade`).
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                let current = match &r.current {
                    Current::Version(v) => serde_json::Value::String(v.clone()),
                    _ => serde_json::Value::Null,
                };
                let action = match r.action {
                    Action::UpToDate => "upToDate",
                    Action::Upgrade => "upgrade",
                    Action::Install => "install",
                    Action::LeaveAlone => "leaveAlone",
                    Action::Downgrade => "downgrade",
                };
                serde_json::json!({
                    "component": r.component.label(),
                    "namespace": r.namespace,
                    "type": type_of(r.component),
                    "current": current,
                    "installed": r.current.to_string(),
                    "new": r.next,
                    "changes": matches!(r.action, Action::Upgrade | Action::Install),
                    "action": action,
                })
            })
            .collect();
        serde_json::json!({"components": rows, "upToDate": self.up_to_date()})
    }
}

/// The table of `clusterctl upgrade plan` (NAME NAMESPACE TYPE CURRENT VERSION NEXT VERSION),
/// then what `apply` will do.
impl fmt::Display for UpgradePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut table = vec![[
            "NAME".to_owned(),
            "NAMESPACE".into(),
            "TYPE".into(),
            "CURRENT VERSION".into(),
            "NEXT VERSION".into(),
        ]];
        for r in &self.rows {
            let next = match r.action {
                Action::UpToDate => "Already up to date".to_owned(),
                Action::LeaveAlone => "left alone (not installed by clusterctl or snowctl)".into(),
                Action::Downgrade => format!("{} (older: refused)", r.next),
                Action::Install if r.current != Current::NotInstalled => {
                    format!("{} (to complete)", r.next)
                }
                Action::Upgrade | Action::Install => r.next.clone(),
            };
            table.push([
                r.component.label(),
                r.namespace.clone(),
                type_of(r.component).into(),
                r.current.to_string(),
                next,
            ]);
        }
        let widths: Vec<usize> = (0..5)
            .map(|i| {
                table
                    .iter()
                    .map(|row| row[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in &table {
            let mut line = String::new();
            for (cell, width) in row.iter().zip(&widths) {
                line.push_str(&format!("{cell:<width$}   "));
            }
            writeln!(f, "{}", line.trim_end())?;
        }
        writeln!(f)?;
        let (upgrade, install, newer) = (
            self.labels(Action::Upgrade),
            self.labels(Action::Install),
            self.labels(Action::Downgrade),
        );
        if !newer.is_empty() {
            return writeln!(
                f,
                "apply refuses: {} newer than the bundle (snowctl does not downgrade)",
                newer.join(", ")
            );
        }
        if upgrade.is_empty() && install.is_empty() {
            return writeln!(f, "Every component is up to date: apply changes nothing.");
        }
        let mut parts = Vec::new();
        if !upgrade.is_empty() {
            parts.push(format!(
                "upgrade {} (the new objects applied, then the objects the old versions had and the new ones have not deleted: never CRDs, Namespaces or custom resources)",
                upgrade.join(", ")
            ));
        }
        if !install.is_empty() {
            parts.push(format!("install {}", install.join(", ")));
        }
        writeln!(
            f,
            "apply will {}; each is then waited for (Deployments Available) and its version recorded.",
            parts.join(" and ")
        )
    }
}

impl fmt::Display for Upgraded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.components {
            let r = &c.row;
            let what = match r.action {
                Action::Upgrade => format!(
                    "upgraded from {} ({} objects applied, {} deleted)",
                    r.current,
                    c.applied,
                    c.deleted.len()
                ),
                Action::Install => format!("installed ({} objects)", c.applied),
                Action::UpToDate => "up to date, unchanged".into(),
                Action::LeaveAlone | Action::Downgrade => "left alone".into(),
            };
            writeln!(
                f,
                "{:<30} {:<16} {:<36} {what}",
                r.component.label(),
                r.next,
                r.namespace
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::components::ProviderType;
    use super::*;

    #[test]
    fn versions_compare_as_semver() {
        assert_eq!(semver("v1.13.5+abc"), Some((1, 13, 5)));
        assert_eq!(semver("v1.10"), None);
        let v = |s: &str| Current::Version(s.into());
        assert_eq!(action_for(&v("v1.9.0"), "v1.13.5", true), Action::Upgrade);
        assert_eq!(
            action_for(&v("v1.14.0"), "v1.13.5", true),
            Action::Downgrade
        );
        assert_eq!(action_for(&v("v1.13.5"), "v1.13.5", true), Action::UpToDate);
        assert_eq!(action_for(&v("v1.13.5"), "v1.13.5", false), Action::Install);
        assert_eq!(action_for(&v("dev"), "v1.13.5", true), Action::Upgrade);
        assert_eq!(
            action_for(&Current::Unmanaged, "v1.13.5", true),
            Action::LeaveAlone
        );
    }

    #[test]
    fn provider_objects_are_selected_by_clusterctl_labels() {
        let snow = Component::Provider {
            name: "snow",
            kind: ProviderType::Infrastructure,
        };
        assert_eq!(
            selector(snow),
            "clusterctl.cluster.x-k8s.io,cluster.x-k8s.io/provider=infrastructure-snow"
        );
        assert_eq!(
            selector(Component::CertManager),
            "clusterctl.cluster.x-k8s.io/core=cert-manager"
        );
    }
}
