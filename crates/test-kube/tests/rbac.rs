//! ServiceAccount tokens and RBAC in the Kubernetes API stand-in, through kube and kubectl.

mod common;

use common::{Result, bounded, client_with};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Discovery;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchParams};
use serde_json::{Value, json};
use snow_test_kube::KubeStandIn;

fn api_error<T: std::fmt::Debug>(r: kube::Result<T>) -> Result<Box<kube::core::Status>> {
    match r {
        Err(kube::Error::Api(s)) => Ok(s),
        other => Err(format!("expected an API error, got {other:?}").into()),
    }
}

const USER: &str = "system:serviceaccount:apps:robot";

/// Namespaces `apps` and `other`, ServiceAccount `apps/robot`, and `rbac`'s objects.
fn setup(s: &KubeStandIn, rbac: &[Value]) -> Result {
    for ns in ["apps", "other"] {
        s.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))?;
    }
    s.put(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "apps"}}))?;
    for o in rbac {
        s.put(o.clone())?;
    }
    Ok(())
}

fn role(ns: &str, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name, "namespace": ns}, "rules": rules})
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules})
}

fn binding(ns: Option<&str>, role_kind: &str, role: &str, subject: Value) -> Value {
    let (kind, meta) = match ns {
        Some(ns) => (
            "RoleBinding",
            json!({"name": format!("{role}-binding"), "namespace": ns}),
        ),
        None => (
            "ClusterRoleBinding",
            json!({"name": format!("{role}-binding")}),
        ),
    };
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [subject]})
}

fn robot() -> Value {
    json!({"kind": "ServiceAccount", "name": "robot", "namespace": "apps"})
}

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": "v"}})).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_service_account_may_do_what_its_role_allows_and_nothing_else() -> Result {
    bounded(60, async {
        let s = KubeStandIn::start().await?;
        setup(
            &s,
            &[
                role(
                    "apps",
                    "reader",
                    json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]),
                ),
                binding(Some("apps"), "Role", "reader", robot()),
            ],
        )?;
        s.put(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one", "namespace": "apps"}}))?;
        s.put(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "key", "namespace": "apps"}}))?;
        let client = client_with(&s.service_account_kubeconfig("apps", "robot")?).await?;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");
        assert_eq!(cms.get("one").await?.metadata.name.as_deref(), Some("one"));
        assert_eq!(cms.list(&ListParams::default()).await?.items.len(), 1);

        // A verb the Role lacks.
        let e = api_error(cms.create(&PostParams::default(), &cm("two")).await)?;
        assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
        assert_eq!(
            e.message,
            format!(
                "configmaps is forbidden: User \"{USER}\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"apps\""
            )
        );
        assert!(s.get("v1", "ConfigMap", Some("apps"), "two").is_none());
        // A resource it does not name.
        let secrets: Api<Secret> = Api::namespaced(client.clone(), "apps");
        let e = api_error(secrets.get("key").await)?;
        assert_eq!(
            e.message,
            format!(
                "secrets \"key\" is forbidden: User \"{USER}\" cannot get resource \"secrets\" in API group \"\" in the namespace \"apps\""
            )
        );
        // Another namespace: a RoleBinding grants only in its own.
        let e = api_error(Api::<ConfigMap>::namespaced(client.clone(), "other").list(&ListParams::default()).await)?;
        assert_eq!(
            e.message,
            format!(
                "configmaps is forbidden: User \"{USER}\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"other\""
            )
        );
        // Cluster scope.
        let e = api_error(Api::<ConfigMap>::all(client.clone()).list(&ListParams::default()).await)?;
        assert!(e.message.ends_with("cannot list resource \"configmaps\" in API group \"\" at the cluster scope"), "{}", e.message);
        // Discovery is every authenticated user's (system:discovery).
        Discovery::new(client.clone()).run().await?;
        // A watch needs the watch verb.
        match cms.watch(&WatchParams::default(), "0").await {
            Err(kube::Error::Api(e)) => assert_eq!(
                e.message,
                format!(
                    "configmaps is forbidden: User \"{USER}\" cannot watch resource \"configmaps\" in API group \"\" in the namespace \"apps\""
                )
            ),
            Err(other) => return Err(format!("expected a 403, got {other}").into()),
            Ok(_) => return Err("the watch started".into()),
        }
        // The admin is not subject to RBAC.
        let admin = client_with(&s.kubeconfig()).await?;
        Api::<ConfigMap>::namespaced(admin, "apps").create(&PostParams::default(), &cm("two")).await?;
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn cluster_roles_groups_subresources_and_resource_names() -> Result {
    bounded(60, async {
        let s = KubeStandIn::start().await?;
        setup(
            &s,
            &[
                cluster_role(
                    "status-writer",
                    json!([
                        {"apiGroups": ["apps"], "resources": ["deployments/status"], "verbs": ["get", "update", "patch"]},
                        {"apiGroups": ["*"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]},
                    ]),
                ),
                // Bound to every ServiceAccount of the namespace, through its group.
                binding(None, "ClusterRole", "status-writer", json!({"kind": "Group", "name": "system:serviceaccounts:apps", "apiGroup": "rbac.authorization.k8s.io"})),
                role(
                    "apps",
                    "one-secret",
                    json!([{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["mine"], "verbs": ["*"]}]),
                ),
                // A ServiceAccount subject without a namespace is the binding's namespace.
                binding(Some("apps"), "Role", "one-secret", json!({"kind": "ServiceAccount", "name": "robot"})),
                role("apps", "patcher", json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["patch"]}])),
                binding(Some("apps"), "Role", "patcher", robot()),
            ],
        )?;
        s.put(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "apps"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))?;
        s.put(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mine", "namespace": "apps"}}))?;
        s.put(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "theirs", "namespace": "apps"}}))?;
        let client = client_with(&s.service_account_kubeconfig("apps", "robot")?).await?;

        let deployments: Api<Deployment> = Api::namespaced(client.clone(), "apps");
        let status = json!({"status": {"observedGeneration": 1}});
        deployments
            .patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
            .await?;
        let e = api_error(
            deployments
                .patch("web", &PatchParams::default(), &Patch::Merge(&json!({"metadata": {"labels": {"x": "y"}}})))
                .await,
        )?;
        assert_eq!(
            e.message,
            format!(
                "deployments.apps \"web\" is forbidden: User \"{USER}\" cannot patch resource \"deployments\" in API group \"apps\" in the namespace \"apps\""
            )
        );
        assert_eq!(deployments.list(&ListParams::default()).await?.items.len(), 1);

        let secrets: Api<Secret> = Api::namespaced(client.clone(), "apps");
        secrets.get("mine").await?;
        let e = api_error(secrets.get("theirs").await)?;
        assert_eq!(e.code, 403);
        // resourceNames never allow a list of everything, but do a list of that one name.
        api_error(secrets.list(&ListParams::default()).await)?;
        let only = secrets.list(&ListParams::default().fields("metadata.name=mine")).await?;
        assert_eq!(only.items.len(), 1);
        // An apply that would create needs create as well as patch.
        let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "apps");
        let apply = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new", "namespace": "apps"}});
        let e = api_error(configmaps.patch("new", &PatchParams::apply("t"), &Patch::Apply(&apply)).await)?;
        assert_eq!(
            e.message,
            format!(
                "configmaps \"new\" is forbidden: User \"{USER}\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"apps\""
            )
        );
        s.put(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new", "namespace": "apps"}}))?;
        configmaps.patch("new", &PatchParams::apply("t"), &Patch::Apply(&apply)).await?;
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn token_request_issues_a_token_bound_to_the_service_account() -> Result {
    bounded(60, async {
        let s = KubeStandIn::start().await?;
        setup(
            &s,
            &[
                cluster_role("lister", json!([{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}])),
                binding(None, "ClusterRole", "lister", robot()),
            ],
        )?;
        let admin = client_with(&s.kubeconfig()).await?;
        let request = http::Request::post("/api/v1/namespaces/apps/serviceaccounts/robot/token")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}))?)?;
        let answer: Value = admin.request(request).await?;
        assert_eq!(answer["kind"], "TokenRequest");
        let token = answer["status"]["token"].as_str().ok_or("no token")?.to_owned();
        assert!(answer["status"]["expirationTimestamp"].is_string());
        let short = http::Request::post("/api/v1/namespaces/apps/serviceaccounts/robot/token")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&json!({"spec": {"expirationSeconds": 60}}))?)?;
        let e = api_error(admin.request::<Value>(short).await)?;
        assert_eq!(e.code, 422, "{e:?}");
        let missing = http::Request::post("/api/v1/namespaces/apps/serviceaccounts/nobody/token")
            .header("content-type", "application/json")
            .body(b"{}".to_vec())?;
        assert_eq!(api_error(admin.request::<Value>(missing).await)?.code, 404);
        assert!(s.service_account_kubeconfig("apps", "nobody").is_err());

        let kubeconfig = s.kubeconfig().replace(s.token(), &token);
        let robot = client_with(&kubeconfig).await?;
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(robot.clone());
        namespaces.list(&ListParams::default()).await?;
        // The robot may not ask for tokens itself.
        let own = http::Request::post("/api/v1/namespaces/apps/serviceaccounts/robot/token")
            .header("content-type", "application/json")
            .body(b"{}".to_vec())?;
        let e = api_error(robot.request::<Value>(own).await)?;
        assert!(e.message.contains("cannot create resource \"serviceaccounts/token\""), "{}", e.message);
        // Deleting the ServiceAccount ends its tokens.
        s.delete("v1", "ServiceAccount", Some("apps"), "robot")?;
        assert_eq!(api_error(namespaces.list(&ListParams::default()).await)?.code, 401);
        Ok(())
    })
    .await
}

fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    let cache = kubeconfig.with_file_name("kube-cache");
    std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .expect("kubectl runs")
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_with_a_service_account_is_refused_in_the_api_servers_words() -> Result {
    bounded(90, async {
        let s = KubeStandIn::start().await?;
        setup(
            &s,
            &[
                role("apps", "reader", json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}])),
                binding(Some("apps"), "Role", "reader", robot()),
            ],
        )?;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("robot.kubeconfig");
        std::fs::write(&path, s.service_account_kubeconfig("apps", "robot")?)?;
        let run = |args: &'static [&'static str]| {
            let path = path.clone();
            tokio::task::spawn_blocking(move || kubectl(&path, args))
        };
        let out = run(&["get", "configmaps", "-n", "apps"]).await?;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = run(&["get", "secrets", "-n", "apps"]).await?;
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&format!(
                "Error from server (Forbidden): secrets is forbidden: User \"{USER}\" cannot list resource \"secrets\" in API group \"\" in the namespace \"apps\""
            )),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(&["create", "configmap", "x", "-n", "apps"]).await?;
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot create resource \"configmaps\""),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(&["auth", "can-i", "list", "configmaps", "-n", "apps"]).await?;
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "yes", "{}", String::from_utf8_lossy(&out.stderr));
        let out = run(&["auth", "can-i", "delete", "configmaps", "-n", "apps"]).await?;
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no");
        assert!(!out.status.success());
        Ok(())
    })
    .await
}
