//! `snowctl support-bundle` and the automatic bundle of a failed `create cluster`, through the
//! binary against the Kubernetes API stand-in (its simulated Cluster API controllers and
//! workload cluster); the bundle unpacked by GNU tar and every byte searched for the secrets
//! planted on both clusters, in the credentials file and in the kubeconfigs.

use super::lifecycle::{CILIUM, DEVICES, Group, Mgmt, create, management, moto_devices, spec};
use super::{show, text};
use serde_json::{Value, json};
use std::{
    path::{Path, PathBuf},
    process::Output,
};

const PLANTED_MGMT: &str = "mgmt-secret-value-7f3a9c";
const PLANTED_WORKLOAD: &str = "workload-secret-value-51be02";
const PLANTED_ENV: &str = "env-secret-value-c0ffee";

fn b64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// snowctl in the test's directory without the device files in its environment (no device is
/// called: the cluster's devices are not on this machine).
async fn snowctl(m: &Mgmt, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(args)
        .arg("--kubeconfig")
        .arg(&m.kubeconfig)
        .current_dir(m.dir.path())
        .env_remove("KUBECONFIG")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
    tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
        .await
        .unwrap()
}

fn pod(ns: &str, name: &str, container: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": container, "image": "example.com/c:v1",
            "env": [{"name": "TOKEN", "value": PLANTED_ENV}]}]},
        "status": {"phase": "Running"}})
}

/// Unpacks `archive` with GNU tar into a new directory; returns it and the entry names in
/// archive order.
fn unpack(archive: &Path) -> (tempfile::TempDir, Vec<String>) {
    let out = tempfile::tempdir().unwrap();
    let listed = std::process::Command::new("tar")
        .arg("-tzf")
        .arg(archive)
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success());
    let names = text(&listed.stdout).lines().map(str::to_owned).collect();
    (out, names)
}

fn every_file(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_bundle_holds_both_clusters_and_never_a_secret_and_is_never_written_over_a_file() {
    let m = management().await;
    let path = m.write_spec(
        "c.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let out = create(&m, &path).await;
    assert!(out.status.success(), "{}", show(&out));
    let workload = m.capi.workload("edge").expect("workload cluster");
    // Secrets on both clusters, a provider pod with a secret in its environment and a log, a
    // provider Deployment that is not Available.
    m.api
        .put(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "edge-planted", "namespace": "eksa-system"},
            "type": "Opaque", "data": {"token": b64(PLANTED_MGMT)}}))
        .unwrap();
    m.api
        .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "capas-system"}}))
        .unwrap();
    m.api
        .put(pod("capas-system", "capas-controller-manager-1", "manager"))
        .unwrap();
    m.api.set_pod_log(
        "capas-system",
        "capas-controller-manager-1",
        "manager",
        "reconciling AWSSnowCluster eksa-system/edge\n",
    );
    m.api
        .put(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "capas-controller-manager", "namespace": "capas-system", "generation": 1},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "manager", "image": "example.com/capas:v1"}]}}}}))
        .unwrap();
    workload
        .put(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "planted", "namespace": "kube-system"},
            "type": "Opaque", "data": {"password": b64(PLANTED_WORKLOAD)}}))
        .unwrap();
    workload
        .put(pod("kube-system", "coredns-1", "coredns"))
        .unwrap();
    workload.set_pod_log(
        "kube-system",
        "coredns-1",
        "coredns",
        "[INFO] plugin/reload\n",
    );

    let out = snowctl(
        &m,
        &["support-bundle", "edge", "--output-file", "bundle.tar.gz"],
    )
    .await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("Support bundle written to bundle.tar.gz"),
        "{}",
        show(&out)
    );
    let archive = m.dir.path().join("bundle.tar.gz");
    let (dir, names) = unpack(&archive);
    assert_eq!(names[..2], ["summary.txt", "summary.json"], "{names:#?}");
    for wanted in [
        "management/capi/Cluster/edge.json",
        "management/capi/KubeadmControlPlane/edge.json",
        "management/secrets.json",
        "management/capas-system/logs/capas-controller-manager-1/manager.log",
        "workload/kube-system/logs/coredns-1/coredns.log",
        "workload/cni/DaemonSet/cilium.json",
        "snowctl/version.txt",
        "snowctl/inventory/spec.yaml",
    ] {
        assert!(names.iter().any(|n| n == wanted), "{wanted}: {names:#?}");
    }
    let summary = std::fs::read_to_string(dir.path().join("summary.txt")).unwrap();
    assert_eq!(text(&out.stdout), summary, "stdout is the summary");
    insta::assert_snapshot!("support_bundle_summary", summary);

    // Every byte of every file, for each planted value, plain and base64.
    let credentials = std::fs::read_to_string(&m.credentials).unwrap();
    let mut planted: Vec<String> = vec![
        PLANTED_MGMT.into(),
        PLANTED_WORKLOAD.into(),
        PLANTED_ENV.into(),
        m.api.token().into(),
        workload.token().into(),
    ];
    for line in credentials.lines() {
        if let Some((key, value)) = line.split_once(" = ")
            && key.starts_with("aws_")
        {
            planted.push(value.to_owned());
        }
    }
    assert!(planted.len() >= 9, "{planted:?}");
    planted.extend(planted.clone().iter().map(|v| b64(v)));
    let mut files = Vec::new();
    every_file(dir.path(), &mut files);
    assert_eq!(files.len(), names.len());
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for value in &planted {
            assert!(
                !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
                "{} holds the planted value {value}",
                file.display()
            );
        }
    }

    // Never over a file: refused with exit 2, the file as it was; --force replaces it.
    let before = std::fs::read(&archive).unwrap();
    let again = snowctl(
        &m,
        &["support-bundle", "edge", "--output-file", "bundle.tar.gz"],
    )
    .await;
    assert_eq!(again.status.code(), Some(2), "{}", show(&again));
    assert!(
        text(&again.stderr).contains("bundle.tar.gz exists, and replacing it was not asked")
            && text(&again.stderr).contains("hint: choose another file, or pass --force"),
        "{}",
        show(&again)
    );
    assert_eq!(std::fs::read(&archive).unwrap(), before);
    let forced = snowctl(
        &m,
        &[
            "support-bundle",
            "edge",
            "--output-file",
            "bundle.tar.gz",
            "--force",
        ],
    )
    .await;
    assert!(forced.status.success(), "{}", show(&forced));
    // Never through a link, even with --force.
    let target = m.dir.path().join("elsewhere");
    std::fs::write(&target, "keep").unwrap();
    std::os::unix::fs::symlink(&target, m.dir.path().join("link.tar.gz")).unwrap();
    let linked = snowctl(
        &m,
        &[
            "support-bundle",
            "edge",
            "--output-file",
            "link.tar.gz",
            "--force",
        ],
    )
    .await;
    assert_eq!(linked.status.code(), Some(2), "{}", show(&linked));
    assert!(
        text(&linked.stderr).contains("is not a regular file"),
        "{}",
        show(&linked)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

fn bundles(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("edge")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("support-bundle-"))
        })
        .collect();
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_create_leaves_a_support_bundle_unless_told_not_to() {
    let m = management().await;
    m.capi
        .set_stall(vec![("MachineDeployment".into(), "edge-md-0".into())]);
    let path = m.write_spec(
        "c.yaml",
        &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let spec_path = path.to_str().unwrap();
    let args = |skip: bool| {
        let mut args = vec![
            "create",
            "cluster",
            "-f",
            spec_path,
            "--skip-validations",
            "--poll-interval",
            "50ms",
            "--per-machine-wait-timeout",
            "1s",
            "--cni-manifest",
            CILIUM,
        ];
        if skip {
            args.push("--no-support-bundle");
        }
        args
    };
    // Input snowctl cannot use (exit 2) touches no cluster: no bundle.
    let unusable = [
        "create",
        "cluster",
        "-f",
        spec_path,
        "--skip-validations",
        "--cni-manifest",
        "/nonexistent.yaml",
    ];
    let out = m.snowctl(&unusable).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(bundles(m.dir.path()), Vec::<PathBuf>::new());

    let out = m.snowctl(&args(true)).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        !text(&out.stderr).contains("Support bundle"),
        "{}",
        show(&out)
    );
    assert_eq!(bundles(m.dir.path()), Vec::<PathBuf>::new());

    let out = m.snowctl(&args(false)).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("timed out after 1s waiting for MachineDeployment eksa-system/edge-md-0"),
        "{stderr}"
    );
    let found = bundles(m.dir.path());
    assert_eq!(found.len(), 1, "{stderr}");
    let shown = found[0].strip_prefix(m.dir.path()).unwrap();
    assert!(
        stderr.contains(&format!("Support bundle written to ./{}", shown.display())),
        "{stderr}"
    );
    // In ./edge/, where the cluster's kubeconfig goes once it is up.
    assert_eq!(found[0].parent(), Some(m.dir.path().join("edge").as_path()));
    let (dir, names) = unpack(&found[0]);
    assert_eq!(names[0], "summary.txt");
    assert!(
        names
            .iter()
            .any(|n| n == "management/capi/MachineDeployment/edge-md-0.json"),
        "{names:#?}"
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.txt")).unwrap();
    assert!(
        summary.starts_with("Support bundle of cluster edge"),
        "{summary}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_device_files_the_bundle_describes_the_devices_and_names_one_that_does_not_answer()
{
    let m = management().await;
    let mut devices = moto_devices(&m).await;
    let mut spec_text = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large");
    for (old, new) in DEVICES.iter().zip(&devices.ips) {
        spec_text = spec_text.replace(old, &new.to_string());
    }
    let path = m.write_spec("c.yaml", &spec_text);
    let out = create(&m, &path).await;
    assert!(out.status.success(), "{}", show(&out));
    // The second device stops answering.
    devices._motos.truncate(1);
    let (credentials, ca_bundle) = (
        m.credentials.to_str().unwrap(),
        m.ca_bundle.to_str().unwrap(),
    );
    let args = [
        "support-bundle",
        "edge",
        "--output-file",
        "b.tar.gz",
        "--credentials",
        credentials,
        "--ca-bundle",
        ca_bundle,
        // moto under load answers slowly; the stopped device is refused at once.
        "--timeout",
        "30s",
    ];
    let out = snowctl(&m, &args).await;
    assert!(out.status.success(), "{}", show(&out));
    let (dir, names) = unpack(&m.dir.path().join("b.tar.gz"));
    assert!(
        names.iter().any(|n| n == "devices/inventory.json"),
        "{names:#?}"
    );
    let inventory: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("devices/inventory.json")).unwrap())
            .unwrap();
    let (up, down) = (devices.ips[0].to_string(), devices.ips[1].to_string());
    let listed = inventory["devices"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{inventory:#}");
    let reachable =
        |ip: &str| listed.iter().find(|d| d["device"] == ip).unwrap()["reachable"].clone();
    assert_eq!(reachable(&up), true, "{inventory:#}");
    assert_eq!(reachable(&down), false, "{inventory:#}");
    let summary = text(&out.stdout);
    assert!(
        summary.contains(&format!("[device-unreachable] device {down} (device)")),
        "{summary}"
    );
    assert!(!summary.contains(&format!("device {up} ")), "{summary}");
    // The device keys of the credentials file are nowhere in it.
    let credentials = std::fs::read_to_string(&m.credentials).unwrap();
    let mut keys: Vec<String> = credentials
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .filter(|(k, _)| k.starts_with("aws_"))
        .map(|(_, v)| v.to_owned())
        .collect();
    assert_eq!(keys.len(), 4);
    keys.extend(keys.clone().iter().map(|v| b64(v)));
    let mut files = Vec::new();
    every_file(dir.path(), &mut files);
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for key in &keys {
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "{} holds {key}",
                file.display()
            );
        }
    }
}
