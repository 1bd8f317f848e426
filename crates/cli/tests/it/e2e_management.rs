//! End to end: `snowctl create cluster`, `describe cluster`, `delete cluster`, the same round
//! trip twice. Always against the Kubernetes API stand-in (snow-test-kube, with its simulated
//! Cluster API controllers; device preflight skipped, as there are no devices), so CI proves the
//! test itself is right; and, opted in, against a **real** management cluster and real Snowball
//! Edge devices (with the device preflight).
//!
//! The real run is skipped unless `SNOWCTL_E2E_KUBECONFIG` is set: CI and `cargo test` on a
//! workstation have no management cluster.
//!
//! When opted in it needs:
//!
//! - `SNOWCTL_E2E_KUBECONFIG`: the management cluster (Cluster API, CAPAS and, for external
//!   etcd, etcdadm installed);
//! - `SNOWCTL_E2E_SPEC`: a cluster spec for the real devices; the cluster must not exist yet
//!   (the test refuses to touch a cluster it did not create);
//! - `SNOWCTL_E2E_CNI_MANIFEST`: the rendered Cilium manifest for it (`--cni-manifest`);
//! - `EKSA_AWS_CREDENTIALS_FILE` and `EKSA_AWS_CA_BUNDLES_FILE`: the devices' credentials and CA
//!   bundle (preflight and the CAPAS identity Secret).
//!
//! ```text
//! SNOWCTL_E2E_KUBECONFIG=mgmt.kubeconfig SNOWCTL_E2E_SPEC=cluster.yaml SNOWCTL_E2E_CNI_MANIFEST=cilium.yaml \
//! EKSA_AWS_CREDENTIALS_FILE=credentials EKSA_AWS_CA_BUNDLES_FILE=ca-bundle.pem \
//!   cargo test -p snowctl --test it e2e_management -- --nocapture
//! ```
//!
//! It is bounded by the CLI's own timeouts (control plane 60m, etcd 60m, 10m per worker
//! machine, deletion 30m); snowctl's progress goes straight to the terminal. Once create has
//! run, delete runs whatever happened, so a failed run does not leave machines on the devices.

use snow_test_devices::TestCa;
use snow_test_kube::{CapiOptions, KubeStandIn};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn required(var: &str) -> PathBuf {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => panic!("SNOWCTL_E2E_KUBECONFIG is set, so this test runs: it also needs {var}"),
    }
}

/// snowctl in `dir`, on the management cluster, its stderr (progress) kept.
fn snowctl(dir: &Path, kubeconfig: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(super::sample_release(args))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .stderr(Stdio::piped())
        .output()
        .expect("snowctl runs");
    // The progress, for `--nocapture`.
    #[allow(clippy::print_stderr, reason = "a test shows the command's progress")]
    {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
    }
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `describe` of a cluster that is not there: exit 1, said on stderr.
fn assert_absent(dir: &Path, kubeconfig: &Path, name: &str, when: &str) {
    let out = snowctl(dir, kubeconfig, &["describe", "cluster", name]);
    assert_eq!(out.status.code(), Some(1), "describe {when}");
    assert!(
        stderr(&out).contains("is not on the management cluster"),
        "cluster {name} is on the management cluster {when}; the test creates and deletes its own\n{}",
        stdout(&out)
    );
}

/// Create, describe and delete the cluster of `spec` on the management cluster of `kubeconfig`;
/// `create_args` are added to create.
fn round_trip(kubeconfig: &Path, spec: &Path, create_args: &[&str]) {
    let text = std::fs::read_to_string(spec).expect("the spec is readable");
    let name = match snow_api::check(&text).map(snow_api::Report::into_valid) {
        Ok(Ok(spec)) => spec.name().to_owned(),
        other => panic!("the spec has errors: {other:#?}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let spec_arg = spec.to_str().expect("a UTF-8 spec path");

    // Never adopt (and then delete) a cluster someone else made.
    assert_absent(dir.path(), kubeconfig, &name, "before create");
    let mut create = vec!["create", "cluster", "-f", spec_arg];
    create.extend(create_args);
    let created = snowctl(dir.path(), kubeconfig, &create);
    let described = created
        .status
        .success()
        .then(|| snowctl(dir.path(), kubeconfig, &["describe", "cluster", &name]));
    // Whatever create did, take it away again (exit 2: nothing was applied).
    let deleted = (created.status.code() != Some(2))
        .then(|| snowctl(dir.path(), kubeconfig, &["delete", "cluster", &name]));

    assert_eq!(created.status.code(), Some(0), "create cluster failed");
    let kubeconfig_file = dir
        .path()
        .join(&name)
        .join(format!("{name}-eks-a-cluster.kubeconfig"));
    assert!(kubeconfig_file.is_file(), "no workload kubeconfig written");
    let described = described.expect("describe ran after a successful create");
    assert_eq!(described.status.code(), Some(0), "describe cluster failed");
    let tree = stdout(&described);
    assert!(
        tree.contains(&format!("✓ KubeadmControlPlane/{name}")),
        "the control plane is not ready in describe:\n{tree}"
    );
    let deleted = deleted.expect("delete ran");
    assert_eq!(deleted.status.code(), Some(0), "delete cluster failed");
    assert_absent(dir.path(), kubeconfig, &name, "after delete");
}

#[test]
fn create_describe_delete_on_the_stand_in() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let api = rt.block_on(KubeStandIn::start()).expect("stand-in");
    api.install_capi().expect("CAPI CRDs");
    let _capi = rt.block_on(async {
        api.start_capi(CapiOptions {
            step: Duration::from_millis(20),
            ..CapiOptions::default()
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let devices = ["192.168.1.11", "192.168.1.12"];
    let spec = dir.path().join("cluster.yaml");
    let text = snow_api::template::cluster_config(&snow_api::template::TemplateOptions {
        name: "e2e".into(),
        devices: devices.map(str::to_owned).to_vec(),
        endpoint: Some("192.168.1.100".into()),
        ssh_key_name: Some("e2e-key".into()),
        ..Default::default()
    })
    .unwrap();
    std::fs::write(&spec, text).unwrap();
    // The identity Secret is rendered from these; nothing dials the devices.
    let ca = TestCa::new("devices").unwrap();
    let mut bundle = String::new();
    let mut ini = String::new();
    for (i, ip) in devices.iter().enumerate() {
        bundle.push_str(&ca.server_certificate(ip.parse().unwrap()).unwrap().cert_pem);
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = AKIDE2EDEVICE{i}\naws_secret_access_key = secretE2Edevice{i}xyz\nregion = snow\n"
        ));
    }
    let credentials = dir.path().join("credentials");
    let ca_bundle = dir.path().join("ca-bundle.pem");
    std::fs::write(&credentials, ini).unwrap();
    std::fs::write(&ca_bundle, bundle).unwrap();
    let (credentials, ca_bundle) = (credentials.to_str().unwrap(), ca_bundle.to_str().unwrap());
    round_trip(
        &kubeconfig,
        &spec,
        &[
            "--skip-validations",
            "--credentials",
            credentials,
            "--ca-bundle",
            ca_bundle,
            "--poll-interval",
            "50ms",
            "--cni-manifest",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../lifecycle/tests/fixtures/cilium.yaml"
            ),
        ],
    );
}

#[test]
fn create_describe_delete_on_a_real_management_cluster() {
    // Not opted in: skipped (nothing was tested).
    let Some(kubeconfig) = std::env::var_os("SNOWCTL_E2E_KUBECONFIG").filter(|v| !v.is_empty())
    else {
        return;
    };
    let kubeconfig = std::fs::canonicalize(PathBuf::from(kubeconfig))
        .expect("SNOWCTL_E2E_KUBECONFIG names a readable file");
    let spec = std::fs::canonicalize(required("SNOWCTL_E2E_SPEC"))
        .expect("SNOWCTL_E2E_SPEC names a readable file");
    for var in ["EKSA_AWS_CREDENTIALS_FILE", "EKSA_AWS_CA_BUNDLES_FILE"] {
        assert!(required(var).is_file(), "{var} is not a file");
    }
    let cni = std::fs::canonicalize(required("SNOWCTL_E2E_CNI_MANIFEST"))
        .expect("SNOWCTL_E2E_CNI_MANIFEST names a readable file");
    round_trip(
        &kubeconfig,
        &spec,
        &["--cni-manifest", cni.to_str().expect("a UTF-8 path")],
    );
}
