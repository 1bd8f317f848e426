//! `snowctl create cluster` of a management cluster whose spec names a FluxConfig, through the
//! real binary: the stand-in management cluster (simulated Cluster API, and the simulated Flux
//! that fetches with the real `git` and builds with the real `kubectl kustomize`), a real git
//! server on loopback (Debian's `sshd` with `git-shell`), the repository read back with the real
//! `git`. The spec is `edge`, which manages itself (`managementCluster.name` is its own), so
//! GitOps is set up on the management cluster the kubeconfig names.

use super::lifecycle::{Group, Mgmt, management, spec};
use super::{show, text};
use snow_test_devices::git_server::{GitRepos, SshGit};
use snow_test_kube::flux::{FluxHandle, FluxOptions, install_manifest};
use snow_test_kube::{WorkloadHandle, WorkloadOptions};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const REPO: &str = "fleet.git";
const NS: &str = "flux-system";
const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io/v1";

/// Every file the create commits, in EKS Anywhere's layout (`clusters/<cluster>` by default),
/// beside the README that was there.
const FILES: [&str; 6] = [
    "README.md",
    "clusters/edge/edge/eksa-system/eksa-cluster.yaml",
    "clusters/edge/edge/eksa-system/kustomization.yaml",
    "clusters/edge/flux-system/gotk-components.yaml",
    "clusters/edge/flux-system/gotk-sync.yaml",
    "clusters/edge/flux-system/kustomization.yaml",
];

/// The management cluster with Flux's simulation (acting once Flux is installed), and the
/// repository `fleet.git` holding one commit (a README on `main`).
struct World {
    m: Mgmt,
    repos: GitRepos,
    _workloads: WorkloadHandle,
    _flux: FluxHandle,
}

async fn world() -> World {
    let m = management().await;
    let workloads = m.api.start_workloads(WorkloadOptions::default());
    let flux = m
        .api
        .start_flux(FluxOptions {
            step: Duration::from_millis(20),
            ..FluxOptions::default()
        })
        .expect("flux");
    let repos = GitRepos::new().expect("repos");
    repos.create(REPO).expect("repository");
    repos
        .commit(REPO, "main", "README.md", "# fleet\n")
        .expect("first commit");
    World {
        m,
        repos,
        _workloads: workloads,
        _flux: flux,
    }
}

impl World {
    /// The spec `edge` naming FluxConfig `edge` of `url`, written as `gitops.yaml`.
    fn gitops_spec(&self, url: &str) -> std::path::PathBuf {
        let cluster = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large").replacen(
            "spec:\n",
            "spec:\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
            1,
        );
        let text = format!(
            "{cluster}---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: edge\nspec:\n  branch: main\n  git:\n    repositoryUrl: {url}\n    sshKeyAlgorithm: ed25519\n"
        );
        self.m.write_spec("gitops.yaml", &text)
    }

    /// The real `git` on the server's bare repository.
    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(self.repos.path(REPO))
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    }

    fn commits(&self) -> usize {
        (self.git(&["rev-list", "--count", "refs/heads/main"]).trim())
            .parse()
            .expect("a count")
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "refs/heads/main"])
            .trim()
            .to_owned()
    }

    /// Every object in Flux's namespace, and Flux's cluster-wide kinds' CRDs.
    fn flux_objects(&self) -> Vec<String> {
        (self.m.api.objects().into_iter())
            .filter(|o| {
                o["metadata"]["namespace"] == NS
                    || o["metadata"]["name"] == NS
                    || (o["metadata"]["name"].as_str()).is_some_and(|n| n.ends_with("fluxcd.io"))
            })
            .map(|o| format!("{}/{}", o["kind"], o["metadata"]["name"]))
            .collect()
    }

    /// `create cluster` of `spec` on the stand-in, Flux's install manifest given, `env` added.
    async fn create(&self, spec: &Path, env: &[(&str, &str)]) -> Output {
        let install = self.m.dir.path().join("flux-install.yaml");
        std::fs::write(&install, install_manifest()).unwrap();
        let args = [
            "create",
            "cluster",
            "-f",
            spec.to_str().unwrap(),
            "--flux-manifest",
            install.to_str().unwrap(),
            "--skip-validations",
            "--poll-interval",
            "50ms",
            "--per-machine-wait-timeout=1m",
            "--cni-manifest",
            super::lifecycle::CILIUM,
        ];
        self.m.snowctl_env(&args, &self.m.kubeconfig, env).await
    }
}

/// Runs `work` for at most `seconds`.
async fn bounded<T>(seconds: u64, work: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(seconds), work)
        .await
        .expect("the test took too long")
}

/// The credentials in EKS Anywhere's variables: exit 0, one commit in EKS Anywhere's layout,
/// Flux's Kustomization Ready at it, the revision said, the key shown nowhere; the same create
/// again exits 0 and commits nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitops_create_over_ssh_commits_once_and_flux_applies_it() {
    bounded(240, async {
        let w = world().await;
        let ssh = SshGit::start(&w.repos).expect("sshd");
        let spec = w.gitops_spec(&ssh.url(REPO));
        let env = [
            (
                "EKSA_GIT_PRIVATE_KEY",
                ssh.client_key.private_key_file.to_str().unwrap(),
            ),
            (
                "EKSA_GIT_KNOWN_HOSTS",
                ssh.known_hosts_file.to_str().unwrap(),
            ),
        ];
        let before = w.commits();
        let key_lines: Vec<&str> = (ssh.client_key.private_key.lines())
            .filter(|l| !l.starts_with("-----") && l.len() > 16)
            .collect();
        assert!(!key_lines.is_empty());

        for round in 0..2 {
            let out = w.create(&spec, &env).await;
            assert!(
                out.status.success(),
                "run {round}: {}\nsshd: {}",
                show(&out),
                ssh.log()
            );
            assert_eq!(w.commits(), before + 1, "run {round}");
            let head = w.head();
            let revision = format!("main@sha1:{head}");
            let said = match round {
                0 => "committed by this run",
                _ => "already in the repository",
            };
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains(&format!("GitOps: Flux applied {revision} ({said})")),
                "run {round}: {stderr}"
            );
            let files = w.git(&["ls-tree", "-r", "--name-only", "refs/heads/main"]);
            assert_eq!(files.lines().collect::<Vec<_>>(), FILES);
            let sync = w.git(&[
                "show",
                "refs/heads/main:clusters/edge/flux-system/gotk-sync.yaml",
            ]);
            assert!(sync.contains(&format!("url: {}", ssh.url(REPO))), "{sync}");
            let ks = (w.m.api)
                .get(KUSTOMIZE, "Kustomization", Some(NS), NS)
                .expect("Flux's Kustomization");
            assert_eq!(ks["status"]["lastAppliedRevision"], revision.as_str());
            let ready = (ks["status"]["conditions"].as_array().into_iter().flatten())
                .find(|c| c["type"] == "Ready");
            assert_eq!(ready.map(|c| &c["status"]), Some(&"True".into()), "{ks}");
            // Flux applied the cluster's spec from the repository.
            let declared = (w.m.api)
                .get(
                    snow_api::names::EKSA_API_VERSION,
                    "Cluster",
                    Some("default"),
                    "edge",
                )
                .expect("the Cluster Flux applied");
            let by = &declared["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"];
            assert_eq!(by, NS, "{declared}");
            let message = w.git(&["log", "-1", "--format=%s", "refs/heads/main"]);
            assert_eq!(message.trim(), snow_provision::gitops::COMMIT_MESSAGE);
            for line in &key_lines {
                for shown in [text(&out.stdout), stderr.clone()] {
                    assert!(!shown.contains(line), "the private key was shown:\n{shown}");
                }
            }
        }
    })
    .await;
}

/// The same spec without EKS Anywhere's git variables: a usage error naming both, before
/// anything is applied or committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitops_create_without_the_git_variables_names_both_and_does_nothing() {
    bounded(120, async {
        let w = world().await;
        let ssh = SshGit::start(&w.repos).expect("sshd");
        let spec = w.gitops_spec(&ssh.url(REPO));
        let before = w.head();
        let out = w.create(&spec, &[]).await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let stderr = text(&out.stderr);
        let named: Vec<&str> = (stderr.lines())
            .filter(|l| l.contains("EKSA_GIT_PRIVATE_KEY") && l.contains("EKSA_GIT_KNOWN_HOSTS"))
            .collect();
        assert_eq!(named.len(), 1, "{stderr}");
        assert_eq!(w.flux_objects(), Vec::<String>::new());
        let cluster = w.m.api.get(
            "cluster.x-k8s.io/v1beta2",
            "Cluster",
            Some("eksa-system"),
            "edge",
        );
        assert!(cluster.is_none(), "the cluster was applied");
        assert_eq!(w.head(), before);
    })
    .await;
}

/// `--flux-manifest` for a spec without `gitOpsRef`: a usage error saying to drop it, nothing
/// applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitops_flux_manifest_without_a_flux_config_is_a_usage_error() {
    bounded(120, async {
        let m = management().await;
        let path = m.write_spec(
            "cluster.yaml",
            &spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large"),
        );
        let install = m.dir.path().join("flux-install.yaml");
        std::fs::write(&install, install_manifest()).unwrap();
        let out = m
            .snowctl(&[
                "create",
                "cluster",
                "-f",
                path.to_str().unwrap(),
                "--flux-manifest",
                install.to_str().unwrap(),
                "--skip-validations",
                "--cni-manifest",
                super::lifecycle::CILIUM,
            ])
            .await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("names none") && stderr.contains("drop --flux-manifest"),
            "{stderr}"
        );
    })
    .await;
}

/// The EKS Anywhere variables of the SSH server's credentials.
fn ssh_env(ssh: &SshGit) -> [(&'static str, String); 2] {
    [
        (
            "EKSA_GIT_PRIVATE_KEY",
            ssh.client_key.private_key_file.display().to_string(),
        ),
        (
            "EKSA_GIT_KNOWN_HOSTS",
            ssh.known_hosts_file.display().to_string(),
        ),
    ]
}

/// A workload cluster `second` of the GitOps management cluster `edge` through the binary: its
/// create commits its two files in `edge`'s tree (Flux's install manifest not asked for), Flux
/// applies them and the cluster is Ready; its delete removes its folder by one commit and the
/// cluster is gone; `edge`'s files are untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitops_workload_cluster_is_created_and_deleted_by_commit() {
    bounded(280, async {
        let w = world().await;
        let ssh = SshGit::start(&w.repos).expect("sshd");
        let env = ssh_env(&ssh);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let out = w.create(&w.gitops_spec(&ssh.url(REPO)), &env).await;
        assert!(out.status.success(), "edge: {}", show(&out));
        let before = w.commits();

        let cluster = spec("192.168.1.101", &[Group("md-0", 1, "edge")], "sbe-c.large")
            .replace("name: edge", "name: second")
            .replacen(
                "spec:\n",
                "spec:\n  managementCluster: {name: edge}\n  gitOpsRef: {kind: FluxConfig, name: second}\n",
                1,
            );
        let yaml = format!(
            "{cluster}---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: second\nspec:\n  branch: main\n  git:\n    repositoryUrl: {}\n    sshKeyAlgorithm: ed25519\n",
            ssh.url(REPO)
        );
        let path = w.m.write_spec("second.yaml", &yaml);
        let args = [
            "create",
            "cluster",
            "-f",
            path.to_str().unwrap(),
            "--skip-validations",
            "--poll-interval",
            "50ms",
            "--per-machine-wait-timeout=1m",
            "--cni-manifest",
            super::lifecycle::CILIUM,
        ];
        let out = w.m.snowctl_env(&args, &w.m.kubeconfig, &env).await;
        assert!(out.status.success(), "second: {}\nsshd: {}", show(&out), ssh.log());
        assert_eq!(w.commits(), before + 1);
        let stderr = text(&out.stderr);
        let revision = format!("main@sha1:{}", w.head());
        assert!(
            stderr.contains(&format!("GitOps: Flux applied {revision} (committed by this run)")),
            "{stderr}"
        );
        let changed = w.git(&["diff", "--name-only", "HEAD~1", "HEAD"]);
        assert_eq!(
            changed.lines().collect::<Vec<_>>(),
            [
                "clusters/edge/second/eksa-system/eksa-cluster.yaml",
                "clusters/edge/second/eksa-system/kustomization.yaml"
            ]
        );
        let built = (w.m.api).get("cluster.x-k8s.io/v1beta2", "Cluster", Some("eksa-system"), "second");
        let ready = built.as_ref().and_then(|c| {
            (c["status"]["conditions"].as_array().into_iter().flatten())
                .find(|c| c["type"] == "Ready")
                .map(|c| c["status"].clone())
        });
        assert_eq!(ready, Some("True".into()), "{built:?}");

        let out = (w.m)
            .snowctl_env(
                &["delete", "cluster", "second", "--poll-interval", "50ms"],
                &w.m.kubeconfig,
                &env,
            )
            .await;
        assert!(out.status.success(), "delete: {}", show(&out));
        assert_eq!(w.commits(), before + 2);
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("GitOps: the cluster's files are not in main@sha1:{} (removed by this run)", w.head())),
            "{stderr}"
        );
        assert_eq!(
            w.git(&["ls-tree", "-r", "--name-only", "refs/heads/main"]).lines().collect::<Vec<_>>(),
            FILES
        );
        let built = (w.m.api).get("cluster.x-k8s.io/v1beta2", "Cluster", Some("eksa-system"), "second");
        assert!(built.is_none(), "{built:?}");
    })
    .await;
}
