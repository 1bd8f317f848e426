//! `snowctl create|upgrade|delete|describe cluster` end to end against the Kubernetes API
//! stand-in (snow-test-kube) with its simulated Cluster API controllers: real HTTPS, real
//! server-side apply, the real binary.

use super::{show, text};
use serde_json::Value;
use snow_test_devices::TestCa;
use snow_test_kube::edge_spec::{EdgeSpec, WorkerGroup};
use snow_test_kube::{CapiHandle, CapiOptions, KubeStandIn};
use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    process::Output,
    time::Duration,
};

const NS: &str = "eksa-system";
const CORE: &str = "cluster.x-k8s.io/v1beta2";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";
pub(super) const DEVICES: [&str; 2] = ["192.168.1.11", "192.168.1.12"];

/// A management cluster: the stand-in with CAPI, CAPAS and etcdadm installed and running.
pub(super) struct Mgmt {
    pub(super) api: KubeStandIn,
    pub(super) capi: CapiHandle,
    pub(super) dir: tempfile::TempDir,
    pub(super) kubeconfig: PathBuf,
    pub(super) credentials: PathBuf,
    pub(super) ca_bundle: PathBuf,
}

pub(super) async fn management() -> Mgmt {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().expect("CAPI CRDs");
    let capi = api.start_capi(CapiOptions {
        step: Duration::from_millis(20),
        ..CapiOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let ca = TestCa::new("devices").unwrap();
    let mut bundle = String::new();
    let mut ini = String::new();
    for (i, ip) in DEVICES.iter().enumerate() {
        let cert = ca
            .server_certificate(ip.parse::<IpAddr>().unwrap())
            .unwrap();
        bundle.push_str(&cert.cert_pem);
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = AKIDTESTDEVICE{i}\naws_secret_access_key = secretTESTdevice{i}xyz\nregion = snow\n\n"
        ));
    }
    let credentials = dir.path().join("credentials");
    let ca_bundle = dir.path().join("ca-bundle.pem");
    std::fs::write(&credentials, ini).unwrap();
    std::fs::write(&ca_bundle, bundle).unwrap();
    Mgmt {
        api,
        capi,
        dir,
        kubeconfig,
        credentials,
        ca_bundle,
    }
}

/// A worker group: name, count, machine config.
pub(super) struct Group<'a>(pub(super) &'a str, pub(super) u32, pub(super) &'a str);

pub(super) fn spec(endpoint: &str, groups: &[Group<'_>], worker_type: &str) -> String {
    let groups: Vec<WorkerGroup<'_>> = groups
        .iter()
        .map(|&Group(name, count, machine_config)| WorkerGroup {
            name,
            count,
            machine_config,
        })
        .collect();
    EdgeSpec {
        endpoint,
        groups: &groups,
        worker_type,
        devices: &DEVICES,
        ..EdgeSpec::default()
    }
    .yaml()
}

impl Mgmt {
    pub(super) fn write_spec(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs snowctl in the test's directory with the device files in its environment.
    pub(super) async fn snowctl(&self, args: &[&str]) -> Output {
        self.snowctl_with(args, &self.kubeconfig).await
    }

    async fn snowctl_with(&self, args: &[&str], kubeconfig: &Path) -> Output {
        self.snowctl_env(args, kubeconfig, &[]).await
    }

    pub(super) async fn snowctl_env(
        &self,
        args: &[&str],
        kubeconfig: &Path,
        env: &[(&str, &str)],
    ) -> Output {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
        cmd.envs(env.iter().copied());
        cmd.args(super::sample_release(args))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .current_dir(self.dir.path())
            .env("EKSA_AWS_CREDENTIALS_FILE", &self.credentials)
            .env("EKSA_AWS_CA_BUNDLES_FILE", &self.ca_bundle)
            .env_remove("KUBECONFIG");
        tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
            .await
            .unwrap()
    }

    fn get(&self, api_version: &str, kind: &str, name: &str) -> Option<Value> {
        self.api.get(api_version, kind, Some(NS), name)
    }

    fn names(&self, api_version: &str, kind: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .api
            .list(api_version, kind, Some(NS))
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        names.sort();
        names
    }

    /// Every object of the cluster in eksa-system: labelled with it, or named after it.
    fn cluster_objects(&self) -> Vec<String> {
        let mut found: Vec<String> = self
            .api
            .objects()
            .into_iter()
            .filter(|o| o["metadata"]["namespace"] == NS)
            .filter(|o| {
                let name = o["metadata"]["name"].as_str().unwrap_or_default();
                o["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "edge"
                    || name.starts_with("edge")
            })
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
}

/// A Cilium manifest (a trimmed copy of EKS Anywhere's rendered test manifest).
pub(super) const CILIUM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../lifecycle/tests/fixtures/cilium.yaml"
);

const FAST: [&str; 6] = [
    "--skip-validations",
    "--poll-interval",
    "50ms",
    "--per-machine-wait-timeout=1m",
    "--cni-manifest",
    CILIUM,
];

pub(super) async fn create(m: &Mgmt, spec_path: &Path) -> Output {
    let mut args = vec!["create", "cluster", "-f", spec_path.to_str().unwrap()];
    args.extend(FAST);
    m.snowctl(&args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_applies_waits_writes_the_kubeconfig_and_converges_when_run_again() {
    let m = management().await;
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 2, "edge")], "sbe-c.large"),
    );
    let out = create(&m, &path).await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    for line in [
        "Cluster API (v1beta2), CAPAS are installed",
        "Control plane ready (3/3)",
        "Worker group md-0 ready (2/2)",
        "Wrote the workload kubeconfig ./edge/edge-eks-a-cluster.kubeconfig",
        "Cluster edge created!",
    ] {
        assert!(stderr.contains(line), "missing {line:?}\n{}", show(&out));
    }
    // The skipped validation is said, not silent.
    assert!(stderr.contains("validations skipped"), "{stderr}");
    // The given Cilium manifest is stored for the in-cluster controller (its own settings only).
    let label = "snowctl.anywhere.eks.amazonaws.com/cilium-manifest";
    let stored: Vec<Value> = (m.api.list("v1", "ConfigMap", Some(NS)).into_iter())
        .filter(|c| c["metadata"]["labels"][label] == "true")
        .collect();
    assert_eq!(stored.len(), 1, "{}", show(&out));
    assert!(
        (stored[0]["data"]["manifest.yaml"].as_str())
            .is_some_and(|m| m.contains("name: cilium-operator")),
        "{:#}",
        stored[0]
    );

    // What render shows was applied, by snowctl, server-side.
    let kcp = m
        .get(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            "edge",
        )
        .expect("KCP applied");
    let managers: Vec<&str> = kcp["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["operation"] == "Apply")
        .filter_map(|f| f["manager"].as_str())
        .collect();
    assert_eq!(managers, ["snowctl"]);
    assert!(
        m.get(INFRA, "AWSSnowMachineTemplate", "edge-control-plane-1")
            .is_some()
    );
    assert!(
        m.get(INFRA, "AWSSnowMachineTemplate", "edge-md-0-1")
            .is_some()
    );
    assert!(m.get("v1", "Secret", "edge-snow-credentials").is_some());
    assert!(
        m.get("v1", "ConfigMap", "edge-snowctl").is_some(),
        "inventory"
    );
    assert_eq!(m.api.list(CORE, "Machine", Some(NS)).len(), 5);

    // The kubeconfig is the one Cluster API published, owner-only.
    let file = m.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let secret = m.get("v1", "Secret", "edge-kubeconfig").unwrap();
    let published = base64_decode(secret["data"]["value"].as_str().unwrap());
    assert_eq!(std::fs::read(&file).unwrap(), published);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // Again: nothing new, nothing duplicated, the kubeconfig kept.
    let before = m.cluster_objects();
    let again = create(&m, &path).await;
    assert!(again.status.success(), "{}", show(&again));
    assert!(
        text(&again.stderr).contains("already on the management cluster"),
        "{}",
        show(&again)
    );
    assert!(
        text(&again.stderr).contains("Kept (unchanged)"),
        "{}",
        show(&again)
    );
    assert_eq!(m.cluster_objects(), before);
    assert_eq!(m.api.list(CORE, "Machine", Some(NS)).len(), 5);

    // A different file in the way is kept unless --force.
    std::fs::write(&file, "someone else's kubeconfig\n").unwrap();
    let blocked = create(&m, &path).await;
    assert_eq!(blocked.status.code(), Some(1), "{}", show(&blocked));
    assert!(
        text(&blocked.stderr).contains("exists and holds another kubeconfig"),
        "{}",
        show(&blocked)
    );
    assert!(
        text(&blocked.stderr).contains("--force"),
        "{}",
        show(&blocked)
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "someone else's kubeconfig\n"
    );
    let mut args = vec!["create", "cluster", "-f", path.to_str().unwrap(), "--force"];
    args.extend(FAST);
    let forced = m.snowctl(&args).await;
    assert!(forced.status.success(), "{}", show(&forced));
    assert_eq!(std::fs::read(&file).unwrap(), published);
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stage_that_never_finishes_times_out_naming_the_object_and_a_rerun_converges() {
    let m = management().await;
    m.capi
        .set_stall(vec![("MachineDeployment".into(), "edge-md-0".into())]);
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let mut args = vec!["create", "cluster", "-f", path.to_str().unwrap()];
    args.extend([
        "--skip-validations",
        "--poll-interval",
        "50ms",
        "--per-machine-wait-timeout",
        "1s",
        "--cni-manifest",
        CILIUM,
    ]);
    let out = m.snowctl(&args).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Control plane ready (3/3)"), "{stderr}");
    assert!(
        stderr.contains("timed out after 1s waiting for MachineDeployment eksa-system/edge-md-0"),
        "{stderr}"
    );
    assert!(stderr.contains("never became true"), "{stderr}");
    assert!(
        stderr.contains("hint: look at the object's conditions"),
        "{stderr}"
    );

    // The controllers catch up; the same command finishes the job.
    m.capi.set_stall(Vec::new());
    let rerun = create(&m, &path).await;
    assert!(rerun.status.success(), "{}", show(&rerun));
    assert!(
        text(&rerun.stderr).contains("Worker group md-0 ready (1/1)"),
        "{}",
        show(&rerun)
    );
    assert_eq!(m.names(CORE, "MachineDeployment"), ["edge-md-0"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_create_run_again_converges_without_duplicates() {
    let m = management().await;
    m.capi.pause();
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 2, "edge")], "sbe-c.large"),
    );
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(super::sample_release(&[
        "create",
        "cluster",
        "-f",
        path.to_str().unwrap(),
    ]))
    .args(FAST)
    .arg("--kubeconfig")
    .arg(&m.kubeconfig)
    .current_dir(m.dir.path())
    .env("EKSA_AWS_CREDENTIALS_FILE", &m.credentials)
    .env("EKSA_AWS_CA_BUNDLES_FILE", &m.ca_bundle)
    .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    // Kill it once it has applied and is waiting.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while m.get(CORE, "Cluster", "edge").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "create never applied the Cluster"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !m.dir
            .path()
            .join("edge/edge-eks-a-cluster.kubeconfig")
            .exists()
    );

    m.capi.resume();
    let out = create(&m, &path).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("already on the management cluster"),
        "{}",
        show(&out)
    );
    assert_eq!(m.names(CORE, "MachineDeployment"), ["edge-md-0"]);
    assert_eq!(
        m.names(INFRA, "AWSSnowMachineTemplate"),
        ["edge-control-plane-1", "edge-md-0-1"]
    );
    assert_eq!(m.api.list(CORE, "Machine", Some(NS)).len(), 5);
    assert!(
        m.dir
            .path()
            .join("edge/edge-eks-a-cluster.kubeconfig")
            .exists()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_bumps_a_changed_template_rolls_its_machines_and_removes_a_dropped_group() {
    let m = management().await;
    let two = spec(
        "192.168.1.100",
        &[Group("md-0", 2, "edge"), Group("md-1", 1, "edge")],
        "sbe-c.large",
    );
    let created = create(&m, &m.write_spec("v1.yaml", &two)).await;
    assert!(created.status.success(), "{}", show(&created));
    let old_machines: Vec<String> = m
        .api
        .list(CORE, "Machine", Some(NS))
        .iter()
        .filter(|o| o["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == "edge-md-0")
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(old_machines.len(), 2);

    // Bigger workers, and md-1 gone.
    let one = spec("192.168.1.100", &[Group("md-0", 2, "edge")], "sbe-c.xlarge");
    let path = m.write_spec("v2.yaml", &one);

    // --dry-run says what would happen and writes nothing.
    let writes = m.api.writes();
    let dry = m
        .snowctl(&[
            "upgrade",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--dry-run",
        ])
        .await;
    assert!(dry.status.success(), "{}", show(&dry));
    let plan = text(&dry.stderr);
    assert!(
        plan.contains("upgrade: AWSSnowMachineTemplate/edge-md-0-2 (replaces AWSSnowMachineTemplate/edge-md-0-1): the machine spec changed (instanceType: sbe-c.large → sbe-c.xlarge): the machines of worker group md-0 will roll"),
        "{plan}"
    );
    assert!(
        plan.contains("the machines of worker group md-0 will roll"),
        "{plan}"
    );
    assert!(
        plan.contains("worker group md-1 is no longer in the spec"),
        "{plan}"
    );
    assert!(
        text(&dry.stdout).contains("name: edge-md-0-2"),
        "{}",
        show(&dry)
    );
    assert_eq!(
        m.api.writes(),
        writes,
        "a dry run wrote to the management cluster"
    );

    // The stand-in's providers lack clusterctl's CRD labels, which a backup's discovery reads
    // (backups are tested in backup.rs, on stand-ins set up by snowctl init): here the backup
    // fails, and the upgrade stops before it writes anything, saying how to go on.
    let mut args = vec!["upgrade", "cluster", "-f", path.to_str().unwrap()];
    args.extend(FAST);
    let writes = m.api.writes();
    let out = m.snowctl(&args).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("the backup of cluster edge before the upgrade failed (nothing was upgraded)"),
        "{err}"
    );
    assert!(err.contains("--no-backup"), "{err}");
    assert_eq!(
        m.api.writes(),
        writes,
        "a failed backup let the upgrade write"
    );
    let left: Vec<_> = std::fs::read_dir(m.dir.path().join("edge"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("-backup-"))
        .collect();
    assert!(
        left.is_empty(),
        "an empty backup directory stayed: {left:?}"
    );

    let mut args = vec![
        "upgrade",
        "cluster",
        "-f",
        path.to_str().unwrap(),
        "--no-backup",
    ];
    args.extend(FAST);
    let out = m.snowctl(&args).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("Cluster edge upgraded!"),
        "{}",
        show(&out)
    );

    // The group's templates moved to -2; the MachineDeployment points at them.
    let md = m.get(CORE, "MachineDeployment", "edge-md-0").unwrap();
    assert_eq!(
        md["spec"]["template"]["spec"]["infrastructureRef"]["name"],
        "edge-md-0-2"
    );
    let t = m
        .get(INFRA, "AWSSnowMachineTemplate", "edge-md-0-2")
        .unwrap();
    assert_eq!(
        t["spec"]["template"]["spec"]["instanceType"],
        "sbe-c.xlarge"
    );
    // Its machines rolled: none of the old ones is left.
    let now: Vec<String> = m
        .api
        .list(CORE, "Machine", Some(NS))
        .iter()
        .filter(|o| o["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == "edge-md-0")
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(now.len(), 2);
    assert!(
        now.iter().all(|n| !old_machines.contains(n)),
        "{now:?} vs {old_machines:?}"
    );
    // md-1: deployment, templates, health check and machines gone.
    assert_eq!(m.names(CORE, "MachineDeployment"), ["edge-md-0"]);
    assert!(
        m.get(INFRA, "AWSSnowMachineTemplate", "edge-md-1-1")
            .is_none()
    );
    assert!(
        m.get(
            "bootstrap.cluster.x-k8s.io/v1beta2",
            "KubeadmConfigTemplate",
            "edge-md-1-1"
        )
        .is_none()
    );
    assert!(
        m.get(CORE, "MachineHealthCheck", "edge-md-1-worker-unhealthy")
            .is_none()
    );
    assert!(
        m.api
            .list(CORE, "Machine", Some(NS))
            .iter()
            .all(|o| o["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] != "edge-md-1")
    );
    // The control plane did not change, so it did not roll.
    assert!(
        !text(&out.stderr).contains("control plane machines will roll"),
        "{}",
        show(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_refuses_immutable_changes_with_findings_and_applies_nothing() {
    let m = management().await;
    let created = create(
        &m,
        &m.write_spec(
            "v1.yaml",
            &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
        ),
    )
    .await;
    assert!(created.status.success(), "{}", show(&created));
    let moved = spec("192.168.1.101", &[Group("md-0", 1, "edge")], "sbe-c.large")
        .replace("10.244.0.0/16", "10.245.0.0/16")
        .replace("\"1.33\"", "\"1.35\"");
    let path = m.write_spec("v2.yaml", &moved);
    let writes = m.api.writes();
    let mut args = vec!["upgrade", "cluster", "-f", path.to_str().unwrap()];
    args.extend(FAST);
    let out = m.snowctl(&args).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    for expected in [
        "spec.controlPlaneConfiguration.endpoint.host",
        "the control-plane endpoint cannot change on an existing cluster: it is 192.168.1.100",
        "spec.clusterNetwork.pods.cidrBlocks",
        "spec.kubernetesVersion",
        "Kubernetes can go up one minor version at a time: 1.33",
        "hint: upgrade to 1.34 first",
    ] {
        assert!(stderr.contains(expected), "missing {expected:?}\n{stderr}");
    }
    assert_eq!(m.api.writes(), writes, "a refused upgrade wrote");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_leaves_nothing_behind_and_a_missing_cluster_is_not_an_error() {
    let m = management().await;
    let created = create(
        &m,
        &m.write_spec(
            "c.yaml",
            &spec("192.168.1.100", &[Group("md-0", 2, "edge")], "sbe-c.large"),
        ),
    )
    .await;
    assert!(created.status.success(), "{}", show(&created));
    assert!(!m.cluster_objects().is_empty());

    let described = m.snowctl(&["describe", "cluster", "edge"]).await;
    assert!(described.status.success(), "{}", show(&described));
    let tree = text(&described.stdout);
    assert!(tree.contains("✓ Cluster/edge"), "{tree}");
    assert!(
        tree.contains("KubeadmControlPlane/edge  3/3 ready"),
        "{tree}"
    );
    assert!(
        tree.contains("MachineDeployment/edge-md-0  2/2 ready"),
        "{tree}"
    );
    let json = m
        .snowctl(&["describe", "cluster", "edge", "-o", "json"])
        .await;
    let parsed: Value = serde_json::from_slice(&json.stdout).expect("describe -o json");
    assert_eq!(parsed["root"]["children"].as_array().unwrap().len(), 3);

    let out = m
        .snowctl(&["delete", "cluster", "edge", "--poll-interval", "50ms"])
        .await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("Cluster and machines deleted"),
        "{}",
        show(&out)
    );
    assert!(
        text(&out.stderr).contains("Cluster edge deleted!"),
        "{}",
        show(&out)
    );
    assert_eq!(m.cluster_objects(), Vec::<String>::new());
    assert!(m.api.list(CORE, "Machine", Some(NS)).is_empty());
    assert!(m.api.list(INFRA, "AWSSnowIPPool", Some(NS)).is_empty());

    let again = m.snowctl(&["delete", "cluster", "edge"]).await;
    assert!(again.status.success(), "{}", show(&again));
    assert!(
        text(&again.stderr)
            .contains("cluster edge is not on the management cluster; nothing to delete"),
        "{}",
        show(&again)
    );
    let missing = m.snowctl(&["describe", "cluster", "edge"]).await;
    assert_eq!(missing.status.code(), Some(1), "{}", show(&missing));
    assert!(
        text(&missing.stderr).contains("cluster edge is not on the management cluster"),
        "{}",
        show(&missing)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_management_cluster_is_named_with_what_to_check() {
    let m = management().await;
    let path = m.write_spec(
        "c.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let url = m.api.url();
    m.api.stop();
    let out = create(&m, &path).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot reach the management cluster at {url}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: check that the management cluster is up"),
        "{stderr}"
    );

    // An unreadable kubeconfig is a usage error.
    let bad = m.dir.path().join("nope.kubeconfig");
    let out = m.snowctl_with(&["describe", "cluster", "edge"], &bad).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("cannot use the kubeconfig"),
        "{}",
        show(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_capas_create_says_how_to_install_it_and_applies_nothing() {
    let api = KubeStandIn::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = Mgmt {
        kubeconfig: api.write_kubeconfig(dir.path()).unwrap(),
        capi: api.start_capi(CapiOptions::default()),
        api,
        credentials: dir.path().join("credentials"),
        ca_bundle: dir.path().join("ca-bundle.pem"),
        dir,
    };
    let path = m.write_spec(
        "c.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let out = m
        .snowctl(&[
            "create",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--skip-validations",
            "--no-secrets",
            "--cni-manifest",
            CILIUM,
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot run Snow clusters yet"), "{stderr}");
    assert!(
        stderr.contains("cluster.x-k8s.io/v1beta2 is not served"),
        "{stderr}"
    );
    assert!(
        stderr.contains("capas-system/capas-controller-manager is missing"),
        "{stderr}"
    );
    assert!(stderr.contains("snowctl init --kubeconfig"), "{stderr}");
    assert!(
        m.api
            .objects()
            .iter()
            .all(|o| o["metadata"]["namespace"] != NS)
    );
}

/// The fixture with its agent and operator images moved to `tag`.
fn cilium_with_tag(tag: &str) -> String {
    std::fs::read_to_string(CILIUM)
        .unwrap()
        .replace("v1.17.8-0", tag)
}

fn workload_images(m: &Mgmt) -> (String, String) {
    let wl = m.capi.workload("edge").expect("workload cluster");
    let ds = wl
        .get("apps/v1", "DaemonSet", Some("kube-system"), "cilium")
        .expect("cilium DaemonSet");
    let op = wl
        .get(
            "apps/v1",
            "Deployment",
            Some("kube-system"),
            "cilium-operator",
        )
        .expect("operator");
    (
        ds["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_owned(),
        op["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_installs_cilium_after_the_control_plane_is_initialized_and_nodes_become_ready() {
    let m = management().await;
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let out = create(&m, &path).await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    // EKS Anywhere's order: initialized → CNI → control plane ready → workers → cluster.
    let order = [
        "Control plane initialized",
        "Installing Cilium on the workload cluster",
        "CNI DaemonSet kube-system/cilium ready",
        "CNI Deployment kube-system/cilium-operator ready (2/2)",
        "Control plane ready (3/3)",
        "Worker group md-0 ready (1/1)",
        "Cluster ready (1/1)",
    ];
    let mut at = 0;
    for line in order {
        let found = stderr[at..]
            .find(line)
            .unwrap_or_else(|| panic!("missing {line:?} after byte {at}\n{stderr}"));
        at += found + line.len();
    }
    // The Nodes are on the workload cluster, read by the real kubectl with the kubeconfig
    // snowctl wrote.
    let kubeconfig = m.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let kubectl = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--cache-dir")
        .arg(m.dir.path().join("kube-cache"))
        .args(["get", "nodes", "-o", "json"])
        .output()
        .expect("kubectl runs");
    assert!(kubectl.status.success(), "{}", text(&kubectl.stderr));
    let nodes: Value = serde_json::from_slice(&kubectl.stdout).unwrap();
    let nodes = nodes["items"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    for node in nodes {
        let ready = node["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        assert!(ready, "{node}");
    }
    // describe says what runs.
    let described = m.snowctl(&["describe", "cluster", "edge"]).await;
    let tree = text(&described.stdout);
    assert!(
        tree.contains("CNI: Cilium DaemonSet kube-system/cilium 4/4 ready (public.ecr.aws/eks/cilium/cilium:v1.17.8-0); operator public.ecr.aws/eks/cilium/operator-generic:v1.17.8-0"),
        "{tree}"
    );
    // Healthy v1beta2 objects show no negative-polarity noise (ScalingUp=False, Paused=False…).
    assert!(!tree.contains("=False"), "{tree}");
}

/// Without --cni-manifest, create renders Cilium with the `helm` on PATH (here a stand-in
/// script that records its arguments and stdin and prints the fixture, as `helm template` would)
/// and installs what it printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_manifest_create_renders_cilium_with_helm_template() {
    let m = management().await;
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let bin = m.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = m.dir.path().join("helm.log");
    let helm = bin.join("helm");
    std::fs::write(
        &helm,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{log}'\ncat >> '{log}'\ncat '{CILIUM}'\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let search = format!("{}:/usr/bin:/bin", bin.display());
    let mut args = vec!["create", "cluster", "-f", path.to_str().unwrap()];
    args.extend(&FAST[..4]);
    let out = m
        .snowctl_env(&args, &m.kubeconfig, &[("PATH", &search)])
        .await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("Rendering Cilium with helm template"),
        "{stderr}"
    );
    assert!(
        stderr.contains("CNI DaemonSet kube-system/cilium ready"),
        "{stderr}"
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.starts_with("template oci://public.ecr.aws/eks/cilium/cilium --version "),
        "{log}"
    );
    assert!(log.contains("--namespace kube-system"), "{log}");
    assert!(log.contains("--kube-version 1."), "{log}");
    // Stored for a `--cni-stored` controller: the cluster's manifest (its settings are the
    // defaults) and every other version's defaults, each rendered once.
    let versions = snow_api::release::ReleaseInputs::embedded()
        .unwrap()
        .bundles
        .kube_versions();
    let label = "snowctl.anywhere.eks.amazonaws.com/cilium-manifest";
    let stored = (m.api.list("v1", "ConfigMap", Some(NS)).iter())
        .filter(|c| c["metadata"]["labels"][label] == "true")
        .count();
    assert_eq!(stored, versions.len(), "{}", show(&out));
    assert_eq!(log.matches("template ").count(), versions.len(), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_cni_the_control_plane_never_becomes_ready_and_the_timeout_says_why() {
    let m = management().await;
    // The same manifest but the agent no longer mounts /etc/cni/net.d: it runs, writes no CNI
    // configuration, and no Node becomes Ready.
    let no_cni = std::fs::read_to_string(CILIUM)
        .unwrap()
        .replace("path: /etc/cni/net.d", "path: /var/lib/not-cni");
    let manifest = m.write_spec("no-cni.yaml", &no_cni);
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let out = m
        .snowctl(&[
            "create",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--skip-validations",
            "--poll-interval",
            "50ms",
            "--control-plane-wait-timeout",
            "3s",
            "--cni-manifest",
            manifest.to_str().unwrap(),
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("CNI DaemonSet kube-system/cilium ready"),
        "{stderr}"
    );
    assert!(
        stderr.contains("timed out after 3s waiting for KubeadmControlPlane eksa-system/edge: every control-plane machine ready and up to date never became true (0 ready, 3 up to date, 3 running of 3; MachinesReady=False"),
        "{stderr}"
    );
    // What it said last names the trouble only: no negative-polarity condition that is False.
    assert!(!stderr.contains("ScalingUp=False"), "{stderr}");
    assert!(!stderr.contains("Paused=False"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_rolls_cilium_to_new_images_and_skip_upgrade_leaves_it() {
    let m = management().await;
    let text_spec = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large");
    let path = m.write_spec("cluster.yaml", &text_spec);
    let created = create(&m, &path).await;
    assert!(created.status.success(), "{}", show(&created));
    let upgrade = |spec_path: PathBuf, manifest: PathBuf| {
        let m = &m;
        async move {
            m.snowctl(&[
                "upgrade",
                "cluster",
                "-f",
                spec_path.to_str().unwrap(),
                "--no-backup",
                "--skip-validations",
                "--poll-interval",
                "50ms",
                "--cni-manifest",
                manifest.to_str().unwrap(),
            ])
            .await
        }
    };

    // skipUpgrade: true keeps the installed images.
    let skipping = text_spec.replace("cilium: {}", "cilium:\n        skipUpgrade: true");
    assert!(skipping.contains("skipUpgrade: true"));
    let newer = m.write_spec("cilium-new.yaml", &cilium_with_tag("v1.19.4-1"));
    let out = upgrade(m.write_spec("skip.yaml", &skipping), newer.clone()).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr)
            .contains("Cilium upgrade skipped (clusterNetwork.cniConfig.cilium.skipUpgrade: true)"),
        "{}",
        show(&out)
    );
    assert_eq!(
        workload_images(&m),
        (
            "public.ecr.aws/eks/cilium/cilium:v1.17.8-0".to_owned(),
            "public.ecr.aws/eks/cilium/operator-generic:v1.17.8-0".to_owned()
        )
    );

    // Without it, other images are applied and the DaemonSet rolls to them.
    let out = upgrade(path.clone(), newer).await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("Upgrading Cilium on the workload cluster: public.ecr.aws/eks/cilium/cilium:v1.17.8-0, operator public.ecr.aws/eks/cilium/operator-generic:v1.17.8-0 → public.ecr.aws/eks/cilium/cilium:v1.19.4-1"),
        "{stderr}"
    );
    assert_eq!(
        workload_images(&m),
        (
            "public.ecr.aws/eks/cilium/cilium:v1.19.4-1".to_owned(),
            "public.ecr.aws/eks/cilium/operator-generic:v1.19.4-1".to_owned()
        )
    );
    let wl = m.capi.workload("edge").unwrap();
    let ds = wl
        .get("apps/v1", "DaemonSet", Some("kube-system"), "cilium")
        .unwrap();
    assert_eq!(ds["metadata"]["generation"], 2);
    assert_eq!(ds["status"]["observedGeneration"], 2);
    assert_eq!(
        ds["status"]["updatedNumberScheduled"], 4,
        "{}",
        ds["status"]
    );
    assert_eq!(ds["status"]["numberReady"], 4, "{}", ds["status"]);

    // The same images again: nothing to do.
    let again = upgrade(
        path,
        m.write_spec("same.yaml", &cilium_with_tag("v1.19.4-1")),
    )
    .await;
    assert!(again.status.success(), "{}", show(&again));
    assert!(
        text(&again.stderr).contains("Cilium is installed with the manifest's images"),
        "{}",
        show(&again)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_without_a_cni_manifest_or_identity_says_what_to_give_and_applies_nothing() {
    let m = management().await;
    let path = m.write_spec(
        "cluster.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    // Without --cni-manifest snowctl renders Cilium with `helm template`; with no helm on PATH
    // that is said before anything is applied.
    let create_args = [
        "create",
        "cluster",
        "-f",
        path.to_str().unwrap(),
        "--skip-validations",
    ];
    let no_helm = m.dir.path().join("no-helm");
    std::fs::create_dir_all(&no_helm).unwrap();
    let out = m
        .snowctl_env(
            &create_args,
            &m.kubeconfig,
            &[("PATH", no_helm.to_str().unwrap())],
        )
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error: helm was not found"), "{stderr}");
    assert!(stderr.contains("or pass --cni-manifest FILE"), "{stderr}");
    assert!(
        m.api.list(CORE, "Cluster", Some(NS)).is_empty(),
        "nothing applied"
    );

    let out = m
        .snowctl(&[
            "create",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--skip-validations",
            "--no-secrets",
            "--cni-manifest",
            CILIUM,
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("the CAPAS identity Secret eksa-system/edge-snow-credentials is not on the management cluster"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: give the device credentials"),
        "{stderr}"
    );
    assert!(!stderr.contains("keep the fields"), "{stderr}");
    assert!(
        m.api
            .objects()
            .iter()
            .all(|o| o["metadata"]["namespace"] != NS)
    );

    // A file that is not a Cilium manifest is bad input (exit 2), naming the document.
    let bad = m.write_spec(
        "bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
    );
    let out = m
        .snowctl(&[
            "create",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--skip-validations",
            "--cni-manifest",
            bad.to_str().unwrap(),
        ])
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("document 1 (line 1), ConfigMap/?: metadata.name is missing"),
        "{}",
        show(&out)
    );
}

/// Two devices, each a moto server over TLS (EC2 on `127.0.0.x:8243`), and the device files for
/// them written over the management fixture's.
pub(super) struct MotoDevices {
    pub(super) ips: Vec<IpAddr>,
    pub(super) _motos: Vec<snow_test_devices::Moto>,
    clients: Vec<snow_validate::SnowDevice>,
}

pub(super) async fn moto_devices(m: &Mgmt) -> MotoDevices {
    let ca = TestCa::new("moto devices").unwrap();
    let ips: Vec<IpAddr> = (0..2).map(|_| snow_test_devices::loopback_ip()).collect();
    let (bundle, mut ini, mut motos) = (ca.pem().to_owned(), String::new(), Vec::new());
    for (i, ip) in ips.iter().enumerate() {
        let cert = ca.server_certificate(*ip).unwrap();
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = AKIDMOTODEVICE{i}\naws_secret_access_key = secretMOTOdevice{i}xyz\nregion = snow\n\n"
        ));
        let ip = *ip;
        motos.push(tokio::task::spawn_blocking(move || {
            snow_test_devices::Moto::start(ip, 8243, &cert, &[])
        }));
    }
    let mut started = Vec::new();
    for moto in motos {
        started.push(moto.await.unwrap().unwrap_or_else(|e| panic!("{e}")));
    }
    std::fs::write(&m.credentials, &ini).unwrap();
    std::fs::write(&m.ca_bundle, &bundle).unwrap();
    let creds = snow_credentials::CredentialsFile::parse("credentials", ini.into_bytes()).0;
    let (ca_bundle, _) = snow_credentials::CaBundle::parse("ca", bundle.into_bytes());
    let trust = snow_validate::Trust::from_bundle(&ca_bundle).unwrap();
    let (clients, missing) = snow_validate::SnowDevice::fleet(
        &creds,
        &trust,
        snow_validate::ClientConfig::default(),
        ips.iter().map(|ip| snow_api::DeviceIp::from(*ip)),
    );
    assert!(missing.is_empty());
    MotoDevices {
        ips,
        _motos: started,
        clients,
    }
}

/// The fingerprint moto holds for key pair `name` on a device, if it has it.
async fn key_fingerprint(device: &snow_validate::SnowDevice, name: &str) -> Option<String> {
    let out = device
        .ec2()
        .describe_key_pairs()
        .send()
        .await
        .expect("DescribeKeyPairs");
    out.key_pairs()
        .iter()
        .find(|k| k.key_name() == Some(name))
        .map(|k| k.key_fingerprint().unwrap_or_default().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_ssh_key_name_gets_one_default_key_imported_where_missing_and_kept_on_reruns() {
    let m = management().await;
    let devices = moto_devices(&m).await;
    let mut spec_text = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large")
        .replace("  sshKeyName: edge-key\n", "  sshKeyName: \"\"\n");
    for (old, new) in DEVICES.iter().zip(&devices.ips) {
        spec_text = spec_text.replace(old, &new.to_string());
    }
    let path = m.write_spec("cluster.yaml", &spec_text);
    let private = m.dir.path().join("edge/eks-a-id_rsa");
    let public = m.dir.path().join("edge/eks-a-id_rsa.pub");

    // render and --dry-run say which name a create would use, and make no file.
    let dry = m
        .snowctl(&[
            "create",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--dry-run",
        ])
        .await;
    assert!(dry.status.success(), "{}", show(&dry));
    assert!(
        text(&dry.stderr).contains("else eksa-default-edge-<uuid4>"),
        "{}",
        show(&dry)
    );
    assert!(!private.exists() && !public.exists());

    let out = create(&m, &path).await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    let saved = format!(
        "Private key saved to {p}. Use 'ssh -i {p} <username>@<Node-IP-Address>' to login to your cluster node",
        p = private.display()
    );
    assert!(stderr.contains(&saved), "{}", show(&out));
    let inventory = m.get("v1", "ConfigMap", "edge-snowctl").unwrap();
    let name = inventory["data"]["sshKeyName"].as_str().unwrap().to_owned();
    assert!(name.starts_with("eksa-default-edge-"), "{name}");
    for ip in &devices.ips {
        assert!(
            stderr.contains(&format!("{ip}: key pair {name} imported")),
            "{}",
            show(&out)
        );
    }
    for template in ["edge-control-plane-1", "edge-md-0-1"] {
        let t = m.get(INFRA, "AWSSnowMachineTemplate", template).unwrap();
        assert_eq!(t["spec"]["template"]["spec"]["sshKeyName"], name.as_str());
    }
    #[cfg(unix)]
    for file in [&private, &public] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    let (private_pem, public_line) = (
        std::fs::read(&private).unwrap(),
        std::fs::read_to_string(&public).unwrap(),
    );
    assert!(public_line.starts_with("ssh-rsa AAAA"), "{public_line}");
    let first = key_fingerprint(&devices.clients[0], &name).await.unwrap();
    assert_eq!(
        key_fingerprint(&devices.clients[1], &name).await.as_ref(),
        Some(&first)
    );

    // A re-run after the key vanished from one device: imported there only, same name and files.
    devices.clients[1]
        .ec2()
        .delete_key_pair()
        .key_name(&name)
        .send()
        .await
        .expect("DeleteKeyPair");
    let again = create(&m, &path).await;
    assert!(again.status.success(), "{}", show(&again));
    let stderr = text(&again.stderr);
    assert!(!stderr.contains("Private key saved"), "{}", show(&again));
    let (d0, d1) = (devices.ips[0], devices.ips[1]);
    assert!(
        stderr.contains(&format!("{d0}: key pair {name} already present")),
        "{}",
        show(&again)
    );
    assert!(
        stderr.contains(&format!("{d1}: key pair {name} imported")),
        "{}",
        show(&again)
    );
    assert_eq!(std::fs::read(&private).unwrap(), private_pem);
    assert_eq!(std::fs::read_to_string(&public).unwrap(), public_line);
    assert_eq!(
        key_fingerprint(&devices.clients[1], &name).await.as_ref(),
        Some(&first)
    );
    let inventory = m.get("v1", "ConfigMap", "edge-snowctl").unwrap();
    assert_eq!(inventory["data"]["sshKeyName"], name.as_str());

    // An upgrade renders the same name: nothing to roll.
    let plan = m
        .snowctl(&[
            "upgrade",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--dry-run",
        ])
        .await;
    assert!(plan.status.success(), "{}", show(&plan));
    assert!(
        text(&plan.stdout).contains(&format!("sshKeyName: {name}")),
        "{}",
        show(&plan)
    );
    assert_eq!(
        m.names(INFRA, "AWSSnowMachineTemplate"),
        ["edge-control-plane-1", "edge-md-0-1"]
    );

    // A device that refuses the import (moto rejects material that is not a key) is an error
    // naming it; the files stay as they are.
    devices.clients[1]
        .ec2()
        .delete_key_pair()
        .key_name(&name)
        .send()
        .await
        .expect("DeleteKeyPair");
    let broken = format!("ssh-rsa AAAAnot-a-key {name}\n");
    std::fs::write(&public, &broken).unwrap();
    let refused = create(&m, &path).await;
    assert_eq!(refused.status.code(), Some(1), "{}", show(&refused));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains(&format!("key pair {name} on device {d1}: ImportKeyPair")),
        "{}",
        show(&refused)
    );
    assert!(
        !stderr.contains(&format!("device {d0}:")),
        "{}",
        show(&refused)
    );
    assert_eq!(std::fs::read_to_string(&public).unwrap(), broken);
    assert_eq!(key_fingerprint(&devices.clients[1], &name).await, None);
}

const MIRROR_PASSWORD: &str = "Pa55-w0rd-SECRET-xyz";
const MIRROR_CA: &str =
    "-----BEGIN CERTIFICATE-----\nMIIBmirrorTESTca\n-----END CERTIFICATE-----\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authenticated_mirror_gets_its_secret_and_the_password_is_never_shown() {
    use base64::Engine as _;
    let m = management().await;
    let spec_text = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large").replace(
        "  kubernetesVersion: \"1.33\"\n",
        "  kubernetesVersion: \"1.33\"\n  registryMirrorConfiguration: {endpoint: 10.1.1.5, port: \"5000\", authenticate: true}\n",
    );
    let path = m.write_spec("cluster.yaml", &spec_text);
    let ca = m.dir.path().join("mirror-ca.pem");
    std::fs::write(&ca, MIRROR_CA).unwrap();
    let ca = ca.to_str().unwrap();
    let mut args = vec!["-v", "create", "cluster", "-f", path.to_str().unwrap()];
    args.extend(FAST);

    // Without the variables: findings on the field, nothing applied.
    let unset = m
        .snowctl_env(&args, &m.kubeconfig, &[("EKSA_REGISTRY_MIRROR_CA", ca)])
        .await;
    assert_eq!(unset.status.code(), Some(1), "{}", show(&unset));
    let stderr = text(&unset.stderr);
    for want in [
        "the registry mirror's user name is not given",
        "the registry mirror's password is not given",
        "export REGISTRY_USERNAME and REGISTRY_PASSWORD",
        "spec.registryMirrorConfiguration.authenticate",
    ] {
        assert!(stderr.contains(want), "missing {want:?}\n{}", show(&unset));
    }
    assert!(m.get(CORE, "Cluster", "edge").is_none());

    let env = [
        ("EKSA_REGISTRY_MIRROR_CA", ca),
        ("REGISTRY_USERNAME", "robot"),
        ("REGISTRY_PASSWORD", MIRROR_PASSWORD),
    ];
    let out = m.snowctl_env(&args, &m.kubeconfig, &env).await;
    assert!(out.status.success(), "{}", show(&out));
    let b64 = base64::engine::general_purpose::STANDARD.encode(MIRROR_PASSWORD);
    let shown = show(&out);
    assert!(
        !shown.contains(MIRROR_PASSWORD) && !shown.contains(&b64),
        "{shown}"
    );
    assert!(
        shown.contains("applied Secret/registry-credentials"),
        "{shown}"
    );

    // The Secret as EKS Anywhere's cluster manager makes it, and the nodes' mirror files
    // (authenticate adds nothing to them on Snow; the CA comes from EKSA_REGISTRY_MIRROR_CA).
    let secret = m.get("v1", "Secret", "registry-credentials").unwrap();
    let decoded = |key: &str| {
        String::from_utf8(base64_decode(secret["data"][key].as_str().unwrap())).unwrap()
    };
    assert_eq!(decoded("password"), MIRROR_PASSWORD);
    let kct = m
        .get(
            "bootstrap.cluster.x-k8s.io/v1beta2",
            "KubeadmConfigTemplate",
            "edge-md-0-1",
        )
        .unwrap();
    let kcp = m
        .get(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            "edge",
        )
        .unwrap();
    let worker = &kct["spec"]["template"]["spec"];
    let cp = &kcp["spec"]["kubeadmConfigSpec"];
    insta::assert_yaml_snapshot!(
        "authenticated_mirror",
        serde_json::json!({
            "secret": {
                "metadata": {"name": secret["metadata"]["name"], "namespace": secret["metadata"]["namespace"]},
                "type": secret["type"],
                "data": {"username": decoded("username"), "password": "<checked above, not snapshotted>"},
            },
            "workerFiles": worker["files"],
            "workerPreKubeadmCommands": worker["preKubeadmCommands"],
            "controlPlaneFiles": cp["files"].as_array().map(|f| f.iter().filter(|f| f["path"].as_str().unwrap_or_default().contains("containerd")).cloned().collect::<Vec<_>>()),
        })
    );

    // render: the Secret only when secrets are asked for; --no-secrets shows neither form.
    let render = m
        .snowctl_env(
            &[
                "create",
                "cluster",
                "--dry-run",
                "-f",
                path.to_str().unwrap(),
            ],
            &m.kubeconfig,
            &env,
        )
        .await;
    assert!(
        text(&render.stdout).contains("name: registry-credentials"),
        "{}",
        show(&render)
    );
    let quiet = m
        .snowctl_env(
            &[
                "create",
                "cluster",
                "--dry-run",
                "-f",
                path.to_str().unwrap(),
                "--no-secrets",
            ],
            &m.kubeconfig,
            &env,
        )
        .await;
    assert!(quiet.status.success(), "{}", show(&quiet));
    let shown = show(&quiet);
    assert!(
        !shown.contains(MIRROR_PASSWORD) && !shown.contains(&b64),
        "{shown}"
    );
    assert!(!shown.contains("registry-credentials"), "{shown}");

    // An unreadable CA file is a usage error naming it.
    let missing = m.dir.path().join("no-such-ca.pem");
    let bad = m
        .snowctl_env(
            &[
                "create",
                "cluster",
                "--dry-run",
                "-f",
                path.to_str().unwrap(),
            ],
            &m.kubeconfig,
            &[("EKSA_REGISTRY_MIRROR_CA", missing.to_str().unwrap())],
        )
        .await;
    assert_eq!(bad.status.code(), Some(2), "{}", show(&bad));
    assert!(
        text(&bad.stderr).contains("no-such-ca.pem"),
        "{}",
        show(&bad)
    );
}

/// Runs snowctl without the management flags (download, import), off the runtime's threads.
async fn snowctl_plain(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"))
            .args(super::sample_release(&args))
            .env("DOCKER_CONFIG", "/nonexistent-snowctl-test")
            .output()
            .expect("snowctl runs")
    })
    .await
    .unwrap()
}

use super::REFERENCE_BUNDLES as SAMPLE_BUNDLES;

/// The disconnected site of the archive tests, set up through the binary: on the "connected
/// machine" every image of the sample bundle's 1.33/ubuntu list (the Cilium chart among them,
/// pushed as `helm push` stores a chart) is downloaded from a source registry into one archive
/// (and one image alone into a second archive, without the chart); the source is stopped; the
/// archive is imported into the site registry (TLS); the cluster's spec names the site registry
/// as its mirror; a recording `helm` is first on `PATH`.
struct SiteArchive {
    chart_uri: &'static str,
    chart: snow_test_devices::registry::Pushed,
    kube_vip: &'static str,
    archive: PathBuf,
    small: PathBuf,
    site: snow_test_devices::registry::Registry,
    path: PathBuf,
    log: PathBuf,
    search: String,
    _tls: snow_test_devices::registry::Tls,
}

#[allow(
    clippy::print_stderr,
    reason = "the transcript docs/ quotes, with `--nocapture`"
)]
impl SiteArchive {
    /// `create cluster -f SPEC --artifacts ARCHIVE` (or `upgrade`) with the fast test flags.
    fn args(&self, verb: &str, archive: &Path) -> Vec<String> {
        let mut args = vec![verb, "cluster", "-f", self.path.to_str().unwrap()];
        if verb == "upgrade" {
            // The stand-in's providers lack clusterctl's CRD labels, which a backup's discovery reads:
            // backups are tested in backup.rs, on stand-ins set up by snowctl init.
            args.push("--no-backup");
        }
        args.extend(&FAST[..4]);
        args.extend(["--artifacts", archive.to_str().unwrap()]);
        args.into_iter().map(str::to_owned).collect()
    }

    /// Runs snowctl with the recording helm first on `PATH`.
    async fn run(&self, m: &Mgmt, args: &[String]) -> Output {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = m
            .snowctl_env(&args, &m.kubeconfig, &[("PATH", &self.search)])
            .await;
        eprintln!("--- snowctl {}\n{}", args.join(" "), show(&out));
        out
    }

    /// What helm recorded since the last call (the log is then removed), with the chart file
    /// of its `template` run checked: the archive's chart byte for byte, never `oci://` or a
    /// login. Returns the chart file's path.
    fn chart_file_given_to_helm(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap();
        std::fs::remove_file(&self.log).unwrap();
        let first = log.lines().next().unwrap();
        let chart_file = first
            .strip_prefix("template ")
            .and_then(|rest| rest.split(' ').next())
            .unwrap()
            .to_owned();
        assert!(chart_file.ends_with("/cilium-1.19.4-1.tgz"), "{log}");
        assert_eq!(
            first,
            format!("template {chart_file} --namespace kube-system --kube-version 1.33 -f -"),
            "{log}"
        );
        assert!(
            log.contains(&format!("chart {}", self.chart.layers[0])),
            "{log}"
        );
        assert!(
            !log.contains("oci://") && !log.contains("registry login"),
            "{log}"
        );
        chart_file
    }
}

#[allow(
    clippy::print_stderr,
    reason = "the transcript docs/ quotes, with `--nocapture`"
)]
async fn site_archive(m: &Mgmt) -> SiteArchive {
    use snow_test_devices::registry::{self as support, Registry, Tls};
    let tls = Tls::generate();
    let (source, site) = (Registry::start(None), Registry::start(Some(&tls)));
    let select = ["--kubernetes-version", "1.33", "--os", "ubuntu"];
    // The sample with a kube-vip of its own, so what is rendered shows which Bundles were read.
    let kube_vip =
        "public.ecr.aws/release-container-registry/kube-vip/kube-vip:v1.2.0-site-archive";
    let sample = std::fs::read_to_string(SAMPLE_BUNDLES).unwrap();
    let ours = sample.replace(
        "kube-vip/kube-vip:v1.2.0-eks-a-v0.0.0-dev-build.1",
        "kube-vip/kube-vip:v1.2.0-site-archive",
    );
    assert_ne!(ours, sample);
    let bundles_file = m.write_spec("bundles.yaml", &ours);
    let bundles = ["--bundles", bundles_file.to_str().unwrap()];
    let owned = |parts: &[&[&str]]| -> Vec<String> {
        parts.concat().into_iter().map(str::to_owned).collect()
    };

    // The connected machine: the images the sample bundle lists, pushed to the source.
    let out = snowctl_plain(owned(&[&["import-images", "--list"], &bundles, &select])).await;
    assert!(out.status.success(), "{}", show(&out));
    let uris: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    let chart_uri = "public.ecr.aws/eks/cilium/cilium:1.19.4-1";
    assert!(uris.iter().any(|u| u == chart_uri), "{uris:?}");
    let chart_dir = m.dir.path().join("chart");
    std::fs::create_dir_all(chart_dir.join("cilium")).unwrap();
    std::fs::write(
        chart_dir.join("cilium/Chart.yaml"),
        "apiVersion: v2\nname: cilium\nversion: 1.19.4-1\n",
    )
    .unwrap();
    let tgz = chart_dir.join("cilium-1.19.4-1.tgz");
    let status = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&tgz)
        .arg("-C")
        .arg(&chart_dir)
        .arg("cilium")
        .status()
        .unwrap();
    assert!(status.success());
    let src = support::client(&[&source], None);
    let mut chart = None;
    for uri in &uris {
        let (repo, tag) = uri.rsplit_once(':').unwrap();
        let path = repo.split_once('/').unwrap().1;
        if uri == chart_uri {
            let bytes = std::fs::read(&tgz).unwrap();
            chart = Some(support::push_helm_chart(&src, &source, path, tag, &bytes).await);
        } else {
            support::push_image(&src, &source, path, tag, 1, 512, &[]).await;
        }
    }
    let chart = chart.unwrap();
    let archive = m.dir.path().join("snow-artifacts.tar");
    let archive_arg = archive.to_str().unwrap();
    let out = snowctl_plain(owned(&[
        &["download", "artifacts", "--output-file", archive_arg],
        &bundles,
        &select,
        &["--source-registry", &source.host, "--source-insecure"],
        &["--no-components"],
    ]))
    .await;
    eprintln!("--- download artifacts\n{}", show(&out));
    assert!(out.status.success(), "{}", show(&out));
    let n = uris.len();
    assert!(
        text(&out.stdout).contains(&format!("{n} image(s): {n} downloaded")),
        "{}",
        show(&out)
    );
    // An archive of one image (so without the chart), for the error below.
    let small = m.dir.path().join("one-image.tar");
    let out = snowctl_plain(owned(&[
        &[
            "download",
            "artifacts",
            "--output-file",
            small.to_str().unwrap(),
        ],
        &bundles,
        &["--image", &uris[0]],
        &["--source-registry", &source.host, "--source-insecure"],
        &["--no-components"],
    ]))
    .await;
    assert!(out.status.success(), "{}", show(&out));

    // The site: the source is gone (any attempt to reach it fails the run).
    let source_host = source.host.clone();
    drop(source);
    assert!(std::net::TcpStream::connect(&source_host).is_err());
    let out = snowctl_plain(owned(&[
        &["import-images", "--from", archive_arg, "-r", &site.host],
        &["--ca-cert", tls.ca_file.to_str().unwrap()],
    ]))
    .await;
    eprintln!("--- import-images --from\n{}", show(&out));
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stdout).contains(&format!("{n} copied")),
        "{}",
        show(&out)
    );
    let dst = support::client(&[], Some(&tls.ca_pem));
    let (_, digest) =
        support::manifest(&dst, &format!("{}/{}:{}", site.host, chart.path, chart.tag)).await;
    assert_eq!(digest, chart.digest, "the chart is in the site registry");

    // The cluster, from the archive, through the site registry as the mirror.
    let (host, port) = site.host.rsplit_once(':').unwrap();
    let mirror = format!(
        "  registryMirrorConfiguration:\n    endpoint: \"{host}\"\n    port: \"{port}\"\n    caCertContent: {}\n",
        serde_json::to_string(&tls.ca_pem).unwrap()
    );
    let text_spec = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large").replacen(
        "  kubernetesVersion: \"1.33\"\n",
        &format!("  kubernetesVersion: \"1.33\"\n{mirror}"),
        1,
    );
    assert!(text_spec.contains("registryMirrorConfiguration"));
    let path = m.write_spec("cluster.yaml", &text_spec);
    let bin = m.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = m.dir.path().join("helm.log");
    let helm = bin.join("helm");
    // Records its arguments, the chart file's digest (when its second argument is a file) and
    // the values on stdin, then prints the fixture as `helm template` would.
    std::fs::write(
        &helm,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{log}'\nif [ -f \"$2\" ]; then echo \"chart sha256:$(sha256sum < \"$2\" | cut -d' ' -f1)\" >> '{log}'; fi\ncat >> '{log}'\ncat '{CILIUM}'\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let search = format!("{}:/usr/bin:/bin", bin.display());
    SiteArchive {
        chart_uri,
        chart,
        kube_vip,
        archive,
        small,
        site,
        path,
        log,
        search,
        _tls: tls,
    }
}

/// The disconnected site end to end, through the binary ([`site_archive`]): the cluster is
/// created on the management cluster with `--artifacts` and the site registry as the mirror.
/// The release comes from the archive's Bundles (not the embedded catalog), the Cilium manifest
/// from `helm template` (a recording stand-in) of the chart file taken out of the archive: helm
/// is given a file, never a registry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_from_the_archive_alone_with_the_source_stopped() {
    let m = management().await;
    let s = site_archive(&m).await;
    let (chart_uri, archive_arg) = (s.chart_uri, s.archive.to_str().unwrap());

    // Without the chart in the archive: said, with the archive and the chart, before anything
    // is applied.
    let out = s.run(&m, &s.args("create", &s.small)).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(s.small.to_str().unwrap())
            && stderr.contains(&format!("the Helm chart {chart_uri} is not in the archive")),
        "{stderr}"
    );
    assert!(!s.log.exists());
    assert!(m.get(CORE, "Cluster", "edge").is_none());

    let out = s.run(&m, &s.args("create", &s.archive)).await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    for line in [
        format!("Cilium chart {chart_uri} taken from {archive_arg}\n").as_str(),
        "Rendering Cilium with helm template from the chart file ",
        "CNI DaemonSet kube-system/cilium ready",
        "Cluster edge created!",
    ] {
        assert!(stderr.contains(line), "missing {line:?}\n{stderr}");
    }
    // helm was given the chart as a file (the archive's, byte for byte), no registry, no login.
    let chart_file = s.chart_file_given_to_helm();
    // The temporary chart file is gone with the run.
    assert!(!Path::new(&chart_file).exists());

    // The release is the archive's Bundles: its kube-vip (which the embedded catalog does not
    // have), with the mirror's registry configured for containerd.
    let (embedded, kube_vip) = (
        include_str!("../../../snow-api/catalog/bundles.yaml"),
        s.kube_vip,
    );
    assert!(!embedded.contains(kube_vip));
    let kcp = m
        .get(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            "edge",
        )
        .expect("KCP applied")
        .to_string();
    assert!(kcp.contains(kube_vip), "{kcp}");
    assert!(
        kcp.contains(&s.site.host),
        "the mirror is not configured: {kcp}"
    );
}

/// `upgrade cluster --artifacts` after a create from the same archive ([`site_archive`]), the
/// source stopped: the worker group grows from 1 to 2 and Cilium is rendered again, by `helm
/// template` of the chart file taken out of the archive (its digest the pushed layer's), never
/// `oci://` or a login; the MachineDeployment is scaled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_from_the_archive_alone_renders_cilium_from_its_chart_file() {
    let m = management().await;
    let s = site_archive(&m).await;
    let out = s.run(&m, &s.args("create", &s.archive)).await;
    assert!(out.status.success(), "{}", show(&out));
    s.chart_file_given_to_helm();
    let md = m.get(CORE, "MachineDeployment", "edge-md-0").unwrap();
    assert_eq!(md["spec"]["replicas"], 1, "{md:#}");

    // Two workers instead of one.
    let spec = std::fs::read_to_string(&s.path).unwrap();
    let grown = spec.replacen("count: 1\n", "count: 2\n", 1);
    assert_ne!(grown, spec);
    std::fs::write(&s.path, grown).unwrap();
    let out = s.run(&m, &s.args("upgrade", &s.archive)).await;
    assert!(out.status.success(), "{}", show(&out));
    let stderr = text(&out.stderr);
    for line in [
        format!(
            "Cilium chart {} taken from {}\n",
            s.chart_uri,
            s.archive.display()
        )
        .as_str(),
        "Rendering Cilium with helm template from the chart file ",
        "Cluster edge upgraded!",
    ] {
        assert!(stderr.contains(line), "missing {line:?}\n{stderr}");
    }
    let chart_file = s.chart_file_given_to_helm();
    assert!(!Path::new(&chart_file).exists());
    let md = m.get(CORE, "MachineDeployment", "edge-md-0").unwrap();
    assert_eq!(md["spec"]["replicas"], 2, "{md:#}");

    // Without the chart in the archive: said before anything is applied (the group stays at 2
    // though the spec now asks for 3).
    let spec = std::fs::read_to_string(&s.path).unwrap();
    std::fs::write(&s.path, spec.replacen("count: 2\n", "count: 3\n", 1)).unwrap();
    let out = s.run(&m, &s.args("upgrade", &s.small)).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains(&format!(
            "the Helm chart {} is not in the archive",
            s.chart_uri
        )),
        "{}",
        show(&out)
    );
    assert!(!s.log.exists());
    let md = m.get(CORE, "MachineDeployment", "edge-md-0").unwrap();
    assert_eq!(md["spec"]["replicas"], 2, "{md:#}");
}

/// `snowctl controller --artifacts` through the binary ([`site_archive`]): an archive without
/// the chart stops it at start (exit 2, naming the chart); with the chart, it is taken out once
/// (the archive's bytes: its sha256 is the pushed layer's), logged, kept while the controller
/// runs, and removed when it stops on SIGTERM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_takes_the_chart_out_of_the_archive_for_its_lifetime() {
    use crate::controller_binary::Reaped;
    use snow_test_kube::probe::free_addr;
    let m = management().await;
    let s = site_archive(&m).await;
    let controller = |archive: &Path, log: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"))
            .args(["controller", "--log-format", "json", "--no-leader-election"])
            .arg("--kubeconfig")
            .arg(&m.kubeconfig)
            .arg("--health-addr")
            .arg(free_addr().to_string())
            .arg("--artifacts")
            .arg(archive)
            .env("PATH", &s.search)
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap()
    };

    let log = m.dir.path().join("controller-small.log");
    let status = controller(&s.small, &log).wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!(
            "the Helm chart {} is not in the archive",
            s.chart_uri
        )),
        "{said}"
    );

    let log = m.dir.path().join("controller.log");
    let mut child = Reaped(controller(&s.archive, &log));
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !logged().contains("watching") {
        assert!(
            std::time::Instant::now() < deadline,
            "the controller never watched:\n{}",
            logged()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let line: Value = (logged().lines())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["message"] == "Cilium chart taken from the archive")
        .unwrap_or_else(|| panic!("no chart line:\n{}", logged()));
    assert_eq!(line["chart"], s.chart_uri, "{line}");
    let file = PathBuf::from(line["file"].as_str().unwrap());
    assert!(file.ends_with("cilium-1.19.4-1.tgz"), "{line}");
    let sum = std::process::Command::new("sha256sum")
        .arg(&file)
        .output()
        .unwrap();
    let sum = text(&sum.stdout);
    assert_eq!(
        format!("sha256:{}", sum.split(' ').next().unwrap()),
        s.chart.layers[0]
    );
    let term = std::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.0.id())])
        .status()
        .unwrap();
    assert!(term.success());
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{}", logged());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status:?}\n{}", logged());
    assert!(!file.exists(), "the chart file outlived the controller");
}

/// `snowctl store cilium` renders with the `helm` on PATH (a stand-in script printing the
/// fixture, or for one Kubernetes version, while `broken` exists, something that is not a Cilium
/// manifest) and stores the spec's own manifest and each version's defaults: a run where one
/// render is bad stores the others and exits 1, the next one renders only what is missing, and
/// a third writes nothing and runs no helm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_cilium_stores_each_manifest_once_and_a_rerun_finishes_what_failed() {
    let m = management().await;
    let always = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large").replace(
        "      cilium: {}\n",
        "      cilium:\n        policyEnforcementMode: always\n",
    );
    let path = m.write_spec("cluster.yaml", &always);
    let versions = snow_api::release::ReleaseInputs::embedded()
        .unwrap()
        .bundles
        .kube_versions();
    assert!(versions.len() >= 2, "{versions:?}");
    let bin = m.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = m.dir.path().join("helm.log");
    let broken = m.dir.path().join("broken");
    let helm = bin.join("helm");
    std::fs::write(
        &helm,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{log}'\ncat > /dev/null\ncase \"$*\" in *'--kube-version {bad} '*) [ -f '{broken}' ] && {{ echo 'kind: Nope'; exit 0; }};; esac\ncat '{CILIUM}'\n",
            log = log.display(),
            bad = versions[1],
            broken = broken.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let search = format!("{}:/usr/bin:/bin", bin.display());
    let store = async || {
        let args = ["store", "cilium", "-f", path.to_str().unwrap()];
        m.snowctl_env(&args, &m.kubeconfig, &[("PATH", &search)])
            .await
    };
    let stored = || {
        let label = "snowctl.anywhere.eks.amazonaws.com/cilium-manifest";
        (m.api.list("v1", "ConfigMap", Some(NS)).iter())
            .filter(|c| c["metadata"]["labels"][label] == "true")
            .count()
    };
    let helm_runs = || {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        log.lines().filter(|l| l.starts_with("template ")).count()
    };

    std::fs::write(&broken, "").unwrap();
    let out = store().await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("cannot store the Cilium manifest eksa-system/cilium-manifest-"),
        "{}",
        show(&out)
    );
    assert_eq!(
        text(&out.stdout).matches(": FAILED").count(),
        1,
        "{}",
        show(&out)
    );
    // Everything but versions[1]'s defaults was stored.
    assert_eq!(stored(), versions.len(), "{}", show(&out));
    assert_eq!(helm_runs(), 1 + versions.len());

    std::fs::remove_file(&broken).unwrap();
    let out = store().await;
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert_eq!(stored(), versions.len() + 1, "{stdout}");
    assert_eq!(
        stdout.matches(": already stored").count(),
        versions.len(),
        "{stdout}"
    );
    assert_eq!(stdout.matches(": stored").count(), 1, "{stdout}");
    assert!(
        stdout.contains("(this cluster's settings): already stored"),
        "{stdout}"
    );
    assert_eq!(helm_runs(), 2 + versions.len());

    let writes = m.api.writes();
    let out = store().await;
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(
        text(&out.stdout).matches(": already stored").count(),
        versions.len() + 1
    );
    assert_eq!(m.api.writes(), writes);
    assert_eq!(helm_runs(), 2 + versions.len());
}

/// `create cluster` and `upgrade cluster` of a spec named like an imported cluster are refused
/// before anything is applied (`snow_lifecycle::import`), so no control plane or machine is made
/// for the cluster an import recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_and_upgrade_refuse_a_cluster_that_was_imported() {
    let m = management().await;
    m.api
        .put(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .unwrap();
    m.api
        .put(serde_json::json!({
            "apiVersion": INFRA, "kind": "AWSSnowCluster",
            "metadata": {"name": "edge", "namespace": NS, "annotations": {"cluster.x-k8s.io/managed-by": "snowctl"}},
            "spec": {"controlPlaneEndpoint": {"host": "192.168.1.50", "port": 6443}},
        }))
        .unwrap();
    m.api
        .put(serde_json::json!({
            "apiVersion": CORE, "kind": "Cluster",
            "metadata": {"name": "edge", "namespace": NS, "labels": {"snowctl.anywhere.eks.amazonaws.com/imported": "true"}},
            "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowCluster", "name": "edge"}},
        }))
        .unwrap();
    let path = m.write_spec(
        "edge.yaml",
        &spec("192.168.1.50", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let out = create(&m, &path).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("was imported observe-only")
            && text(&out.stderr).contains("create cluster is refused"),
        "{}",
        show(&out)
    );
    let mut args = vec!["upgrade", "cluster", "-f", path.to_str().unwrap()];
    args.extend(FAST);
    let out = m.snowctl(&args).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("upgrade cluster is refused"),
        "{}",
        show(&out)
    );
    let out = m.snowctl(&["renew", "certificates", "edge"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("renew certificates is refused"),
        "{}",
        show(&out)
    );
    assert!(m.names(CORE, "MachineDeployment").is_empty());
    assert!(m.names(CORE, "Machine").is_empty());
    let infra = m.get(INFRA, "AWSSnowCluster", "edge").unwrap();
    assert!(infra["spec"]["identityRef"].is_null(), "{infra:#}");
}

/// Issue 30: `describe cluster` says when the API server's serving certificate expires (read
/// from the handshake) and each machine's age; `renew certificates` replaces every
/// control-plane machine and waits for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renew_certificates_replaces_every_control_plane_machine_and_describe_shows_expiry() {
    let m = management().await;
    let created = create(
        &m,
        &m.write_spec(
            "c.yaml",
            &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
        ),
    )
    .await;
    assert!(created.status.success(), "{}", show(&created));
    let workload = m.capi.workload("edge").expect("a workload cluster");
    let (bundle, _) =
        snow_credentials::CaBundle::parse("served", workload.certificate_pem().as_bytes().to_vec());
    let served = snow_credentials::format_utc(bundle.certificates()[0].not_after);

    let described = m
        .snowctl(&["describe", "cluster", "edge", "-o", "json"])
        .await;
    assert!(described.status.success(), "{}", show(&described));
    let json: Value = serde_json::from_slice(&described.stdout).unwrap();
    let read = &json["apiServerCertificate"]["read"];
    assert_eq!(read["notAfter"], served.as_str(), "{json}");
    assert_eq!(read["server"], workload.url().as_str());
    let described = m.snowctl(&["describe", "cluster", "edge"]).await;
    let tree = text(&described.stdout);
    assert!(
        tree.contains(&format!("API server certificate: expires {served} (in ")),
        "{tree}"
    );
    assert!(
        tree.lines()
            .filter(|l| l.contains("Machine/"))
            .all(|l| l.contains(", age ")),
        "{tree}"
    );

    let control_plane = |m: &Mgmt| -> Vec<String> {
        let mut names: Vec<String> = m
            .api
            .list(CORE, "Machine", Some(NS))
            .iter()
            .filter(|o| o["metadata"]["labels"]["cluster.x-k8s.io/control-plane"].is_string())
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let before = control_plane(&m);
    assert_eq!(before.len(), 3);
    let out = m
        .snowctl(&[
            "renew",
            "certificates",
            "edge",
            "--poll-interval",
            "50ms",
            "--control-plane-wait-timeout",
            "60s",
        ])
        .await;
    assert!(out.status.success(), "{}", show(&out));
    let after = control_plane(&m);
    assert_eq!(after.len(), 3);
    assert!(
        before.iter().all(|b| !after.contains(b)),
        "{before:?} {after:?}"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "Control-plane machines replaced: {} → {}",
            before.join(", "),
            after.join(", ")
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("Control-plane certificates of cluster edge renewed"),
        "{stderr}"
    );
    assert!(!stderr.contains("External etcd"), "{stderr}");

    let missing = m.snowctl(&["renew", "certificates", "nope"]).await;
    assert_eq!(missing.status.code(), Some(1), "{}", show(&missing));
    assert!(
        text(&missing.stderr).contains("cluster nope is not on the management cluster"),
        "{}",
        show(&missing)
    );
}
