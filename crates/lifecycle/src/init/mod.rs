//! `snowctl init`: install cert-manager, Cluster API, the kubeadm and etcdadm providers and
//! CAPAS on any Kubernetes cluster, natively (no clusterctl), with clusterctl's observable result:
//! the same variable rules ([`envsubst`]), labels and inventory ([`inventory`]), so the cluster
//! is a normal Cluster API management cluster for `clusterctl describe`, `move` and
//! `upgrade plan`.
//!
//! Where it does better than `clusterctl init`: every missing variable of every provider is
//! reported before anything is applied; namespaces and CRDs go first and each CRD is waited for
//! `Established` before an object of its kind; webhook configurations go last; each component's
//! Deployments are waited for `Available` before the next component (cert-manager's webhook is
//! up before the providers' Issuers and Certificates arrive). Objects are applied server-side as
//! field manager [`crate::FIELD_MANAGER`].
//!
//! Re-running converges: a provider recorded in the inventory with the wanted version is left
//! as it is; one without an entry (an interrupted run) is applied again and completed; one of
//! another version is a refusal, before anything is applied ([`upgrade`] upgrades).

pub mod components;
pub mod controller;
pub mod envsubst;
pub(crate) mod install;
pub mod inventory;
pub mod redact;
pub mod source;
pub mod upgrade;

use crate::{Event, LifecycleError, Management};
use components::{Component, ComponentObjects, ComponentSource};
use envsubst::Values;
use install::Installer;
pub use install::crd_established;
use snow_api::release::VersionsBundle;
use std::time::Duration;

/// How [`init`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitOptions {
    /// How long a CRD may take to become Established.
    pub crd_timeout: Duration,
    /// How long each Deployment may take to become Available (`None`: no limit).
    pub deployment_timeout: Option<Duration>,
    /// The pause between two looks.
    pub poll: Duration,
}

impl Default for InitOptions {
    fn default() -> InitOptions {
        InitOptions {
            crd_timeout: Duration::from_secs(60),
            deployment_timeout: Some(Duration::from_secs(300)),
            poll: install::POLL,
        }
    }
}

/// The Snow values of the stack's variables: the device credentials (from
/// `snow_credentials::ClusterctlEnv`, when given) and the images of the bundle.
pub fn snow_values(
    bundle: &VersionsBundle,
    credentials: Option<&snow_credentials::ClusterctlEnv>,
    environment: std::collections::BTreeMap<String, String>,
) -> Values {
    let mut values = Values::new(Default::default(), environment);
    if let Some(env) = credentials {
        for (name, value) in env.vars() {
            values.set_secret(name, value);
        }
    }
    if let Some(snow) = &bundle.snow {
        values.set("SNOW_CONTROLLER_IMAGE", snow.manager.uri.clone());
    }
    if let Some(p) = &bundle.etcdadm_bootstrap {
        values.set("ETCDADM_BOOTSTRAP_IMAGE", p.controller.uri.clone());
    }
    if let Some(p) = &bundle.etcdadm_controller {
        values.set("ETCDADM_CONTROLLER_IMAGE", p.controller.uri.clone());
    }
    values
}

/// Checks every variable of every manifest, then substitutes and orders each component's
/// objects. Nothing is applied; every missing variable is reported at once.
pub fn prepare(
    sources: &[ComponentSource],
    values: &Values,
) -> Result<Vec<ComponentObjects>, LifecycleError> {
    let mut missing = Vec::new();
    for source in sources {
        let names = components::missing_variables(source, values)?;
        if !names.is_empty() {
            missing.push((source.component.label(), names));
        }
    }
    if !missing.is_empty() {
        return Err(LifecycleError::MissingVariables { missing });
    }
    sources
        .iter()
        .map(|s| components::process(s, values))
        .collect()
}

/// What happened to one component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its objects were applied (a first install, or the completion of an interrupted one).
    Applied,
    /// It was installed already with this version (cert-manager: running already).
    AlreadyInstalled,
}

/// One component after [`init`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentResult {
    /// Which.
    pub component: Component,
    /// Its version.
    pub version: String,
    /// Its namespace.
    pub namespace: String,
    /// What was done.
    pub outcome: Outcome,
    /// Objects applied.
    pub applied: usize,
}

/// What [`init`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Initialized {
    /// Each component, in install order.
    pub components: Vec<ComponentResult>,
}

impl Initialized {
    /// Whether nothing had to be applied.
    pub fn unchanged(&self) -> bool {
        self.components
            .iter()
            .all(|c| c.outcome == Outcome::AlreadyInstalled)
    }
}

/// The first 12 hex digits of a digest, or "none" for a record that kept none.
fn shown_digest(digest: &str) -> &str {
    match digest.get(..12) {
        Some(short) => short,
        None if digest.is_empty() => "none",
        None => digest,
    }
}

/// Refuses when a provider of another version (or the controller of another version or image)
/// is installed (every difference at once).
async fn check_versions(
    mgmt: &Management,
    prepared: &[ComponentObjects],
) -> Result<(Vec<inventory::Installed>, Option<controller::Recorded>), LifecycleError> {
    let installed = inventory::installed(mgmt).await?;
    let recorded = match prepared
        .iter()
        .any(|c| c.component == Component::Controller)
    {
        true => controller::installed(mgmt).await?,
        false => None,
    };
    let differences: Vec<String> = prepared
        .iter()
        .filter_map(|c| {
            if c.component == Component::Controller {
                let found = recorded.as_ref().filter(|r| !r.is(c))?;
                if found.version == c.version && found.image == controller::image(c) {
                    return Some(format!(
                        "{}: {} is installed (namespace {}) with another release catalog \
                         (Bundles and EKS-D manifests, sha256 {}), this run has sha256 {}",
                        c.component,
                        found.version,
                        c.namespace,
                        shown_digest(&found.release),
                        shown_digest(controller::release_digest(c))
                    ));
                }
                return Some(format!(
                    "{}: {} ({}) is installed (namespace {}), this run has {} ({})",
                    c.component,
                    found.version,
                    found.image,
                    c.namespace,
                    c.version,
                    controller::image(c)
                ));
            }
            let found = installed.iter().find(|i| i.is(c.component))?;
            (found.version != c.version).then(|| {
                format!(
                    "{}: {} is installed (namespace {}), the bundle has {}",
                    c.component, found.version, found.namespace, c.version
                )
            })
        })
        .collect();
    if differences.is_empty() {
        Ok((installed, recorded))
    } else {
        Err(LifecycleError::ProviderVersionDiffers { differences })
    }
}

/// Whether every Deployment of cert-manager's manifest is there and Available.
async fn cert_manager_running(
    mgmt: &Management,
    component: &ComponentObjects,
) -> Result<bool, LifecycleError> {
    for (namespace, name) in component.deployments() {
        match mgmt
            .get("apps/v1", "Deployment", Some(&namespace), &name)
            .await?
        {
            Some(d) if install::deployment_available(&d).0 => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// Installs the stack on `mgmt` (see the module documentation); `prepared` comes from
/// [`prepare`], in install order.
pub async fn init(
    mgmt: &Management,
    prepared: &[ComponentObjects],
    options: &InitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Initialized, LifecycleError> {
    let (installed, recorded) = check_versions(mgmt, prepared).await?;
    let mut installer = Installer::new(mgmt, options, prepared);
    let mut results = Vec::new();
    for c in prepared {
        let mut result = ComponentResult {
            component: c.component,
            version: c.version.clone(),
            namespace: c.namespace.clone(),
            outcome: Outcome::AlreadyInstalled,
            applied: 0,
        };
        let done = match c.component {
            Component::CertManager => cert_manager_running(mgmt, c).await?,
            Component::Provider { .. } => installed.iter().any(|i| i.is(c.component)),
            Component::Controller => recorded.is_some(),
        };
        if done {
            on_event(Event::Note(format!(
                "✅ {} {} is installed already (namespace {})",
                c.component, c.version, c.namespace
            )));
            results.push(result);
            continue;
        }
        result.applied = installer.install(c, on_event).await?;
        result.outcome = Outcome::Applied;
        results.push(result);
    }
    Ok(Initialized {
        components: results,
    })
}

impl std::fmt::Display for Initialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in &self.components {
            let what = match c.outcome {
                Outcome::Applied => format!("installed ({} objects)", c.applied),
                Outcome::AlreadyInstalled => "already installed, unchanged".into(),
            };
            writeln!(
                f,
                "{:<30} {:<16} {:<36} {what}",
                c.component.label(),
                c.version,
                c.namespace
            )?;
        }
        Ok(())
    }
}

/// The objects as multi-document YAML, for `--dry-run`. Unless `show_secrets`, Secret values
/// are redacted, and so is what a secret variable put anywhere else (a ConfigMap, an
/// annotation, a key).
pub fn to_yaml(prepared: &[ComponentObjects], show_secrets: bool) -> String {
    let mut secrets = redact::Redactor::default();
    for c in prepared {
        secrets.extend(&c.secrets);
    }
    let mut out = String::new();
    for c in prepared {
        for object in &c.objects {
            let shown = if show_secrets {
                object.clone()
            } else {
                secrets.value(&components::redacted(object))
            };
            out.push_str("---\n");
            out.push_str(&serde_saphyr::to_string(&shown).unwrap_or_default());
        }
        let entry = match c.component {
            Component::Controller => Some(controller::record(c)),
            _ => inventory::provider(c.component, &c.namespace, &c.version),
        };
        if let Some(entry) = entry {
            out.push_str("---\n");
            out.push_str(&serde_saphyr::to_string(&entry).unwrap_or_default());
        }
    }
    out
}
