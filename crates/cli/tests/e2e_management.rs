//! Opt-in end to end test against a **real** management cluster and real Snowball Edge devices:
//! `snowctl create cluster` (with the device preflight), `describe cluster`, `delete cluster`.
//!
//! Skipped unless `SNOWCTL_E2E_KUBECONFIG` is set: CI and `cargo test` on a workstation have no
//! management cluster, so without it the test returns at once and proves nothing (it is not a
//! pass of the lifecycle; `tests/lifecycle.rs` covers that against the API stand-in).
//!
//! When opted in it needs:
//!
//! - `SNOWCTL_E2E_KUBECONFIG`: the management cluster (Cluster API, CAPAS and, for external
//!   etcd, etcdadm installed);
//! - `SNOWCTL_E2E_SPEC`: a cluster spec for the real devices; the cluster must not exist yet
//!   (the test refuses to touch a cluster it did not create);
//! - `EKSA_AWS_CREDENTIALS_FILE` and `EKSA_AWS_CA_BUNDLES_FILE`: the devices' credentials and CA
//!   bundle (preflight and the CAPAS identity Secret).
//!
//! ```text
//! SNOWCTL_E2E_KUBECONFIG=mgmt.kubeconfig SNOWCTL_E2E_SPEC=cluster.yaml \
//! EKSA_AWS_CREDENTIALS_FILE=credentials EKSA_AWS_CA_BUNDLES_FILE=ca-bundle.pem \
//!   cargo test -p snowctl --test e2e_management -- --nocapture
//! ```
//!
//! It is bounded by the CLI's own timeouts (control plane 60m, etcd 60m, 10m per worker
//! machine, deletion 30m); snowctl's progress goes straight to the terminal. Once create has
//! run, delete runs whatever happened, so a failed run does not leave machines on the devices.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn required(var: &str) -> PathBuf {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => panic!("SNOWCTL_E2E_KUBECONFIG is set, so this test runs: it also needs {var}"),
    }
}

/// snowctl in `dir`, on the management cluster, its stderr (progress) on the terminal.
fn snowctl(dir: &Path, kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .stderr(Stdio::inherit())
        .output()
        .expect("snowctl runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
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
    let text = std::fs::read_to_string(&spec).expect("the spec is readable");
    let report = snow_api::check(&text).expect("the spec parses");
    let name = match &report.spec {
        Some(s) if report.is_valid() => s.name().to_owned(),
        _ => panic!("SNOWCTL_E2E_SPEC has errors: {:#?}", report.findings),
    };
    let dir = tempfile::tempdir().unwrap();
    let spec_arg = spec.to_str().expect("a UTF-8 spec path");

    // Never adopt (and then delete) a cluster someone else made.
    let before = snowctl(dir.path(), &kubeconfig, &["describe", "cluster", &name]);
    assert_eq!(before.status.code(), Some(0), "describe before create");
    assert!(
        stdout(&before).contains("is not on the management cluster"),
        "cluster {name} already exists on the management cluster; the test creates and deletes its own\n{}",
        stdout(&before)
    );

    let created = snowctl(
        dir.path(),
        &kubeconfig,
        &["create", "cluster", "-f", spec_arg],
    );
    let described = created
        .status
        .success()
        .then(|| snowctl(dir.path(), &kubeconfig, &["describe", "cluster", &name]));
    // Whatever create did, take it away again (exit 2: nothing was applied).
    let deleted = (created.status.code() != Some(2))
        .then(|| snowctl(dir.path(), &kubeconfig, &["delete", "cluster", &name]));

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
        tree.contains(&format!("✅ KubeadmControlPlane/{name}")),
        "the control plane is not ready in describe:\n{tree}"
    );
    let deleted = deleted.expect("delete ran");
    assert_eq!(deleted.status.code(), Some(0), "delete cluster failed");
    let after = snowctl(dir.path(), &kubeconfig, &["describe", "cluster", &name]);
    assert!(
        stdout(&after).contains("is not on the management cluster"),
        "cluster {name} is still there after delete:\n{}",
        stdout(&after)
    );
}
