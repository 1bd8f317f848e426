//! The Kubernetes API stand-in against the real kube 5 client.

mod common;

use common::{Result, bounded, client_with};
use futures_util::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::config::Kubeconfig;
use kube::runtime::watcher;
use kube::{Client, Discovery};
use serde_json::{Value, json};
use snow_test_kube::KubeStandIn;
use std::time::Duration;

async fn start() -> Result<(KubeStandIn, Client)> {
    let stand_in = KubeStandIn::start().await?;
    let client = client_with(&stand_in.kubeconfig()).await?;
    Ok((stand_in, client))
}

fn api_error(e: kube::Error) -> Result<Box<kube::core::Status>> {
    match e {
        kube::Error::Api(s) => Ok(s),
        other => Err(format!("expected an API error, got {other}").into()),
    }
}

fn cm(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

fn rv(o: &ConfigMap) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_creates_updates_skips_no_ops_and_prunes() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let pp = PatchParams::apply("m1");
        let created = cms
            .patch(
                "a",
                &pp,
                &Patch::Apply(cm("a", json!({"x": "1", "y": "2"}))),
            )
            .await?;
        assert_eq!(created.metadata.generation, Some(1));
        assert!(created.metadata.uid.is_some());
        let mf = created.metadata.managed_fields.clone().unwrap_or_default();
        assert_eq!(mf.len(), 1);
        assert_eq!(mf[0].manager.as_deref(), Some("m1"));
        assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
        let fields = serde_json::to_value(&mf[0].fields_v1)?;
        assert_eq!(fields, json!({"f:data": {"f:x": {}, "f:y": {}}}));

        let writes = stand_in.writes();
        let again = cms
            .patch(
                "a",
                &pp,
                &Patch::Apply(cm("a", json!({"x": "1", "y": "2"}))),
            )
            .await?;
        assert_eq!(
            rv(&again),
            rv(&created),
            "a no-op apply keeps the resourceVersion"
        );
        assert_eq!(stand_in.writes(), writes + 1);

        let pruned = cms
            .patch("a", &pp, &Patch::Apply(cm("a", json!({"x": "3"}))))
            .await?;
        assert_ne!(rv(&pruned), rv(&created));
        let data = pruned.data.unwrap_or_default();
        assert_eq!(data.get("x").map(String::as_str), Some("3"));
        assert!(
            !data.contains_key("y"),
            "an omitted field owned only by m1 is removed: {data:?}"
        );

        let dry = cms
            .patch(
                "a",
                &pp.clone().dry_run(),
                &Patch::Apply(cm("a", json!({"x": "4"}))),
            )
            .await?;
        assert_eq!(
            dry.data.unwrap_or_default().get("x").map(String::as_str),
            Some("4")
        );
        assert_eq!(
            cms.get("a")
                .await?
                .data
                .unwrap_or_default()
                .get("x")
                .map(String::as_str),
            Some("3")
        );
        let stored = stand_in
            .get("v1", "ConfigMap", Some("default"), "a")
            .ok_or("stored")?;
        assert_eq!(stored["data"], json!({"x": "3"}));
        assert!(
            stand_in
                .requests()
                .iter()
                .any(|r| r == "PATCH /api/v1/namespaces/default/configmaps/a")
        );
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_conflicts_between_managers_and_force_moves_ownership() -> Result {
    bounded(60, async {
        let (_stand_in, client) = start().await?;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        cms.patch(
            "c",
            &PatchParams::apply("m1"),
            &Patch::Apply(cm("c", json!({"a": "1", "b": "1"}))),
        )
        .await?;
        // Same value: shared ownership, no conflict.
        cms.patch(
            "c",
            &PatchParams::apply("m2"),
            &Patch::Apply(cm("c", json!({"b": "1"}))),
        )
        .await?;
        let err = cms
            .patch(
                "c",
                &PatchParams::apply("m2"),
                &Patch::Apply(cm("c", json!({"a": "2"}))),
            )
            .await
            .err()
            .ok_or("a conflicting apply must fail")?;
        let status = api_error(err)?;
        assert_eq!(status.code, 409);
        assert_eq!(status.reason, "Conflict");
        assert!(
            status.message.contains("\"m1\"") && status.message.contains(".data.a"),
            "{}",
            status.message
        );

        let forced = cms
            .patch(
                "c",
                &PatchParams::apply("m2").force(),
                &Patch::Apply(cm("c", json!({"a": "2"}))),
            )
            .await?;
        assert_eq!(
            forced.data.unwrap_or_default().get("a").map(String::as_str),
            Some("2")
        );
        // m1 lost a; b is still shared with... m2 dropped b in its last apply, so m1 owns it alone.
        // m1 now omits a (owned by m2: kept) and b (owned by m1 only: pruned).
        let after = cms
            .patch(
                "c",
                &PatchParams::apply("m1"),
                &Patch::Apply(cm("c", json!({}))),
            )
            .await?;
        let data = after.data.unwrap_or_default();
        assert_eq!(data.get("a").map(String::as_str), Some("2"));
        assert!(!data.contains_key("b"), "{data:?}");

        // Merge patch records an Update entry.
        let merged = cms
            .patch(
                "c",
                &PatchParams {
                    field_manager: Some("editor".into()),
                    ..Default::default()
                },
                &Patch::Merge(json!({"data": {"z": "9"}})),
            )
            .await?;
        let entries = merged.metadata.managed_fields.clone().unwrap_or_default();
        assert!(
            entries
                .iter()
                .any(|e| e.manager.as_deref() == Some("editor")
                    && e.operation.as_deref() == Some("Update"))
        );
        // Stale replace.
        let mut stale = merged.clone();
        stale.metadata.resource_version = Some("1".into());
        let err = cms
            .replace("c", &PostParams::default(), &stale)
            .await
            .err()
            .ok_or("stale PUT")?;
        assert_eq!(api_error(err)?.code, 409);
        // Apply without a field manager is refused.
        let err = cms
            .patch(
                "c",
                &PatchParams::default(),
                &Patch::Apply(cm("c", json!({}))),
            )
            .await
            .err()
            .ok_or("no manager")?;
        assert_eq!(api_error(err)?.code, 400);
        // Create of an existing object.
        let err = cms
            .create(
                &PostParams::default(),
                &serde_json::from_value(cm("c", json!({})))?,
            )
            .await
            .err()
            .ok_or("exists")?;
        assert!(api_error(err)?.is_already_exists());
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn status_subresource_is_isolated_and_generation_follows_spec() -> Result {
    bounded(60, async {
        let (_stand_in, client) = start().await?;
        let deployments: Api<Deployment> = Api::namespaced(client, "default");
        let d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
            "status": {"replicas": 7}
        });
        let created = deployments.patch("d", &PatchParams::apply("m"), &Patch::Apply(&d)).await?;
        assert!(created.status.is_none(), "status is ignored on the main resource");
        let with_status = deployments
            .patch_status("d", &PatchParams::default(), &Patch::Merge(json!({"status": {"availableReplicas": 1}, "spec": {"replicas": 5}})))
            .await?;
        assert_eq!(with_status.status.as_ref().and_then(|s| s.available_replicas), Some(1));
        assert_eq!(with_status.spec.replicas, Some(1), "a status write leaves spec alone");
        assert_eq!(with_status.metadata.generation, Some(1));
        let scaled = deployments.patch("d", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 2}, "status": {"availableReplicas": 9}}))).await?;
        assert_eq!(scaled.metadata.generation, Some(2));
        assert_eq!(scaled.status.as_ref().and_then(|s| s.available_replicas), Some(1));
        let labelled = deployments.patch("d", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}}))).await?;
        assert_eq!(labelled.metadata.generation, Some(2), "metadata changes do not bump generation");
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn label_and_field_selectors() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        for (name, labels) in [
            ("one", json!({"env": "a", "tier": "x"})),
            ("two", json!({"env": "b"})),
            ("three", json!({"env": "c", "tier": "y"})),
        ] {
            let mut o = cm(name, json!({}));
            o["metadata"]["labels"] = labels;
            stand_in.put(o)?;
        }
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let names = |list: kube::core::ObjectList<ConfigMap>| {
            let mut n: Vec<String> = list
                .items
                .into_iter()
                .filter_map(|o| o.metadata.name)
                .collect();
            n.sort();
            n
        };
        for (selector, expected) in [
            ("env=a", vec!["one"]),
            ("env==b", vec!["two"]),
            ("env!=a", vec!["three", "two"]),
            ("env in (a,b)", vec!["one", "two"]),
            ("env notin (a, b)", vec!["three"]),
            ("tier", vec!["one", "three"]),
            ("!tier", vec!["two"]),
            ("tier,env in (c)", vec!["three"]),
        ] {
            let got = names(cms.list(&ListParams::default().labels(selector)).await?);
            assert_eq!(got, expected, "selector {selector}");
        }
        let got = names(
            cms.list(&ListParams::default().fields("metadata.name=two"))
                .await?,
        );
        assert_eq!(got, vec!["two"]);
        let all: Api<ConfigMap> = Api::all(client);
        let list = all.list(&ListParams::default()).await?;
        assert_eq!(list.items.len(), 3);
        assert!(list.metadata.resource_version.is_some());
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn finalizers_hold_deletion_and_owner_references_collect_dependents() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let mut held = cm("held", json!({}));
        held["metadata"]["finalizers"] = json!(["example.com/hold"]);
        cms.create(&PostParams::default(), &serde_json::from_value(held)?).await?;
        let deleted = cms.delete("held", &DeleteParams::default()).await?;
        let terminating = deleted.left().ok_or("a held object is returned")?;
        assert!(terminating.metadata.deletion_timestamp.is_some());
        assert!(cms.get("held").await?.metadata.deletion_timestamp.is_some());
        cms.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}}))).await?;
        assert!(cms.get_opt("held").await?.is_none(), "emptying the finalizers removes it");

        let parent = cms.create(&PostParams::default(), &serde_json::from_value(cm("parent", json!({})))?).await?;
        let owner = |o: &ConfigMap| json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": o.metadata.name, "uid": o.metadata.uid}]);
        let mut child = cm("child", json!({}));
        child["metadata"]["ownerReferences"] = owner(&parent);
        let child = cms.create(&PostParams::default(), &serde_json::from_value(child)?).await?;
        let mut grandchild = cm("grandchild", json!({}));
        grandchild["metadata"]["ownerReferences"] = owner(&child);
        cms.create(&PostParams::default(), &serde_json::from_value(grandchild)?).await?;
        let gone = cms.delete("parent", &DeleteParams::default()).await?;
        assert!(gone.right().is_some_and(|s| s.is_success()));
        assert!(stand_in.get("v1", "ConfigMap", Some("default"), "child").is_none());
        assert!(stand_in.get("v1", "ConfigMap", Some("default"), "grandchild").is_none());
        let err = cms.get("parent").await.err().ok_or("gone")?;
        assert!(api_error(err)?.is_not_found());
        // A namespace that does not exist.
        let elsewhere: Api<ConfigMap> = Api::namespaced(cms.clone().into_client(), "nowhere");
        let err = elsewhere.create(&PostParams::default(), &serde_json::from_value(cm("x", json!({})))?).await.err().ok_or("no namespace")?;
        assert!(api_error(err)?.is_not_found());
        Ok(())
    })
    .await
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList", "shortNames": ["wd"]},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v1alpha1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
            ]
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn crds_register_through_the_api_and_show_in_discovery() -> Result {
    bounded(60, async {
        let (_stand_in, client) = start().await?;
        let widgets_ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
        let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widgets_ar);
        let err = widgets.list(&ListParams::default()).await.err().ok_or("not registered yet")?;
        assert_eq!(api_error(err)?.code, 404);

        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        crds.patch("widgets.example.com", &PatchParams::apply("installer"), &Patch::Apply(widget_crd())).await?;
        let crd = crds.get("widgets.example.com").await?;
        let established = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        assert!(established.iter().any(|c| c.type_ == "Established" && c.status == "True"));

        let resources = client.list_api_group_resources("example.com/v1").await?;
        let names: Vec<&str> = resources.resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["widgets", "widgets/status"]);
        assert!(resources.resources[0].namespaced);
        let discovery = Discovery::new(client.clone()).run().await?;
        let group = discovery.get("example.com").ok_or("example.com discovered")?;
        assert_eq!(group.preferred_version_or_latest(), "v1");
        assert!(discovery.has_group("apps"));
        let (ar, caps) = discovery.resolve_gvk(&GroupVersionKind::gvk("example.com", "v1alpha1", "Widget")).ok_or("v1alpha1 served")?;
        assert_eq!(ar.plural, "widgets");
        assert!(matches!(caps.scope, kube::discovery::Scope::Namespaced));
        let aggregated = Discovery::new(client.clone()).run_aggregated().await?;
        assert!(aggregated.get("example.com").is_some());
        assert!(aggregated.get("").is_some_and(|g| g.recommended_kind("ConfigMap").is_some()));

        let mut w: DynamicObject = serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}))?;
        w = widgets.create(&PostParams::default(), &w).await?;
        assert_eq!(w.data["spec"]["size"], 3);
        let alpha_ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1alpha1", "Widget"), "widgets");
        let alpha: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &alpha_ar);
        let through_alpha = alpha.get("w1").await?;
        assert_eq!(through_alpha.types.map(|t| t.api_version), Some("example.com/v1alpha1".to_owned()));

        crds.delete("widgets.example.com", &DeleteParams::default()).await?;
        let err = widgets.get("w1").await.err().ok_or("unregistered")?;
        assert_eq!(api_error(err)?.code, 404);
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crd_established_after_a_delay_serves_its_kind_only_then() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        stand_in.establish_after("widgets.example.com", Duration::from_secs(3));
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let established = |crd: &CustomResourceDefinition| {
            let conditions = crd.status.as_ref().and_then(|s| s.conditions.clone());
            conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        };
        let made = crds
            .patch(
                "widgets.example.com",
                &PatchParams::apply("installer"),
                &Patch::Apply(widget_crd()),
            )
            .await?;
        assert!(!established(&made), "not Established when created");
        let widgets_ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("example.com", "v1", "Widget"),
            "widgets",
        );
        let widgets: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), "default", &widgets_ar);
        let widget =
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}});
        let err = widgets
            .patch("w1", &PatchParams::apply("t"), &Patch::Apply(&widget))
            .await
            .err()
            .ok_or("served before Established")?;
        assert_eq!(api_error(err)?.code, 404);
        while !established(&crds.get("widgets.example.com").await?) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        widgets
            .patch("w1", &PatchParams::apply("t"), &Patch::Apply(&widget))
            .await?;
        // Established stays: applying the CRD again does not take it back.
        let again = crds
            .patch(
                "widgets.example.com",
                &PatchParams::apply("installer"),
                &Patch::Apply(widget_crd()),
            )
            .await?;
        assert!(established(&again));
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_token_is_refused_and_a_stopped_server_is_unreachable() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        let wrong = stand_in
            .kubeconfig()
            .replace(stand_in.token(), "not-the-token");
        let intruder = client_with(&wrong).await?;
        let err = Api::<Namespace>::all(intruder)
            .list(&ListParams::default())
            .await
            .err()
            .ok_or("401")?;
        assert_eq!(api_error(err)?.code, 401);
        let namespaces = Api::<Namespace>::all(client.clone())
            .list(&ListParams::default())
            .await?;
        assert!(
            namespaces
                .items
                .iter()
                .any(|n| n.metadata.name.as_deref() == Some("default"))
        );
        let dir = tempfile::tempdir()?;
        let path = stand_in.write_kubeconfig(dir.path())?;
        assert!(std::fs::read_to_string(path)?.contains("current-context: stand-in"));
        stand_in.stop();
        let result = Api::<Namespace>::all(client)
            .list(&ListParams::default())
            .await;
        assert!(
            matches!(result, Err(ref e) if !matches!(e, kube::Error::Api(_))),
            "{result:?}"
        );
        // Stopping aborts the serving task; the runtime drops its listener at the task's next
        // poll, so the port is released soon after, not at once.
        let released = async {
            while !snow_test_devices::closed_port(stand_in.addr().ip(), stand_in.addr().port()) {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), released)
            .await
            .map_err(|_| "the stopped stand-in still holds its port after 5 s")?;
        Ok(())
    })
    .await
}

async fn next_named(
    events: &mut (
             impl futures_util::Stream<Item = Result<watcher::Event<ConfigMap>, watcher::Error>> + Unpin
         ),
    want: &str,
) -> Result<String> {
    loop {
        let event = events.next().await.ok_or("watch ended")??;
        let (tag, o) = match event {
            watcher::Event::Apply(o) => ("apply", o),
            watcher::Event::Delete(o) => ("delete", o),
            watcher::Event::InitApply(o) => ("init", o),
            _ => continue,
        };
        let label = format!("{tag} {}", o.metadata.name.unwrap_or_default());
        if label.ends_with(want) || want.is_empty() {
            return Ok(label);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_runtime_watcher_sees_changes_and_recovers_from_dropped_watches() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        stand_in.put(cm("before", json!({})))?;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let mut events = Box::pin(watcher(cms.clone(), watcher::Config::default()));
        assert_eq!(next_named(&mut events, "before").await?, "init before");
        cms.create(
            &PostParams::default(),
            &serde_json::from_value(cm("w", json!({"a": "1"})))?,
        )
        .await?;
        assert_eq!(next_named(&mut events, "").await?, "apply w");
        cms.patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await?;
        assert_eq!(next_named(&mut events, "").await?, "apply w");
        cms.delete("w", &DeleteParams::default()).await?;
        assert_eq!(next_named(&mut events, "").await?, "delete w");
        stand_in.drop_watches();
        cms.create(
            &PostParams::default(),
            &serde_json::from_value(cm("after", json!({})))?,
        )
        .await?;
        assert_eq!(next_named(&mut events, "after").await?, "apply after");
        // A watch from a compacted resourceVersion gets 410, and the watcher relists.
        stand_in.compact_history();
        stand_in.drop_watches();
        stand_in.put(cm("relisted", json!({})))?;
        let label = next_named(&mut events, "relisted").await?;
        assert!(
            label == "init relisted" || label == "apply relisted",
            "{label}"
        );
        Ok(())
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// The Cluster API simulation.

use snow_test_kube::{CapiHandle, CapiOptions};

fn snapshot(name: &str) -> Result<Vec<Value>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../capi-render/tests/snapshots")
        .join(name);
    let text = std::fs::read_to_string(&path)?;
    // The insta header sits between the first two `---` lines.
    let (_, body) = text.split_once("\n---\n").ok_or("snapshot header")?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(body)?;
    Ok(docs.into_iter().filter(|d| d.is_object()).collect())
}

async fn dynamic(
    client: &Client,
    discovery: &Discovery,
    object: &Value,
) -> Result<Api<DynamicObject>> {
    let api_version = object["apiVersion"].as_str().ok_or("apiVersion")?;
    let kind = object["kind"].as_str().ok_or("kind")?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (ar, _) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
        .ok_or_else(|| format!("{api_version} {kind} not served"))?;
    let ns = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default");
    Ok(Api::namespaced_with(client.clone(), ns, &ar))
}

async fn apply_all(client: &Client, objects: &[Value]) -> Result {
    let discovery = Discovery::new(client.clone()).run().await?;
    for o in objects {
        let api = dynamic(client, &discovery, o).await?;
        let name = o["metadata"]["name"].as_str().ok_or("name")?;
        api.patch(
            name,
            &PatchParams::apply("snowctl-test").force(),
            &Patch::Apply(o),
        )
        .await?;
    }
    Ok(())
}

async fn start_capi(
    step_ms: u64,
    stall: Vec<(String, String)>,
) -> Result<(KubeStandIn, Client, CapiHandle)> {
    start_capi_with(step_ms, stall, None).await
}

async fn start_capi_with(
    step_ms: u64,
    stall: Vec<(String, String)>,
    workload: Option<std::sync::Arc<KubeStandIn>>,
) -> Result<(KubeStandIn, Client, CapiHandle)> {
    let (stand_in, client) = start().await?;
    stand_in.install_capi()?;
    let capi = stand_in.start_capi(CapiOptions {
        step: Duration::from_millis(step_ms),
        stall,
        workload,
        ..CapiOptions::default()
    });
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "eksa-system"}}))?,
        )
        .await?;
    Ok((stand_in, client, capi))
}

/// Waits for the workload cluster of `snow-test`, checks that its control plane is initialized
/// but not ready (no CNI: every Node NotReady), then installs a CNI DaemonSet there (what
/// snowctl's CNI step does) and returns the workload cluster.
async fn install_cni(
    stand_in: &KubeStandIn,
    capi: &CapiHandle,
    kcp_av: &str,
) -> Result<std::sync::Arc<KubeStandIn>> {
    let mut workload = None;
    until(30, "the workload cluster", || {
        workload = capi.workload("snow-test");
        workload.is_some()
            && stand_in
                .get(
                    kcp_av,
                    "KubeadmControlPlane",
                    Some("eksa-system"),
                    "snow-test",
                )
                .is_some_and(|k| k["status"]["initialized"] == true)
    })
    .await?;
    let workload = workload.ok_or("workload")?;
    until(30, "a Node", || {
        !workload.list("v1", "Node", None).is_empty()
    })
    .await?;
    // Without a CNI, a Node is NotReady and its machine does not count as ready.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let nodes = workload.list("v1", "Node", None);
    assert!(
        nodes.iter().all(|n| !snow_test_kube::nodes::node_ready(n)),
        "{nodes:?}"
    );
    let kcp = stand_in
        .get(
            kcp_av,
            "KubeadmControlPlane",
            Some("eksa-system"),
            "snow-test",
        )
        .ok_or("kcp")?;
    assert_eq!(kcp["status"]["readyReplicas"], 0, "{}", kcp["status"]);
    workload.put(snow_test_kube::nodes::cni_daemonset())?;
    Ok(workload)
}

fn condition_true(o: &Value, kind: &str) -> bool {
    o["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == kind && c["status"] == "True")
    })
}

/// Polls `get` until `done` holds (every 10 ms, at most `seconds`).
async fn until(seconds: u64, what: &str, mut check: impl FnMut() -> bool) -> Result {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    while !check() {
        if tokio::time::Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

fn machines(stand_in: &KubeStandIn, label: &str, value: &str) -> Vec<Value> {
    stand_in
        .list("cluster.x-k8s.io/v1beta2", "Machine", Some("eksa-system"))
        .into_iter()
        .filter(|m| m["metadata"]["labels"][label] == value)
        .collect()
}

/// `cni_first`: the test supplies the workload cluster with a CNI already there; otherwise the
/// CNI is installed once the control plane is initialized (and found not ready without it).
async fn provision_roll_and_delete(
    snapshot_name: &str,
    contract: &str,
    etcd: bool,
    cni_first: bool,
) -> Result {
    let supplied = if cni_first {
        let workload = std::sync::Arc::new(KubeStandIn::start().await?);
        workload.put(snow_test_kube::nodes::cni_daemonset())?;
        Some(workload)
    } else {
        None
    };
    let (stand_in, client, capi) = start_capi_with(50, Vec::new(), supplied.clone()).await?;
    let objects = snapshot(snapshot_name)?;
    let cluster_av = format!("cluster.x-k8s.io/{contract}");
    let kcp_av = format!("controlplane.cluster.x-k8s.io/{contract}");
    // Control-plane progress is observable: 0 ready is seen before 3/3. A watch sees every
    // write (polling could miss a state on a loaded machine).
    let kcps = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "eksa-system",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(
                "controlplane.cluster.x-k8s.io",
                contract,
                "KubeadmControlPlane",
            ),
            "kubeadmcontrolplanes",
        ),
    );
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let recorded = seen.clone();
    let watching = tokio::spawn(async move {
        let mut events = Box::pin(watcher(kcps, watcher::Config::default()));
        while let Some(Ok(event)) = events.next().await {
            if let watcher::Event::Apply(o) | watcher::Event::InitApply(o) = event {
                let ready = o.data["status"]["readyReplicas"].as_u64().unwrap_or(0);
                recorded.lock().unwrap().insert(ready);
            }
        }
    });
    apply_all(&client, &objects).await?;
    let workload = match supplied {
        Some(w) => w,
        None => install_cni(&stand_in, &capi, &kcp_av).await?,
    };
    until(30, "the cluster to be Ready", || {
        stand_in
            .get(&cluster_av, "Cluster", Some("eksa-system"), "snow-test")
            .is_some_and(|c| condition_true(&c, "Ready"))
            && seen.lock().unwrap().contains(&3)
    })
    .await
    .map_err(|e| {
        let state: Vec<String> = stand_in
            .objects()
            .iter()
            .filter(|o| o["kind"] != "CustomResourceDefinition")
            .map(|o| format!("{} {} {}", o["kind"], o["metadata"]["name"], o["status"]))
            .collect();
        format!("{e}: {}", state.join("\n"))
    })?;
    watching.abort();
    let seen = seen.lock().unwrap().clone();
    // Machines exist before their Nodes are Ready: 0 ready is seen before 3.
    assert!(
        seen.contains(&0) && seen.contains(&3),
        "progress seen: {seen:?}"
    );
    let clusters = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "eksa-system",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("cluster.x-k8s.io", contract, "Cluster"),
            "clusters",
        ),
    );
    let cluster = clusters.get("snow-test").await?;
    assert_eq!(cluster.data["status"]["phase"], "Provisioned");
    assert_eq!(cluster.data["status"]["controlPlaneReady"], true);
    assert!(
        cluster
            .metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"cluster.cluster.x-k8s.io".to_owned())
    );
    let infra = stand_in
        .get(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "AWSSnowCluster",
            Some("eksa-system"),
            "snow-test",
        )
        .ok_or("AWSSnowCluster")?;
    assert_eq!(infra["status"]["ready"], true);
    if etcd {
        let etcd = stand_in
            .get(
                "etcdcluster.cluster.x-k8s.io/v1beta1",
                "EtcdadmCluster",
                Some("eksa-system"),
                "snow-test-etcd",
            )
            .ok_or("EtcdadmCluster")?;
        assert_eq!(etcd["status"]["ready"], true);
        assert_eq!(
            machines(&stand_in, "cluster.x-k8s.io/etcd-cluster", "snow-test-etcd").len(),
            3
        );
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), "eksa-system");
    let secret = secrets.get("snow-test-kubeconfig").await?;
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    let value = secret
        .data
        .unwrap_or_default()
        .remove("value")
        .ok_or("value")?;
    let kubeconfig = String::from_utf8(value.0)?;
    assert!(Kubeconfig::from_yaml(&kubeconfig).is_ok(), "{kubeconfig}");
    assert!(kubeconfig.contains(&workload.url()), "{kubeconfig}");
    // A Node per control-plane and worker machine (none for etcd), named after it, Ready.
    let mut node_names: Vec<String> = workload
        .list("v1", "Node", None)
        .iter()
        .filter(|n| snow_test_kube::nodes::node_ready(n))
        .map(|n| {
            n["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    node_names.sort();
    let mut machine_names: Vec<String> = stand_in
        .list("cluster.x-k8s.io/v1beta2", "Machine", Some("eksa-system"))
        .iter()
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/etcd-cluster"].is_null())
        .inspect(|m| assert_eq!(m["status"]["nodeRef"]["name"], m["metadata"]["name"]))
        .map(|m| {
            m["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    machine_names.sort();
    assert_eq!(node_names, machine_names);
    let ds = workload
        .get("apps/v1", "DaemonSet", Some("kube-system"), "test-cni")
        .ok_or("ds")?;
    assert_eq!(
        ds["status"]["numberReady"],
        node_names.len(),
        "{}",
        ds["status"]
    );
    assert_eq!(
        machines(&stand_in, "cluster.x-k8s.io/control-plane", "").len(),
        3
    );
    assert_eq!(
        machines(
            &stand_in,
            "cluster.x-k8s.io/deployment-name",
            "snow-test-md-0"
        )
        .len(),
        3
    );
    let cp = machines(&stand_in, "cluster.x-k8s.io/control-plane", "");
    assert_eq!(
        cp[0]["spec"]["infrastructureRef"]["name"],
        "snow-test-control-plane-1"
    );
    assert_eq!(
        cp[0]["metadata"]["ownerReferences"][0]["kind"],
        "KubeadmControlPlane"
    );

    // Rename the worker template: the machines roll one by one onto it.
    let mut md = objects
        .iter()
        .find(|o| o["kind"] == "MachineDeployment" && o["metadata"]["name"] == "snow-test-md-0")
        .cloned()
        .ok_or("md-0")?;
    md["spec"]["template"]["spec"]["infrastructureRef"]["name"] = json!("snow-test-md-0-2");
    apply_all(&client, &[md]).await?;
    let md_av = format!("cluster.x-k8s.io/{contract}");
    let mut updated_seen = std::collections::BTreeSet::new();
    until(30, "the machine deployment to roll", || {
        let Some(md) = stand_in.get(
            &md_av,
            "MachineDeployment",
            Some("eksa-system"),
            "snow-test-md-0",
        ) else {
            return false;
        };
        updated_seen.insert(md["status"]["updatedReplicas"].as_u64().unwrap_or(0));
        let ms = machines(
            &stand_in,
            "cluster.x-k8s.io/deployment-name",
            "snow-test-md-0",
        );
        md["status"]["updatedReplicas"] == 3
            && md["status"]["observedGeneration"] == md["metadata"]["generation"]
            && ms.len() == 3
            && ms
                .iter()
                .all(|m| m["spec"]["infrastructureRef"]["name"] == "snow-test-md-0-2")
    })
    .await?;
    assert!(
        updated_seen.contains(&1) || updated_seen.contains(&2),
        "{updated_seen:?}"
    );

    // Delete the cluster: everything goes, then the cluster.
    clusters
        .delete("snow-test", &DeleteParams::default())
        .await?;
    until(30, "the cluster to go", || {
        stand_in
            .get(&cluster_av, "Cluster", Some("eksa-system"), "snow-test")
            .is_none()
    })
    .await?;
    assert!(
        stand_in
            .list("cluster.x-k8s.io/v1beta2", "Machine", None)
            .is_empty()
    );
    assert!(
        stand_in
            .list(&kcp_av, "KubeadmControlPlane", None)
            .is_empty()
    );
    assert!(
        stand_in
            .list("cluster.x-k8s.io/v1beta2", "MachineDeployment", None)
            .is_empty()
    );
    assert!(
        stand_in
            .list(
                "etcdcluster.cluster.x-k8s.io/v1beta1",
                "EtcdadmCluster",
                None
            )
            .is_empty()
    );
    assert!(
        stand_in
            .list(
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "AWSSnowCluster",
                None
            )
            .is_empty()
    );
    assert!(secrets.get_opt("snow-test-kubeconfig").await?.is_none());
    assert!(workload.list("v1", "Node", None).is_empty());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn capi_provisions_rolls_and_deletes_a_v1beta2_cluster_with_external_etcd() -> Result {
    bounded(
        90,
        provision_roll_and_delete(
            "render__ubuntu-external-mirror-1-33-v1beta2.snap",
            "v1beta2",
            true,
            true,
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn capi_provisions_rolls_and_deletes_a_v1beta1_stacked_cluster() -> Result {
    bounded(
        90,
        provision_roll_and_delete(
            "render__ubuntu-stacked-mirror-1-33-v1beta1.snap",
            "v1beta1",
            false,
            false,
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn capi_stalled_objects_never_become_ready_until_released() -> Result {
    bounded(60, async {
        let stall = vec![("KubeadmControlPlane".to_owned(), "snow-test".to_owned())];
        let (stand_in, client, capi) = start_capi(10, stall).await?;
        apply_all(
            &client,
            &snapshot("render__ubuntu-stacked-mirror-1-33-v1beta2.snap")?,
        )
        .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cluster = stand_in
            .get(
                "cluster.x-k8s.io/v1beta2",
                "Cluster",
                Some("eksa-system"),
                "snow-test",
            )
            .ok_or("cluster")?;
        assert!(!condition_true(&cluster, "Ready"));
        assert!(machines(&stand_in, "cluster.x-k8s.io/control-plane", "").is_empty());
        assert!(
            machines(
                &stand_in,
                "cluster.x-k8s.io/deployment-name",
                "snow-test-md-0"
            )
            .is_empty(),
            "workers wait for the control plane"
        );
        capi.set_stall(Vec::new());
        install_cni(&stand_in, &capi, "controlplane.cluster.x-k8s.io/v1beta2").await?;
        until(30, "the cluster to be Ready", || {
            stand_in
                .get(
                    "cluster.x-k8s.io/v1beta2",
                    "Cluster",
                    Some("eksa-system"),
                    "snow-test",
                )
                .is_some_and(|c| condition_true(&c, "Ready"))
        })
        .await?;
        // A no-op re-apply of everything does not change any resourceVersion.
        capi.pause();
        let before = stand_in.resource_version();
        apply_all(
            &client,
            &snapshot("render__ubuntu-stacked-mirror-1-33-v1beta2.snap")?,
        )
        .await?;
        assert_eq!(stand_in.resource_version(), before);
        Ok(())
    })
    .await
}

/// The opt-in latency delays every answer (checked as a lower bound only, which the server's
/// sleep guarantees), concurrent requests are all answered, and zero turns it off again.
#[tokio::test(flavor = "multi_thread")]
async fn an_opt_in_latency_delays_each_answer_and_zero_turns_it_off() -> Result {
    bounded(60, async {
        let (stand_in, client) = start().await?;
        let api = Api::<ConfigMap>::namespaced(client, "default");
        api.create(
            &PostParams::default(),
            &serde_json::from_value(cm("a", json!({})))?,
        )
        .await?;
        let latency = Duration::from_millis(300);
        stand_in.set_latency(latency);
        let start = std::time::Instant::now();
        api.get("a").await?;
        assert!(start.elapsed() >= latency, "{:?}", start.elapsed());
        // Eight GETs at once (each answer waits without holding the store): all answered, each
        // after at least the latency.
        let gets = (0..8).map(|_| {
            let api = api.clone();
            async move {
                let start = std::time::Instant::now();
                api.get("a").await.map(|_| start.elapsed())
            }
        });
        for elapsed in futures_util::future::join_all(gets).await {
            assert!(elapsed? >= latency);
        }
        stand_in.set_latency(Duration::ZERO);
        assert_eq!(api.get("a").await?.metadata.name.as_deref(), Some("a"));
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restored_object_keeps_its_identity_and_ownership_and_a_taken_key_is_refused() -> Result {
    let (s, client) = start().await?;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let pp = PatchParams::apply("snowctl").force();
    let made = api
        .patch("first", &pp, &Patch::Apply(cm("first", json!({"k": "v"}))))
        .await?;
    let mut copy = serde_json::to_value(&made)?;
    copy["metadata"]["name"] = json!("second");
    copy["metadata"]["uid"] = json!("copied-uid");
    copy["metadata"]["managedFields"][0]["time"] = json!("2020-01-01T00:00:00Z");
    s.restore(copy.clone())?;
    let restored = api.get("second").await?;
    assert_eq!(restored.metadata.uid.as_deref(), Some("copied-uid"));
    assert_eq!(
        serde_json::to_value(&restored.metadata.managed_fields)?,
        copy["metadata"]["managedFields"],
        "the fields stay owned as they were"
    );
    assert_ne!(rv(&restored), rv(&made), "a new resourceVersion");
    // An apply of the same content by the same manager is then a no-op, as on the original.
    let again = api
        .patch(
            "second",
            &pp,
            &Patch::Apply(cm("second", json!({"k": "v"}))),
        )
        .await?;
    assert_eq!(rv(&again), rv(&restored));
    let taken = s.restore(copy).unwrap_err();
    assert_eq!(taken.code, 409, "{taken:?}");
    let mut no_uid = serde_json::to_value(&made)?;
    no_uid["metadata"]["name"] = json!("third");
    no_uid["metadata"].as_object_mut().unwrap().remove("uid");
    assert_eq!(s.restore(no_uid).unwrap_err().code, 422);
    Ok(())
}

fn pod(name: &str, containers: &[&str]) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|c| json!({"name": c, "image": "example.com/i:1"}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"containers": containers}})
}

/// `pods/log` as kube's `Api::logs` and kubectl read it: the container's text, its last lines,
/// cut at a byte limit, and the API server's refusals.
#[tokio::test(flavor = "multi_thread")]
async fn pod_logs_are_served_as_the_api_server_serves_them() -> Result {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::LogParams;
    let (stand_in, client) = start().await?;
    stand_in.put(pod("one", &["app"]))?;
    stand_in.put(pod("two", &["app", "sidecar"]))?;
    stand_in.set_pod_log("default", "one", "app", "a\nb\nc\n");
    stand_in.set_pod_log("default", "two", "sidecar", "side\n");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    assert_eq!(pods.logs("one", &LogParams::default()).await?, "a\nb\nc\n");
    let tail = LogParams {
        tail_lines: Some(2),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("one", &tail).await?, "b\nc\n");
    let limited = LogParams {
        limit_bytes: Some(3),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("one", &limited).await?, "a\nb");
    let sidecar = LogParams {
        container: Some("sidecar".into()),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("two", &sidecar).await?, "side\n");
    // No container named in a pod of two: 400 with the choices.
    let err = api_error(pods.logs("two", &LogParams::default()).await.unwrap_err())?;
    assert_eq!(err.code, 400, "{err:?}");
    assert!(
        err.message.contains("choose one of: [app sidecar]"),
        "{err:?}"
    );
    let other = LogParams {
        container: Some("nope".into()),
        ..LogParams::default()
    };
    let err = api_error(pods.logs("one", &other).await.unwrap_err())?;
    assert_eq!(err.code, 400, "{err:?}");
    let err = api_error(pods.logs("gone", &LogParams::default()).await.unwrap_err())?;
    assert_eq!(err.code, 404, "{err:?}");
    // kubectl reads the same subresource.
    let dir = tempfile::tempdir()?;
    let kubeconfig = stand_in.write_kubeconfig(dir.path())?;
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["logs", "one", "--tail", "1"])
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "c\n");
    Ok(())
}
