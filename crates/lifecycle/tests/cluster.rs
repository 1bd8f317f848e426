//! A workload cluster's create, upgrade and delete through `snow_lifecycle`, on the Kubernetes
//! API stand-in with its simulated Cluster API, kubeadm and CAPAS controllers (each cluster's
//! workload cluster a second stand-in whose Nodes are Ready only once a CNI DaemonSet runs).
//! Small clusters: one control-plane machine and one or two workers. What only the binary does
//! (exit codes, the lines it prints, flags) is tested in `crates/cli/tests/it/lifecycle.rs`.

mod common;

use serde_json::Value;
use snow_lifecycle::{
    ClusterRequest, CniManifest, CreateOptions, Created, DeleteOptions, Deleted, Event, Inventory,
    LifecycleError, Management, SecretInputs, Stage, UpgradeOptions, UpgradeOutcome, WaitOptions,
};
use snow_test_kube::{CapiHandle, KubeStandIn};
use std::time::Duration;

const NS: &str = "eksa-system";
const CORE: &str = "cluster.x-k8s.io/v1beta2";
const KCP: &str = "controlplane.cluster.x-k8s.io/v1beta2";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";
const CILIUM: &str = include_str!("fixtures/cilium.yaml");

/// A management cluster: the stand-in with Cluster API, CAPAS and etcdadm installed and their
/// simulated controllers running, and the device files the identity Secret is rendered from.
struct Site {
    api: KubeStandIn,
    capi: CapiHandle,
    mgmt: Management,
    credentials: snow_credentials::CredentialsFile,
    ca_bundle: snow_credentials::CaBundle,
    _dir: tempfile::TempDir,
}

async fn site() -> Site {
    let (api, capi) = common::with_capi().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, mgmt) = common::connect(&api, dir.path()).await;
    let ini = "[192.168.1.11]\naws_access_key_id = AKIDCLUSTERTEST0\naws_secret_access_key = secretCLUSTERtest0xyz\nregion = snow\n\n[192.168.1.12]\naws_access_key_id = AKIDCLUSTERTEST1\naws_secret_access_key = secretCLUSTERtest1xyz\nregion = snow\n";
    let (credentials, _) = snow_credentials::CredentialsFile::parse("credentials", ini.into());
    // Any certificate serves as the devices' CA bundle here: CAPAS is simulated.
    let pem = api.certificate_pem().as_bytes().to_vec();
    let (ca_bundle, _) = snow_credentials::CaBundle::parse("ca-bundle.pem", pem);
    Site {
        api,
        capi,
        mgmt,
        credentials,
        ca_bundle,
        _dir: dir,
    }
}

/// Bounded waits, so a stage that never finishes fails the test rather than hanging it.
fn wait() -> WaitOptions {
    let mut wait = WaitOptions {
        poll: Duration::from_millis(20),
        ..WaitOptions::default()
    };
    wait.timeouts.control_plane = Some(Duration::from_secs(60));
    wait.timeouts.per_machine = Some(Duration::from_secs(60));
    wait.timeouts.deletion = Some(Duration::from_secs(60));
    wait
}

fn cni() -> Option<CniManifest> {
    Some(CniManifest::parse(CILIUM).expect("fixture"))
}

/// Runs `work` with the request of spec `text` (read, checked and resolved against the embedded
/// catalog), the site's device files for the identity Secret, and the events recorded.
async fn with_request<T>(
    site: &Site,
    text: &str,
    work: impl AsyncFnOnce(&ClusterRequest<'_>, &mut dyn FnMut(Event)) -> T,
) -> (T, Vec<Event>) {
    let spec = snow_api::check(text)
        .expect("spec reads")
        .into_valid()
        .unwrap_or_else(|r| panic!("spec findings: {:?}", r.findings));
    let inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
    let release = inputs.resolve(&spec, None).expect("release");
    let request = ClusterRequest {
        spec: &spec,
        spec_text: text,
        release: &release,
        secrets: Some(SecretInputs {
            credentials: &site.credentials,
            ca_bundle: &site.ca_bundle,
        }),
        default_ssh_key_name: None,
        registry_credentials: None,
    };
    let mut events = Vec::new();
    let done = work(&request, &mut |e| events.push(e)).await;
    (done, events)
}

async fn create(site: &Site, text: &str) -> (Result<Created, LifecycleError>, Vec<Event>) {
    let options = CreateOptions {
        wait: wait(),
        cni: cni(),
    };
    with_request(site, text, async |req, on_event| {
        snow_lifecycle::create(&site.mgmt, req, &options, on_event).await
    })
    .await
}

async fn upgrade(
    site: &Site,
    text: &str,
    dry_run: bool,
) -> (Result<UpgradeOutcome, LifecycleError>, Vec<Event>) {
    let options = UpgradeOptions {
        wait: wait(),
        dry_run,
        cni: cni(),
        backup: None,
    };
    with_request(site, text, async |req, on_event| {
        snow_lifecycle::upgrade(&site.mgmt, req, &options, on_event).await
    })
    .await
}

async fn delete(site: &Site) -> Result<Deleted, LifecycleError> {
    let options = DeleteOptions { wait: wait() };
    snow_lifecycle::delete(&site.mgmt, "edge", &options, &mut |_| {}).await
}

/// Every object of cluster `edge` in eksa-system (labelled with it, or named after it) as
/// `Kind/name` with its generation, sorted.
fn cluster_objects(api: &KubeStandIn) -> Vec<(String, Value)> {
    let mut found: Vec<(String, Value)> = (api.objects().into_iter())
        .filter(|o| o["metadata"]["namespace"] == NS)
        .filter(|o| {
            let name = o["metadata"]["name"].as_str().unwrap_or_default();
            o["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "edge"
                || name.starts_with("edge")
        })
        .map(|o| {
            let (kind, name) = (&o["kind"], &o["metadata"]["name"]);
            let id = format!("{}/{}", kind.as_str().unwrap(), name.as_str().unwrap());
            (id, o["metadata"]["generation"].clone())
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The names of the Machines a selector label picks (`control-plane`, or a deployment's).
fn machines(api: &KubeStandIn, label: &str, value: Option<&str>) -> Vec<String> {
    let mut names: Vec<String> = (api.list(CORE, "Machine", Some(NS)).iter())
        .filter(|m| match value {
            Some(value) => m["metadata"]["labels"][label] == value,
            None => m["metadata"]["labels"][label].is_string(),
        })
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn control_plane(api: &KubeStandIn) -> Vec<String> {
    machines(api, "cluster.x-k8s.io/control-plane", None)
}

fn workers(api: &KubeStandIn) -> Vec<String> {
    machines(api, "cluster.x-k8s.io/deployment-name", Some("edge-md-0"))
}

/// The workload cluster's Nodes, each with whether it is Ready.
fn nodes(capi: &CapiHandle) -> Vec<(String, bool)> {
    let workload = capi.workload("edge").expect("a workload cluster");
    let mut nodes: Vec<(String, bool)> = (workload.list("v1", "Node", None).iter())
        .map(|n| {
            let ready = (n["status"]["conditions"].as_array().into_iter().flatten())
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            (n["metadata"]["name"].as_str().unwrap().to_owned(), ready)
        })
        .collect();
    nodes.sort();
    nodes
}

/// The stages whose wait finished, in order.
fn ready_stages(events: &[Event]) -> Vec<Stage> {
    (events.iter())
        .filter_map(|e| match e {
            Event::Ready { stage, .. } => Some(stage.clone()),
            _ => None,
        })
        .collect()
}

fn decode(text: &str) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64");
    String::from_utf8(bytes).expect("UTF-8")
}

/// Catches: an object not applied (or applied by another field manager), the identity Secret or
/// the inventory missing, Cilium not installed on the workload cluster (its Nodes never Ready),
/// a wait skipped or out of EKS Anywhere's order, a kubeconfig other than the published one;
/// on the second run, anything applied anew or changed (a generation moves) or duplicated (a
/// machine more), or the run not recognising the cluster it made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_applies_installs_cilium_waits_until_ready_and_a_rerun_changes_nothing() {
    let site = site().await;
    let text = common::edge_spec(1, 1);
    let (created, events) = create(&site, &text).await;
    let created = created.expect("created");
    assert!(!created.existed);

    // The objects, applied server-side by snowctl alone, and recorded in the inventory.
    let kcp = (site.api.get(KCP, "KubeadmControlPlane", Some(NS), "edge")).expect("KCP applied");
    let managers: Vec<&str> = (kcp["metadata"]["managedFields"].as_array().unwrap().iter())
        .filter(|f| f["operation"] == "Apply")
        .filter_map(|f| f["manager"].as_str())
        .collect();
    assert_eq!(managers, [snow_lifecycle::FIELD_MANAGER]);
    for (api_version, kind, name) in [
        (CORE, "Cluster", "edge"),
        (CORE, "MachineDeployment", "edge-md-0"),
        (INFRA, "AWSSnowCluster", "edge"),
        (INFRA, "AWSSnowMachineTemplate", "edge-control-plane-1"),
        (INFRA, "AWSSnowMachineTemplate", "edge-md-0-1"),
    ] {
        assert!(
            site.api.get(api_version, kind, Some(NS), name).is_some(),
            "{kind}/{name} not applied"
        );
    }
    let identity = (site
        .api
        .get("v1", "Secret", Some(NS), "edge-snow-credentials"))
    .expect("the identity Secret is applied from the device files");
    // CAPAS reads base64 text of the INI as the value (EKS Anywhere's encoding): decoded twice.
    let credentials = decode(identity["data"]["credentials"].as_str().unwrap());
    assert!(
        decode(credentials.trim()).contains("aws_access_key_id = AKIDCLUSTERTEST0"),
        "{credentials}"
    );
    let inventory = (Inventory::load(&site.mgmt, "edge").await.unwrap()).expect("an inventory");
    assert_eq!(inventory.spec, text, "the spec as written is recorded");
    for object in &created.objects {
        assert!(inventory.objects.contains(object), "{object} not recorded");
    }
    assert!(created.objects.len() >= 10, "{:?}", created.objects);

    // Cilium on the workload cluster; every Node Ready; the waits in EKS Anywhere's order.
    let workload = site.capi.workload("edge").expect("a workload cluster");
    let cilium = workload.get("apps/v1", "DaemonSet", Some("kube-system"), "cilium");
    assert!(
        cilium.is_some(),
        "Cilium is applied on the workload cluster"
    );
    assert_eq!(
        nodes(&site.capi).iter().filter(|(_, ready)| *ready).count(),
        2,
        "{:?}",
        nodes(&site.capi)
    );
    let stages = ready_stages(&events);
    let order = [
        Stage::ControlPlaneInitialized,
        Stage::Cni("DaemonSet kube-system/cilium".into()),
        Stage::ControlPlane,
        Stage::Workers("md-0".into()),
        Stage::Cluster,
    ];
    let positions: Vec<Option<usize>> = (order.iter())
        .map(|s| stages.iter().position(|seen| seen == s))
        .collect();
    assert!(
        positions.iter().all(Option::is_some) && positions.is_sorted(),
        "{stages:?}"
    );
    let cluster = site.api.get(CORE, "Cluster", Some(NS), "edge").unwrap();
    let conditions = cluster["status"]["conditions"].as_array().unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True"),
        "{conditions:?}"
    );

    // The kubeconfig is the one Cluster API published.
    let secret = (site.api.get("v1", "Secret", Some(NS), "edge-kubeconfig")).unwrap();
    assert_eq!(
        created.kubeconfig,
        decode(secret["data"]["value"].as_str().unwrap())
    );

    // Again: the same cluster, nothing applied anew or changed, no machine more.
    let (before, cp, md) = (
        cluster_objects(&site.api),
        control_plane(&site.api),
        workers(&site.api),
    );
    assert_eq!((cp.len(), md.len()), (1, 1));
    let (again, _) = create(&site, &text).await;
    let again = again.expect("converges");
    assert!(again.existed, "the second run did not see the cluster");
    assert_eq!(again.objects, created.objects);
    assert_eq!(again.kubeconfig, created.kubeconfig);
    assert_eq!(cluster_objects(&site.api), before);
    assert_eq!((control_plane(&site.api), workers(&site.api)), (cp, md));
}

/// Catches: a dry run that writes, or whose plan says no machine rolls when a new Kubernetes
/// version replaces them all (it did: only template renames were listed); a Kubernetes version
/// or machine count that is not applied, machines not replaced (the control plane's and the
/// workers', by machines of the new version) or not waited for (a Node not Ready, an old machine
/// left when the call returns), the new spec not recorded; an immutable change that is applied,
/// refused without naming its field, or refused after a write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_rolls_a_new_kubernetes_version_and_count_and_refuses_an_immutable_change() {
    let site = site().await;
    let text = common::edge_spec(1, 1);
    create(&site, &text).await.0.expect("created");
    let (old_cp, old_md) = (control_plane(&site.api), workers(&site.api));

    // Kubernetes 1.33 → 1.34 and a second worker.
    let newer = common::edge_spec(1, 2)
        .replace("kubernetesVersion: \"1.33\"", "kubernetesVersion: \"1.34\"");
    assert_ne!(newer, common::edge_spec(1, 2));

    // A dry run says what would change and writes nothing.
    let writes = site.api.writes();
    let (planned, _) = upgrade(&site, &newer, true).await;
    let planned = planned.expect("planned");
    assert!(!planned.applied);
    assert_eq!(site.api.writes(), writes, "a dry run wrote");
    // A new Kubernetes version renames no template here (the rendered templates are the same),
    // yet Cluster API replaces every machine: the plan says so.
    let rolling: Vec<&str> = (planned.changes.iter())
        .map(|c| c.object.as_str())
        .collect();
    for object in ["KubeadmControlPlane/edge", "MachineDeployment/edge-md-0"] {
        assert!(
            rolling.contains(&object),
            "{object} not planned: {rolling:?}"
        );
    }
    let lines = planned.plan_lines();
    assert!(
        !lines.iter().any(|l| l.contains("no machine will roll")),
        "{lines:?}"
    );
    let kcp = (planned.objects.iter()).find(|o| o.kind == "KubeadmControlPlane");
    assert!(
        kcp.is_some_and(|k| k.yaml.contains("version: v1.34.")),
        "{kcp:?}"
    );

    let (done, events) = upgrade(&site, &newer, false).await;
    let done = done.expect("upgraded");
    assert!(done.applied && done.removed_groups.is_empty(), "{done:?}");
    let kcp = (site.api.get(KCP, "KubeadmControlPlane", Some(NS), "edge")).unwrap();
    assert!(
        kcp["spec"]["version"]
            .as_str()
            .unwrap()
            .starts_with("v1.34."),
        "{:#}",
        kcp["spec"]
    );
    let md = (site
        .api
        .get(CORE, "MachineDeployment", Some(NS), "edge-md-0"))
    .unwrap();
    assert_eq!(md["spec"]["replicas"], 2);
    // Every machine was replaced by one of the new version, and waited for.
    let (cp, md) = (control_plane(&site.api), workers(&site.api));
    assert_eq!((cp.len(), md.len()), (1, 2), "{cp:?} {md:?}");
    assert!(
        cp.iter()
            .chain(&md)
            .all(|m| !old_cp.contains(m) && !old_md.contains(m))
    );
    for machine in site.api.list(CORE, "Machine", Some(NS)) {
        let version = machine["spec"]["version"].as_str().unwrap_or_default();
        assert!(version.starts_with("v1.34."), "{:#}", machine["spec"]);
    }
    let nodes = nodes(&site.capi);
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert!(nodes.iter().all(|(_, ready)| *ready), "{nodes:?}");
    assert!(
        ready_stages(&events).contains(&Stage::Workers("md-0".into())),
        "the rollout was not waited for"
    );
    let inventory = Inventory::load(&site.mgmt, "edge").await.unwrap().unwrap();
    assert_eq!(inventory.spec, newer, "the upgraded spec is recorded");

    // A new endpoint cannot be applied to an existing cluster: refused, nothing written.
    let moved = newer.replace("192.168.1.100", "192.168.1.101");
    let writes = site.api.writes();
    let (refused, _) = upgrade(&site, &moved, false).await;
    let Err(LifecycleError::Rejected { cluster, findings }) = refused else {
        panic!("not refused: {refused:?}")
    };
    assert_eq!(cluster, "edge");
    assert!(
        (findings.iter())
            .any(|f| f.field.as_deref() == Some("spec.controlPlaneConfiguration.endpoint.host")),
        "{findings:?}"
    );
    assert_eq!(site.api.writes(), writes, "a refused upgrade wrote");
    let infra = (site.api.get(INFRA, "AWSSnowCluster", Some(NS), "edge")).unwrap();
    assert_eq!(
        infra["spec"]["controlPlaneEndpoint"]["host"],
        "192.168.1.100"
    );
}

/// Catches: a delete that leaves an object of the cluster (a template, the identity Secret, the
/// inventory, the kubeconfig Secret, a machine), returns before the machines are gone, or takes a
/// second delete of a missing cluster for an error or for a found one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_removes_every_object_and_machine_and_a_missing_cluster_is_not_an_error() {
    let site = site().await;
    create(&site, &common::edge_spec(1, 1))
        .await
        .0
        .expect("created");
    let made = cluster_objects(&site.api);
    assert!(made.len() >= 10, "{made:?}");

    let deleted = delete(&site).await.expect("deleted");
    assert!(deleted.found);
    assert!(
        deleted.kept.is_empty() && deleted.leftovers.is_empty(),
        "{deleted:?}"
    );
    // What Cluster API's garbage collection does not remove (the Cluster owns the rest).
    assert!(
        (deleted.removed.iter()).any(|r| r == "Secret/edge-snow-credentials"),
        "{deleted:?}"
    );
    assert_eq!(cluster_objects(&site.api), Vec::new());
    assert!(site.api.list(CORE, "Machine", Some(NS)).is_empty());
    assert!(Inventory::load(&site.mgmt, "edge").await.unwrap().is_none());

    let again = delete(&site).await.expect("nothing to delete is no error");
    assert!(!again.found, "{again:?}");
    assert!(again.removed.is_empty(), "{again:?}");
}
