//! `snow_lifecycle::move_cluster` and `restore` between Kubernetes API stand-ins, each with the
//! real provider stack installed by `snow_lifecycle::init` (clusterctl's labels and inventory)
//! and the simulated Cluster API controllers; the cluster made by `snow_lifecycle::create`.
//! Checked object by object, through the stand-ins' stores and the real `kubectl`.

mod common;

use serde_json::{Value, json};
use snow_lifecycle::{
    ClusterRequest, CreateOptions, Destination, Event, LifecycleError, Management, MoveOptions,
    Moved, WaitOptions,
    init::{
        self, InitOptions,
        components::{ComponentSource, STACK},
        envsubst::Values,
    },
    move_cluster, restore,
};
use snow_test_kube::components::{SHIPPED, TEST_VALUES};
use snow_test_kube::{CapiHandle, CapiOptions, KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::{collections::BTreeMap, path::PathBuf, time::Duration};

const NS: &str = "eksa-system";
const CLUSTER: &str = "edge";
const CORE: &str = "cluster.x-k8s.io/v1beta2";

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

/// A management cluster: a stand-in with the provider stack and simulated controllers.
struct Side {
    api: KubeStandIn,
    capi: CapiHandle,
    _workloads: WorkloadHandle,
    mgmt: Management,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

/// One management cluster; `workload` is the workload cluster its simulated Cluster API reaches
/// (the same for both sides of a move, as on real clusters the moved kubeconfig Secret points
/// the target's controllers at the same workload cluster).
async fn side(workload: &std::sync::Arc<KubeStandIn>) -> Side {
    let api = KubeStandIn::start().await.expect("stand-in");
    let workloads = api.start_workloads(WorkloadOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, mgmt) = common::connect(&api, dir.path()).await;
    let prepared = init::prepare(&sources(), &values()).expect("prepare");
    let options = InitOptions {
        crd_timeout: Duration::from_secs(20),
        deployment_timeout: Some(Duration::from_secs(20)),
        poll: Duration::from_millis(20),
    };
    init::init(&mgmt, &prepared, &options, &mut |_| {})
        .await
        .expect("init");
    let capi = api.start_capi(CapiOptions {
        step: Duration::from_millis(20),
        workload: Some(workload.clone()),
        ..CapiOptions::default()
    });
    Side {
        api,
        capi,
        _workloads: workloads,
        mgmt,
        dir,
        kubeconfig,
    }
}

/// Creates cluster `edge` on `side` (the CAPAS identity Secret put there first, with
/// clusterctl's move label as EKS Anywhere writes it).
async fn create_cluster(side: &Side) {
    side.api
        .put(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "edge-snow-credentials", "namespace": NS, "labels": {"clusterctl.cluster.x-k8s.io/move": "true"}},
            "type": "Opaque",
            "data": {"credentials": "W2RldmljZV0K", "ca-bundle": "LS0tLS1CRUdJTgo="},
        }))
        .expect("identity secret");
    let spec_text = common::edge_spec(3, 2);
    let spec = snow_api::check(&spec_text)
        .expect("spec reads")
        .into_valid()
        .unwrap_or_else(|r| panic!("spec findings: {:?}", r.findings));
    let inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
    let release = inputs.resolve(&spec, None).expect("release");
    let request = ClusterRequest {
        spec: &spec,
        spec_text: &spec_text,
        release: &release,
        secrets: None,
        default_ssh_key_name: None,
        registry_credentials: None,
    };
    let options = CreateOptions {
        wait: WaitOptions {
            poll: Duration::from_millis(20),
            ..WaitOptions::default()
        },
        // The strict stand-in's Nodes become Ready only with a CNI.
        cni: Some(
            snow_lifecycle::CniManifest::parse(include_str!("fixtures/cilium.yaml"))
                .expect("fixture"),
        ),
    };
    snow_lifecycle::create(&side.mgmt, &request, &options, &mut |_| {})
        .await
        .expect("create");
    // Let the controllers finish their last passes (template ownership, final status): the
    // tests compare against what is there now, so it must be what stays there. A fixed pause
    // was too short on a loaded machine.
    settle(&side.api).await;
}

/// Returns once the cluster's objects have stopped changing: two looks 300 ms apart find the same
/// objects at the same resource versions (bounded: 30 s).
async fn settle(api: &KubeStandIn) {
    let versions = |api: &KubeStandIn| {
        snapshot(api)
            .into_iter()
            .map(|(k, o)| (k, o["metadata"]["resourceVersion"].clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let start = std::time::Instant::now();
    let mut last = versions(api);
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = versions(api);
        if now == last {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the cluster's objects never stopped changing"
        );
        last = now;
    }
}

fn fast() -> MoveOptions {
    MoveOptions {
        settle: Duration::from_millis(300),
        settle_timeout: Duration::from_secs(20),
        ..MoveOptions::default()
    }
}

/// Everything of namespace `eksa-system` by `(kind, name)`: the cluster's objects.
fn snapshot(api: &KubeStandIn) -> BTreeMap<(String, String), Value> {
    api.objects()
        .into_iter()
        .filter(|o| o["metadata"]["namespace"] == NS && o["kind"] != "Event")
        .map(|o| {
            let key = (
                o["kind"].as_str().unwrap().to_owned(),
                o["metadata"]["name"].as_str().unwrap().to_owned(),
            );
            (key, o)
        })
        .collect()
}

/// The source's objects are on the target with the same content; owner references point at the
/// target's objects.
fn assert_same(
    before: &BTreeMap<(String, String), Value>,
    after: &BTreeMap<(String, String), Value>,
) {
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "the same objects"
    );
    let uid_of: BTreeMap<&str, &(String, String)> = before
        .iter()
        .map(|(k, o)| (o["metadata"]["uid"].as_str().unwrap(), k))
        .collect();
    for (key, source) in before {
        let target = &after[key];
        for field in ["spec", "status", "data", "type"] {
            assert_eq!(source[field], target[field], "{key:?} {field}");
        }
        for field in ["labels", "annotations", "finalizers"] {
            assert_eq!(
                source["metadata"][field], target["metadata"][field],
                "{key:?} metadata.{field}"
            );
        }
        let refs = |o: &Value| {
            o["metadata"]["ownerReferences"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let (s, t) = (refs(source), refs(target));
        assert_eq!(s.len(), t.len(), "{key:?} ownerReferences");
        for (s, t) in s.iter().zip(&t) {
            let owner = uid_of[s["uid"].as_str().unwrap()];
            assert_eq!(
                t["uid"], after[owner]["metadata"]["uid"],
                "{key:?} owner {owner:?} by its target UID"
            );
            for field in [
                "apiVersion",
                "kind",
                "name",
                "controller",
                "blockOwnerDeletion",
            ] {
                assert_eq!(s[field], t[field], "{key:?} ownerReference {field}");
            }
        }
    }
}

fn kinds(snapshot: &BTreeMap<(String, String), Value>) -> Vec<&str> {
    let mut kinds: Vec<&str> = snapshot.keys().map(|(k, _)| k.as_str()).collect();
    kinds.dedup();
    kinds
}

fn unpaused(api: &KubeStandIn) -> bool {
    let cluster = api
        .get(CORE, "Cluster", Some(NS), CLUSTER)
        .expect("cluster");
    cluster["spec"]["paused"].is_null()
        && cluster["metadata"]["annotations"]["cluster.x-k8s.io/paused"].is_null()
}

fn kubectl(side: &Side, args: &[&str]) -> String {
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&side.kubeconfig)
        .arg("--cache-dir")
        .arg(side.dir.path().join("kube-cache"))
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

async fn run_move(from: &Side, to: &Side) -> (Result<Moved, LifecycleError>, Vec<Event>) {
    let mut events = Vec::new();
    let result = move_cluster(
        &from.mgmt,
        CLUSTER,
        Destination::Cluster(&to.mgmt),
        &fast(),
        &mut |e| events.push(e),
    )
    .await;
    (result, events)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_moves_object_by_object_and_the_target_takes_over() {
    let workload = std::sync::Arc::new(KubeStandIn::start().await.expect("workload stand-in"));
    let (source, target) = (side(&workload).await, side(&workload).await);
    create_cluster(&source).await;
    let before = snapshot(&source.api);
    assert_eq!(
        kinds(&before),
        vec![
            "AWSSnowCluster",
            "AWSSnowMachineTemplate",
            "Cluster",
            "ConfigMap",
            "KubeadmConfigTemplate",
            "KubeadmControlPlane",
            "Machine",
            "MachineDeployment",
            "MachineHealthCheck",
            "Secret",
        ]
    );
    let machines = before.keys().filter(|(k, _)| k == "Machine").count();
    assert_eq!(machines, 3 + 2);
    // The target's controllers wait while the result is compared exactly.
    target.capi.pause();
    let (result, events) = run_move(&source, &target).await;
    let moved = result.expect("move");
    assert_eq!(moved.objects, before.len());
    assert_eq!(moved.deleted, before.len());
    assert_eq!(moved.matched, 0);
    assert_eq!(moved.levels, 3, "Cluster; its objects; Machines");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Step(s) if s.starts_with("Pausing cluster edge")))
    );

    assert!(
        snapshot(&source.api).is_empty(),
        "nothing left on the source"
    );
    let after = snapshot(&target.api);
    assert_same(&before, &after);
    assert!(unpaused(&target.api));

    // The target's controllers take over: nothing re-created, the cluster stays ready.
    target.capi.resume();
    // Under load the controllers' passes take longer: looked at until they settle (bounded).
    let start = std::time::Instant::now();
    let later = loop {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let later = snapshot(&target.api);
        let cluster = &later[&("Cluster".to_owned(), CLUSTER.to_owned())];
        if cluster["status"]["phase"] == "Provisioned" || start.elapsed() > Duration::from_secs(20)
        {
            break later;
        }
    };
    assert_eq!(
        later.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let cluster = &later[&("Cluster".to_owned(), CLUSTER.to_owned())];
    assert_eq!(cluster["status"]["phase"], "Provisioned");

    let listed = kubectl(&target, &["get", "clusters.cluster.x-k8s.io", "-A"]);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(NS) && l.contains(CLUSTER)),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_move_run_again_completes() {
    let workload = std::sync::Arc::new(KubeStandIn::start().await.expect("workload stand-in"));
    let (source, target) = (side(&workload).await, side(&workload).await);
    create_cluster(&source).await;
    let before = snapshot(&source.api);
    target.capi.pause();
    // Cancel the move once every object is on the target, before the source is cleaned.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    let mut on_event = |e: Event| {
        if matches!(&e, Event::Step(s) if s.starts_with("Deleting the objects"))
            && let Some(stop) = stop.take()
        {
            let _ = stop.send(());
        }
    };
    let options = fast();
    let moving = move_cluster(
        &source.mgmt,
        CLUSTER,
        Destination::Cluster(&target.mgmt),
        &options,
        &mut on_event,
    );
    tokio::select! {
        biased;
        result = moving => panic!("the move finished before it was cancelled: {result:?}"),
        _ = stopped => {}
    }
    // Interrupted: everything on the target (paused), the source still has its Cluster, paused.
    assert_eq!(
        snapshot(&target.api).keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    assert!(!unpaused(&target.api));
    assert!(!unpaused(&source.api), "the source stays paused");

    let (result, events) = run_move(&source, &target).await;
    let moved = result.expect("the re-run completes");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Note(n) if n.contains("paused by an earlier move")))
    );
    assert_eq!(
        moved.matched,
        before.len(),
        "every object matched, none duplicated"
    );
    assert!(snapshot(&source.api).is_empty());
    assert_same(&before, &snapshot(&target.api));
    assert!(unpaused(&target.api));

    // A third run finds nothing left to do.
    let (result, _) = run_move(&source, &target).await;
    assert_eq!(result.expect("nothing to do"), Moved::default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_restores_into_an_empty_management_cluster() {
    let workload = std::sync::Arc::new(KubeStandIn::start().await.expect("workload stand-in"));
    let (source, target) = (side(&workload).await, side(&workload).await);
    create_cluster(&source).await;
    let before = snapshot(&source.api);
    let backup = source.dir.path().join("backup");
    let mut events = Vec::new();
    let written = move_cluster(
        &source.mgmt,
        CLUSTER,
        Destination::Directory(&backup),
        &fast(),
        &mut |e| events.push(e),
    )
    .await
    .expect("backup");
    assert_eq!(written.objects, before.len());
    // The source keeps everything and is unpaused.
    assert!(unpaused(&source.api));
    assert_eq!(
        snapshot(&source.api).keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    let files = std::fs::read_dir(&backup).unwrap().count();
    assert_eq!(files, before.len());
    let cluster_file = backup.join("Cluster_eksa-system_edge.yaml");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cluster_file)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    target.capi.pause();
    let restored = restore(&backup, &target.mgmt, &fast(), &mut |_| {})
        .await
        .expect("restore");
    assert_eq!(restored.objects, before.len());
    assert_same(&before, &snapshot(&target.api));
    assert!(unpaused(&target.api));

    // Restoring again matches every object and duplicates none.
    let again = restore(&backup, &target.mgmt, &fast(), &mut |_| {})
        .await
        .expect("restore again");
    assert_eq!(again.matched, before.len());
    assert_same(&before, &snapshot(&target.api));

    // A broken backup: every bad file named.
    std::fs::write(backup.join("broken.yaml"), "kind: [").unwrap();
    std::fs::write(backup.join("other.yaml"), "kind: Secret\n").unwrap();
    let err = restore(&backup, &target.mgmt, &fast(), &mut |_| {})
        .await
        .expect_err("broken files");
    let text = err.to_string();
    assert!(text.contains("broken.yaml"), "{text}");
    assert!(text.contains("other.yaml: not an object of a backup (missing apiVersion, metadata.name, metadata.namespace, metadata.uid)"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_is_refused_with_every_reason_and_the_source_is_untouched() {
    let workload = std::sync::Arc::new(KubeStandIn::start().await.expect("workload stand-in"));
    let (source, target) = (side(&workload).await, side(&workload).await);
    create_cluster(&source).await;
    let before = snapshot(&source.api);

    // The target lacks CAPAS (its inventory entry and a CRD) and runs another Cluster API.
    target
        .api
        .delete(
            "clusterctl.cluster.x-k8s.io/v1alpha3",
            "Provider",
            Some("capas-system"),
            "infrastructure-snow",
        )
        .unwrap();
    target
        .api
        .delete(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "awssnowclusters.infrastructure.cluster.x-k8s.io",
        )
        .unwrap();
    let mut core = target
        .api
        .get(
            "clusterctl.cluster.x-k8s.io/v1alpha3",
            "Provider",
            Some("capi-system"),
            "cluster-api",
        )
        .unwrap();
    core["version"] = json!("v1.12.0");
    target.api.put(core).unwrap();

    let (result, _) = run_move(&source, &target).await;
    let Err(LifecycleError::MoveRefused { reasons, .. }) = result else {
        panic!("refused: {result:?}");
    };
    assert_eq!(
        reasons,
        vec![
            "provider cluster-api (CoreProvider) is v1.12.0 on the target but v1.13.5 on the source: install the same version",
            "provider snow (InfrastructureProvider) v0.3.3 is not installed on the target",
            "the target does not serve AWSSnowCluster (infrastructure.cluster.x-k8s.io/v1beta1): install its provider there",
        ]
    );
    assert!(unpaused(&source.api));
    assert_eq!(
        snapshot(&source.api).keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );

    // The target unreachable: a clear error, the source untouched.
    target.api.stop();
    let (result, _) = run_move(&source, &target).await;
    let err = result.expect_err("unreachable");
    assert!(
        matches!(
            err,
            LifecycleError::Kube(snow_kube::KubeError::Unreachable { .. })
        ),
        "{err}"
    );
    assert!(unpaused(&source.api));
    assert_eq!(snapshot(&source.api).len(), before.len());
}
