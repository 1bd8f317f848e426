//! `snowctl create cluster` without a management cluster, and `delete cluster` of the cluster it
//! made, through the real binary: a bootstrap cluster given with `--bootstrap-kubeconfig` (a
//! Kubernetes API stand-in whose simulated Cluster API publishes the new cluster's kubeconfig
//! pointing at a second stand-in), the real components manifests of `../shared/data` laid out
//! for `--components-dir` under the embedded catalog's versions, the new cluster running its own
//! simulated controllers once the providers are installed there.

use super::text;
use snow_test_devices::TestCa;
use snow_test_kube::{
    CapiHandle, CapiOptions, KubeStandIn, WorkloadHandle, WorkloadOptions, components::SHIPPED,
    kind::FakeKind,
};
use std::{
    path::{Path, PathBuf},
    process::Output,
    sync::Arc,
    time::Duration,
};

const NS: &str = "eksa-system";

pub(crate) struct Site {
    pub(crate) boot: KubeStandIn,
    target: Arc<KubeStandIn>,
    _capi: (CapiHandle, CapiHandle),
    _workloads: WorkloadHandle,
    pub(crate) dir: tempfile::TempDir,
}

/// The components of the embedded catalog's 1.33 bundle, at the paths it names, from the
/// shipped files (versions differ in the patch number only; the release series is checked).
pub(crate) fn components_dir(dir: &Path) -> PathBuf {
    let root = dir.join("components");
    let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
    let bundle =
        snow_lifecycle::init::source::versions_bundle(&inputs.bundles, Some("1.33")).unwrap();
    for wanted in snow_lifecycle::init::source::wanted(bundle).unwrap() {
        let shipped = SHIPPED
            .iter()
            .find(|s| s.label == wanted.label)
            .unwrap_or_else(|| panic!("no shipped file for {}", wanted.label));
        let mut files = vec![(
            wanted.path(&wanted.components_uri),
            std::fs::read(shipped.path()).unwrap(),
        )];
        if let Some(uri) = &wanted.metadata_uri {
            files.push((wanted.path(uri), shipped.metadata_bytes().unwrap()));
        }
        for (path, bytes) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
    root
}

pub(crate) async fn site() -> Site {
    let target = Arc::new(KubeStandIn::start().await.expect("target"));
    let boot = KubeStandIn::start().await.expect("bootstrap");
    let step = Duration::from_millis(20);
    let workloads = boot.start_workloads(WorkloadOptions::default());
    let boot_capi = boot.start_capi(CapiOptions {
        step,
        workload: Some(target.clone()),
        ..CapiOptions::default()
    });
    let own_capi = target.start_capi(CapiOptions {
        step,
        workload: Some(target.clone()),
        require_providers: true,
        ..CapiOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("boot.kubeconfig"), boot.kubeconfig()).unwrap();
    components_dir(dir.path());
    let text = snow_api::template::cluster_config(&snow_api::template::TemplateOptions {
        name: "edge".into(),
        devices: vec!["192.168.1.11".into()],
        endpoint: Some("192.168.1.100".into()),
        ssh_key_name: Some("edge-key".into()),
        kubernetes_version: Some("1.33".into()),
        ..Default::default()
    })
    .unwrap();
    std::fs::write(dir.path().join("cluster.yaml"), text).unwrap();
    let ca = TestCa::new("devices").unwrap();
    let cert = ca
        .server_certificate("192.168.1.11".parse().unwrap())
        .unwrap();
    std::fs::write(dir.path().join("ca-bundle.pem"), cert.cert_pem).unwrap();
    std::fs::write(
        dir.path().join("credentials"),
        "[192.168.1.11]\naws_access_key_id = AKIDSELFMANAGED0\naws_secret_access_key = secretSELFmanagedCLIkey\nregion = snow\n",
    )
    .unwrap();
    Site {
        boot,
        target,
        _capi: (boot_capi, own_capi),
        _workloads: workloads,
        dir,
    }
}

impl Site {
    /// snowctl in the site's directory with the device files and the components.
    async fn snowctl(&self, args: &[&str]) -> Output {
        self.snowctl_with_path(args, None).await
    }

    /// The same, with `PATH` set to `path`.
    async fn snowctl_with_path(&self, args: &[&str], path: Option<String>) -> Output {
        self.snowctl_with(args, path, &[]).await
    }

    /// The same, with `PATH` set to `path` and the variables `env` set.
    pub(crate) async fn snowctl_with(
        &self,
        args: &[&str],
        path: Option<String>,
        env: &[(&str, &str)],
    ) -> Output {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        cmd.envs(env.iter().copied());
        cmd.args(super::sample_release(args))
            .args(["--components-dir", "components"])
            .args([
                "--credentials",
                "credentials",
                "--ca-bundle",
                "ca-bundle.pem",
            ])
            .args(["--poll-interval", "20ms"])
            .current_dir(self.dir.path())
            // Created from nothing: no KUBECONFIG, and a home without ~/.kube/config.
            .env_remove("KUBECONFIG")
            .env("HOME", self.dir.path())
            .env_remove("EKSA_AWS_CREDENTIALS_FILE")
            .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
        let out = tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
            .await
            .unwrap();
        #[allow(clippy::print_stderr, reason = "the transcript, for --nocapture")]
        {
            eprintln!("$ snowctl {}", args.join(" "));
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
        }
        out
    }

    fn clusters(api: &KubeStandIn) -> Vec<serde_json::Value> {
        api.list("cluster.x-k8s.io/v1beta1", "Cluster", Some(NS))
    }
}

pub(crate) const CILIUM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../lifecycle/tests/fixtures/cilium.yaml"
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_from_nothing_then_delete_back_to_nothing() {
    let site = site().await;
    let create = [
        "create",
        "cluster",
        "-f",
        "cluster.yaml",
        "--bootstrap-kubeconfig",
        "boot.kubeconfig",
        "--cni-manifest",
        CILIUM,
        "--skip-validations",
    ];
    let out = site.snowctl(&create).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for step in [
        "Creating new bootstrap cluster",
        "Installing cluster-api providers on bootstrap cluster",
        "Creating new management cluster",
        "Installing cluster-api providers on management cluster",
        "Moving the cluster management components from the bootstrap cluster to the management cluster",
        "Moving cluster spec to workload cluster",
        "Cluster created! It manages itself: snowctl … --kubeconfig ./edge/edge-eks-a-cluster.kubeconfig",
    ] {
        assert!(err.contains(step), "{step}:\n{err}");
    }
    assert!(
        Site::clusters(&site.boot).is_empty(),
        "moved off the bootstrap"
    );
    assert_eq!(Site::clusters(&site.target).len(), 1);
    assert!(!err.contains("secretSELFmanagedCLIkey"), "{err}");
    // The real kubectl reads the cluster on itself.
    let own = site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let kubectl = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&own)
        .args(["get", "clusters.cluster.x-k8s.io", "-A"])
        .output()
        .expect("kubectl runs");
    assert!(kubectl.status.success(), "{}", text(&kubectl.stderr));
    assert!(
        text(&kubectl.stdout).contains("edge"),
        "{}",
        text(&kubectl.stdout)
    );

    // Run again: it finds the cluster moved and says so.
    let out = site.snowctl(&create).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("Creating new management cluster"));

    let own = "edge/edge-eks-a-cluster.kubeconfig";
    // A self-managed cluster needs a bootstrap cluster to be deleted through.
    let out = site
        .snowctl(&["delete", "cluster", "edge", "--kubeconfig", own])
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--bootstrap-kubeconfig"));
    assert_eq!(Site::clusters(&site.target).len(), 1, "nothing changed");

    let delete = [
        "delete",
        "cluster",
        "edge",
        "--kubeconfig",
        own,
        "--bootstrap-kubeconfig",
        "boot.kubeconfig",
    ];
    let out = site.snowctl(&delete).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("Cluster edge manages itself"), "{err}");
    assert!(err.contains("Cluster edge deleted!"), "{err}");
    assert!(Site::clusters(&site.boot).is_empty());
    assert!(Site::clusters(&site.target).is_empty());
    assert!(
        site.target.list("v1", "Node", None).is_empty(),
        "machines gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_kind_or_a_bootstrap_kubeconfig_create_names_the_alternative() {
    let site = site().await;
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(super::sample_release(&[
        "create",
        "cluster",
        "-f",
        "cluster.yaml",
        "--skip-validations",
    ]))
    .args(["--cni-manifest", CILIUM, "--components-dir", "components"])
    .args([
        "--credentials",
        "credentials",
        "--ca-bundle",
        "ca-bundle.pem",
    ])
    .current_dir(site.dir.path())
    .env("PATH", empty.path())
    .env_remove("KUBECONFIG")
    .env("HOME", site.dir.path());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Creating new bootstrap cluster failed"),
        "{err}"
    );
    assert!(err.contains("`kind` was not found"), "{err}");
    assert!(err.contains("--bootstrap-kubeconfig FILE"), "{err}");
    assert!(site.boot.writes() == 0 && site.target.writes() == 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_kind_the_bootstrap_cluster_is_kept_when_asked_and_deleted_by_the_next_run() {
    let site = site().await;
    // kind "creates" the bootstrap stand-in: its kubeconfig is what kind writes.
    let kind = FakeKind::new(&site.boot.kubeconfig()).unwrap();
    let path = format!(
        "{}:{}",
        kind.bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let create = [
        "create",
        "cluster",
        "-f",
        "cluster.yaml",
        "--cni-manifest",
        CILIUM,
        "--skip-validations",
    ];
    let kept: Vec<&str> = create.iter().copied().chain(["--keep-bootstrap"]).collect();
    let out = site.snowctl_with_path(&kept, Some(path.clone())).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let generated = site.dir.path().join("edge/generated");
    let boot_kubeconfig = generated.join("edge.kind.kubeconfig");
    assert!(
        err.contains(
            "Keeping the bootstrap cluster, as asked: edge/generated/edge.kind.kubeconfig"
        ),
        "{err}"
    );
    let calls = kind.calls();
    let create_call = calls
        .iter()
        .find(|c| c.starts_with(&["create".into(), "cluster".into()]))
        .expect("kind create cluster ran");
    for arg in ["--name", "edge-eks-a-cluster", "--config", "--image"] {
        assert!(
            create_call.iter().any(|a| a == arg),
            "{arg}: {create_call:?}"
        );
    }
    assert!(
        !calls
            .iter()
            .any(|c| c.first().is_some_and(|a| a == "delete")),
        "kept: {calls:?}"
    );
    assert!(boot_kubeconfig.is_file());
    assert_eq!(Site::clusters(&site.target).len(), 1, "it manages itself");

    // The same command without --keep-bootstrap finishes by deleting the kind cluster.
    let out = site.snowctl_with_path(&create, Some(path)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let calls = kind.calls();
    let last = calls.last().expect("kind ran");
    assert_eq!(
        last[..4],
        ["delete", "cluster", "--name", "edge-eks-a-cluster"],
        "{calls:?}"
    );
    assert_eq!(
        calls
            .iter()
            .filter(|c| c.first().is_some_and(|a| a == "create"))
            .count(),
        1,
        "the kind cluster was made once: {calls:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_flags_with_a_management_cluster_are_a_usage_error() {
    let site = site().await;
    let out = site
        .snowctl(&[
            "create",
            "cluster",
            "-f",
            "cluster.yaml",
            "--kubeconfig",
            "boot.kubeconfig",
            "--bootstrap-kubeconfig",
            "boot.kubeconfig",
            "--skip-validations",
            "--cni-manifest",
            CILIUM,
        ])
        .await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--bootstrap-kubeconfig, --keep-bootstrap and --controller-image are for a create from nothing"), "{err}");
    assert_eq!(site.boot.writes(), 0, "nothing applied");
}
