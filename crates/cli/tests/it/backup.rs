//! The backup every upgrade writes first, and the restore steps of docs/guides/move-and-backup.md: `upgrade cluster` and
//! `upgrade management-components` write `./<cluster>/<cluster>-backup-<time>/` as `move cluster
//! --to-directory` does; `move cluster --from-directory` puts it on a fresh management cluster.
//! Both management clusters are stand-ins set up by `snowctl init` (clusterctl's labels on the
//! providers' CRDs, which the move's discovery reads), the real binary throughout.

use super::lifecycle::{CILIUM, Group, spec};
use super::{show, text};
use snow_test_devices::TestCa;
use snow_test_kube::{CapiHandle, CapiOptions, KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    process::Output,
    sync::Arc,
    time::Duration,
};

const NS: &str = "eksa-system";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// A management cluster set up by `snowctl init`.
pub(super) struct Side {
    pub(super) api: KubeStandIn,
    _workloads: WorkloadHandle,
    pub(super) kubeconfig: PathBuf,
}

/// The test's directory: the components, the bundle, the device files, the specs; snowctl runs
/// here, so the backups land here.
pub(super) struct Site {
    dir: tempfile::TempDir,
    pub(super) components: PathBuf,
    pub(super) bundles: PathBuf,
    credentials: PathBuf,
    ca_bundle: PathBuf,
}

pub(super) async fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let (components, bundles) = super::init::components_dir(dir.path());
    let ca = TestCa::new("devices").unwrap();
    let mut bundle = String::new();
    let mut ini = String::new();
    for (i, ip) in ["192.168.1.11", "192.168.1.12"].iter().enumerate() {
        let cert = ca
            .server_certificate(ip.parse::<IpAddr>().unwrap())
            .unwrap();
        bundle.push_str(&cert.cert_pem);
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = AKIDBACKUPDEVICE{i}\naws_secret_access_key = secretBACKUPdevice{i}xyz\nregion = snow\n\n"
        ));
    }
    let credentials = dir.path().join("credentials");
    let ca_bundle = dir.path().join("ca-bundle.pem");
    std::fs::write(&credentials, ini).unwrap();
    std::fs::write(&ca_bundle, bundle).unwrap();
    Site {
        dir,
        components,
        bundles,
        credentials,
        ca_bundle,
    }
}

impl Site {
    /// snowctl in the site's directory with the device files in its environment.
    pub(super) async fn snowctl(&self, args: &[&str]) -> Output {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
        cmd.args(super::sample_release(args))
            .current_dir(self.dir.path())
            .env("EKSA_AWS_CREDENTIALS_FILE", &self.credentials)
            .env("EKSA_AWS_CA_BUNDLES_FILE", &self.ca_bundle)
            .env_remove("KUBECONFIG");
        tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
            .await
            .unwrap()
    }

    /// A fresh stand-in with the stack `snowctl init` installs, named `name` in the directory.
    pub(super) async fn side(&self, name: &str) -> Side {
        let api = KubeStandIn::start().await.expect("stand-in");
        let workloads = api.start_workloads(WorkloadOptions::default());
        let kubeconfig = self.dir.path().join(format!("{name}.kubeconfig"));
        std::fs::write(&kubeconfig, api.kubeconfig()).unwrap();
        let out = self
            .snowctl(&[
                "init",
                "--kubeconfig",
                p(&kubeconfig),
                "--components-dir",
                p(&self.components),
                "--bundles",
                p(&self.bundles),
                "--poll-interval",
                "20ms",
            ])
            .await;
        assert!(out.status.success(), "init {name}: {}", show(&out));
        Side {
            api,
            _workloads: workloads,
            kubeconfig,
        }
    }

    pub(super) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The backup directories of cluster `edge`, sorted.
    fn backups(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("edge")) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("edge-backup-")
            })
            .collect();
        dirs.sort();
        dirs
    }
}

pub(super) fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Simulated Cluster API on `side`, its machines' nodes on `workload`.
pub(super) fn capi(side: &Side, workload: &Arc<KubeStandIn>) -> CapiHandle {
    side.api.start_capi(CapiOptions {
        step: Duration::from_millis(20),
        workload: Some(workload.clone()),
        ..CapiOptions::default()
    })
}

/// What the tests start from: on the management cluster `source` (set up by `snowctl init`),
/// cluster edge (one worker group of one sbe-c.large) made by `create cluster` from `v1.yaml`,
/// under the simulated Cluster API (which holds the workload cluster its machines' nodes join).
pub(super) struct Created {
    pub(super) _capi: CapiHandle,
    pub(super) source: Side,
}

pub(super) async fn created(site: &Site) -> Created {
    let workload = Arc::new(KubeStandIn::start().await.expect("workload stand-in"));
    let source = site.side("source").await;
    let capi = capi(&source, &workload);
    let v1 = site.write(
        "v1.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let mut create = vec!["create", "cluster", "-f", p(&v1), "--kubeconfig"];
    create.push(p(&source.kubeconfig));
    create.extend(FAST);
    let out = site.snowctl(&create).await;
    assert!(out.status.success(), "{}", show(&out));
    Created {
        _capi: capi,
        source,
    }
}

pub(super) const FAST: [&str; 6] = [
    "--skip-validations",
    "--poll-interval",
    "50ms",
    "--per-machine-wait-timeout=1m",
    "--cni-manifest",
    CILIUM,
];

/// The objects of cluster `edge` in eksa-system as `Kind/name`, sorted.
fn cluster_objects(api: &KubeStandIn) -> Vec<String> {
    let mut found: Vec<String> = api
        .objects()
        .into_iter()
        .filter(|o| o["metadata"]["namespace"] == NS)
        .filter(|o| o["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "edge")
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_writes_a_new_backup_each_time_and_readmes_restore_steps_bring_it_back() {
    let site = site().await;
    let Created { _capi, source } = created(&site).await;
    let created = cluster_objects(&source.api);

    // Bigger workers: the upgrade backs up the cluster as it was, then rolls.
    let v2 = site.write(
        "v2.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.xlarge"),
    );
    let mut upgrade = vec!["upgrade", "cluster", "-f", p(&v2), "--kubeconfig"];
    upgrade.push(p(&source.kubeconfig));
    upgrade.extend(FAST);
    let out = site.snowctl(&upgrade).await;
    assert!(out.status.success(), "{}", show(&out));
    let backups = site.backups();
    assert_eq!(backups.len(), 1, "{backups:?}");
    let backup = &backups[0];
    let said = format!("Backup before the upgrade: {}", backup.display());
    assert!(text(&out.stderr).contains(&said), "{}", show(&out));
    assert!(
        text(&out.stderr).find(&said) < text(&out.stderr).find("Cluster edge upgraded!"),
        "{}",
        show(&out)
    );
    // The old template is in the backup as it was before the upgrade.
    let old =
        std::fs::read_to_string(backup.join("AWSSnowMachineTemplate_eksa-system_edge-md-0-1.yaml"))
            .unwrap();
    assert!(old.contains("instanceType: sbe-c.large"), "{old}");
    assert!(
        source
            .api
            .get(INFRA, "AWSSnowMachineTemplate", Some(NS), "edge-md-0-2")
            .is_some()
    );

    // Run again: a second, new directory; the first is untouched.
    let first: Vec<(PathBuf, Vec<u8>)> = files(backup);
    let out = site.snowctl(&upgrade).await;
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(site.backups().len(), 2, "{:?}", site.backups());
    assert_eq!(files(backup), first);

    // --no-backup writes none.
    let mut skipping = upgrade.clone();
    skipping.push("--no-backup");
    let out = site.snowctl(&skipping).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(!text(&out.stderr).contains("Backup before the upgrade"));
    assert_eq!(site.backups().len(), 2);

    // The guide's restore: a fresh management cluster with the same stack, then move
    // --from-directory. The cluster's objects as the backup held them are there.
    let target = site.side("target").await;
    assert!(cluster_objects(&target.api).is_empty());
    let out = site
        .snowctl(&[
            "move",
            "cluster",
            "--from-directory",
            p(backup),
            "--to-kubeconfig",
            p(&target.kubeconfig),
        ])
        .await;
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(cluster_objects(&target.api), created);
    let restored = target
        .api
        .get(INFRA, "AWSSnowMachineTemplate", Some(NS), "edge-md-0-1")
        .expect("the old template restored");
    assert_eq!(
        restored["spec"]["template"]["spec"]["instanceType"],
        "sbe-c.large"
    );
    let cluster = target
        .api
        .get("cluster.x-k8s.io/v1beta2", "Cluster", Some(NS), "edge")
        .expect("the Cluster restored");
    assert_ne!(cluster["spec"]["paused"], true, "restored paused");
}

/// Every file of a directory with its bytes, sorted.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    all.sort();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_management_components_backs_up_every_cluster_first() {
    let site = site().await;
    let Created { _capi, source } = created(&site).await;
    let created = cluster_objects(&source.api);

    let upgrade = [
        "upgrade",
        "management-components",
        "--kubeconfig",
        p(&source.kubeconfig),
        "--components-dir",
        p(&site.components),
        "--bundles",
        p(&site.bundles),
        "--poll-interval",
        "20ms",
    ];
    let out = site.snowctl(&upgrade).await;
    assert!(out.status.success(), "{}", show(&out));
    let backups = site.backups();
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert!(
        text(&out.stderr).contains(&format!("Backup of cluster edge: {}", backups[0].display())),
        "{}",
        show(&out)
    );
    let mut skipping = upgrade.to_vec();
    skipping.push("--no-backup");
    let out = site.snowctl(&skipping).await;
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(site.backups().len(), 1);

    // The backup restores as a cluster's does.
    let target = site.side("target").await;
    let out = site
        .snowctl(&[
            "move",
            "cluster",
            "--from-directory",
            p(&backups[0]),
            "--to-kubeconfig",
            p(&target.kubeconfig),
        ])
        .await;
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(cluster_objects(&target.api), created);
}

/// Issue 36: Cluster API installed by something other than clusterctl has CRDs without
/// clusterctl's labels, by which a move finds the kinds it carries. The backup before an
/// upgrade, and `move cluster`, then say so, naming the CRDs and the `kubectl label` command,
/// not that the cluster is not on the management cluster; once labelled as said, both work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_clusterctls_labels_on_the_crds_the_backup_says_how_to_label_them() {
    let site = site().await;
    let Created { _capi, source } = created(&site).await;
    let capi_crd = |crd: &serde_json::Value| {
        crd["kind"] == "CustomResourceDefinition"
            && crd["spec"]["group"]
                .as_str()
                .is_some_and(|g| g.ends_with("cluster.x-k8s.io"))
    };
    let mut unlabelled = Vec::new();
    for mut crd in source.api.objects().into_iter().filter(|o| capi_crd(o)) {
        let Some(labels) = crd["metadata"]["labels"].as_object_mut() else {
            continue;
        };
        labels.retain(|k, _| {
            !k.starts_with("clusterctl.cluster.x-k8s.io") && k != "cluster.x-k8s.io/provider"
        });
        if crd["spec"]["group"] != "clusterctl.cluster.x-k8s.io" {
            unlabelled.push(crd["metadata"]["name"].as_str().unwrap().to_owned());
        }
        source.api.put(crd).unwrap();
    }
    unlabelled.sort();
    assert!(
        unlabelled.contains(&"clusters.cluster.x-k8s.io".to_owned()),
        "{unlabelled:?}"
    );
    let command = format!(
        "kubectl label crd {} clusterctl.cluster.x-k8s.io=",
        unlabelled.join(" ")
    );
    let cannot = "cluster edge is on the management cluster, but a move cannot find its objects";

    let v2 = site.write(
        "v2.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.xlarge"),
    );
    let mut upgrade = vec!["upgrade", "cluster", "-f", p(&v2), "--kubeconfig"];
    upgrade.push(p(&source.kubeconfig));
    upgrade.extend(FAST);
    let out = site.snowctl(&upgrade).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    for said in [
        "the backup of cluster edge before the upgrade failed (nothing was upgraded)",
        cannot,
        "lack clusterctl's label clusterctl.cluster.x-k8s.io",
        &command,
        "or upgrade without a backup with --no-backup",
    ] {
        assert!(stderr.contains(said), "{said:?} in {}", show(&out));
    }
    assert!(
        !stderr.contains("is not on the management cluster"),
        "{}",
        show(&out)
    );
    assert!(site.backups().is_empty(), "{:?}", site.backups());
    assert!(
        source
            .api
            .get(INFRA, "AWSSnowMachineTemplate", Some(NS), "edge-md-0-2")
            .is_none(),
        "nothing upgraded"
    );

    let dir = site.dir.path().join("edge-by-hand");
    let backup = [
        "move",
        "cluster",
        "edge",
        "--kubeconfig",
        p(&source.kubeconfig),
        "--to-directory",
        p(&dir),
    ];
    let out = site.snowctl(&backup).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(cannot) && stderr.contains(&command),
        "{}",
        show(&out)
    );
    assert!(
        !stderr.contains("is not on the management cluster"),
        "{}",
        show(&out)
    );

    // What the message says to do (kubectl label), done on the stand-in: both work again.
    for name in &unlabelled {
        let mut crd = source
            .api
            .get(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                None,
                name,
            )
            .unwrap();
        crd["metadata"]["labels"]["clusterctl.cluster.x-k8s.io"] = serde_json::json!("");
        source.api.put(crd).unwrap();
    }
    let out = site.snowctl(&backup).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(dir.join("Cluster_eksa-system_edge.yaml").is_file());
    let out = site.snowctl(&upgrade).await;
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(site.backups().len(), 1, "{:?}", site.backups());
}
