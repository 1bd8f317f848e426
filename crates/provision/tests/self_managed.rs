//! The first cluster from nothing, end to end on two Kubernetes API stand-ins: the bootstrap
//! cluster (its simulated Cluster API publishes `edge-kubeconfig` pointing at the second one)
//! and the new cluster (which runs the simulated controllers too, so once the objects move it
//! reconciles itself). The real `kubectl` reads the moved cluster on the target.

// Progress goes to stderr: the test harness shows it when a test fails.
#![allow(clippy::print_stderr)]

mod support;

use serde_json::Value;
use snow_lifecycle::{
    Event, Inventory, Management, MoveOptions, WaitOptions, bootstrap::Existing, init::InitOptions,
};
use snow_provision::{
    Checks, CniSource, CreateOptions, DevicePaths, ProvisionError, Request,
    self_managed::{self, Options, SelfManaged},
};
use snow_test_devices::TestCa;
use snow_test_kube::{CapiHandle, CapiOptions, KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::{net::IpAddr, path::PathBuf, sync::Arc, time::Duration};

const NS: &str = "eksa-system";

/// The spec created: three control-plane machines and two workers, on one device.
fn spec() -> String {
    snow_test_kube::edge_spec::EdgeSpec {
        devices: &["192.168.1.11"],
        ..Default::default()
    }
    .yaml()
}

/// The two stand-ins and the files of a run.
struct Site {
    boot: KubeStandIn,
    target: Arc<KubeStandIn>,
    boot_capi: CapiHandle,
    _target_capi: CapiHandle,
    _boot_workloads: WorkloadHandle,
    dir: tempfile::TempDir,
    boot_kubeconfig: PathBuf,
    credentials: snow_credentials::CredentialsFile,
    ca_bundle: snow_credentials::CaBundle,
}

async fn site() -> Site {
    let target = Arc::new(KubeStandIn::start().await.expect("target"));
    let boot = KubeStandIn::start().await.expect("bootstrap");
    let step = Duration::from_millis(20);
    let boot_workloads = boot.start_workloads(WorkloadOptions::default());
    let boot_capi = boot.start_capi(CapiOptions {
        step,
        workload: Some(target.clone()),
        ..CapiOptions::default()
    });
    // Self-managed: the new cluster's own controllers act on its own API server, once the
    // providers are installed there (as on a real cluster: nothing reconciles before init).
    let target_capi = target.start_capi(CapiOptions {
        step,
        workload: Some(target.clone()),
        require_providers: true,
        ..CapiOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let boot_kubeconfig = boot.write_kubeconfig(dir.path()).unwrap();
    let ca = TestCa::new("devices").unwrap();
    let cert = ca
        .server_certificate("192.168.1.11".parse::<IpAddr>().unwrap())
        .unwrap();
    let (creds, bundle) = (dir.path().join("credentials"), dir.path().join("ca.pem"));
    std::fs::write(&creds, "[192.168.1.11]\naws_access_key_id = AKIDSELFMANAGED0\naws_secret_access_key = secretSELFmanagedKEY\nregion = snow\n").unwrap();
    std::fs::write(&bundle, cert.cert_pem).unwrap();
    let (credentials, _) = snow_credentials::load_credentials(&creds).unwrap();
    let (ca_bundle, _) = snow_credentials::load_ca_bundle(&bundle).unwrap();
    Site {
        boot,
        target,
        boot_capi,
        _target_capi: target_capi,
        _boot_workloads: boot_workloads,
        dir,
        boot_kubeconfig,
        credentials,
        ca_bundle,
    }
}

fn options() -> Options {
    let cilium = include_str!("../../lifecycle/tests/fixtures/cilium.yaml");
    Options {
        create: CreateOptions {
            checks: Checks::Skip,
            cni: CniSource::Manifest(snow_lifecycle::CniManifest::parse(cilium).expect("fixture")),
            wait: WaitOptions {
                poll: Duration::from_millis(20),
                timeouts: snow_lifecycle::Timeouts {
                    control_plane: Some(Duration::from_secs(60)),
                    external_etcd: Some(Duration::from_secs(60)),
                    per_machine: Some(Duration::from_secs(60)),
                    deletion: Some(Duration::from_secs(60)),
                },
            },
            force: false,
        },
        components: support::providers(),
        init: InitOptions {
            crd_timeout: Duration::from_secs(20),
            deployment_timeout: Some(Duration::from_secs(20)),
            poll: Duration::from_millis(20),
        },
        moving: MoveOptions {
            settle: Duration::from_millis(300),
            settle_timeout: Duration::from_secs(20),
            ..MoveOptions::default()
        },
        controller: None,
        keep_bootstrap: false,
    }
}

type Run = (Option<Result<SelfManaged, ProvisionError>>, Vec<String>);

/// Runs the create with `tweak`ed options; with `stop_at`, drops it (as a kill would) when that
/// step begins.
async fn run(site: &Site, stop_at: Option<&str>, tweak: impl FnOnce(&mut Options)) -> Run {
    let text = spec();
    let spec = snow_api::check(&text)
        .expect("spec reads")
        .into_valid()
        .unwrap_or_else(|r| panic!("spec findings: {:?}", r.findings));
    let inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
    let release = inputs.resolve(&spec, None).expect("release");
    let req = Request {
        spec: &spec,
        spec_text: &text,
        release: &release,
        secrets: Some(capi_render::SecretInputs {
            credentials: &site.credentials,
            ca_bundle: &site.ca_bundle,
        }),
        registry_credentials: None,
        devices: DevicePaths::default(),
        inputs: None,
        dir: site.dir.path(),
    };
    let bootstrap = Existing::new(&site.boot_kubeconfig, None);
    let mut opts = options();
    tweak(&mut opts);
    until_step(stop_at, async |on_event| {
        self_managed::create(&bootstrap, &req, &opts, on_event).await
    })
    .await
}

/// Runs `work`, its steps recorded; with `stop_at`, drops it (as a kill would) when that step
/// begins.
async fn until_step<T>(
    stop_at: Option<&str>,
    work: impl AsyncFnOnce(&mut dyn FnMut(Event)) -> T,
) -> (Option<T>, Vec<String>) {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let mut steps = Vec::new();
    let mut on_event = |e: Event| {
        eprintln!("{e}");
        if let Event::Step(text) = &e {
            if Some(text.as_str()) == stop_at {
                let _ = stop.send(true);
            }
            steps.push(text.clone());
        }
    };
    let result = tokio::select! {
        done = work(&mut on_event) => Some(done),
        _ = stopped.wait_for(|s| *s) => None,
    };
    (result, steps)
}

fn clusters(api: &KubeStandIn) -> Vec<Value> {
    api.list("cluster.x-k8s.io/v1beta1", "Cluster", Some(NS))
}

/// The end state: the target holds the Cluster (unpaused), its inventory, the identity Secret
/// and the EKS-A objects; the bootstrap cluster holds nothing of the cluster; the real kubectl
/// lists it with the cluster's own kubeconfig.
async fn assert_self_managed(site: &Site) {
    assert!(clusters(&site.boot).is_empty(), "left on the bootstrap");
    let moved = clusters(&site.target);
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_ne!(moved[0]["spec"]["paused"], true, "unpaused on the target");
    let kubeconfig = site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let mgmt = Management::connect(&snow_lifecycle::KubeconfigSource::file(&kubeconfig))
        .await
        .expect("its own kubeconfig");
    assert!(Inventory::load(&mgmt, "edge").await.unwrap().is_some());
    let eksa = site.target.list(
        "anywhere.eks.amazonaws.com/v1alpha1",
        "Cluster",
        Some("default"),
    );
    assert_eq!(eksa.len(), 1, "the spec is recorded on the cluster");
    // EKS Anywhere's create ends by removing `managed-by-cli` (resuming its controller's
    // reconcile): the recorded Cluster is the controller's to manage.
    assert!(
        eksa[0]["metadata"]["annotations"]["anywhere.eks.amazonaws.com/managed-by-cli"].is_null(),
        "{:?}",
        eksa[0]["metadata"]
    );
    // The Cilium manifest for a `--cni-stored` controller is on the cluster that manages.
    let label = "snowctl.anywhere.eks.amazonaws.com/cilium-manifest";
    let stored = |api: &KubeStandIn| {
        (api.list("v1", "ConfigMap", Some(NS)).iter())
            .filter(|c| c["metadata"]["labels"][label] == "true")
            .count()
    };
    assert_eq!((stored(&site.target), stored(&site.boot)), (1, 0));
    let secrets = site.target.list("v1", "Secret", Some(NS));
    assert!(
        secrets
            .iter()
            .any(|s| s["metadata"]["name"] == "edge-snow-credentials"),
        "the identity Secret is on the cluster"
    );
    // The Secret the SnowDatacenterConfig's identityRef names (defaulted: `edge-snow-credentials`
    // in the datacenter's namespace), in EKS Anywhere's encoding (base64 text as the value),
    // from which a controller on the cluster reads the device credentials.
    let identity = site
        .target
        .get("v1", "Secret", Some("default"), "edge-snow-credentials")
        .expect("the datacenter's identity Secret is on the cluster");
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    for key in ["credentials", "ca-bundle"] {
        let outer = engine
            .decode(identity["data"][key].as_str().expect(key))
            .expect("base64");
        assert!(
            engine.decode(&outer).is_ok(),
            "`{key}` holds base64 text, as EKS Anywhere writes it"
        );
    }
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["get", "clusters.cluster.x-k8s.io", "-A"])
        .output()
        .expect("kubectl runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(NS) && l.contains("edge")),
        "{stdout}"
    );
}

const STEPS: [&str; 8] = [
    "Creating new bootstrap cluster",
    "Provider specific pre-capi-install-setup on bootstrap cluster",
    "Installing cluster-api providers on bootstrap cluster",
    "Creating new management cluster",
    "Installing cluster-api providers on management cluster",
    "Installing EKS-A secrets on management cluster",
    "Moving the cluster management components from the bootstrap cluster to the management cluster",
    "Moving cluster spec to workload cluster",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_cluster_is_created_from_a_bootstrap_cluster_and_manages_itself() {
    let site = site().await;
    let (result, steps) = run(&site, None, |_| {}).await;
    let made = result.expect("ran").expect("created");
    assert!(!made.resumed_after_move);
    let seen: Vec<&str> = steps
        .iter()
        .map(String::as_str)
        .filter(|s| STEPS.contains(s))
        .collect();
    assert_eq!(seen, STEPS, "one line per step, in EKS Anywhere's order");
    assert_self_managed(&site).await;
    // Run again: it finds the cluster moved and only redoes the last step.
    let (again, steps) = run(&site, None, |_| {}).await;
    assert!(again.expect("ran").expect("converges").resumed_after_move);
    assert!(
        !steps.iter().any(|s| s == "Creating new management cluster"),
        "{steps:?}"
    );
    assert_self_managed(&site).await;
}

/// Issue 25: the spec was applied once the group served some kind, not once each CRD was
/// Established; on an API server that establishes a CRD a moment after creating it, the
/// SnowDatacenterConfig got 404. Here its CRD is Established 1 s after creation, the others at
/// once: the objects are applied only after it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spec_waits_for_each_eksa_crd_to_be_established() {
    let site = site().await;
    site.target.establish_after(
        "snowdatacenterconfigs.anywhere.eks.amazonaws.com",
        Duration::from_secs(1),
    );
    let (result, _) = run(&site, None, |_| {}).await;
    result.expect("ran").expect("created");
    assert_self_managed(&site).await;
    let datacenter = site.target.get(
        "anywhere.eks.amazonaws.com/v1alpha1",
        "SnowDatacenterConfig",
        Some("default"),
        "edge",
    );
    assert!(datacenter.is_some(), "the SnowDatacenterConfig is recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_killed_during_each_step_in_turn_resumes_to_the_same_end() {
    let site = site().await;
    // The steps, and inside the move the moment between the source's deletion and the
    // target's unpause.
    let unpause = "Unpausing cluster edge on the target";
    let kills = STEPS[1..7].iter().chain([&unpause, &STEPS[7]]);
    for step in kills {
        let (result, steps) = run(&site, Some(step), |_| {}).await;
        assert!(result.is_none(), "not stopped at {step}: {steps:?}");
        assert!(steps.iter().any(|s| s == step), "{step}: {steps:?}");
    }
    let (result, _) = run(&site, None, |_| {}).await;
    result.expect("ran").expect("resumed to the end");
    assert_self_managed(&site).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_says_what_is_left_and_a_re_run_finishes() {
    let site = site().await;
    // The new cluster's control plane never comes up: the create step times out.
    let stall = ("KubeadmControlPlane".to_owned(), "edge".to_owned());
    site.boot_capi.set_stall(vec![stall]);
    let (result, _) = run(&site, None, |o| {
        o.create.wait.timeouts.control_plane = Some(Duration::from_secs(2));
    })
    .await;
    let err = result.expect("ran").expect_err("never ready");
    let ProvisionError::Interrupted { step, left, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(step, "Creating new management cluster");
    assert!(left.contains("Run the same command again"), "{left}");
    assert!(clusters(&site.target).is_empty(), "nothing moved yet");
    site.boot_capi.set_stall(Vec::new());
    let (result, _) = run(&site, None, |_| {}).await;
    result.expect("ran").expect("resumed");
    assert_self_managed(&site).await;
}

const DELETE_STEPS: [&str; 4] = [
    "Creating new bootstrap cluster",
    "Installing cluster-api providers on bootstrap cluster",
    "Moving cluster management from workload to bootstrap cluster",
    "Deleting workload cluster",
];

/// Deletes the self-managed cluster through its own kubeconfig; with `stop_at`, drops the
/// delete (as a kill would) when that step begins.
async fn run_delete(
    site: &Site,
    stop_at: Option<&str>,
) -> (
    Option<Result<snow_lifecycle::Deleted, ProvisionError>>,
    Vec<String>,
) {
    let bootstrap = Existing::new(&site.boot_kubeconfig, None);
    let create = options();
    let opts = self_managed::DeleteOptions {
        components: create.components,
        init: create.init,
        moving: create.moving,
        delete: snow_lifecycle::DeleteOptions {
            wait: create.create.wait,
        },
        keep_bootstrap: false,
    };
    let kubeconfig = site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    until_step(stop_at, async |on_event| {
        self_managed::delete(
            &bootstrap,
            &snow_lifecycle::KubeconfigSource::file(&kubeconfig),
            "edge",
            &opts,
            on_event,
        )
        .await
    })
    .await
}

/// Nothing of the cluster is left: no Cluster on either side, no machine's Node on the cluster.
fn assert_deleted(site: &Site) {
    assert!(clusters(&site.boot).is_empty(), "on the bootstrap");
    assert!(clusters(&site.target).is_empty(), "on the cluster itself");
    for api in [&site.boot, &*site.target] {
        let machines = api.list("cluster.x-k8s.io/v1beta1", "Machine", Some(NS));
        assert!(machines.is_empty(), "{machines:?}");
    }
    let nodes = site.target.list("v1", "Node", None);
    assert!(nodes.is_empty(), "every machine gone: {nodes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_managed_cluster_is_deleted_back_to_nothing_and_a_killed_delete_resumes() {
    let site = site().await;
    let (result, _) = run(&site, None, |_| {}).await;
    result.expect("ran").expect("created");
    let kubeconfig = site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let own = Management::connect(&snow_lifecycle::KubeconfigSource::file(&kubeconfig))
        .await
        .unwrap();
    assert!(self_managed::is_self_managed(&own, "edge").await.unwrap());
    let boot = Management::connect(&snow_lifecycle::KubeconfigSource::file(
        &site.boot_kubeconfig,
    ))
    .await
    .unwrap();
    assert!(
        !self_managed::is_self_managed(&boot, "edge").await.unwrap(),
        "the bootstrap cluster does not hold it"
    );
    // Killed as each step begins, then run to the end.
    for step in &DELETE_STEPS[1..] {
        let (result, steps) = run_delete(&site, Some(step)).await;
        assert!(result.is_none(), "not stopped at {step}: {steps:?}");
    }
    let (result, steps) = run_delete(&site, None).await;
    let deleted = result.expect("ran").expect("deleted");
    assert!(deleted.found, "{deleted:?}");
    assert!(steps.iter().any(|s| s == "Deleting workload cluster"));
    assert_deleted(&site);
    // Again, the cluster answering still (a stand-in outlives its machines), then gone as a
    // real one is: nothing left to do, and it says so without failing.
    let (result, _) = run_delete(&site, None).await;
    assert!(!result.expect("ran").expect("converges").found);
    site.target.stop();
    let (result, _) = run_delete(&site, None).await;
    assert!(!result.expect("ran").expect("converges").found);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_still_manages_another_is_not_deleted() {
    let site = site().await;
    let (result, _) = run(&site, None, |_| {}).await;
    result.expect("ran").expect("created");
    // A workload cluster the new cluster manages (its objects as create leaves them).
    let other = serde_json::json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "shop-1", "namespace": NS, "annotations": {"cluster.x-k8s.io/paused": "test"}},
        "spec": {"paused": true},
    });
    site.target.put(other).unwrap();
    let writes = site.target.writes();
    let (result, steps) = run_delete(&site, None).await;
    let err = result.expect("ran").expect_err("refused");
    let ProvisionError::StillManages { others, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(others, &["eksa-system/shop-1"]);
    assert!(err.to_string().contains("eksa-system/shop-1"), "{err}");
    assert!(steps.is_empty(), "nothing began: {steps:?}");
    assert_eq!(site.target.writes(), writes, "nothing changed");
    assert_eq!(clusters(&site.target).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_managed_cluster_upgrades_itself() {
    let site = site().await;
    let (result, _) = run(&site, None, |_| {}).await;
    result.expect("ran").expect("created");
    // One more worker, applied through the cluster's own kubeconfig: its own (simulated)
    // controllers scale its own machines.
    let spec_text = spec().replacen("count: 2", "count: 3", 1);
    let spec = snow_api::check(&spec_text)
        .expect("spec reads")
        .into_valid()
        .unwrap_or_else(|r| panic!("spec findings: {:?}", r.findings));
    let inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
    let release = inputs.resolve(&spec, None).expect("release");
    let req = Request {
        spec: &spec,
        spec_text: &spec_text,
        release: &release,
        secrets: Some(capi_render::SecretInputs {
            credentials: &site.credentials,
            ca_bundle: &site.ca_bundle,
        }),
        registry_credentials: None,
        devices: DevicePaths::default(),
        inputs: Some(&inputs),
        dir: site.dir.path(),
    };
    let opts = options();
    let upgrade = snow_provision::UpgradeOptions {
        checks: Checks::Skip,
        cni: opts.create.cni.clone(),
        wait: opts.create.wait,
        dry_run: false,
        backup: false,
    };
    let kubeconfig = site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let outcome = snow_provision::upgrade(
        &snow_lifecycle::KubeconfigSource::file(&kubeconfig),
        &req,
        &upgrade,
        &mut |e| eprintln!("{e}"),
    )
    .await
    .expect("upgraded");
    assert_eq!(outcome.cluster, "edge");
    let workers: Vec<Value> = site
        .target
        .list("cluster.x-k8s.io/v1beta1", "Machine", Some(NS))
        .into_iter()
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == "edge-md-0")
        .collect();
    assert_eq!(workers.len(), 3, "{workers:?}");
    assert!(
        clusters(&site.boot).is_empty(),
        "the bootstrap took no part"
    );
    let nodes = site.target.list("v1", "Node", None);
    assert_eq!(nodes.len(), 3 + 3, "3 control plane + 3 workers: {nodes:?}");
}

/// From nothing with a FluxConfig (`gitOpsRef`): GitOps is set up on the new cluster once it
/// manages itself. With a known_hosts that does not name the server, the create fails after the
/// cluster is up and says so and how to finish (nothing pushed); the same create again with the
/// right known_hosts finishes: one commit, Flux on the new cluster Ready at it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_nothing_with_gitops_a_failure_after_the_cluster_is_up_is_finished_by_a_re_run() {
    use snow_git::{Auth, Secret, SshAuth};
    use snow_provision::gitops::{BootstrapOptions, GitOpsError, GitOpsInputs};
    use snow_provision::target::{self, Create, Created};
    use snow_test_devices::git_server::{GitRepos, SshGit, SshKey};
    let site = site().await;
    let _workloads = site.target.start_workloads(WorkloadOptions::default());
    let _flux = site
        .target
        .start_flux(snow_test_kube::FluxOptions {
            step: Duration::from_millis(20),
            ..Default::default()
        })
        .expect("flux");
    let repos = GitRepos::new().expect("repos");
    repos.create("fleet.git").expect("repository");
    repos
        .commit("fleet.git", "main", "README.md", "# fleet\n")
        .expect("commit");
    let ssh = SshGit::start(&repos).expect("sshd");
    let other = SshKey::generate(&repos.scratch("keys").unwrap(), "other").expect("key");
    let text = spec().replacen(
        "spec:\n",
        "spec:\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
        1,
    ) + &format!(
        "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: edge\nspec:\n  git:\n    repositoryUrl: {}\n",
        ssh.url("fleet.git")
    );
    let spec = snow_api::check(&text).unwrap().into_valid().unwrap();
    let catalog = snow_api::release::ReleaseInputs::embedded().unwrap();
    let release = catalog.resolve(&spec, None).unwrap();
    let req = Request {
        spec: &spec,
        spec_text: &text,
        release: &release,
        secrets: Some(capi_render::SecretInputs {
            credentials: &site.credentials,
            ca_bundle: &site.ca_bundle,
        }),
        registry_credentials: None,
        devices: DevicePaths::default(),
        inputs: None,
        dir: site.dir.path(),
    };
    let mut install = include_str!("../../capi-render/tests/data/flux/install.yaml").to_owned();
    for controller in ["helm-controller", "notification-controller"] {
        install.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {controller}\n  namespace: flux-system\nspec:\n  selector:\n    matchLabels: {{app: {controller}}}\n  template:\n    metadata:\n      labels: {{app: {controller}}}\n    spec:\n      containers:\n      - name: manager\n        image: ghcr.io/fluxcd/{controller}:v1.0.0\n"
        ));
    }
    let inputs = |known_hosts: String| GitOpsInputs {
        install: Some(install.clone()),
        auth: Some(Auth::Ssh(SshAuth {
            private_key: Secret::new(ssh.client_key.private_key.clone()),
            passphrase: None,
            known_hosts,
        })),
        options: BootstrapOptions {
            init: InitOptions {
                crd_timeout: Duration::from_secs(20),
                deployment_timeout: Some(Duration::from_secs(30)),
                poll: Duration::from_millis(20),
            },
            sync_timeout: Duration::from_secs(60),
            poll: Duration::from_millis(20),
            ..BootstrapOptions::default()
        },
    };
    let bootstrap = Existing::new(&site.boot_kubeconfig, None);
    let opts = options();
    let commits = || {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(repos.path("fleet.git"))
            .args(["rev-list", "--count", "refs/heads/main"])
            .output()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };

    let wrong = inputs(other.known_hosts_line(ssh.port));
    let (failed, _) = until_step(None, async |on_event| {
        target::create_with(
            Create::FromNothing(&bootstrap, &opts),
            &req,
            &wrong,
            on_event,
        )
        .await
    })
    .await;
    let err = failed.expect("ran").expect_err("the host key is not known");
    assert!(
        matches!(&err, ProvisionError::GitOpsUnfinished { source, .. } if matches!(**source, GitOpsError::Git(snow_git::GitError::HostKeyRejected { .. }))),
        "{err:?}"
    );
    let said = err.to_string();
    assert!(said.contains("cluster edge is up"), "{said}");
    assert!(
        said.contains("Run the same command again to finish GitOps"),
        "{said}"
    );
    assert_self_managed(&site).await;
    assert_eq!(commits(), "1");

    let right = inputs(ssh.known_hosts.clone());
    let (done, _) = until_step(None, async |on_event| {
        target::create_with(
            Create::FromNothing(&bootstrap, &opts),
            &req,
            &right,
            on_event,
        )
        .await
    })
    .await;
    let done = done
        .expect("ran")
        .unwrap_or_else(|e| panic!("{e}\nsshd: {}", ssh.log()));
    let Created::SelfManaged(made) = done else {
        panic!("a cluster from nothing");
    };
    let gitops = made.gitops.expect("GitOps set up");
    assert!(gitops.committed);
    assert_eq!(commits(), "2");
    let ks = site
        .target
        .get(
            "kustomize.toolkit.fluxcd.io/v1",
            "Kustomization",
            Some("flux-system"),
            "flux-system",
        )
        .expect("Flux on the new cluster");
    assert_eq!(
        ks["status"]["lastAppliedRevision"],
        gitops.revision.as_str()
    );
    assert!(
        site.boot
            .list("kustomize.toolkit.fluxcd.io/v1", "Kustomization", None)
            .is_empty()
    );

    // Its delete: Flux suspended and the cluster's and Flux's files removed by one commit
    // (stopped after the push, as a kill there), then the delete run to the end, which commits
    // nothing again; every other file of the repository stays.
    let files = || {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(repos.path("fleet.git"))
            .args(["ls-tree", "-r", "--name-only", "refs/heads/main"])
            .output()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let create = options();
    let delete = self_managed::DeleteOptions {
        components: create.components,
        init: create.init,
        moving: create.moving,
        delete: snow_lifecycle::DeleteOptions {
            wait: create.create.wait,
        },
        keep_bootstrap: false,
    };
    let kubeconfig = snow_lifecycle::KubeconfigSource::file(
        site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig"),
    );
    let repository = target::repository(&kubeconfig, "edge").await.expect("read");
    assert_eq!(repository.expect("the cluster's repository").name(), "edge");
    let mut stopped = right.clone();
    stopped.options.stop_after = Some(snow_provision::gitops::BootstrapStep::Pushed);
    let how = target::Delete::SelfManaged(&bootstrap, &kubeconfig, &delete);
    let halted = target::delete_with(how, "edge", &stopped, &mut |_| {}).await;
    assert!(
        matches!(
            &halted,
            Err(ProvisionError::GitOps(GitOpsError::Stopped(_)))
        ),
        "{halted:?}"
    );
    assert_eq!(commits(), "3");
    assert_eq!(files(), "README.md");
    let ks = site
        .target
        .get(
            "kustomize.toolkit.fluxcd.io/v1",
            "Kustomization",
            Some("flux-system"),
            "flux-system",
        )
        .expect("Flux's Kustomization");
    assert_eq!(ks["spec"]["suspend"], true, "{ks}");
    assert!(clusters(&site.target).len() == 1, "nothing deleted yet");
    let how = target::Delete::SelfManaged(&bootstrap, &kubeconfig, &delete);
    let (deleted, committed) = target::delete_with(how, "edge", &right, &mut |_| {})
        .await
        .expect("deleted");
    assert!(deleted.found);
    assert!(!committed.expect("the repository's commit").committed);
    assert_eq!(commits(), "3");
    assert_deleted(&site);
}
