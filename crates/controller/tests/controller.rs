//! The controller against the Kubernetes API stand-in and its simulated Cluster API
//! controllers: the GitOps flow (objects declared, the controller reconciles), statuses,
//! idempotence (a second pass writes nothing), deletion, and the fault cases. Devices are
//! in-memory (`InMemoryDevice`): what the machine-config part asks them is the subject here, and
//! the real device clients are tested against moto in snow-validate.

#[path = "support/devices.rs"]
mod devices;

use devices::{Fleet, cilium};
use serde_json::{Value, json};
use snow_controller::{
    self as controller, BootstrapCredentials, CniSource, Context, FINALIZER, LeaderElection,
    RunOptions, machine_config,
};
use snow_lifecycle::Management;
use snow_test_kube::{
    CapiHandle, CapiOptions, KubeStandIn,
    declared::{DeclaredCluster, EKSA},
};
use std::{
    collections::BTreeSet,
    sync::Arc,
    time::{Duration, Instant},
};

const CORE: &str = "cluster.x-k8s.io/v1beta2";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";
const NS: &str = "eksa-system";

struct Setup {
    api: KubeStandIn,
    capi: CapiHandle,
    fleet: Fleet,
}

async fn setup() -> Setup {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().unwrap();
    // The GitOps flow starts with `snowctl crds | kubectl apply -f -`: the four Snow kinds and
    // FluxConfig.
    assert_eq!(
        api.install_crds(&snow_api::crds_yaml().unwrap()).unwrap(),
        5
    );
    // The workload cluster starts without a network: its Nodes become Ready only once the
    // controller has installed Cilium on it.
    let capi = api.start_capi(CapiOptions {
        step: Duration::from_millis(10),
        ..CapiOptions::default()
    });
    let fleet = Fleet::default();
    fleet.amis.lock().unwrap().insert("ami-good".into());
    Setup { api, capi, fleet }
}

impl Setup {
    async fn context(&self, manager: &str) -> Context<Fleet> {
        self.context_with(manager, CniSource::Manifest(cilium()))
            .await
    }

    async fn context_with(&self, manager: &str, cni: CniSource) -> Context<Fleet> {
        let dir = tempfile::tempdir().unwrap();
        let path = self.api.write_kubeconfig(dir.path()).unwrap();
        Context {
            mgmt: Management::connect_for_watches(&snow_lifecycle::KubeconfigSource::file(&path))
                .await
                .unwrap(),
            inputs: snow_api::release::ReleaseInputs::embedded().unwrap(),
            devices: self.fleet.clone(),
            manager: manager.into(),
            namespace: None,
            cni,
        }
    }

    fn put(&self, object: Value) {
        self.api.put(object).expect("stored");
    }

    /// Declares the cluster (as `kubectl apply -f` of a spec would).
    fn declare(&self, cluster: &DeclaredCluster) {
        for object in cluster.objects() {
            self.put(object);
        }
    }
}

/// `edge` with the given worker groups.
fn edge(groups: &[(&str, u32)]) -> DeclaredCluster {
    let mut c = DeclaredCluster::new("edge", 1);
    c.workers = groups.iter().map(|(g, n)| ((*g).to_owned(), *n)).collect();
    c
}

fn machine_config(name: &str, instance_type: &str, ami: &str) -> Value {
    let mut c = edge(&[]);
    c.ami = ami.into();
    c.machine_config(name, instance_type)
}

fn cluster(groups: &[(&str, u32)]) -> Value {
    edge(groups).cluster()
}

fn eksa_cluster(s: &Setup) -> Option<Value> {
    s.api.get(EKSA, "Cluster", Some("default"), "edge")
}

fn condition(cluster: &Value, kind: &str) -> Option<String> {
    cluster["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?["status"]
        .as_str()
        .map(str::to_owned)
}

fn ready(s: &Setup) -> bool {
    eksa_cluster(s).is_some_and(|c| condition(&c, "Ready").as_deref() == Some("True"))
}

/// Resyncs until `done`, or fails after 30 s naming what was last seen.
async fn resync_until(ctx: &Context<Fleet>, s: &Setup, what: &str, done: impl Fn(&Setup) -> bool) {
    let start = Instant::now();
    loop {
        let pass = controller::resync(ctx, 4).await.expect("resync");
        assert_eq!(pass.errors, 0, "a reconcile failed");
        if done(s) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what} never happened; the Cluster says {:#}",
            eksa_cluster(s)
                .map(|c| c["status"].clone())
                .unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

fn names(s: &Setup, api_version: &str, kind: &str) -> Vec<String> {
    let mut n: Vec<String> = s
        .api
        .list(api_version, kind, Some(NS))
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    n.sort();
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gitops_flow_creates_changes_pauses_and_deletes_a_cluster() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    s.declare(&edge(&[("md-0", 2)]));

    // Create: machine configs validated, objects applied, the Cluster Ready.
    resync_until(&ctx, &s, "Ready", ready).await;
    let c = eksa_cluster(&s).unwrap();
    assert_eq!(c["status"]["failureReason"], Value::Null);
    assert_eq!(
        c["status"]["observedGeneration"],
        c["metadata"]["generation"]
    );
    assert!(
        c["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!(FINALIZER))
    );
    let mc = s
        .api
        .get(EKSA, "SnowMachineConfig", Some("default"), "edge")
        .unwrap();
    assert_eq!(mc["status"]["specValid"], true);
    let kcp = s
        .api
        .get(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            Some(NS),
            "edge",
        )
        .unwrap();
    assert!(
        kcp["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["manager"] == "snowctl-controller" && f["operation"] == "Apply")
    );
    assert!(
        s.api
            .get("v1", "Secret", Some(NS), "edge-snow-credentials")
            .is_some()
    );
    let events: Vec<String> = s
        .api
        .list("v1", "Event", Some("default"))
        .iter()
        .map(|e| e["reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(events.contains(&"Ready".to_owned()), "{events:?}");

    // Level-based: a pass over the unchanged cluster writes nothing.
    let before = s.api.writes();
    let pass = controller::resync(&ctx, 4).await.unwrap();
    assert_eq!(
        (pass.clusters, pass.machine_configs, pass.writes),
        (1, 2, 0)
    );
    assert_eq!(
        s.api.writes(),
        before,
        "{:?}",
        &s.api.requests()[before as usize..]
    );

    // A machine config made invalid: its status, then the Cluster's, say so; fixed, both recover.
    s.put(machine_config("edge", "sbe-c.large", "ami-gone"));
    resync_until(&ctx, &s, "MachineConfigInvalid", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "MachineConfigInvalid")
    })
    .await;
    let mc = s
        .api
        .get(EKSA, "SnowMachineConfig", Some("default"), "edge")
        .unwrap();
    assert_eq!(mc["status"]["specValid"], false);
    let message = mc["status"]["failureMessage"].as_str().unwrap();
    assert!(
        message.contains("AMI ami-gone is not on device 192.168.1.11"),
        "{message}"
    );
    let c = eksa_cluster(&s).unwrap();
    assert!(
        c["status"]["failureMessage"]
            .as_str()
            .unwrap()
            .starts_with("Invalid edge SnowMachineConfig: AMI ami-gone")
    );
    assert_eq!(condition(&c, "Ready").as_deref(), Some("False"));
    s.put(machine_config("edge", "sbe-c.large", "ami-good"));
    resync_until(&ctx, &s, "recovery", ready).await;
    assert_eq!(
        eksa_cluster(&s).unwrap()["status"]["failureReason"],
        Value::Null
    );

    // A worker group added, then an instance-type change (a bump and a roll), then the group
    // removed again.
    s.put(cluster(&[("md-0", 2), ("md-1", 1)]));
    resync_until(&ctx, &s, "md-1", |s| {
        ready(s) && names(s, CORE, "MachineDeployment") == ["edge-md-0", "edge-md-1"]
    })
    .await;
    s.put(machine_config("edge", "sbe-c.xlarge", "ami-good"));
    resync_until(&ctx, &s, "the template bump", |s| {
        s.api
            .get(CORE, "MachineDeployment", Some(NS), "edge-md-0")
            .is_some_and(|md| {
                md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == "edge-md-0-2"
            })
            && ready(s)
    })
    .await;
    let bumped = s
        .api
        .get(INFRA, "AWSSnowMachineTemplate", Some(NS), "edge-md-0-2")
        .unwrap();
    assert_eq!(
        bumped["spec"]["template"]["spec"]["instanceType"],
        "sbe-c.xlarge"
    );
    let rolled = s
        .api
        .list(CORE, "Machine", Some(NS))
        .iter()
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == "edge-md-0")
        .all(|m| {
            m["metadata"]["annotations"]["snow-test-support/machine-template"]
                .as_str()
                .is_some_and(|t| t.starts_with("edge-md-0-2|"))
        });
    assert!(rolled, "md-0's machines still use the old template");
    s.put(cluster(&[("md-0", 2)]));
    resync_until(&ctx, &s, "md-1 removed", |s| {
        ready(s) && names(s, CORE, "MachineDeployment") == ["edge-md-0"]
    })
    .await;
    assert!(
        s.api
            .get(
                CORE,
                "MachineHealthCheck",
                Some(NS),
                "edge-md-1-worker-unhealthy"
            )
            .is_none()
    );

    // Paused: a change waits, and no write is made; resumed, it is applied.
    let mut paused = cluster(&[("md-0", 3)]);
    paused["metadata"]["annotations"]["anywhere.eks.amazonaws.com/paused"] = json!("true");
    s.put(paused);
    let before = s.api.writes();
    controller::resync(&ctx, 4).await.unwrap();
    assert_eq!(s.api.writes(), before);
    let md = s
        .api
        .get(CORE, "MachineDeployment", Some(NS), "edge-md-0")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 2);
    s.put(cluster(&[("md-0", 3)]));
    resync_until(&ctx, &s, "the scale-up", |s| {
        s.api
            .get(CORE, "MachineDeployment", Some(NS), "edge-md-0")
            .is_some_and(|md| md["spec"]["replicas"] == 3)
            && ready(s)
    })
    .await;

    // Deleted: the finalizer holds the Cluster until everything it made is gone.
    s.api
        .delete(EKSA, "Cluster", Some("default"), "edge")
        .expect("delete accepted");
    resync_until(&ctx, &s, "deletion", |s| eksa_cluster(s).is_none()).await;
    let left: Vec<String> = s
        .api
        .objects()
        .into_iter()
        .filter(|o| o["metadata"]["namespace"] == NS)
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bootstrap_secret_is_a_clear_status_not_a_crash_loop() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    s.put(machine_config("edge", "sbe-c.large", "ami-good"));
    let config = s
        .api
        .get(EKSA, "SnowMachineConfig", Some("default"), "edge")
        .unwrap();
    let outcome = machine_config::reconcile(
        &ctx.mgmt,
        &BootstrapCredentials::default(),
        controller::FIELD_MANAGER,
        &config,
    )
    .await
    .expect("a missing Secret is reported, not raised");
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(60)));
    let config = s
        .api
        .get(EKSA, "SnowMachineConfig", Some("default"), "edge")
        .unwrap();
    assert_eq!(config["status"]["specValid"], false);
    let message = config["status"]["failureMessage"].as_str().unwrap();
    assert!(
        message.contains("capas-system/capas-manager-bootstrap-credentials is missing"),
        "{message}"
    );
    // Unchanged, it is not written again.
    let before = s.api.writes();
    machine_config::reconcile(
        &ctx.mgmt,
        &BootstrapCredentials::default(),
        controller::FIELD_MANAGER,
        &config,
    )
    .await
    .unwrap();
    assert_eq!(s.api.writes(), before);
}

use snow_test_kube::probe::{free_addr, http_get as get, wait_until as wait};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_elect_one_leader_which_survives_dropped_watches_and_hands_over() {
    let s = setup().await;
    let mut stops = Vec::new();
    let mut tasks = Vec::new();
    let mut health = Vec::new();
    for replica in ["a", "b"] {
        let ctx = Arc::new(s.context(&format!("snowctl-controller-{replica}")).await);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let addr = free_addr();
        let mut election = LeaderElection::new("default", format!("replica-{replica}"));
        election.lease_duration = Duration::from_secs(3);
        let options = RunOptions {
            concurrency: 2,
            health: Some(addr),
            leader: Some(election),
            webhook: None,
        };
        tasks.push(tokio::spawn(controller::run(ctx, options, async move {
            let _ = rx.await;
        })));
        stops.push(Some(tx));
        health.push(addr);
    }
    let holder = || {
        s.api
            .get(
                "coordination.k8s.io/v1",
                "Lease",
                Some("default"),
                "snowctl-controller",
            )
            .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_owned))
    };
    wait("a leader", async || holder().is_some()).await;
    let leader = holder().unwrap();
    let (lead, standby) = if leader == "replica-a" {
        (0, 1)
    } else {
        (1, 0)
    };
    wait("health answers", async || {
        get(health[standby], "/readyz").await.contains("200 OK")
    })
    .await;
    assert!(get(health[lead], "/healthz").await.contains("ok (leader)"));
    assert!(
        get(health[standby], "/healthz")
            .await
            .contains("ok (standby)")
    );

    // The leader reconciles what is declared, through its watches; the standby writes nothing.
    s.declare(&edge(&[("md-0", 1)]));
    wait("Ready through watches", async || ready(&s)).await;
    let managers: BTreeSet<String> = s
        .api
        .objects()
        .iter()
        .flat_map(|o| {
            o["metadata"]["managedFields"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|f| f["manager"].as_str().map(str::to_owned))
        .filter(|m| m.starts_with("snowctl-controller"))
        .collect();
    let lead_name = format!("snowctl-controller-{}", if lead == 0 { "a" } else { "b" });
    assert_eq!(managers, BTreeSet::from([lead_name]));

    // The API server drops every watch: the leader re-lists and sees the next change.
    s.api.drop_watches();
    s.put(cluster(&[("md-0", 1), ("md-1", 1)]));
    wait("md-1 after the watches dropped", async || {
        s.api
            .get(CORE, "MachineDeployment", Some(NS), "edge-md-1")
            .is_some()
    })
    .await;

    // The leader stops (SIGTERM): it gives the Lease up and the standby takes over.
    stops[lead].take().unwrap().send(()).unwrap();
    tasks.remove(lead).await.unwrap().expect("a graceful stop");
    wait("the hand-over", async || {
        holder().is_some_and(|h| h != leader)
    })
    .await;
    wait("the new leader's health", async || {
        get(health[standby], "/healthz")
            .await
            .contains("ok (leader)")
    })
    .await;
    stops[standby].take().unwrap().send(()).unwrap();
    tasks
        .pop()
        .unwrap()
        .await
        .unwrap()
        .expect("a graceful stop");
    drop(s.capi);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_etcd_rolls_first_with_the_control_plane_paused() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    let mut declared = edge(&[("md-0", 1)]);
    declared.external_etcd = true;
    s.declare(&declared);
    resync_until(&ctx, &s, "Ready with external etcd", ready).await;
    assert!(
        s.api
            .get(INFRA, "AWSSnowMachineTemplate", Some(NS), "edge-etcd-1")
            .is_some()
    );

    // A bigger etcd instance: a new etcd template; the control plane waits, paused.
    s.put(declared.etcd_machine_config("sbe-c.xlarge"));
    let kcp = |s: &Setup| {
        s.api
            .get(
                "controlplane.cluster.x-k8s.io/v1beta2",
                "KubeadmControlPlane",
                Some(NS),
                "edge",
            )
            .unwrap()
    };
    let mut seen_paused = false;
    let start = Instant::now();
    loop {
        controller::resync(&ctx, 4).await.unwrap();
        let paused = kcp(&s)["metadata"]["annotations"]["cluster.x-k8s.io/paused"] == "true";
        let etcd = s
            .api
            .get(
                "etcdcluster.cluster.x-k8s.io/v1beta1",
                "EtcdadmCluster",
                Some(NS),
                "edge-etcd",
            )
            .unwrap();
        let rolled = etcd["spec"]["infrastructureTemplate"]["name"] == "edge-etcd-2";
        if paused {
            seen_paused = true;
            assert!(
                rolled,
                "the control plane was paused before etcd moved to its new template"
            );
        }
        if rolled && !paused && ready(&s) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the etcd roll never finished"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert!(
        seen_paused,
        "the control plane was never paused while etcd rolled"
    );
    assert_eq!(
        eksa_cluster(&s).unwrap()["status"]["failureReason"],
        Value::Null
    );
}

/// Anyone who can write `<cluster>-kubeconfig` chooses its content: an `exec` entry there must
/// never make the controller run a program. It is said on the Cluster (status and Event) naming
/// the Secret, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_kubeconfig_in_the_secret_is_refused_and_never_run() {
    use base64::Engine as _;
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: edge\n  cluster:\n    server: https://127.0.0.1:9\nusers:\n- name: edge-admin\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"touch '{}'\"]\n      interactiveMode: Never\ncontexts:\n- name: edge\n  context: {{cluster: edge, user: edge-admin}}\ncurrent-context: edge\n",
        marker.display()
    );
    // There before the control plane would publish its own (which then leaves it as it is).
    s.put(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "edge-kubeconfig", "namespace": NS},
        "data": {"value": base64::engine::general_purpose::STANDARD.encode(&kubeconfig)},
    }));
    s.declare(&edge(&[("md-0", 1)]));
    resync_until(&ctx, &s, "the refusal status", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "KubeconfigRefused")
    })
    .await;
    let status = eksa_cluster(&s).unwrap()["status"].clone();
    let message = status["failureMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("Secret eksa-system/edge-kubeconfig") && message.contains("`exec`"),
        "{status:#}"
    );
    let events = s.api.list("v1", "Event", Some("default"));
    assert!(
        events
            .iter()
            .any(|e| e["reason"] == "KubeconfigRefused" && e["type"] == "Warning"),
        "{events:#?}"
    );
    assert!(!marker.exists(), "the exec plugin ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_values_from_the_server_never_panic_the_election() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    let lease = |renew: &str, transitions: i32| {
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "snowctl-controller", "namespace": "default"},
            "spec": {
                "holderIdentity": "someone-else",
                "leaseDurationSeconds": i32::MAX,
                "renewTime": renew,
                "acquireTime": renew,
                "leaseTransitions": transitions,
            },
        })
    };
    let election = LeaderElection::new("default", "me".into());
    // A renewTime near the end of time plus the longest duration overflows: held, not a panic.
    s.put(lease("9999-12-30T00:00:00.000000Z", 0));
    assert!(!election.try_acquire(&ctx.mgmt).await.unwrap());
    // An expired lease whose transition count is at the top: taken, the count saturates.
    let mut expired = lease("1970-01-01T00:00:00.000000Z", i32::MAX);
    expired["spec"]["leaseDurationSeconds"] = json!(15);
    s.put(expired);
    assert!(election.try_acquire(&ctx.mgmt).await.unwrap());
    let now = s
        .api
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            Some("default"),
            "snowctl-controller",
        )
        .unwrap();
    assert_eq!(now["spec"]["holderIdentity"], "me");
    assert_eq!(now["spec"]["leaseTransitions"], i32::MAX);
    drop(s.capi);
}

/// EKS Anywhere's webhook rule on this path: no default key is generated for a kubectl/GitOps
/// cluster, so a machine config without `sshKeyName` stops it with a status that says so, and
/// nothing is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_ssh_key_name_is_refused_on_the_gitops_path() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    for mut object in edge(&[("md-0", 1)]).objects() {
        if object["kind"] == "SnowMachineConfig" {
            object["spec"]["sshKeyName"] = Value::from("");
        }
        s.put(object);
    }
    resync_until(&ctx, &s, "the failure status", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "SpecInvalid")
    })
    .await;
    let status = eksa_cluster(&s).unwrap()["status"].clone();
    let message = status["failureMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("SshKeyName must not be empty"),
        "{status:#}"
    );
    assert!(names(&s, CORE, "Cluster").is_empty());
}

/// The images of the Cilium agent DaemonSet and operator Deployment on the workload cluster.
fn cilium_images(s: &Setup) -> (String, String) {
    let workload = s.capi.workload("edge").expect("the workload cluster");
    let image = |kind: &str, name: &str| {
        let object = workload.get("apps/v1", kind, Some("kube-system"), name);
        let object = object.unwrap_or_else(|| panic!("{kind} {name} on the workload cluster"));
        object["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    (
        image("DaemonSet", "cilium"),
        image("Deployment", "cilium-operator"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helm_that_cannot_run_is_a_cni_status_and_no_node_is_ready() {
    let s = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let helm = dir.path().join("no-such-helm");
    let options = snow_lifecycle::cni::helm::HelmOptions {
        helm: helm.clone(),
        ..Default::default()
    };
    let ctx = s
        .context_with(controller::FIELD_MANAGER, CniSource::Helm(options))
        .await;
    s.declare(&edge(&[("md-0", 1)]));
    resync_until(&ctx, &s, "the CNI failure status", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "CniRenderFailed")
    })
    .await;
    let status = eksa_cluster(&s).unwrap()["status"].clone();
    let message = status["failureMessage"].as_str().unwrap_or_default();
    assert!(message.contains("no-such-helm"), "{status:#}");
    // The Cluster API objects were applied; without a CNI nothing on the workload cluster runs.
    assert_eq!(names(&s, CORE, "Cluster"), ["edge"]);
    assert!(!ready(&s));
    if let Some(workload) = s.capi.workload("edge") {
        assert!(
            workload
                .list("apps/v1", "DaemonSet", Some("kube-system"))
                .is_empty()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cilium_rolls_to_new_images_unless_skip_upgrade() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    let cluster = edge(&[("md-0", 1)]);
    s.declare(&cluster);
    resync_until(&ctx, &s, "Ready", ready).await;
    let old = (
        "public.ecr.aws/eks/cilium/cilium:v1.17.8-0".to_owned(),
        "public.ecr.aws/eks/cilium/operator-generic:v1.17.8-0".to_owned(),
    );
    assert_eq!(cilium_images(&s), old);

    // The controller now holds a manifest of newer images.
    let fixture = include_str!("../../lifecycle/tests/fixtures/cilium.yaml");
    let newer = fixture.replace(":v1.17.8-0", ":v1.19.4-1");
    assert_ne!(newer, fixture);
    let newer = CniSource::Manifest(snow_lifecycle::CniManifest::parse(&newer).unwrap());
    let upgrading = s.context_with(controller::FIELD_MANAGER, newer).await;

    // skipUpgrade: true keeps the installed images, pass after pass.
    let mut skipping = eksa_cluster(&s).unwrap();
    skipping["spec"]["clusterNetwork"]["cniConfig"]["cilium"]["skipUpgrade"] = json!(true);
    strip_server_fields(&mut skipping);
    s.put(skipping);
    for _ in 0..3 {
        let pass = controller::resync(&upgrading, 4).await.unwrap();
        assert_eq!(pass.errors, 0);
    }
    assert_eq!(cilium_images(&s), old);

    // Without it, the new images are applied and the agents roll to them.
    let mut rolling = eksa_cluster(&s).unwrap();
    rolling["spec"]["clusterNetwork"]["cniConfig"]["cilium"]["skipUpgrade"] = json!(false);
    strip_server_fields(&mut rolling);
    s.put(rolling);
    resync_until(&upgrading, &s, "the new Cilium images", |s| {
        cilium_images(s).0.ends_with(":v1.19.4-1") && ready(s)
    })
    .await;
    assert_eq!(
        cilium_images(&s),
        (
            "public.ecr.aws/eks/cilium/cilium:v1.19.4-1".to_owned(),
            "public.ecr.aws/eks/cilium/operator-generic:v1.19.4-1".to_owned()
        )
    );
}

/// An object as a client would write it back (no resourceVersion conflicts with the store).
fn strip_server_fields(object: &mut Value) {
    if let Some(meta) = object["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
        meta.remove("managedFields");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authenticated_mirror_is_logged_in_to_from_the_registry_credentials_secret() {
    let s = setup().await;
    // A fake helm: `registry login` records its arguments and stdin; `template` prints the
    // fixture.
    let dir = tempfile::tempdir().unwrap();
    let helm = dir.path().join("helm");
    let script = r#"#!/bin/sh
dir=$(dirname "$0")
if [ "$1" = registry ]; then
  printf '%s\n' "$@" > "$dir/login-args"; cat > "$dir/login-stdin"; echo "Login Succeeded"; exit 0
fi
cat > /dev/null
cat "$dir/manifest.yaml"
"#;
    let options = fake_helm(&helm, script);
    let ctx = s
        .context_with(controller::FIELD_MANAGER, CniSource::Helm(options))
        .await;
    for mut object in edge(&[("md-0", 1)]).objects() {
        if object["kind"] == "Cluster" && object["apiVersion"] == EKSA {
            object["spec"]["registryMirrorConfiguration"] =
                json!({"endpoint": "10.0.0.5", "port": "443", "authenticate": true});
        }
        s.put(object);
    }

    // Without the Secret: a status that says which Secret to create.
    resync_until(&ctx, &s, "the CNI failure status", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "CniRenderFailed")
    })
    .await;
    let status = eksa_cluster(&s).unwrap()["status"].clone();
    let message = status["failureMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("eksa-system/registry-credentials")
            && message.contains("is missing")
            && message.contains("username and password"),
        "{status:#}"
    );
    assert!(!dir.path().join("login-args").exists());

    // With it, helm logs in (the password on stdin only) and Cilium makes the cluster Ready.
    s.put(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "registry-credentials", "namespace": NS},
        "data": {"username": "c2l0ZQ==", "password": "czNjcjN0LXB3"},
    }));
    resync_until(&ctx, &s, "Ready", ready).await;
    let args = std::fs::read_to_string(dir.path().join("login-args")).unwrap();
    assert!(
        args.starts_with("registry\nlogin\n10.0.0.5:443\n") && args.contains("--username\nsite\n"),
        "{args}"
    );
    assert!(!args.contains("s3cr3t-pw"), "{args}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("login-stdin")).unwrap(),
        "s3cr3t-pw"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chart_files_from_an_archive_are_given_to_helm_without_a_registry_or_a_login() {
    let s = setup().await;
    // A fake helm: records its arguments (one a line) and a copy of its second argument when
    // that is a file (the chart), reads the values, prints the fixture.
    let dir = tempfile::tempdir().unwrap();
    let helm = dir.path().join("helm");
    let script = r#"#!/bin/sh
dir=$(dirname "$0")
printf '%s\n' "$@" >> "$dir/args"
if [ -f "$2" ]; then cp "$2" "$dir/chart-seen"; fi
cat > /dev/null
cat "$dir/manifest.yaml"
"#;
    let options = fake_helm(&helm, script);
    // The chart the embedded bundle names for the cluster's Kubernetes version, as a file (what
    // `snowctl controller --artifacts` takes out of the archive).
    let declared = edge(&[("md-0", 1)]);
    let version = declared.cluster()["spec"]["kubernetesVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
    let uri = inputs
        .bundles
        .versions_bundle(&version)
        .unwrap()
        .cilium()
        .unwrap()
        .helm_chart
        .uri
        .clone();
    let chart = dir.path().join("charts/0/cilium-1.19.4-1.tgz");
    std::fs::create_dir_all(chart.parent().unwrap()).unwrap();
    let chart_bytes = b"\x1f\x8b a chart's bytes".to_vec();
    std::fs::write(&chart, &chart_bytes).unwrap();
    // The mirror authenticates and there is no registry-credentials Secret: with a chart file
    // helm logs in nowhere, so none is needed.
    for mut object in declared.objects() {
        if object["kind"] == "Cluster" && object["apiVersion"] == EKSA {
            object["spec"]["registryMirrorConfiguration"] =
                json!({"endpoint": "10.0.0.5", "port": "443", "authenticate": true});
        }
        s.put(object);
    }

    // An archive without this version's chart: a status naming the chart and the archive; helm
    // never runs.
    let other = std::collections::BTreeMap::from([(
        "public.ecr.aws/eks/cilium/cilium:0.0.0-other".to_owned(),
        chart.clone(),
    )]);
    let without = CniSource::HelmChartFiles {
        charts: other,
        from: "/site/snow-artifacts.tar".into(),
        options: options.clone(),
    };
    let ctx = s.context_with(controller::FIELD_MANAGER, without).await;
    resync_until(&ctx, &s, "the CNI failure status", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "CniRenderFailed")
    })
    .await;
    let status = eksa_cluster(&s).unwrap()["status"].clone();
    let message = status["failureMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("the Helm chart {uri} (Kubernetes {version})"))
            && message.contains("/site/snow-artifacts.tar"),
        "{status:#}"
    );
    assert!(!dir.path().join("args").exists());

    // With it: helm template of the file, no registry, no login, and Cilium makes it Ready.
    let with = CniSource::HelmChartFiles {
        charts: std::collections::BTreeMap::from([(uri.clone(), chart.clone())]),
        from: "/site/snow-artifacts.tar".into(),
        options,
    };
    let ctx = s.context_with(controller::FIELD_MANAGER, with).await;
    resync_until(&ctx, &s, "Ready", ready).await;
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    let first: Vec<&str> = args.lines().take(7).collect();
    assert_eq!(
        first,
        [
            "template",
            chart.to_str().unwrap(),
            "--namespace",
            "kube-system",
            "--kube-version",
            &version,
            "-f"
        ],
        "{args}"
    );
    assert!(
        !args.contains("oci://") && !args.contains("registry"),
        "{args}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("chart-seen")).unwrap(),
        chart_bytes
    );
    assert!(
        s.api
            .get("v1", "Secret", Some(NS), "registry-credentials")
            .is_none()
    );
}

/// `script` as the executable `helm`, beside the Cilium fixture as `manifest.yaml` (what the
/// script prints for `template`); helm's options running it once.
fn fake_helm(helm: &std::path::Path, script: &str) -> snow_lifecycle::cni::helm::HelmOptions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(helm, script).unwrap();
    let dir = helm.parent().expect("helm is in a directory");
    std::fs::write(
        dir.join("manifest.yaml"),
        include_str!("../../lifecycle/tests/fixtures/cilium.yaml"),
    )
    .unwrap();
    std::fs::set_permissions(helm, std::fs::Permissions::from_mode(0o755)).unwrap();
    snow_lifecycle::cni::helm::HelmOptions {
        helm: helm.to_path_buf(),
        attempts: 1,
        ..Default::default()
    }
}

/// The declared cluster's spec, as `snowctl` reads the file the objects were applied from.
fn declared_spec(cluster: &DeclaredCluster) -> snow_api::ValidSpec {
    let text: Vec<String> = (cluster.objects().iter())
        .filter(|o| o["apiVersion"] == EKSA)
        .map(Value::to_string)
        .collect();
    snow_api::check(&text.join("\n---\n"))
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

/// Run by [`stored_cilium_needs_no_helm_on_path`] in a process whose PATH is an empty directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by stored_cilium_needs_no_helm_on_path with an empty PATH"]
async fn stored_cilium_brings_a_declared_cluster_to_ready() {
    use capi_render::stored_cilium::{NAMESPACE, StoredCilium};
    use snow_lifecycle::cni::stored::{Stored, store};
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        assert!(!dir.join("helm").exists(), "helm is on PATH in {dir:?}");
    }
    let s = setup().await;
    let ctx = s
        .context_with(controller::FIELD_MANAGER, CniSource::Stored)
        .await;
    let declared = edge(&[("md-0", 1)]);
    s.declare(&declared);
    let spec = declared_spec(&declared);
    let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(&spec, None).unwrap();
    let key = StoredCilium::for_cluster(&spec, &release).unwrap();

    // Nothing stored for the cluster's key: its status says which and what to run.
    resync_until(&ctx, &s, "the not-stored status", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "CiliumManifestNotStored")
    })
    .await;
    let message = eksa_cluster(&s).unwrap()["status"]["failureMessage"].clone();
    let message = message.as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("ConfigMap {NAMESPACE}/{}", key.name()))
            && message.contains("snowctl's `store cilium` command"),
        "{message}"
    );
    assert!(!ready(&s));

    // A ConfigMap of that name holding something else (a store of an older snowctl, a hand
    // edit) is said, never installed.
    let mut other = key.config_map("kind: Nothing\n").unwrap();
    other["metadata"]["annotations"] = json!({});
    s.put(other);
    resync_until(&ctx, &s, "the unusable status", |s| {
        eksa_cluster(s).is_some_and(|c| {
            (c["status"]["failureMessage"].as_str()).is_some_and(|m| m.contains("annotation"))
        })
    })
    .await;

    // Stored: the cluster comes up with it; a second store writes nothing.
    let mgmt = &ctx.mgmt;
    let manifest = include_str!("../../lifecycle/tests/fixtures/cilium.yaml");
    assert_eq!(store(mgmt, &key, manifest).await.unwrap(), Stored::Written);
    let writes = s.api.writes();
    assert_eq!(
        store(mgmt, &key, manifest).await.unwrap(),
        Stored::Unchanged
    );
    assert_eq!(s.api.writes(), writes);
    resync_until(&ctx, &s, "Ready", ready).await;
    assert_eq!(
        cilium_images(&s),
        (
            cilium().agent_image().to_owned(),
            cilium().operator_image().to_owned()
        )
    );
    // What is not a Cilium manifest is not stored.
    let err = store(mgmt, &key, "kind: ConfigMap\n").await.unwrap_err();
    assert!(err.to_string().contains("cannot store"), "{err}");
}

#[test]
fn stored_cilium_needs_no_helm_on_path() {
    let empty = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "stored_cilium_brings_a_declared_cluster_to_ready",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until the cluster's fingerprint differs from `was` (the watch has brought a change).
async fn changed_in_cache(
    caches: &controller::Caches,
    was: Option<u64>,
    cluster: impl Fn() -> Value,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while caches.cluster_fingerprint(&cluster()) == was {
        assert!(
            Instant::now() < deadline,
            "the change never reached the cache"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// GETs and LISTs, and writes, the stand-in has received so far.
fn reads_and_writes(s: &Setup) -> (u64, u64) {
    let counts = s.api.request_counts();
    let n = |verb: &str| counts.get(verb).copied().unwrap_or(0);
    (n("get") + n("list"), s.api.writes())
}

/// Issue 26: a resync through the caches of unchanged, Ready clusters makes no request at all
/// and no write; a change of one input (a MachineDeployment of one cluster, a SnowMachineConfig
/// of another) makes the pass run again for that cluster only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_resync_of_ready_clusters_makes_no_request_and_a_change_reruns_one() {
    const N: usize = 3;
    let s = setup().await;
    let names: Vec<String> = (0..N).map(|i| format!("c{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        let mut c = DeclaredCluster::new(name, 1);
        c.endpoint = format!("192.168.2.{}", 10 + i);
        s.declare(&c);
    }
    let ctx = s.context(controller::FIELD_MANAGER).await;
    let all_ready = |s: &Setup| {
        s.api
            .list(EKSA, "Cluster", Some("default"))
            .iter()
            .filter(|c| condition(c, "Ready").as_deref() == Some("True"))
            .count()
            == N
    };
    resync_until(&ctx, &s, "every cluster Ready", all_ready).await;
    // Nothing changes from here on but what the test changes.
    s.capi.pause();
    let caches = controller::Caches::start(ctx.mgmt.client(), None).await;
    tokio::time::timeout(Duration::from_secs(30), caches.ready())
        .await
        .expect("the caches list within 30 s");
    let metrics = controller::Metrics::default();
    // Passes run until one wrote nothing for every object (the first records the fingerprints).
    for _ in 0..5 {
        let pass = controller::resync_cached(&ctx, &caches, &metrics, 4).await;
        assert_eq!(pass.errors, 0);
        if pass.writes == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let unchanged = |kind: &str| metrics.reconciles(kind, controller::metrics::Ended::Unchanged);
    let passes = |kind: &str| metrics.reconciles(kind, controller::metrics::Ended::Success);

    let before = reads_and_writes(&s);
    let (u, p) = (unchanged("Cluster"), passes("Cluster"));
    let pass = controller::resync_cached(&ctx, &caches, &metrics, 4).await;
    assert_eq!(
        (pass.clusters, pass.machine_configs, pass.errors),
        (N, 2 * N, 0)
    );
    assert_eq!(reads_and_writes(&s), before, "GETs and LISTs, writes: none");
    assert_eq!(
        (unchanged("Cluster") - u, passes("Cluster") - p),
        (N as u64, 0)
    );

    // One cluster's MachineDeployment changes (its status, as CAPI's controller writes it).
    let c1 = |s: &Setup| s.api.get(EKSA, "Cluster", Some("default"), "c1").unwrap();
    let was = caches.cluster_fingerprint(&c1(&s));
    assert!(was.is_some(), "every input of a declared cluster is cached");
    let mut md = s
        .api
        .get(CORE, "MachineDeployment", Some(NS), "c1-md-0")
        .expect("md");
    md["status"]["observedGeneration"] =
        json!(md["metadata"]["generation"].as_i64().unwrap_or(1) + 7);
    s.put(md);
    changed_in_cache(&caches, was, || c1(&s)).await;
    let (reads, _) = reads_and_writes(&s);
    let (u, p) = (unchanged("Cluster"), passes("Cluster"));
    controller::resync_cached(&ctx, &caches, &metrics, 4).await;
    assert_eq!(
        (unchanged("Cluster") - u, passes("Cluster") - p),
        (N as u64 - 1, 1),
        "only c1's pass ran"
    );
    assert!(reads_and_writes(&s).0 > reads, "c1's pass read with GETs");

    // Another cluster's SnowMachineConfig changes: its check and that cluster's pass run.
    let c2 = |s: &Setup| s.api.get(EKSA, "Cluster", Some("default"), "c2").unwrap();
    let was = caches.cluster_fingerprint(&c2(&s));
    let mut config = s
        .api
        .get(EKSA, "SnowMachineConfig", Some("default"), "c2")
        .expect("config");
    config["metadata"]["labels"] = json!({"touched": "yes"});
    s.put(config);
    changed_in_cache(&caches, was, || c2(&s)).await;
    let (u, p) = (unchanged("Cluster"), passes("Cluster"));
    let checks = passes("SnowMachineConfig");
    controller::resync_cached(&ctx, &caches, &metrics, 4).await;
    assert_eq!(
        passes("SnowMachineConfig") - checks,
        1,
        "only c2's config was checked"
    );
    assert_eq!(
        (unchanged("Cluster") - u, passes("Cluster") - p),
        (N as u64 - 1, 1),
        "only c2's pass ran"
    );
    // Once the clusters have settled again (the label is part of the recorded spec: the pass
    // wrote, so the next one runs), a resync is again without a request.
    s.capi.resume();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let u = unchanged("Cluster");
        let pass = controller::resync_cached(&ctx, &caches, &metrics, 4).await;
        if pass.writes == 0 && unchanged("Cluster") - u == N as u64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the clusters never settled again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.capi.pause();
    let before = reads_and_writes(&s);
    controller::resync_cached(&ctx, &caches, &metrics, 4).await;
    assert_eq!(reads_and_writes(&s), before);
    let text = metrics.render();
    assert!(
        text.contains("snowctl_controller_reconciles_total{kind=\"Cluster\",result=\"unchanged\"}"),
        "{text}"
    );
}

/// The value of the metric line `name` (labels included) in a `/metrics` answer; 0 when absent.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

/// Issue 26: `/metrics` on the health port, in the Prometheus text format: the counters move as
/// the running controller reconciles a declared cluster to Ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_endpoint_counts_reconciles_writes_and_durations() {
    let s = setup().await;
    let ctx = Arc::new(s.context(controller::FIELD_MANAGER).await);
    let addr = free_addr();
    let options = RunOptions {
        concurrency: 2,
        health: Some(addr),
        leader: None,
        webhook: None,
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller::run(ctx, options, async move {
        let _ = rx.await;
    }));
    wait("health answers", async || {
        get(addr, "/readyz").await.contains("200 OK")
    })
    .await;
    let empty = get(addr, "/metrics").await;
    assert!(
        empty.contains("content-type: text/plain; version=0.0.4"),
        "{empty}"
    );
    assert_eq!(metric(&empty, "snowctl_controller_writes_total"), 0.0);
    s.declare(&edge(&[("md-0", 1)]));
    wait("the cluster Ready", async || ready(&s)).await;
    let success = "snowctl_controller_reconciles_total{kind=\"Cluster\",result=\"success\"}";
    let count = "snowctl_controller_reconcile_duration_seconds_count{kind=\"Cluster\"}";
    let text = get(addr, "/metrics").await;
    for line in [
        "# TYPE snowctl_controller_reconciles_total counter",
        "# TYPE snowctl_controller_reconcile_errors_total counter",
        "# TYPE snowctl_controller_reconcile_duration_seconds histogram",
        "# TYPE snowctl_controller_writes_total counter",
        "# TYPE snowctl_controller_queue_depth gauge",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    let reconciles = metric(&text, success);
    assert!(reconciles >= 1.0, "{text}");
    assert!(metric(&text, count) >= reconciles, "{text}");
    assert!(
        metric(&text, "snowctl_controller_writes_total") >= 3.0,
        "the finalizer, the objects, the status: {text}"
    );
    assert!(
        metric(
            &text,
            "snowctl_controller_reconciles_total{kind=\"SnowMachineConfig\",result=\"success\"}"
        ) >= 2.0,
        "{text}"
    );
    // A change of the Cluster is a new reconcile: the counter moves.
    let mut cluster = eksa_cluster(&s).unwrap();
    cluster["metadata"]["labels"] = json!({"moved": "yes"});
    s.put(cluster);
    wait("another Cluster reconcile", async || {
        metric(&get(addr, "/metrics").await, success) > reconciles
    })
    .await;
    let _ = tx.send(());
    task.await.unwrap().unwrap();
}

/// A context whose client is the installed controller's ServiceAccount, bound to `rules` (the
/// ClusterRole of `capi_render::controller`, or part of it): RBAC applies as on a cluster.
async fn service_account_context(
    s: &Setup,
    rules: Vec<Value>,
) -> (Context<Fleet>, tempfile::TempDir) {
    use capi_render::controller::{NAME, NAMESPACE, ReleaseFiles, objects};
    let component = capi_render::controller::ControllerComponent {
        image: "mirror:5000/snowctl/controller:v1".into(),
        proxy: None,
        release: ReleaseFiles::default(),
    };
    for mut object in objects(&component) {
        match object["kind"].as_str() {
            Some("ClusterRole") => object["rules"] = json!(rules),
            Some(
                "Namespace" | "ServiceAccount" | "ClusterRoleBinding" | "Role" | "RoleBinding",
            ) => {}
            _ => continue,
        }
        s.put(object);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("controller.kubeconfig");
    std::fs::write(
        &path,
        s.api.service_account_kubeconfig(NAMESPACE, NAME).unwrap(),
    )
    .unwrap();
    let ctx = Context {
        mgmt: Management::connect_for_watches(&snow_lifecycle::KubeconfigSource::file(&path))
            .await
            .unwrap(),
        inputs: snow_api::release::ReleaseInputs::embedded().unwrap(),
        devices: s.fleet.clone(),
        manager: controller::FIELD_MANAGER.into(),
        namespace: None,
        cni: CniSource::Manifest(cilium()),
    };
    (ctx, dir)
}

/// The installed controller's role suffices for a declared cluster to reach Ready through its
/// ServiceAccount's token, and a role without its status rule or without its CAPAS rule is
/// refused by the API server (the reconcile fails, the cluster does not become Ready): the
/// role, not a kinder stand-in, is what lets the controller work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_installed_role_suffices_and_a_missing_rule_is_refused() {
    let all = capi_render::controller::cluster_rules();
    for (left_out, what) in [
        ("clusters/status", "the status rule"),
        ("awssnowmachinetemplates", "the CAPAS rule"),
    ] {
        let s = setup().await;
        let rules: Vec<Value> = (all.iter())
            .filter(|r| {
                !r["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x == left_out)
            })
            .cloned()
            .collect();
        assert_eq!(rules.len(), all.len() - 1, "{what}");
        let (ctx, _dir) = service_account_context(&s, rules).await;
        s.declare(&edge(&[("md-0", 1)]));
        let pass = controller::resync(&ctx, 4).await.expect("resync");
        let said = eksa_cluster(&s)
            .map(|c| c["status"]["failureMessage"].to_string())
            .unwrap_or_default();
        assert!(
            pass.errors > 0,
            "without {what} a reconcile should be refused: {said}"
        );
        assert!(!ready(&s), "{what}");
    }
    let s = setup().await;
    let (ctx, _dir) = service_account_context(&s, all).await;
    s.declare(&edge(&[("md-0", 1)]));
    resync_until(&ctx, &s, "Ready through the ServiceAccount", ready).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_cluster_named_like_an_imported_one_is_refused_and_never_applied() {
    let s = setup().await;
    let ctx = s.context(controller::FIELD_MANAGER).await;
    s.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    // What `snowctl import cluster edge` records.
    s.put(json!({
        "apiVersion": INFRA, "kind": "AWSSnowCluster",
        "metadata": {"name": "edge", "namespace": NS, "annotations": {"cluster.x-k8s.io/managed-by": "snowctl"}},
        "spec": {"controlPlaneEndpoint": {"host": "192.168.1.50", "port": 6443}},
    }));
    s.put(json!({
        "apiVersion": CORE, "kind": "Cluster",
        "metadata": {"name": "edge", "namespace": NS, "labels": {"snowctl.anywhere.eks.amazonaws.com/imported": "true"}},
        "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowCluster", "name": "edge"}},
    }));
    s.declare(&edge(&[("md-0", 1)]));
    resync_until(&ctx, &s, "the refusal on the Cluster", |s| {
        eksa_cluster(s).is_some_and(|c| c["status"]["failureReason"] == "ImportedCluster")
    })
    .await;
    let status = eksa_cluster(&s).unwrap()["status"].clone();
    let message = status["failureMessage"].as_str().unwrap_or_default();
    assert!(message.contains("imported observe-only"), "{status:#}");
    assert!(names(&s, CORE, "MachineDeployment").is_empty());
    assert!(
        names(
            &s,
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane"
        )
        .is_empty()
    );
    let infra = s
        .api
        .get(INFRA, "AWSSnowCluster", Some(NS), "edge")
        .unwrap();
    assert!(infra["spec"]["identityRef"].is_null(), "{infra:#}");
}
