//! Admission webhooks called by the Kubernetes API stand-in: a small HTTPS webhook server in the
//! test (a certificate of snow-test-devices' test CA for the Service's DNS name), kube and kubectl
//! as clients.

mod common;
#[path = "common/webhook.rs"]
mod webhook;

use base64::Engine;
use common::{Result, bounded, client_with};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use snow_test_devices::TestCa;
use snow_test_devices::https::Serving;
use snow_test_kube::KubeStandIn;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn api_error<T: std::fmt::Debug>(r: kube::Result<T>) -> Result<Box<kube::core::Status>> {
    match r {
        Err(kube::Error::Api(s)) => Ok(s),
        other => Err(format!("expected an API error, got {other:?}").into()),
    }
}

/// The webhook Service: `hooks` in `snow-system`, its certificate for this name.
const HOST: &str = "hooks.snow-system.svc";

/// What the test webhook answers, by path: `/allow` allows; `/deny` denies objects labelled
/// `deny` (code 403); `/deny-plain` denies with a message only; `/label` (mutating) adds the
/// label `mutated: "yes"`; `/check-label` denies objects without it; `/slow` answers after 5 s.
fn answer(path: &str, request: &Value) -> Value {
    let labels = &request["object"]["metadata"]["labels"];
    match path {
        "/deny" if !labels["deny"].is_null() => {
            json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "configmaps must not say no"}})
        }
        "/deny-plain" => json!({"allowed": false, "status": {"message": "plain"}}),
        "/label" => {
            let patch = json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]);
            json!({"allowed": true, "patchType": "JSONPatch",
                "patch": base64::engine::general_purpose::STANDARD.encode(patch.to_string())})
        }
        "/check-label" if labels["mutated"] != "yes" => {
            json!({"allowed": false, "status": {"message": "not mutated"}})
        }
        _ => json!({"allowed": true}),
    }
}

/// The test webhook server and what it was sent (`path`, `query`, `request`).
struct Webhook {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Value>>>,
    _serving: Serving,
}

impl Webhook {
    async fn start(ca: &TestCa) -> Result<Webhook> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let (addr, serving) = webhook::serve(ca, HOST, move |path, query, review| {
            let log = log.clone();
            async move {
                let request = review["request"].clone();
                if let Ok(mut log) = log.lock() {
                    log.push(
                        json!({"path": path, "query": query, "request": request, "review": review}),
                    );
                }
                if path == "/slow" {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                answer(&path, &request)
            }
        })
        .await?;
        Ok(Webhook {
            addr,
            seen,
            _serving: serving,
        })
    }

    /// What was sent to `path`, and forgets it.
    fn take(&self, path: &str) -> Vec<Value> {
        let mut seen = self.seen.lock().unwrap();
        let (taken, kept): (Vec<Value>, Vec<Value>) =
            seen.drain(..).partition(|s| s["path"] == path);
        *seen = kept;
        taken
    }
}

struct Setup {
    stand_in: KubeStandIn,
    client: Client,
    ca: TestCa,
    webhook: Webhook,
}

/// A stand-in, namespaces `snow-system` and `apps` (labelled `webhooks: on`) and `other`, the
/// Service `snow-system/hooks` mapped to the test webhook on port 443.
async fn setup() -> Result<Setup> {
    let stand_in = KubeStandIn::start().await?;
    let ca = TestCa::new("webhook CA")?;
    let webhook = Webhook::start(&ca).await?;
    stand_in.put(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "snow-system"}}),
    )?;
    stand_in.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"webhooks": "on"}}}))?;
    stand_in
        .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}))?;
    stand_in.put(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks", "namespace": "snow-system"},
        "spec": {"ports": [{"port": 443, "targetPort": 9443}]}}))?;
    stand_in.map_service("snow-system", "hooks", 443, webhook.addr);
    let client = client_with(&stand_in.kubeconfig()).await?;
    Ok(Setup {
        stand_in,
        client,
        ca,
        webhook,
    })
}

fn ca_bundle(ca: &TestCa) -> String {
    base64::engine::general_purpose::STANDARD.encode(ca.pem())
}

/// A webhook on ConfigMaps (create, update, delete) at `path` of the Service.
fn hook(name: &str, path: &str, ca: &TestCa) -> Value {
    json!({
        "name": name,
        "clientConfig": {"service": {"namespace": "snow-system", "name": "hooks", "path": path}, "caBundle": ca_bundle(ca)},
        "rules": [{"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

async fn validating(client: &Client, name: &str, hooks: Vec<Value>) -> Result {
    let config: ValidatingWebhookConfiguration =
        serde_json::from_value(json!({"metadata": {"name": name}, "webhooks": hooks}))?;
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &config)
        .await?;
    Ok(())
}

async fn unconfigure(client: &Client, name: &str) -> Result {
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .delete(name, &DeleteParams::default())
        .await?;
    Ok(())
}

fn cm(name: &str, labels: Value) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denying_webhook_refuses_with_its_message_and_every_write_is_reviewed() -> Result {
    bounded(60, async {
        let Setup {
            stand_in,
            client,
            ca,
            webhook,
        } = setup().await?;
        validating(&client, "deny", vec![hook("deny.snow.test", "/deny", &ca)]).await?;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");

        cms.create(&PostParams::default(), &cm("ok", json!({"app": "a"})))
            .await?;
        let reviews = webhook.take("/deny");
        assert_eq!(reviews.len(), 1);
        assert_eq!(reviews[0]["query"], "timeout=10s");
        assert_eq!(reviews[0]["review"]["apiVersion"], "admission.k8s.io/v1");
        let r = &reviews[0]["request"];
        assert!(!r["uid"].as_str().unwrap_or_default().is_empty());
        assert_eq!(r["operation"], "CREATE");
        assert_eq!(
            r["kind"],
            json!({"group": "", "version": "v1", "kind": "ConfigMap"})
        );
        assert_eq!(
            r["resource"],
            json!({"group": "", "version": "v1", "resource": "configmaps"})
        );
        assert_eq!(
            (r["namespace"].as_str(), r["name"].as_str()),
            (Some("apps"), Some("ok"))
        );
        assert_eq!(r["userInfo"]["username"], "kubernetes-admin");
        assert_eq!(r["object"]["data"]["k"], "v");
        assert!(r["oldObject"].is_null());
        assert_eq!(r["dryRun"], false);

        let e = api_error(
            cms.create(&PostParams::default(), &cm("no", json!({"deny": "x"})))
                .await,
        )?;
        assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "admission webhook \"deny.snow.test\" denied the request: configmaps must not say no"
        );
        assert!(
            stand_in
                .get("v1", "ConfigMap", Some("apps"), "no")
                .is_none()
        );
        webhook.take("/deny");

        // An update carries the old object; a denied update leaves the object as it was.
        let e = api_error(
            cms.patch(
                "ok",
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"labels": {"deny": "y"}}})),
            )
            .await,
        )?;
        assert_eq!(e.code, 403);
        let reviews = webhook.take("/deny");
        assert_eq!(reviews[0]["request"]["operation"], "UPDATE");
        assert_eq!(
            reviews[0]["request"]["oldObject"]["metadata"]["labels"],
            json!({"app": "a"})
        );
        assert_eq!(
            reviews[0]["request"]["object"]["metadata"]["labels"]["deny"],
            "y"
        );
        let stored = stand_in
            .get("v1", "ConfigMap", Some("apps"), "ok")
            .ok_or("gone")?;
        assert!(stored["metadata"]["labels"]["deny"].is_null());

        // A delete carries the old object only.
        cms.delete("ok", &DeleteParams::default()).await?;
        let reviews = webhook.take("/deny");
        assert_eq!(reviews[0]["request"]["operation"], "DELETE");
        assert!(reviews[0]["request"]["object"].is_null());
        assert_eq!(reviews[0]["request"]["oldObject"]["metadata"]["name"], "ok");

        // A denial without a code is a 400; the objectSelector picks what is sent.
        let mut plain = hook("plain.snow.test", "/deny-plain", &ca);
        plain["objectSelector"] = json!({"matchLabels": {"plain": "yes"}});
        validating(&client, "plain", vec![plain]).await?;
        cms.create(&PostParams::default(), &cm("fine", json!({"plain": "no"})))
            .await?;
        let e = api_error(
            cms.create(
                &PostParams::default(),
                &cm("plain", json!({"plain": "yes"})),
            )
            .await,
        )?;
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "admission webhook \"plain.snow.test\" denied the request: plain"
        );
        assert_eq!(webhook.take("/deny-plain").len(), 1);
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn mutating_webhooks_patch_the_object_before_validating_webhooks_see_it() -> Result {
    bounded(60, async {
        let Setup { stand_in, client, ca, webhook } = setup().await?;
        validating(&client, "check", vec![hook("check.snow.test", "/check-label", &ca)]).await?;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");
        let e = api_error(cms.create(&PostParams::default(), &cm("a", json!({"app": "a"}))).await)?;
        assert_eq!(e.message, "admission webhook \"check.snow.test\" denied the request: not mutated");

        let config: MutatingWebhookConfiguration = serde_json::from_value(
            json!({"metadata": {"name": "label"}, "webhooks": [hook("label.snow.test", "/label", &ca)]}),
        )?;
        Api::<MutatingWebhookConfiguration>::all(client.clone())
            .create(&PostParams::default(), &config)
            .await?;
        let created = cms.create(&PostParams::default(), &cm("a", json!({"app": "a"}))).await?;
        let labels = created.metadata.labels.unwrap_or_default();
        assert_eq!(labels.get("mutated").map(String::as_str), Some("yes"));
        let stored = stand_in.get("v1", "ConfigMap", Some("apps"), "a").ok_or("not stored")?;
        assert_eq!(stored["metadata"]["labels"]["mutated"], "yes");
        let checked = webhook.take("/check-label");
        assert_eq!(checked.last().ok_or("not checked")?["request"]["object"]["metadata"]["labels"]["mutated"], "yes");
        assert_eq!(webhook.take("/label")[0]["request"]["object"]["metadata"]["labels"], json!({"app": "a"}));
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_namespace_selectors_and_subresources_decide_what_is_sent() -> Result {
    bounded(60, async {
        let Setup { stand_in: _stand_in, client, ca, webhook } = setup().await?;
        let mut services = hook("services.snow.test", "/allow", &ca);
        services["rules"] = json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["services"], "scope": "Namespaced"}]);
        services["namespaceSelector"] = json!({"matchExpressions": [{"key": "webhooks", "operator": "In", "values": ["on"]}]});
        validating(&client, "services", vec![services]).await?;
        let svc: Service = serde_json::from_value(json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}))?;
        Api::<Service>::namespaced(client.clone(), "other").create(&PostParams::default(), &svc).await?;
        assert!(webhook.take("/allow").is_empty(), "a namespace the selector leaves out");
        let apps: Api<Service> = Api::namespaced(client.clone(), "apps");
        apps.create(&PostParams::default(), &svc).await?;
        assert_eq!(webhook.take("/allow").len(), 1);
        let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}});
        apps.patch_status("web", &PatchParams::default(), &Patch::Merge(&status)).await?;
        assert!(webhook.take("/allow").is_empty(), "a status write no rule names");
        // ConfigMaps are no rule's.
        Api::<ConfigMap>::namespaced(client.clone(), "apps").create(&PostParams::default(), &cm("c", json!({}))).await?;
        assert!(webhook.take("/allow").is_empty());

        let mut statuses = hook("status.snow.test", "/allow", &ca);
        statuses["rules"] = json!([{"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*/status"]}]);
        validating(&client, "status", vec![statuses]).await?;
        let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}]}}});
        apps.patch_status("web", &PatchParams::default(), &Patch::Merge(&status)).await?;
        let sent = webhook.take("/allow");
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["request"]["subResource"], "status");
        assert_eq!(sent[0]["request"]["operation"], "UPDATE");
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_that_cannot_be_called_refuses_unless_its_policy_is_ignore() -> Result {
    bounded(60, async {
        let Setup { stand_in, client, ca, webhook: _webhook } = setup().await?;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");
        let other_ca = TestCa::new("another CA")?;
        let url = "https://hooks.snow-system.svc:443/allow?timeout=10s";

        let mut cases = Vec::new();
        cases.push((hook("strict.snow.test", "/allow", &other_ca), format!("Post \"{url}\": tls: failed to verify certificate: x509: certificate signed by unknown authority")));
        let mut no_bundle = hook("strict.snow.test", "/allow", &ca);
        no_bundle["clientConfig"].as_object_mut().ok_or("no clientConfig")?.remove("caBundle");
        cases.push((no_bundle, format!("Post \"{url}\": tls: failed to verify certificate: x509: certificate signed by unknown authority")));
        let mut unmapped = hook("strict.snow.test", "/allow", &ca);
        unmapped["clientConfig"]["service"]["port"] = json!(8443);
        cases.push((unmapped, "Post \"https://hooks.snow-system.svc:8443/allow?timeout=10s\": no endpoints available for service \"hooks\"".to_owned()));
        let mut no_service = hook("strict.snow.test", "/allow", &ca);
        no_service["clientConfig"]["service"]["name"] = json!("gone");
        cases.push((no_service, "Post \"https://gone.snow-system.svc:443/allow?timeout=10s\": service \"gone\" not found".to_owned()));
        let mut slow = hook("strict.snow.test", "/slow", &ca);
        slow["timeoutSeconds"] = json!(1);
        cases.push((slow, "Post \"https://hooks.snow-system.svc:443/slow?timeout=1s\": context deadline exceeded".to_owned()));

        for (i, (spec, why)) in cases.into_iter().enumerate() {
            validating(&client, "strict", vec![spec.clone()]).await?;
            let name = format!("strict-{i}");
            let e = api_error(cms.create(&PostParams::default(), &cm(&name, json!({}))).await)?;
            assert_eq!((e.code, e.reason.as_str()), (500, "InternalError"));
            assert_eq!(
                e.message,
                format!("Internal error occurred: failed calling webhook \"strict.snow.test\": failed to call webhook: {why}")
            );
            assert!(stand_in.get("v1", "ConfigMap", Some("apps"), &name).is_none());
            // Configurations are never sent to webhooks: a broken one can be replaced.
            unconfigure(&client, "strict").await?;
            let mut lenient = spec;
            lenient["failurePolicy"] = json!("Ignore");
            validating(&client, "strict", vec![lenient]).await?;
            cms.create(&PostParams::default(), &cm(&name, json!({}))).await?;
            unconfigure(&client, "strict").await?;
        }
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_runs_reach_only_webhooks_without_side_effects() -> Result {
    bounded(60, async {
        let Setup { stand_in, client, ca, webhook } = setup().await?;
        let mut some = hook("some.snow.test", "/allow", &ca);
        some["sideEffects"] = json!("Some");
        let config: ValidatingWebhookConfiguration =
            serde_json::from_value(json!({"metadata": {"name": "some"}, "webhooks": [some]}))?;
        let e = api_error(
            Api::<ValidatingWebhookConfiguration>::all(client.clone())
                .create(&PostParams::default(), &config)
                .await,
        )?;
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"some\" is invalid: webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""
        );

        let mut on_dry_run = hook("dry.snow.test", "/allow", &ca);
        on_dry_run["sideEffects"] = json!("NoneOnDryRun");
        validating(&client, "dry", vec![on_dry_run]).await?;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");
        let params = PostParams { dry_run: true, ..PostParams::default() };
        cms.create(&params, &cm("dry", json!({}))).await?;
        assert!(stand_in.get("v1", "ConfigMap", Some("apps"), "dry").is_none());
        let sent = webhook.take("/allow");
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["request"]["dryRun"], true);
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_apply_refused_by_a_webhook_shows_its_message() -> Result {
    bounded(90, async {
        let Setup { stand_in, client, ca, webhook: _webhook } = setup().await?;
        validating(&client, "deny", vec![hook("deny.snow.test", "/deny", &ca)]).await?;
        let dir = tempfile::tempdir()?;
        let kubeconfig = stand_in.write_kubeconfig(dir.path())?;
        let manifest = dir.path().join("cm.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: refused\n  namespace: apps\n  labels:\n    deny: \"yes\"\ndata:\n  k: v\n",
        )?;
        let cache = dir.path().join("kube-cache");
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .arg("--cache-dir")
                .arg(&cache)
                // The stand-in serves no OpenAPI document for client-side validation.
                .args(["apply", "--validate=false", "-f"])
                .arg(&manifest)
                .output()
        })
        .await??;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains("admission webhook \"deny.snow.test\" denied the request: configmaps must not say no"),
            "{stderr}"
        );
        assert!(stand_in.get("v1", "ConfigMap", Some("apps"), "refused").is_none());
        Ok(())
    })
    .await
}

/// A Deployment `name` in `ns` whose pods carry `labels`, Available or not.
fn deployment(ns: &str, name: &str, labels: Value, available: bool) -> Value {
    let status = if available { "True" } else { "False" };
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels.clone()},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "manager", "image": "example/manager:v1"}]}}},
        "status": {"conditions": [{"type": "Available", "status": status}]}})
}

/// No test serves these webhooks (no Service is mapped): the simulated provider's pods answer
/// them, so a write is refused as the API server refuses it while the Service has no ready
/// endpoints (no Service, or its Deployment not Available), let through under `failurePolicy:
/// Ignore`, and admitted once the Deployment is Available.
#[tokio::test(flavor = "multi_thread")]
async fn an_unmapped_webhook_has_endpoints_only_once_its_deployment_is_available() -> Result {
    bounded(60, async {
        let stand_in = KubeStandIn::start().await?;
        let ca = TestCa::new("provider CA")?;
        let client = client_with(&stand_in.kubeconfig()).await?;
        for ns in ["provider-system", "apps"] {
            stand_in.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))?;
        }
        let pods = json!({"control-plane": "controller-manager"});
        stand_in.put(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "provider-webhook", "namespace": "provider-system"},
            "spec": {"selector": pods.clone(), "ports": [{"port": 443, "targetPort": 9443}]}}))?;
        let mut provider = hook("provider.snow.test", "/validate", &ca);
        provider["clientConfig"]["service"] = json!({"namespace": "provider-system", "name": "provider-webhook", "path": "/validate"});
        validating(&client, "provider", vec![provider.clone()]).await?;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");
        let refused = |name: &str| format!(
            "Internal error occurred: failed calling webhook \"provider.snow.test\": failed to call webhook: Post \"https://{name}.provider-system.svc:443/validate?timeout=10s\": no endpoints available for service \"{name}\""
        );

        // No Deployment behind the Service; then one not Available; then Available ones that
        // are not the Service's (other labels, another namespace).
        let e = api_error(cms.create(&PostParams::default(), &cm("a", json!({}))).await)?;
        assert_eq!((e.code, e.message.clone()), (500, refused("provider-webhook")));
        stand_in.put(deployment("provider-system", "provider-controller-manager", pods.clone(), false))?;
        stand_in.put(deployment("provider-system", "other", json!({"app": "other"}), true))?;
        stand_in.put(deployment("apps", "elsewhere", pods.clone(), true))?;
        let e = api_error(cms.create(&PostParams::default(), &cm("a", json!({}))).await)?;
        assert_eq!((e.code, e.message.clone()), (500, refused("provider-webhook")));
        assert!(stand_in.get("v1", "ConfigMap", Some("apps"), "a").is_none());

        // Available: the simulated provider admits it.
        stand_in.put(deployment("provider-system", "provider-controller-manager", pods.clone(), true))?;
        cms.create(&PostParams::default(), &cm("a", json!({}))).await?;
        assert!(stand_in.get("v1", "ConfigMap", Some("apps"), "a").is_some());

        // A Service that does not exist, and one with no selector: refused, unless Ignore.
        let mut gone = provider.clone();
        gone["clientConfig"]["service"]["name"] = json!("gone");
        stand_in.put(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "manual", "namespace": "provider-system"},
            "spec": {"ports": [{"port": 443}]}}))?;
        let mut manual = provider.clone();
        manual["clientConfig"]["service"]["name"] = json!("manual");
        for (i, (spec, why)) in [
            (gone, "Post \"https://gone.provider-system.svc:443/validate?timeout=10s\": service \"gone\" not found".to_owned()),
            (manual, refused("manual").split("failed to call webhook: ").nth(1).unwrap_or_default().to_owned()),
        ].into_iter().enumerate() {
            unconfigure(&client, "provider").await?;
            validating(&client, "provider", vec![spec.clone()]).await?;
            let name = format!("b-{i}");
            let e = api_error(cms.create(&PostParams::default(), &cm(&name, json!({}))).await)?;
            assert_eq!(
                e.message,
                format!("Internal error occurred: failed calling webhook \"provider.snow.test\": failed to call webhook: {why}")
            );
            let mut lenient = spec;
            lenient["failurePolicy"] = json!("Ignore");
            unconfigure(&client, "provider").await?;
            validating(&client, "provider", vec![lenient]).await?;
            cms.create(&PostParams::default(), &cm(&name, json!({}))).await?;
        }
        Ok(())
    })
    .await
}
