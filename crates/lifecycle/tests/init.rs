//! `snow_lifecycle::init` with the real components manifests (Cluster API v1.13.5, kubeadm,
//! etcdadm, cert-manager v1.20.2 and CAPAS, from `../shared/data`) on the Kubernetes API
//! stand-in with its simulated deployment controller; the result checked through kube and the
//! real `kubectl`.

use serde_json::Value;
use snow_lifecycle::{
    Event, LifecycleError, Management,
    init::{
        self, InitOptions, Outcome,
        components::{ComponentObjects, ComponentSource, STACK},
        envsubst::Values,
        upgrade,
    },
};
use snow_test_kube::components::{SHIPPED, TEST_VALUES};
use snow_test_kube::{KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::{path::PathBuf, time::Duration};

const INVENTORY: &str = "clusterctl.cluster.x-k8s.io/v1alpha3";

/// The shipped manifests, in install order, with their versions.
fn sources() -> Vec<ComponentSource> {
    STACK
        .iter()
        .zip(&SHIPPED)
        .map(|(component, shipped)| ComponentSource {
            component: *component,
            version: shipped.version.into(),
            origin: shipped.path().display().to_string(),
            components: shipped.text().expect("reference data"),
        })
        .collect()
}

fn values() -> Values {
    let mut values = Values::default();
    for (name, value) in TEST_VALUES {
        values.set(name, value);
    }
    values
}

struct Cluster {
    api: KubeStandIn,
    workloads: WorkloadHandle,
    mgmt: Management,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

async fn cluster() -> Cluster {
    let api = KubeStandIn::start().await.expect("stand-in");
    let workloads = api.start_workloads(WorkloadOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let mgmt = Management::connect(&snow_lifecycle::KubeconfigSource::file(&kubeconfig))
        .await
        .expect("connect");
    Cluster {
        api,
        workloads,
        mgmt,
        dir,
        kubeconfig,
    }
}

fn fast() -> InitOptions {
    InitOptions {
        crd_timeout: Duration::from_secs(20),
        deployment_timeout: Some(Duration::from_secs(20)),
        poll: Duration::from_millis(20),
    }
}

async fn run(
    c: &Cluster,
    prepared: &[ComponentObjects],
    options: InitOptions,
) -> (Result<init::Initialized, LifecycleError>, Vec<Event>) {
    let mut events = Vec::new();
    let result = init::init(&c.mgmt, prepared, &options, &mut |e| events.push(e)).await;
    (result, events)
}

fn labels(o: &Value) -> (&str, &str) {
    let l = &o["metadata"]["labels"];
    (
        l["clusterctl.cluster.x-k8s.io"]
            .as_str()
            .unwrap_or("<none>"),
        l["cluster.x-k8s.io/provider"].as_str().unwrap_or("<none>"),
    )
}

fn kubectl(c: &Cluster, args: &[&str]) -> String {
    let cache = c.dir.path().join("kube-cache");
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&c.kubeconfig)
        .arg("--cache-dir")
        .arg(&cache)
        .args(args)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_stack_installs_with_the_inventory_and_a_rerun_changes_nothing() {
    let c = cluster().await;
    let prepared = init::prepare(&sources(), &values()).expect("prepare");
    let total: usize = prepared.iter().map(|p| p.objects.len()).sum();
    assert_eq!(total, 148);

    let (result, events) = run(&c, &prepared, fast()).await;
    let done = result.expect("init");
    assert!(
        done.components
            .iter()
            .all(|r| r.outcome == Outcome::Applied)
    );
    assert!(!done.unchanged());
    // Namespaces, CRDs and webhooks in order; progress reported for each Deployment.
    let applied: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Applied { object } => Some(object.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        applied.len(),
        total + 1 + 6,
        "objects, inventory CRD, 6 entries"
    );
    assert_eq!(applied[0], "Namespace cert-manager");
    assert!(applied[1].starts_with("CustomResourceDefinition "));
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Ready { .. }))
            .count()
            == 9
    );

    // The inventory: one Provider per provider, in its namespace, with clusterctl's labels.
    let mut providers: Vec<(String, String, String, String, String)> = c
        .api
        .list(INVENTORY, "Provider", None)
        .iter()
        .map(|p| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&p["metadata"]["namespace"]),
                text(&p["metadata"]["name"]),
                text(&p["providerName"]),
                text(&p["type"]),
                text(&p["version"]),
            )
        })
        .collect();
    providers.sort();
    let row = |ns: &str, name: &str, provider: &str, kind: &str, version: &str| {
        (
            ns.into(),
            name.into(),
            provider.into(),
            kind.into(),
            version.into(),
        )
    };
    assert_eq!(
        providers,
        vec![
            row(
                "capas-system",
                "infrastructure-snow",
                "snow",
                "InfrastructureProvider",
                "v0.3.3"
            ),
            row(
                "capi-kubeadm-bootstrap-system",
                "bootstrap-kubeadm",
                "kubeadm",
                "BootstrapProvider",
                "v1.13.5"
            ),
            row(
                "capi-kubeadm-control-plane-system",
                "control-plane-kubeadm",
                "kubeadm",
                "ControlPlaneProvider",
                "v1.13.5"
            ),
            row(
                "capi-system",
                "cluster-api",
                "cluster-api",
                "CoreProvider",
                "v1.13.5"
            ),
            row(
                "etcdadm-bootstrap-provider-system",
                "bootstrap-etcdadm-bootstrap",
                "etcdadm-bootstrap",
                "BootstrapProvider",
                "v1.0.19"
            ),
            row(
                "etcdadm-controller-system",
                "bootstrap-etcdadm-controller",
                "etcdadm-controller",
                "BootstrapProvider",
                "v1.0.28"
            ),
        ]
    );

    // clusterctl's labels on every provider object; substituted values in place.
    let capas = c
        .api
        .get(
            "apps/v1",
            "Deployment",
            Some("capas-system"),
            "capas-controller-manager",
        )
        .unwrap();
    assert_eq!(labels(&capas), ("", "infrastructure-snow"));
    let crd = c
        .api
        .get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "clusters.cluster.x-k8s.io",
        )
        .unwrap();
    assert_eq!(labels(&crd), ("", "cluster-api"));
    let secret = c
        .api
        .get(
            "v1",
            "Secret",
            Some("capas-system"),
            "capas-manager-bootstrap-credentials",
        )
        .unwrap();
    assert_eq!(secret["data"]["credentials"], "W2RldmljZV0K");
    let etcd = c
        .api
        .get(
            "apps/v1",
            "Deployment",
            Some("etcdadm-controller-system"),
            "etcdadm-controller-controller-manager",
        )
        .unwrap();
    assert!(
        etcd.to_string()
            .contains("registry.local/etcdadm-controller:v1.0.28")
    );
    let webhook = c
        .api
        .get(
            "apps/v1",
            "Deployment",
            Some("cert-manager"),
            "cert-manager-webhook",
        )
        .unwrap();
    assert_eq!(
        webhook["metadata"]["labels"]["clusterctl.cluster.x-k8s.io/core"],
        "cert-manager"
    );
    assert_eq!(
        webhook["metadata"]["managedFields"][0]["manager"], "snowctl",
        "applied server-side as snowctl"
    );

    // The real kubectl lists exactly the installed providers and their Deployments.
    let listed = kubectl(
        &c,
        &[
            "get",
            "providers.clusterctl.cluster.x-k8s.io",
            "-A",
            "--no-headers",
            "-o",
            "custom-columns=NS:.metadata.namespace,NAME:.metadata.name,VERSION:.version",
        ],
    );
    let mut lines: Vec<&str> = listed.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 6, "{listed}");
    assert!(
        lines[3]
            .split_whitespace()
            .eq(["capi-system", "cluster-api", "v1.13.5"]),
        "{listed}"
    );
    let table = kubectl(&c, &["get", "providers.clusterctl.cluster.x-k8s.io", "-A"]);
    assert!(table.contains("infrastructure-snow"), "{table}");
    let deployments = kubectl(
        &c,
        &[
            "get",
            "deploy",
            "-A",
            "--no-headers",
            "-o",
            "custom-columns=NS:.metadata.namespace,NAME:.metadata.name",
        ],
    );
    let mut deploys: Vec<String> = deployments
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join("/"))
        .collect();
    deploys.sort();
    assert_eq!(
        deploys,
        [
            "capas-system/capas-controller-manager",
            "capi-kubeadm-bootstrap-system/capi-kubeadm-bootstrap-controller-manager",
            "capi-kubeadm-control-plane-system/capi-kubeadm-control-plane-controller-manager",
            "capi-system/capi-controller-manager",
            "cert-manager/cert-manager",
            "cert-manager/cert-manager-cainjector",
            "cert-manager/cert-manager-webhook",
            "etcdadm-bootstrap-provider-system/etcdadm-bootstrap-provider-controller-manager",
            "etcdadm-controller-system/etcdadm-controller-controller-manager",
        ]
    );

    // A second run writes nothing and says so.
    let writes = c.api.writes();
    let (again, _) = run(&c, &prepared, fast()).await;
    assert!(again.expect("second init").unchanged());
    assert_eq!(c.api.writes(), writes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_missing_variable_is_reported_before_anything_is_applied() {
    let c = cluster().await;
    let err = init::prepare(&sources(), &Values::default()).unwrap_err();
    let LifecycleError::MissingVariables { missing } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        missing,
        &[
            (
                "bootstrap-etcdadm-bootstrap".to_owned(),
                vec!["ETCDADM_BOOTSTRAP_IMAGE".to_owned()]
            ),
            (
                "bootstrap-etcdadm-controller".to_owned(),
                vec!["ETCDADM_CONTROLLER_IMAGE".to_owned()]
            ),
            (
                "infrastructure-snow".to_owned(),
                vec![
                    "AWS_B64ENCODED_CA_BUNDLES".to_owned(),
                    "AWS_B64ENCODED_CREDENTIALS".to_owned()
                ]
            ),
        ]
    );
    assert_eq!(c.api.writes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_never_established_and_a_deployment_never_available_are_named() {
    let c = cluster().await;
    let prepared = init::prepare(&sources(), &values()).unwrap();
    let short = InitOptions {
        crd_timeout: Duration::from_millis(300),
        deployment_timeout: Some(Duration::from_millis(300)),
        ..fast()
    };
    c.api.never_establish("certificates.cert-manager.io");
    let (result, _) = run(&c, &prepared, short).await;
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains(
            "CustomResourceDefinition certificates.cert-manager.io: Established never became true"
        ),
        "{err}"
    );
    assert!(err.contains("Established=False (Installing"), "{err}");

    // On another cluster: the core controller never becomes Available.
    let c = cluster().await;
    c.workloads.set_stall(vec![(
        "capi-system".into(),
        "capi-controller-manager".into(),
    )]);
    let (result, _) = run(&c, &prepared, short).await;
    let err = result.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            "Deployment capi-system/capi-controller-manager: Available never became true"
        ),
        "{text}"
    );
    assert!(
        text.contains("Available=False (MinimumReplicasUnavailable"),
        "{text}"
    );
    assert!(
        matches!(err, LifecycleError::ComponentNotReady { .. }),
        "{err:?}"
    );
    // No inventory entry for the core provider yet: the re-run completes it.
    assert!(
        c.api
            .get(INVENTORY, "Provider", Some("capi-system"), "cluster-api")
            .is_none()
    );
    c.workloads.set_stall(Vec::new());
    let (again, _) = run(&c, &prepared, fast()).await;
    let done = again.expect("completed");
    assert_eq!(
        done.components[0].outcome,
        Outcome::AlreadyInstalled,
        "cert-manager runs"
    );
    assert_eq!(done.components[1].outcome, Outcome::Applied);
    assert_eq!(c.api.list(INVENTORY, "Provider", None).len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_midway_is_completed_by_the_next() {
    let c = cluster().await;
    let prepared = init::prepare(&sources(), &values()).unwrap();
    // Dropping the run once some objects are in stops it there, as a kill would.
    let killed = async {
        while c.api.writes() < 70 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let (options, mut quiet) = (fast(), |_| {});
    tokio::select! {
        r = init::init(&c.mgmt, &prepared, &options, &mut quiet) => panic!("finished before the kill: {r:?}"),
        () = killed => {}
    }
    assert!(c.api.list(INVENTORY, "Provider", None).len() < 6);
    let (result, _) = run(&c, &prepared, fast()).await;
    result.expect("the re-run completes");
    assert_eq!(c.api.list(INVENTORY, "Provider", None).len(), 6);
    assert_eq!(c.api.list("apps/v1", "Deployment", None).len(), 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_installed_version_is_refused_before_anything_is_applied() {
    let c = cluster().await;
    let prepared = init::prepare(&sources(), &values()).unwrap();
    run(&c, &prepared, fast()).await.0.expect("init");
    let mut core = c
        .api
        .get(INVENTORY, "Provider", Some("capi-system"), "cluster-api")
        .unwrap();
    core["version"] = "v1.12.0".into();
    c.api.put(core).unwrap();
    let writes = c.api.writes();
    let (result, _) = run(&c, &prepared, fast()).await;
    let err = result.unwrap_err();
    assert!(
        err.to_string().contains(
            "cluster-api: v1.12.0 is installed (namespace capi-system), the bundle has v1.13.5"
        ),
        "{err}"
    );
    assert!(
        matches!(err, LifecycleError::ProviderVersionDiffers { .. }),
        "{err:?}"
    );
    assert_eq!(c.api.writes(), writes);
}

/// An older Cluster API core than the shipped one: another version and image, one more
/// Deployment, ConfigMap and Role, and a CRD the shipped version does not have.
const OLD_CORE_EXTRAS: &str = "
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: capi-legacy-helper, namespace: capi-system}
spec:
  replicas: 1
  selector: {matchLabels: {app: capi-legacy-helper}}
  template:
    metadata: {labels: {app: capi-legacy-helper}}
    spec: {containers: [{name: helper, image: registry.local/capi-legacy-helper:v1.12.0}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: capi-legacy-settings, namespace: capi-system}
data: {mode: legacy}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: capi-legacy-role, namespace: capi-system}
rules: [{apiGroups: [''], resources: [configmaps], verbs: [get]}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: legacythings.cluster.x-k8s.io}
spec:
  group: cluster.x-k8s.io
  names: {kind: LegacyThing, listKind: LegacyThingList, plural: legacythings, singular: legacything}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
";

/// The shipped sources with cert-manager at v1.19.0 and the core at v1.12.0 (see
/// [`OLD_CORE_EXTRAS`]).
fn old_sources() -> Vec<ComponentSource> {
    let mut old = sources();
    old[0].version = "v1.19.0".into();
    old[1].version = "v1.12.0".into();
    old[1].components = old[1].components.replace(
        "cluster-api-controller:main",
        "cluster-api-controller:v1.12.0",
    ) + OLD_CORE_EXTRAS;
    old
}

fn inventory_versions(c: &Cluster) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = c
        .api
        .list(INVENTORY, "Provider", None)
        .iter()
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_owned(),
                p["version"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

async fn upgrade(
    c: &Cluster,
    prepared: &[ComponentObjects],
) -> (Result<upgrade::Upgraded, LifecycleError>, Vec<Event>) {
    let mut events = Vec::new();
    let result = upgrade::apply(&c.mgmt, prepared, &fast(), &mut |e| events.push(e)).await;
    (result, events)
}

/// Installs the older stack and two custom resources carrying the core's labels: a Cluster
/// (a kind both versions have) and a LegacyThing (of the CRD the new version drops).
async fn old_stack_with_custom_resources() -> Cluster {
    let c = cluster().await;
    let old = init::prepare(&old_sources(), &values()).unwrap();
    run(&c, &old, fast()).await.0.expect("old init");
    let labels = serde_json::json!({"clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "cluster-api"});
    c.mgmt
        .apply(&serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "edge-1", "namespace": "default", "labels": labels},
            "spec": {"paused": true},
        }))
        .await
        .expect("a Cluster");
    c.mgmt
        .apply(&serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "LegacyThing",
            "metadata": {"name": "keep-me", "namespace": "capi-system", "labels": labels},
            "spec": {"data": "precious"},
        }))
        .await
        .expect("a LegacyThing");
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_applies_the_new_versions_deletes_leftovers_and_keeps_crds_and_custom_resources() {
    let c = old_stack_with_custom_resources().await;
    // The new core also ships a ClusterClass: that kind is then looked at for leftovers, and a
    // user's ClusterClass (even with the core's labels) must still be left alone.
    let mut shipped = sources();
    shipped[1].components.push_str(
        "\n---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {name: shipped-class, namespace: capi-system}\nspec: {}\n",
    );
    let new = init::prepare(&shipped, &values()).unwrap();
    c.mgmt
        .apply(&serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "metadata": {"name": "user-class", "namespace": "capi-system", "labels": {
                "clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "cluster-api"}},
            "spec": {},
        }))
        .await
        .expect("a ClusterClass");

    let plan = upgrade::plan(&c.mgmt, &new).await.expect("plan");
    insta::assert_snapshot!("upgrade_plan", plan.to_string());
    assert!(!plan.up_to_date());

    let (result, events) = upgrade(&c, &new).await;
    let done = result.expect("upgrade");
    assert!(!done.unchanged());
    let mut deleted: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Deleted { object } => Some(object.as_str()),
            _ => None,
        })
        .collect();
    deleted.sort_unstable();
    assert_eq!(
        deleted,
        [
            "ConfigMap capi-system/capi-legacy-settings",
            "Deployment capi-system/capi-legacy-helper",
            "Role capi-system/capi-legacy-role",
        ]
    );
    assert!(
        events.iter().any(|e| matches!(e, Event::Note(n)
            if n.contains("cluster-api v1.13.5 has no CustomResourceDefinition legacythings.cluster.x-k8s.io: kept"))),
        "{events:?}"
    );
    let get = |api: &str, kind: &str, ns: Option<&str>, name: &str| c.api.get(api, kind, ns, name);
    assert!(
        get(
            "v1",
            "ConfigMap",
            Some("capi-system"),
            "capi-legacy-settings"
        )
        .is_none()
    );
    assert!(
        get(
            "apps/v1",
            "Deployment",
            Some("capi-system"),
            "capi-legacy-helper"
        )
        .is_none()
    );
    // No data loss: the dropped CRD, its custom resource and the Cluster stay.
    assert!(
        get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "legacythings.cluster.x-k8s.io"
        )
        .is_some()
    );
    let thing = get(
        "cluster.x-k8s.io/v1beta1",
        "LegacyThing",
        Some("capi-system"),
        "keep-me",
    )
    .expect("the custom resource survives");
    assert_eq!(thing["spec"]["data"], "precious");
    assert!(
        get(
            "cluster.x-k8s.io/v1beta2",
            "Cluster",
            Some("default"),
            "edge-1"
        )
        .is_some()
    );
    for class in ["user-class", "shipped-class"] {
        assert!(
            get(
                "cluster.x-k8s.io/v1beta2",
                "ClusterClass",
                Some("capi-system"),
                class
            )
            .is_some(),
            "{class}"
        );
    }
    // The new objects are in, the Deployments Available, the inventory at the new versions.
    let core = get(
        "apps/v1",
        "Deployment",
        Some("capi-system"),
        "capi-controller-manager",
    )
    .unwrap();
    assert!(core.to_string().contains("cluster-api-controller:main"));
    for d in c.api.list("apps/v1", "Deployment", None) {
        let available = d["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Available" && c["status"] == "True");
        assert!(available, "{}", d["metadata"]["name"]);
    }
    let webhook = get(
        "apps/v1",
        "Deployment",
        Some("cert-manager"),
        "cert-manager-webhook",
    )
    .unwrap();
    assert_eq!(
        webhook["metadata"]["annotations"]["cert-manager.clusterctl.cluster.x-k8s.io/version"],
        "v1.20.2"
    );
    assert_eq!(
        inventory_versions(&c),
        [
            ("bootstrap-etcdadm-bootstrap".into(), "v1.0.19".into()),
            ("bootstrap-etcdadm-controller".into(), "v1.0.28".into()),
            ("bootstrap-kubeadm".into(), "v1.13.5".into()),
            ("cluster-api".into(), "v1.13.5".into()),
            ("control-plane-kubeadm".into(), "v1.13.5".into()),
            ("infrastructure-snow".into(), "v0.3.3".into()),
        ]
    );
    let listed = kubectl(
        &c,
        &[
            "get",
            "providers.clusterctl.cluster.x-k8s.io",
            "-n",
            "capi-system",
            "--no-headers",
            "-o",
            "custom-columns=NAME:.metadata.name,VERSION:.version",
        ],
    );
    assert!(
        listed.split_whitespace().eq(["cluster-api", "v1.13.5"]),
        "{listed}"
    );

    // A second upgrade and an init change nothing.
    let writes = c.api.writes();
    let (again, _) = upgrade(&c, &new).await;
    assert!(again.expect("second upgrade").unchanged());
    assert!(upgrade::plan(&c.mgmt, &new).await.unwrap().up_to_date());
    let (init_again, _) = run(&c, &new, fast()).await;
    assert!(init_again.expect("init after the upgrade").unchanged());
    assert_eq!(c.api.writes(), writes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_killed_midway_is_completed_by_the_next() {
    let c = old_stack_with_custom_resources().await;
    let new = init::prepare(&sources(), &values()).unwrap();
    let start = c.api.writes();
    // Killed once cert-manager and part of the core are applied: no inventory change yet.
    let killed = async {
        while c.api.writes() < start + 60 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let (options, mut quiet) = (fast(), |_| {});
    tokio::select! {
        r = upgrade::apply(&c.mgmt, &new, &options, &mut quiet) => panic!("finished before the kill: {r:?}"),
        () = killed => {}
    }
    assert!(inventory_versions(&c).contains(&("cluster-api".into(), "v1.12.0".into())));
    assert!(
        c.api
            .get(
                "v1",
                "ConfigMap",
                Some("capi-system"),
                "capi-legacy-settings"
            )
            .is_some(),
        "killed before the core was pruned"
    );
    let (result, _) = upgrade(&c, &new).await;
    result.expect("the re-run completes");
    assert!(inventory_versions(&c).contains(&("cluster-api".into(), "v1.13.5".into())));
    assert!(
        c.api
            .get(
                "v1",
                "ConfigMap",
                Some("capi-system"),
                "capi-legacy-settings"
            )
            .is_none()
    );
    assert!(
        c.api
            .get(
                "cluster.x-k8s.io/v1beta1",
                "LegacyThing",
                Some("capi-system"),
                "keep-me"
            )
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_installed_provider_is_not_downgraded() {
    let c = cluster().await;
    let mut newer = sources();
    newer[6].version = "v0.4.0".into();
    let installed = init::prepare(&newer, &values()).unwrap();
    run(&c, &installed, fast()).await.0.expect("init");
    let bundle = init::prepare(&sources(), &values()).unwrap();
    let plan = upgrade::plan(&c.mgmt, &bundle).await.unwrap();
    assert!(
        plan.to_string().contains("v0.3.3 (older: refused)"),
        "{plan}"
    );
    let writes = c.api.writes();
    let err = upgrade(&c, &bundle).await.0.unwrap_err();
    assert!(
        err.to_string()
            .contains("infrastructure-snow: v0.4.0 is installed (namespace capas-system), newer than the bundle's v0.3.3"),
        "{err}"
    );
    assert_eq!(c.api.writes(), writes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_provider_is_installed_and_a_foreign_cert_manager_left_alone() {
    let c = cluster().await;
    let all = init::prepare(&sources(), &values()).unwrap();
    run(&c, &all[..6], fast())
        .await
        .0
        .expect("init without CAPAS");
    // A cert-manager without clusterctl's version annotation was installed by something else:
    // its version is unknown and it is left alone.
    let mut webhook = c
        .api
        .get(
            "apps/v1",
            "Deployment",
            Some("cert-manager"),
            "cert-manager-webhook",
        )
        .unwrap();
    webhook["metadata"]["annotations"] = serde_json::json!({});
    c.api.put(webhook).unwrap();
    let plan = upgrade::plan(&c.mgmt, &all).await.unwrap();
    assert_eq!(
        (&plan.rows[0].current, plan.rows[0].action),
        (&upgrade::Current::Unmanaged, upgrade::Action::LeaveAlone)
    );
    assert!(
        plan.to_string().contains(
            "CertManager              unknown           left alone (not installed by clusterctl or snowctl)"
        ),
        "{plan}"
    );
    let snow = plan.rows.last().unwrap();
    assert_eq!(
        (snow.component.label(), &snow.current, snow.action),
        (
            "infrastructure-snow".to_owned(),
            &upgrade::Current::NotInstalled,
            upgrade::Action::Install
        )
    );
    assert!(
        plan.to_string()
            .ends_with("apply will install infrastructure-snow; each is then waited for (Deployments Available) and its version recorded.\n"),
        "{plan}"
    );
    let (result, _) = upgrade(&c, &all).await;
    let done = result.expect("upgrade");
    assert!(done.to_string().contains("infrastructure-snow"));
    assert!(inventory_versions(&c).contains(&("infrastructure-snow".into(), "v0.3.3".into())));
    assert!(
        c.api
            .get(
                "apps/v1",
                "Deployment",
                Some("capas-system"),
                "capas-controller-manager"
            )
            .is_some()
    );
}

/// The snowctl controller's component for `image`, mounting `bundles` as its release catalog.
fn controller_component(image: &str, bundles: &str) -> ComponentObjects {
    init::controller::component(&capi_render::controller::ControllerComponent {
        image: image.into(),
        proxy: None,
        release: capi_render::controller::ReleaseFiles {
            bundles: bundles.into(),
            eksd: vec!["kind: Release\n".into()],
        },
    })
}

fn recorded_release(c: &Cluster) -> Value {
    c.api
        .get(
            "v1",
            "ConfigMap",
            Some("eksa-system"),
            init::controller::RECORD,
        )
        .expect("the controller's record")["data"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_is_installed_recorded_refused_when_it_differs_and_upgraded_with_a_new_catalog()
 {
    let c = cluster().await;
    let image = "mirror.local:5000/snowctl/controller:v0.1.0";
    let mut first = init::prepare(&sources(), &values()).unwrap();
    first.push(controller_component(image, "kind: Bundles # first\n"));
    // An object the next version no longer ships, carrying the component's label.
    first.last_mut().unwrap().objects.push(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "snowctl-controller-retired", "namespace": "eksa-system",
                     "labels": {"app.kubernetes.io/name": "snowctl-controller"}},
        "data": {"old": "yes"},
    }));
    let (done, _) = run(&c, &first, fast()).await;
    let done = done.expect("init with the controller");
    let last = done.components.last().unwrap();
    assert_eq!(last.component.to_string(), "snowctl-controller");
    assert_eq!(last.outcome, Outcome::Applied);
    let record = recorded_release(&c);
    assert_eq!(record["image"], image);
    assert_eq!(
        record["release"],
        init::controller::release_digest(first.last().unwrap())
    );
    let deployment = c
        .api
        .get(
            "apps/v1",
            "Deployment",
            Some("eksa-system"),
            "snowctl-controller",
        )
        .expect("the Deployment");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        image
    );

    // The same run again changes nothing.
    let (again, _) = run(&c, &first, fast()).await;
    assert!(again.expect("re-run").unchanged());

    // Another image, or the same image with another catalog: init refuses, naming it.
    let mut other_image = first.clone();
    *other_image.last_mut().unwrap() = controller_component(
        "other.local:5000/snowctl/controller:v0.1.0",
        "kind: Bundles # first\n",
    );
    let refused = run(&c, &other_image, fast()).await.0.unwrap_err();
    assert!(
        refused.to_string().contains("other.local:5000")
            || format!("{refused:?}").contains("other.local:5000"),
        "{refused:?}"
    );
    let mut second = init::prepare(&sources(), &values()).unwrap();
    second.push(controller_component(image, "kind: Bundles # second\n"));
    let refused = run(&c, &second, fast()).await.0.unwrap_err();
    assert!(
        format!("{refused:?}").contains("another release catalog"),
        "{refused:?}"
    );

    // upgrade management-components: the catalog alone changed, so the controller upgrades:
    // its ConfigMap, a new pod template (the controller reads the catalog at start) and its
    // record; what the new version dropped is deleted.
    let plan = upgrade::plan(&c.mgmt, &second).await.expect("plan");
    let row = plan.rows.last().unwrap();
    assert_eq!(row.action, upgrade::Action::Upgrade, "{plan:?}");
    let (upgraded, _) = upgrade(&c, &second).await;
    let upgraded = upgraded.expect("upgrade");
    assert_eq!(
        upgraded.components.last().unwrap().deleted,
        vec!["ConfigMap eksa-system/snowctl-controller-retired".to_owned()]
    );
    let catalog = c
        .api
        .get(
            "v1",
            "ConfigMap",
            Some("eksa-system"),
            capi_render::controller::RELEASE_CONFIGMAP,
        )
        .expect("the release ConfigMap");
    assert_eq!(catalog["data"]["bundles.yaml"], "kind: Bundles # second\n");
    let digest = init::controller::release_digest(second.last().unwrap());
    assert_ne!(
        digest,
        init::controller::release_digest(first.last().unwrap())
    );
    let deployment = c
        .api
        .get(
            "apps/v1",
            "Deployment",
            Some("eksa-system"),
            "snowctl-controller",
        )
        .unwrap();
    assert_eq!(
        deployment["spec"]["template"]["metadata"]["annotations"]
            [capi_render::controller::RELEASE_DIGEST_ANNOTATION],
        digest
    );
    assert_eq!(recorded_release(&c)["release"], digest);
    let plan = upgrade::plan(&c.mgmt, &second).await.expect("plan again");
    assert_eq!(plan.rows.last().unwrap().action, upgrade::Action::UpToDate);
}
