//! Applying one component: server-side apply of each object in order, a CRD waited for
//! `Established` before the first object of its kind (and every CRD of the component before its
//! Deployments are waited for), then every Deployment waited for `Available`.

use super::components::{ComponentObjects, describe, is_custom, rank};
use super::{InitOptions, inventory};
use crate::{Event, LifecycleError, Management, Stage, plural, wait::human};
use serde_json::Value;
use snow_api::names::condition_true;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The CRDs known by (group, kind), and which are Established already.
#[derive(Debug, Default)]
pub(crate) struct Crds {
    names: BTreeMap<(String, String), String>,
    established: BTreeSet<String>,
}

impl Crds {
    /// Learns the CRDs of a component.
    pub(crate) fn learn(&mut self, objects: &[Value]) {
        for crd in objects
            .iter()
            .filter(|o| o["kind"] == "CustomResourceDefinition")
        {
            let spec = &crd["spec"];
            if let (Some(group), Some(kind), Some(name)) = (
                spec["group"].as_str(),
                spec["names"]["kind"].as_str(),
                crd["metadata"]["name"].as_str(),
            ) {
                self.names
                    .insert((group.to_owned(), kind.to_owned()), name.to_owned());
            }
        }
    }

    /// The CRD serving `kind` of `api_version` (by the CRDs seen, else by its usual name).
    fn name_for(&self, api_version: &str, kind: &str) -> String {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        self.names
            .get(&(group.to_owned(), kind.to_owned()))
            .cloned()
            .unwrap_or_else(|| format!("{}.{group}", plural(kind)))
    }

    /// Waits until the CRD `name` is Established (once per run).
    async fn established(
        &mut self,
        mgmt: &Management,
        name: &str,
        options: &InitOptions,
    ) -> Result<(), LifecycleError> {
        if !self.established.contains(name) {
            crd_established(mgmt, name, options).await?;
            self.established.insert(name.to_owned());
        }
        Ok(())
    }
}

/// Waits until the CustomResourceDefinition `name` is Established (the API server serves its
/// kinds only from then on: an object applied before gets 404), looking every `options.poll`
/// for at most `options.crd_timeout`.
pub async fn crd_established(
    mgmt: &Management,
    name: &str,
    options: &InitOptions,
) -> Result<(), LifecycleError> {
    let start = Instant::now();
    loop {
        let crd = mgmt
            .get(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                None,
                name,
            )
            .await?;
        let detail = match &crd {
            None => "the CustomResourceDefinition does not exist".to_owned(),
            Some(crd) if condition_true(crd, "Established") => return Ok(()),
            Some(crd) => conditions_text(crd),
        };
        if start.elapsed() >= options.crd_timeout {
            return Err(LifecycleError::ComponentNotReady {
                object: format!("CustomResourceDefinition {name}"),
                condition: "Established".into(),
                detail,
                after: human(options.crd_timeout),
            });
        }
        tokio::time::sleep(options.poll).await;
    }
}

/// Every condition as `Type=Status (reason: message)`, or that there are none.
fn conditions_text(object: &Value) -> String {
    let list: Vec<String> = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            let mut line = format!("{}={}", text("type"), text("status"));
            let why: Vec<String> = [text("reason"), text("message")]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect();
            if !why.is_empty() {
                line.push_str(&format!(" ({})", why.join(": ")));
            }
            line
        })
        .collect();
    if list.is_empty() {
        "no conditions reported yet".into()
    } else {
        list.join(", ")
    }
}

/// Objects of one stage applied at once (the stages stay in order).
const STAGE_CONCURRENCY: usize = 8;

/// Applies the objects of one component stage by stage (namespaces, CRDs, built-in objects,
/// custom resources, webhook configurations: [`rank`]), the objects of a stage at once (they do
/// not depend on each other); returns how many. A CRD the answer of its apply already shows
/// `Established` is not asked again.
pub(crate) async fn apply_objects(
    mgmt: &Management,
    objects: &[Value],
    crds: &mut Crds,
    options: &InitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<usize, LifecycleError> {
    use futures_util::{StreamExt as _, TryStreamExt as _, stream};
    for stage in objects.chunk_by(|a, b| rank(a) == rank(b)) {
        for object in stage {
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let kind = object["kind"].as_str().unwrap_or_default();
            if is_custom(api_version) {
                let crd = crds.name_for(api_version, kind);
                crds.established(mgmt, &crd, options).await?;
            }
        }
        let applied: Vec<Value> = stream::iter(stage.iter().map(|o| mgmt.apply(o)))
            .buffered(STAGE_CONCURRENCY)
            .try_collect()
            .await?;
        for (object, answer) in stage.iter().zip(&applied) {
            if object["kind"] == "CustomResourceDefinition"
                && condition_true(answer, "Established")
                && let Some(name) = answer["metadata"]["name"].as_str()
            {
                crds.established.insert(name.to_owned());
            }
            on_event(Event::Applied {
                object: describe(object),
            });
        }
    }
    for object in objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
    {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        crds.established(mgmt, name, options).await?;
    }
    Ok(objects.len())
}

/// Whether a Deployment is Available for its current spec, and what it says.
pub(crate) fn deployment_available(deployment: &Value) -> (bool, u32, u32, String) {
    let status = &deployment["status"];
    let count = |v: &Value| v.as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
    let want = deployment["spec"]["replicas"]
        .as_u64()
        .map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let available = count(&status["availableReplicas"]);
    let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(0);
    let observed = status["observedGeneration"].as_i64().unwrap_or(0) >= generation;
    let done = observed && condition_true(deployment, "Available");
    let mut detail = format!(
        "{available}/{want} replicas available; {}",
        conditions_text(deployment)
    );
    if !observed {
        detail.push_str("; the deployment controller has not seen the latest spec");
    }
    (done, available.min(want), want, detail)
}

/// Waits for each Deployment to be Available, reporting progress.
pub(crate) async fn wait_deployments(
    mgmt: &Management,
    deployments: &[(String, String)],
    options: &InitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    for (namespace, name) in deployments {
        let object = format!("Deployment {namespace}/{name}");
        let stage = Stage::Rollout(object.clone());
        let start = Instant::now();
        let mut last: Option<String> = None;
        loop {
            let (done, ready, total, detail) = match mgmt
                .get("apps/v1", "Deployment", Some(namespace), name)
                .await?
            {
                Some(d) => deployment_available(&d),
                None => (false, 0, 1, "the Deployment does not exist".into()),
            };
            if done {
                on_event(Event::Ready {
                    stage,
                    ready,
                    total,
                });
                break;
            }
            if last.as_deref() != Some(detail.as_str()) {
                on_event(Event::Waiting {
                    stage: stage.clone(),
                    ready,
                    total,
                    detail: detail.clone(),
                });
            }
            if let Some(limit) = options.deployment_timeout
                && start.elapsed() >= limit
            {
                return Err(LifecycleError::ComponentNotReady {
                    object,
                    condition: "Available".into(),
                    detail,
                    after: human(limit),
                });
            }
            last = Some(detail);
            tokio::time::sleep(options.poll).await;
        }
    }
    Ok(())
}

/// What [`super::init`] and [`super::upgrade::apply`] share across the components of one run:
/// the CRDs known and Established, and whether the inventory CRD is in place.
pub(crate) struct Installer<'a> {
    pub(crate) mgmt: &'a Management,
    pub(crate) options: &'a InitOptions,
    crds: Crds,
    inventory_ready: bool,
}

impl<'a> Installer<'a> {
    /// An installer for the components of `prepared` (their CRDs learnt up front, so that an
    /// object of a kind another component defines waits for that CRD).
    pub(crate) fn new(
        mgmt: &'a Management,
        options: &'a InitOptions,
        prepared: &[ComponentObjects],
    ) -> Installer<'a> {
        let mut crds = Crds::default();
        for c in prepared {
            crds.learn(&c.objects);
        }
        Installer {
            mgmt,
            options,
            crds,
            inventory_ready: false,
        }
    }

    /// A first install of the component, said as a step: its objects applied, its Deployments
    /// waited for, its inventory entry written; returns how many objects were applied.
    pub(crate) async fn install(
        &mut self,
        c: &ComponentObjects,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<usize, LifecycleError> {
        on_event(Event::Step(format!(
            "Installing {} {} ({} objects, namespace {})",
            c.component,
            c.version,
            c.objects.len(),
            c.namespace
        )));
        let applied = self.apply(c, on_event).await?;
        self.finish(c, on_event).await?;
        Ok(applied)
    }

    /// Applies the component's objects in order (see [`apply_objects`]); returns how many.
    pub(crate) async fn apply(
        &mut self,
        component: &ComponentObjects,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<usize, LifecycleError> {
        let objects = &component.objects;
        apply_objects(self.mgmt, objects, &mut self.crds, self.options, on_event).await
    }

    /// Waits for the component's Deployments, then records its version in the inventory (the
    /// controller: in its ConfigMap, [`super::controller`]), last, so that an interrupted run
    /// is seen as not done and is done again.
    pub(crate) async fn finish(
        &mut self,
        component: &ComponentObjects,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), LifecycleError> {
        wait_deployments(self.mgmt, &component.deployments(), self.options, on_event).await?;
        if component.component == super::components::Component::Controller {
            let record = super::controller::record(component);
            self.mgmt.apply(&record).await?;
            on_event(Event::Applied {
                object: describe(&record),
            });
            return Ok(());
        }
        let Some(entry) = inventory::provider(
            component.component,
            &component.namespace,
            &component.version,
        ) else {
            return Ok(());
        };
        if !self.inventory_ready {
            let crd = inventory::crd();
            self.crds.learn(std::slice::from_ref(&crd));
            self.mgmt.apply(&crd).await?;
            on_event(Event::Applied {
                object: describe(&crd),
            });
            self.crds
                .established(self.mgmt, inventory::CRD_NAME, self.options)
                .await?;
            self.inventory_ready = true;
        }
        self.mgmt.apply(&entry).await?;
        on_event(Event::Applied {
            object: describe(&entry),
        });
        Ok(())
    }
}

/// The default pause between two looks.
pub(crate) const POLL: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deployment_is_available_for_its_latest_spec_only() {
        let d = |observed: i64, status: &str| {
            json!({"metadata": {"generation": 2}, "spec": {"replicas": 1},
                "status": {"observedGeneration": observed, "availableReplicas": 1,
                    "conditions": [{"type": "Available", "status": status, "reason": "MinimumReplicasUnavailable"}]}})
        };
        assert!(deployment_available(&d(2, "True")).0);
        assert!(!deployment_available(&d(1, "True")).0);
        let (done, _, _, detail) = deployment_available(&d(2, "False"));
        assert!(!done);
        assert!(
            detail.contains("Available=False (MinimumReplicasUnavailable)"),
            "{detail}"
        );
    }
}
