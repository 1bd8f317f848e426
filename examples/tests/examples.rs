//! Every example program run on its arguments: the offline ones on the repository's specs, the
//! device files made here and the embedded catalog; `preflight` on its in-memory devices;
//! `create_cluster` against the Kubernetes API stand-in with its simulated Cluster API
//! controllers. Each program's file is compiled here as a module and its `run` called, so the
//! test needs no built example binaries. And docs/reference/library.md's walk-through is the doctest of
//! `lib.rs`, which compiles.

#[path = "../create_cluster.rs"]
#[allow(
    dead_code,
    reason = "main is the example's entry point; the test calls run"
)]
mod create_cluster;
#[path = "../encode_credentials.rs"]
#[allow(
    dead_code,
    reason = "main is the example's entry point; the test calls run"
)]
mod encode_credentials;
#[path = "../list_images.rs"]
#[allow(
    dead_code,
    reason = "main is the example's entry point; the test calls run"
)]
mod list_images;
#[path = "../preflight.rs"]
#[allow(
    dead_code,
    reason = "main is the example's entry point; the test calls run"
)]
mod preflight;
#[path = "../render_cluster.rs"]
#[allow(
    dead_code,
    reason = "main is the example's entry point; the test calls run"
)]
mod render_cluster;
#[path = "../validate_spec.rs"]
#[allow(
    dead_code,
    reason = "main is the example's entry point; the test calls run"
)]
mod validate_spec;

use snow_test_devices::TestCa;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

const DEVICES: [&str; 2] = ["192.168.1.11", "192.168.1.12"];

fn repo(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// A credentials file with a profile per device and a CA bundle with a certificate for each.
fn device_files(dir: &Path) -> (PathBuf, PathBuf) {
    let ca = TestCa::new("devices").unwrap();
    let (mut ini, mut bundle) = (String::new(), String::new());
    for (i, ip) in DEVICES.iter().enumerate() {
        let cert = ca
            .server_certificate(ip.parse::<IpAddr>().unwrap())
            .unwrap();
        bundle.push_str(&cert.cert_pem);
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = AKIDTESTDEVICE{i}\naws_secret_access_key = secretTESTdevice{i}xyz\nregion = snow\n\n"
        ));
    }
    let (credentials, ca_bundle) = (dir.join("credentials"), dir.join("ca-bundle.pem"));
    std::fs::write(&credentials, ini).unwrap();
    std::fs::write(&ca_bundle, bundle).unwrap();
    (credentials, ca_bundle)
}

#[test]
fn validate_spec_passes_the_full_spec_and_fails_a_broken_one() {
    let valid = repo("crates/snow-api/tests/specs/valid-full.yaml");
    assert_eq!(
        validate_spec::run(std::slice::from_ref(&valid)),
        ExitCode::SUCCESS
    );
    // The same spec with a control plane of no machines.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&valid).unwrap();
    let broken = text.replacen("count: 3", "count: 0", 1);
    assert_ne!(broken, text, "the spec has a count of 3 to break");
    let path = dir.path().join("broken.yaml");
    std::fs::write(&path, broken).unwrap();
    assert_eq!(
        validate_spec::run(&[path.display().to_string()]),
        ExitCode::from(1)
    );
    assert_eq!(validate_spec::run(&[]), ExitCode::from(2));
}

#[test]
fn render_cluster_renders_the_full_spec() {
    let valid = repo("crates/snow-api/tests/specs/valid-full.yaml");
    assert_eq!(render_cluster::run(&[valid]), ExitCode::SUCCESS);
    assert_eq!(
        render_cluster::run(&strings(&["/nonexistent/cluster.yaml"])),
        ExitCode::from(2)
    );
}

#[test]
fn encode_credentials_encodes_sound_files_and_refuses_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let (credentials, ca_bundle) = device_files(dir.path());
    let args = [
        credentials.display().to_string(),
        ca_bundle.display().to_string(),
    ];
    assert_eq!(encode_credentials::run(&args), ExitCode::SUCCESS);
    let missing = [
        dir.path().join("nothing").display().to_string(),
        ca_bundle.display().to_string(),
    ];
    assert_eq!(encode_credentials::run(&missing), ExitCode::from(2));
}

#[test]
fn preflight_demo_finds_the_locked_device() {
    // The demo's second device is locked and its third has no key pair: error findings.
    assert_eq!(preflight::run(&[]), ExitCode::from(1));
}

#[test]
fn list_images_lists_the_embedded_catalog_for_a_version() {
    let mut out = Vec::new();
    list_images::run(&strings(&["/nonexistent/bundles.yaml"]), &mut out).unwrap_err();
    let mut out = Vec::new();
    list_images::run(&[], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("cilium"), "{text}");
    assert!(text.contains("cluster-api-provider-aws-snow"), "{text}");
}

/// The spec the lifecycle tests create: three control-plane machines and two workers on two
/// devices.
fn spec() -> String {
    snow_test_kube::edge_spec::EdgeSpec {
        devices: &DEVICES,
        ..Default::default()
    }
    .yaml()
}

#[test]
fn create_cluster_creates_on_the_stand_in_and_writes_the_kubeconfig() {
    // The stand-in runs on its own runtime; the example starts its own, outside this one.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (api, capi) = runtime.block_on(async {
        let api = snow_test_kube::KubeStandIn::start().await.unwrap();
        api.install_capi().unwrap();
        let capi = api.start_capi(snow_test_kube::CapiOptions {
            step: Duration::from_millis(20),
            ..snow_test_kube::CapiOptions::default()
        });
        (api, capi)
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let (credentials, ca_bundle) = device_files(dir.path());
    let spec_path = dir.path().join("cluster.yaml");
    std::fs::write(&spec_path, spec()).unwrap();
    let cilium = repo("crates/lifecycle/tests/fixtures/cilium.yaml");
    let args = [
        spec_path.display().to_string(),
        kubeconfig.display().to_string(),
        cilium,
        credentials.display().to_string(),
        ca_bundle.display().to_string(),
    ];
    assert_eq!(create_cluster::run(&args, dir.path()), ExitCode::SUCCESS);
    let written = dir.path().join("edge/edge-eks-a-cluster.kubeconfig");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("kind: Config"), "{text}");
    // Cilium was applied on the workload cluster.
    let workload = capi.workload("edge").expect("workload cluster");
    assert!(
        (workload.get("apps/v1", "DaemonSet", Some("kube-system"), "cilium")).is_some(),
        "no Cilium DaemonSet"
    );
    // Without the manifest the program says what is missing (usage), exit 2.
    assert_eq!(
        create_cluster::run(&args[..2], dir.path()),
        ExitCode::from(2)
    );
    drop(runtime);
}

/// The Rust blocks of docs/reference/library.md, joined, are the visible lines of the doctest in
/// `lib.rs` (which `cargo test` compiles), so the walk-through a reader copies compiles.
#[test]
fn readme_library_walk_through_is_the_compiled_doctest() {
    let readme = std::fs::read_to_string(repo("docs/reference/library.md")).unwrap();
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line == "```rust" {
            blocks.extend(
                lines
                    .by_ref()
                    .take_while(|l| *l != "```")
                    .map(str::to_owned),
            );
        }
    }
    let lib = std::fs::read_to_string(format!("{}/lib.rs", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let docs: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = docs.iter().position(|l| *l == "```no_run").unwrap() + 1;
    let code: Vec<String> = docs[start..]
        .iter()
        .take_while(|l| **l != "```")
        .filter(|l| !l.starts_with("# "))
        .map(|l| (*l).to_owned())
        .collect();
    assert!(!blocks.is_empty());
    assert_eq!(blocks, code);
}
