//! The management cluster's kubeconfig found as kubectl finds it, through the binary:
//! `--kubeconfig`, else the `KUBECONFIG` list merged, else `~/.kube/config`; `--context`; and
//! `create cluster`'s choice between that cluster and a create from nothing (`--self-managed`).
//! Every run sets `HOME` and `KUBECONFIG` itself: nothing of this machine's is read.

use super::lifecycle::{CILIUM, Group, spec};
use super::{show, text};
use serde_json::json;
use snow_test_kube::KubeStandIn;
use std::path::Path;
use std::process::{Command, Output};

/// `snowctl args` in `dir` with `HOME=home` and `KUBECONFIG` as given (unset for `None`).
async fn snowctl(dir: &Path, home: &Path, kubeconfig: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(super::sample_release(args))
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("KUBECONFIG")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env("NO_COLOR", "1");
    if let Some(list) = kubeconfig {
        cmd.env("KUBECONFIG", list);
    }
    tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
        .await
        .unwrap()
}

/// The stand-in's kubeconfig in two halves, neither usable alone: `users.yaml` holds the
/// context `mgmt` (current: cluster `stand-in`, user `admin`) and the user; `clusters.yaml`
/// holds the cluster `stand-in` (its CA in `ca.pem`, a path relative to that file), a cluster
/// `nowhere` (nothing listens) and the contexts `elsewhere` (current) and `mgmt`, both to
/// `nowhere`.
fn halves(api: &KubeStandIn, dir: &Path) {
    std::fs::write(dir.join("ca.pem"), api.ca_pem()).unwrap();
    let users = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: mgmt\ncontexts:\n- name: mgmt\n  context: {{cluster: stand-in, user: admin}}\nusers:\n- name: admin\n  user: {{token: {}}}\n",
        api.token()
    );
    let clusters = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: elsewhere\nclusters:\n- name: stand-in\n  cluster:\n    server: {}\n    certificate-authority: ca.pem\n- name: nowhere\n  cluster: {{server: 'https://127.0.0.1:1'}}\ncontexts:\n- name: elsewhere\n  context: {{cluster: nowhere, user: admin}}\n- name: mgmt\n  context: {{cluster: nowhere, user: admin}}\n",
        api.url()
    );
    std::fs::write(dir.join("users.yaml"), users).unwrap();
    std::fs::write(dir.join("clusters.yaml"), clusters).unwrap();
}

/// A management cluster with Cluster API's CRDs and one Cluster, `edge`.
async fn with_a_cluster() -> KubeStandIn {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().expect("CAPI CRDs");
    api.put(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "edge", "namespace": "eksa-system"},
        "spec": {}
    }))
    .unwrap();
    api
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_list_is_merged_as_kubectl_merges_it() {
    let api = with_a_cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    halves(&api, dir.path());
    let (d, h) = (dir.path(), home.path());
    // Empty entries and a missing file are skipped, as kubectl skips them.
    let list = "users.yaml::missing.yaml:clusters.yaml";
    let out = snowctl(d, h, Some(list), &["describe", "cluster", "edge"]).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(text(&out.stdout).contains("edge"), "{}", show(&out));
    let out = snowctl(d, h, Some(list), &["get", "clusters"]).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(text(&out.stdout).contains("edge"), "{}", show(&out));

    // A delete says first which management cluster it works on (the files of the list).
    let out = snowctl(d, h, Some(list), &["delete", "cluster", "absent"]).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr).starts_with(
            "Deleting cluster absent from the management cluster of kubeconfig users.yaml:missing.yaml:clusters.yaml (its current context)\n"
        ),
        "{}",
        show(&out)
    );
    assert!(
        text(&out.stderr)
            .contains("cluster absent is not on the management cluster; nothing to delete"),
        "{}",
        show(&out)
    );

    // kubectl, given the same list, agrees: the same current context, the same cluster found.
    let kubectl = |args: &[&str]| {
        let out = Command::new("kubectl")
            .args(args)
            .current_dir(d)
            .env("HOME", h)
            .env("KUBECONFIG", list)
            .output()
            .expect("kubectl runs");
        assert!(out.status.success(), "kubectl {args:?}: {}", show(&out));
        text(&out.stdout)
    };
    let current = kubectl(&[
        "config",
        "view",
        "--merge",
        "-o",
        "jsonpath={.current-context}",
    ]);
    assert_eq!(current, "mgmt");
    let found = kubectl(&[
        "get",
        "clusters.cluster.x-k8s.io",
        "-n",
        "eksa-system",
        "-o",
        "name",
    ]);
    assert_eq!(found.trim(), "cluster.cluster.x-k8s.io/edge");

    // In the other order, clusters.yaml's current context and its `mgmt` (both to nowhere) win.
    let swapped = "clusters.yaml:users.yaml";
    let out = snowctl(d, h, Some(swapped), &["describe", "cluster", "edge"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text(&out.stderr).contains("127.0.0.1:1"), "{}", show(&out));
    // Each half alone names the file and what is missing (exit 2).
    let out = snowctl(d, h, Some("users.yaml"), &["describe", "cluster", "edge"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(text(&out.stderr).contains("users.yaml"), "{}", show(&out));
    // A file that is not a kubeconfig is named, whatever its place in the list (exit 2).
    std::fs::write(d.join("bad.yaml"), "clusters: [1, 2\n").unwrap();
    let bad = "users.yaml:clusters.yaml:bad.yaml";
    let out = snowctl(d, h, Some(bad), &["get", "clusters"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("cannot use the kubeconfig bad.yaml"),
        "{}",
        show(&out)
    );
    // Every file missing: each is named.
    let out = snowctl(d, h, Some("gone-a:gone-b"), &["get", "clusters"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("gone-a:gone-b: none of these files exists"),
        "{}",
        show(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_kube_config_is_used_and_context_picks_one_of_its_contexts() {
    let api = with_a_cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (d, h) = (dir.path(), home.path());
    // Nothing anywhere: the command says where it looked.
    let out = snowctl(d, h, None, &["describe", "cluster", "edge"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains(
            "found no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or write ~/.kube/config"
        ),
        "{}",
        show(&out)
    );
    // A context asked for with nothing found: the file it would be in is named.
    let out = snowctl(
        d,
        h,
        None,
        &["describe", "cluster", "edge", "--context", "stand-in"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let default = h.join(".kube/config");
    assert!(
        text(&out.stderr).contains(&format!("cannot use the kubeconfig {}", default.display())),
        "{}",
        show(&out)
    );
    // ~/.kube/config: its current context goes nowhere, context `stand-in` reaches the cluster.
    std::fs::create_dir(h.join(".kube")).unwrap();
    std::fs::write(h.join(".kube/config"), two_contexts(&api)).unwrap();
    let out = snowctl(
        d,
        h,
        None,
        &["describe", "cluster", "edge", "--context", "stand-in"],
    )
    .await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(text(&out.stdout).contains("edge"), "{}", show(&out));
    let out = snowctl(d, h, None, &["describe", "cluster", "edge"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text(&out.stderr).contains("127.0.0.1:1"), "{}", show(&out));
    let out = snowctl(
        d,
        h,
        None,
        &["describe", "cluster", "edge", "--context", "typo"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("no context typo (its contexts: nowhere, stand-in)"),
        "{}",
        show(&out)
    );
    // An empty KUBECONFIG is no list (kubectl's rule): ~/.kube/config stands.
    let out = snowctl(
        d,
        h,
        Some(""),
        &["get", "clusters", "--context", "stand-in"],
    )
    .await;
    assert!(out.status.success(), "{}", show(&out));
}

/// The stand-in's kubeconfig with a second cluster `nowhere` (nothing listens) whose context
/// is the current one.
fn two_contexts(api: &KubeStandIn) -> String {
    let text = api
        .kubeconfig()
        .replace("current-context: stand-in", "current-context: nowhere");
    text.replace(
        "contexts:\n",
        "contexts:\n- name: nowhere\n  context:\n    cluster: nowhere\n    user: stand-in\n",
    )
    .replace(
        "clusters:\n",
        "clusters:\n- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_uses_home_kube_config_unless_self_managed_and_says_which() {
    // A cluster without Cluster API: a create there stops at the provider check.
    let api = KubeStandIn::start().await.expect("stand-in");
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (d, h) = (dir.path(), home.path());
    std::fs::write(
        d.join("cluster.yaml"),
        spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    )
    .unwrap();
    let create = [
        "create",
        "cluster",
        "-f",
        "cluster.yaml",
        "--skip-validations",
        "--no-secrets",
        "--no-support-bundle",
        "--cni-manifest",
        CILIUM,
    ];
    // No kubeconfig anywhere: from nothing, said first (it stops at the missing components).
    let from_nothing = [&create[..], &["--components-dir", "missing"]].concat();
    let out = snowctl(d, h, None, &from_nothing).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let first = text(&out.stderr);
    assert!(
        first.starts_with("Creating cluster edge from nothing (no kubeconfig found: no --kubeconfig, KUBECONFIG or ~/.kube/config): it will manage itself\n"),
        "{}",
        show(&out)
    );

    // With ~/.kube/config, the create goes there.
    std::fs::create_dir(h.join(".kube")).unwrap();
    std::fs::write(h.join(".kube/config"), api.kubeconfig()).unwrap();
    let out = snowctl(d, h, None, &create).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = text(&out.stderr);
    let line = format!(
        "Creating cluster edge on the management cluster of kubeconfig {} (its current context)\n",
        h.join(".kube/config").display()
    );
    assert!(stderr.starts_with(&line), "{}", show(&out));
    assert!(stderr.contains("cannot run Snow clusters yet"), "{stderr}");

    // --self-managed: from nothing, the kubeconfig not even read.
    let before = api.requests().len();
    let self_managed = [&from_nothing[..], &["--self-managed"]].concat();
    let out = snowctl(d, h, None, &self_managed).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).starts_with(
            "Creating cluster edge from nothing (--self-managed): it will manage itself\n"
        ),
        "{}",
        show(&out)
    );
    assert_eq!(api.requests().len(), before, "{}", show(&out));

    // Bootstrap flags with the management cluster found say how to create from nothing.
    let boot = [&create[..], &["--keep-bootstrap"]].concat();
    let out = snowctl(d, h, None, &boot).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("drop them, or pass --self-managed"),
        "{}",
        show(&out)
    );
    assert_eq!(api.requests().len(), before, "{}", show(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_managed_conflicts_with_kubeconfig_and_context() {
    let dir = tempfile::tempdir().unwrap();
    let (d, h) = (dir.path(), dir.path());
    for flag in [["--kubeconfig", "k"], ["--context", "c"]] {
        let args = [
            "create",
            "cluster",
            "-f",
            "c.yaml",
            "--self-managed",
            flag[0],
            flag[1],
        ];
        let out = snowctl(d, h, None, &args).await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            text(&out.stderr).contains("cannot be used with"),
            "{}",
            show(&out)
        );
    }
}
