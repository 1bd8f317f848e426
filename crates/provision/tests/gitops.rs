//! GitOps at a management cluster's create (`snow_provision::gitops`), against the Kubernetes
//! API stand-in with its simulated Flux (which fetches with the real `git` and builds with the
//! real `kubectl kustomize`) and real git servers on loopback (Debian's `sshd` with
//! `git-shell`, `git http-backend` over HTTPS); the repository read back with the real `git`.

// Progress goes to stderr: the test harness shows it when a test fails.
#![allow(clippy::print_stderr)]

mod support;

use serde_json::Value;
use snow_git::{Auth, GitError, HttpCredential, HttpsAuth, Secret, SshAuth};
use snow_lifecycle::{Event, KubeconfigSource, Management, init::InitOptions};
use snow_provision::gitops::{
    self, BootstrapOptions, BootstrapStep, Bootstrapped, GitOpsError, GitOpsInputs,
};
use snow_provision::{ProvisionError, target};
use snow_test_devices::TestCa;
use snow_test_devices::git_server::{GitRepos, HttpAuth, HttpsGit, SshGit, SshKey};
use snow_test_kube::edge_spec::EdgeSpec;
use snow_test_kube::{FluxHandle, FluxOptions, KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Flux's install manifest as the fixture has it: source-controller and kustomize-controller
/// (see its SOURCES.md).
const FIXTURE: &str = include_str!("../../capi-render/tests/data/flux/install.yaml");

/// The fixture with the two other default controllers (all four, as Flux's `install.yaml`).
fn install() -> String {
    snow_test_kube::flux::install_manifest()
}
const REPO: &str = "fleet.git";
const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io/v1";
const SOURCE: &str = "source.toolkit.fluxcd.io/v1";
const NS: &str = "flux-system";

/// Every file the bootstrap writes, in EKS Anywhere's layout (`clusters/<cluster>` by default).
const LAYOUT: [&str; 5] = [
    "clusters/edge/edge/eksa-system/eksa-cluster.yaml",
    "clusters/edge/edge/eksa-system/kustomization.yaml",
    "clusters/edge/flux-system/gotk-components.yaml",
    "clusters/edge/flux-system/gotk-sync.yaml",
    "clusters/edge/flux-system/kustomization.yaml",
];

/// Runs `work` for at most `seconds`.
async fn bounded<T>(seconds: u64, work: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(seconds), work)
        .await
        .expect("the test took too long")
}

/// The stand-in with its deployment controller and simulated Flux, a client of it, and the
/// repository `fleet.git` (a README committed on `main`, as EKS Anywhere asks of a generic git
/// repository).
struct World {
    api: KubeStandIn,
    _workloads: WorkloadHandle,
    _flux: FluxHandle,
    mgmt: Management,
    repos: GitRepos,
    _dir: tempfile::TempDir,
}

impl World {
    async fn start() -> World {
        let api = KubeStandIn::start().await.expect("stand-in");
        let workloads = api.start_workloads(WorkloadOptions::default());
        let flux = api
            .start_flux(FluxOptions {
                step: Duration::from_millis(20),
                ..FluxOptions::default()
            })
            .expect("flux");
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = api.write_kubeconfig(dir.path()).expect("kubeconfig");
        let mgmt = Management::connect(&KubeconfigSource::file(&kubeconfig))
            .await
            .expect("connect");
        let repos = GitRepos::new().expect("repos");
        repos.create(REPO).expect("repository");
        repos
            .commit(REPO, "main", "README.md", "# fleet\n")
            .expect("first commit");
        World {
            api,
            _workloads: workloads,
            _flux: flux,
            mgmt,
            repos,
            _dir: dir,
        }
    }

    /// The real `git` on the server's bare repository.
    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(self.repos.path(REPO))
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "refs/heads/main"])
            .trim()
            .to_owned()
    }

    fn commits(&self) -> usize {
        self.git(&["rev-list", "--count", "refs/heads/main"])
            .trim()
            .parse()
            .expect("a count")
    }

    fn files(&self) -> Vec<String> {
        self.git(&["ls-tree", "-r", "--name-only", "refs/heads/main"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn get(&self, api_version: &str, kind: &str, name: &str) -> Option<Value> {
        self.api.get(api_version, kind, Some(NS), name)
    }

    /// Bootstraps `edge` with the FluxConfig of `url`, the events recorded.
    async fn bootstrap(
        &self,
        url: &str,
        branch: &str,
        auth: &Auth,
        stop_after: Option<BootstrapStep>,
    ) -> (Result<Bootstrapped, GitOpsError>, Vec<Event>) {
        let text = spec_text(url, branch);
        let spec = snow_api::check(&text)
            .expect("spec reads")
            .into_valid()
            .unwrap_or_else(|r| panic!("spec findings: {:?}", r.findings));
        let inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
        let release = inputs.resolve(&spec, None).expect("release");
        let options = BootstrapOptions {
            stop_after,
            ..options()
        };
        let mut events = Vec::new();
        let done = gitops::bootstrap(
            &self.mgmt,
            &spec,
            &release,
            &install(),
            auth,
            &options,
            &mut |e| {
                eprintln!("{e:?}");
                events.push(e);
            },
        )
        .await;
        (done, events)
    }
}

/// Bounded waits, looked at every 20 ms.
fn options() -> BootstrapOptions {
    BootstrapOptions {
        init: InitOptions {
            crd_timeout: Duration::from_secs(30),
            deployment_timeout: Some(Duration::from_secs(60)),
            poll: Duration::from_millis(20),
        },
        limits: snow_git::Limits {
            timeout: Duration::from_secs(30),
            ..snow_git::Limits::default()
        },
        sync_timeout: Duration::from_secs(60),
        poll: Duration::from_millis(20),
        ..BootstrapOptions::default()
    }
}

/// The spec `edge` naming FluxConfig `edge` of `url` and `branch` (`gitOpsRef`).
fn spec_text(url: &str, branch: &str) -> String {
    let cluster = EdgeSpec::default().yaml().replacen(
        "spec:\n",
        "spec:\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
        1,
    );
    format!(
        "{cluster}---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: edge\nspec:\n  branch: {branch}\n  git:\n    repositoryUrl: {url}\n    sshKeyAlgorithm: ed25519\n"
    )
}

fn ssh_auth(ssh: &SshGit) -> Auth {
    Auth::Ssh(SshAuth {
        private_key: Secret::new(ssh.client_key.private_key.clone()),
        passphrase: None,
        known_hosts: ssh.known_hosts.clone(),
    })
}

/// The key's base64 body (no line of it may show anywhere but in the Secret).
fn key_lines(key: &str) -> Vec<&str> {
    key.lines()
        .filter(|l| !l.starts_with("-----") && l.len() > 16)
        .collect()
}

/// Over SSH: Flux installed, exactly one new commit holding EKS Anywhere's layout (the README
/// kept), Flux's GitRepository and Kustomization Ready at that commit; a second run commits
/// nothing and ends Ready at the same commit; the key shows nowhere but in Flux's Secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_ssh_one_commit_in_the_eks_anywhere_layout_is_applied_and_a_rerun_commits_nothing() {
    bounded(240, async {
        let world = World::start().await;
        let ssh = SshGit::start(&world.repos).expect("sshd");
        let url = ssh.url(REPO);
        let before = world.commits();
        let readme = world.git(&["show", "refs/heads/main:README.md"]);

        let (done, events) = world.bootstrap(&url, "main", &ssh_auth(&ssh), None).await;
        let done = done.unwrap_or_else(|e| panic!("bootstrap: {e}\nsshd: {}", ssh.log()));
        assert!(done.committed);
        assert_eq!(world.commits(), before + 1);
        assert_eq!(done.commit, world.head());
        assert_eq!(done.revision, format!("main@sha1:{}", world.head()));
        let mut expected: Vec<String> = LAYOUT.iter().map(|s| (*s).to_owned()).collect();
        expected.insert(0, "README.md".into());
        assert_eq!(world.files(), expected);
        assert_eq!(world.git(&["show", "refs/heads/main:README.md"]), readme);
        assert_eq!(
            world
                .git(&["log", "-1", "--format=%s|%an", "refs/heads/main"])
                .trim(),
            format!("{}|snowctl", gitops::COMMIT_MESSAGE)
        );
        let cluster = world.git(&[
            "show",
            "refs/heads/main:clusters/edge/edge/eksa-system/eksa-cluster.yaml",
        ]);
        assert!(cluster.contains("kind: FluxConfig"), "{cluster}");
        let sync = world.git(&[
            "show",
            "refs/heads/main:clusters/edge/flux-system/gotk-sync.yaml",
        ]);
        assert!(sync.contains(&format!("url: {url}")), "{sync}");
        assert!(sync.contains("path: \"./clusters/edge\""), "{sync}");

        let ks = world
            .get(KUSTOMIZE, "Kustomization", NS)
            .expect("Kustomization");
        assert_eq!(ks["status"]["lastAppliedRevision"], done.revision.as_str());
        let repo = world
            .get(SOURCE, "GitRepository", NS)
            .expect("GitRepository");
        assert_eq!(
            repo["status"]["artifact"]["revision"],
            done.revision.as_str()
        );
        // Flux applied the cluster's spec from the repository.
        let declared = world
            .api
            .get(
                snow_api::names::EKSA_API_VERSION,
                "Cluster",
                Some("default"),
                "edge",
            )
            .expect("the Cluster Flux applied");
        assert_eq!(
            declared["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
            NS
        );
        // The controllers run the bundle's images.
        let source = world
            .api
            .get("apps/v1", "Deployment", Some(NS), "source-controller")
            .expect("source-controller");
        let image = source["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap_or_default();
        assert!(!image.starts_with("ghcr.io/"), "{image}");

        let (again, events_again) = world.bootstrap(&url, "main", &ssh_auth(&ssh), None).await;
        let again = again.expect("second bootstrap");
        assert!(!again.committed);
        assert_eq!(again.commit, done.commit);
        assert_eq!(world.commits(), before + 1);

        // The key: in the Secret, and nowhere else.
        let key = ssh.client_key.private_key.clone();
        let secret = world.get("v1", "Secret", "flux-system").expect("Secret");
        assert!(secret["data"]["identity"].is_string());
        for line in key_lines(&key) {
            for e in events.iter().chain(&events_again) {
                assert!(!format!("{e:?}").contains(line), "{e:?}");
            }
            for object in world.api.objects() {
                if object["kind"] == "Secret" && object["metadata"]["name"] == "flux-system" {
                    continue;
                }
                assert!(!object.to_string().contains(line), "{object}");
            }
        }
    })
    .await;
}

/// Over HTTPS with a bearer token and the server's CA: the same single commit, Flux Ready at it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_with_a_token_the_commit_is_applied() {
    bounded(240, async {
        let world = World::start().await;
        let ca = TestCa::new("git").expect("ca");
        let token = "s3cr3t-t0ken-for-the-fleet";
        let https = HttpsGit::start(&world.repos, &ca, HttpAuth::Token(token.into()))
            .await
            .expect("https git");
        let auth = Auth::Https(HttpsAuth {
            credential: Some(HttpCredential::Bearer(Secret::new(token))),
            ca_bundle_pem: Some(https.ca_pem.clone().into_bytes()),
        });
        let before = world.commits();
        let (done, events) = world.bootstrap(&https.url(REPO), "main", &auth, None).await;
        let done = done.expect("bootstrap");
        assert_eq!(world.commits(), before + 1);
        assert_eq!(done.revision, format!("main@sha1:{}", world.head()));
        for e in &events {
            assert!(!format!("{e:?}").contains(token), "{e:?}");
        }
    })
    .await;
}

/// A run stopped after each step (as a run killed there) and then run to the end: one commit in
/// all, Flux Ready at it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_stopped_after_each_step_converge_on_one_commit() {
    bounded(240, async {
        let world = World::start().await;
        let ssh = SshGit::start(&world.repos).expect("sshd");
        let url = ssh.url(REPO);
        let before = world.commits();
        for step in [
            BootstrapStep::Installed,
            BootstrapStep::Pushed,
            BootstrapStep::Applied,
        ] {
            let (done, _) = world
                .bootstrap(&url, "main", &ssh_auth(&ssh), Some(step))
                .await;
            assert!(
                matches!(done, Err(GitOpsError::Stopped(s)) if s == step),
                "{done:?}"
            );
        }
        assert_eq!(world.commits(), before + 1);
        let (done, _) = world.bootstrap(&url, "main", &ssh_auth(&ssh), None).await;
        let done = done.expect("the run to the end");
        assert!(!done.committed);
        assert_eq!(world.commits(), before + 1);
        assert_eq!(done.revision, format!("main@sha1:{}", world.head()));
    })
    .await;
}

/// A wrong host key, a wrong key and a missing branch: each a clear error naming the problem,
/// nothing pushed, no key in the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_host_key_a_wrong_key_and_a_missing_branch_write_nothing() {
    bounded(240, async {
        let world = World::start().await;
        let ssh = SshGit::start(&world.repos).expect("sshd");
        let url = ssh.url(REPO);
        let head = world.head();
        let scratch = world.repos.scratch("keys").expect("scratch");
        let other = SshKey::generate(&scratch, "other").expect("key");

        let wrong_host = Auth::Ssh(SshAuth {
            private_key: Secret::new(ssh.client_key.private_key.clone()),
            passphrase: None,
            known_hosts: other.known_hosts_line(ssh.port),
        });
        let (done, _) = world.bootstrap(&url, "main", &wrong_host, None).await;
        let err = done.expect_err("a wrong host key");
        assert!(
            matches!(err, GitOpsError::Git(GitError::HostKeyRejected { .. })),
            "{err:?}"
        );

        let wrong_key = Auth::Ssh(SshAuth {
            private_key: Secret::new(other.private_key.clone()),
            passphrase: None,
            known_hosts: ssh.known_hosts.clone(),
        });
        let (done, _) = world.bootstrap(&url, "main", &wrong_key, None).await;
        let err = done.expect_err("a wrong key");
        assert!(
            matches!(err, GitOpsError::Git(GitError::AuthenticationFailed { .. })),
            "{err:?}"
        );
        for line in key_lines(&other.private_key) {
            assert!(!err.to_string().contains(line), "{err}");
        }

        let (done, _) = world
            .bootstrap(&url, "release", &ssh_auth(&ssh), None)
            .await;
        let err = done.expect_err("a missing branch");
        assert!(
            matches!(&err, GitOpsError::Git(GitError::BranchNotFound { existing, .. }) if existing == &["main"]),
            "{err:?}"
        );
        assert_eq!(world.head(), head);
        assert_eq!(world.files(), ["README.md"]);
    })
    .await;
}

/// Pushes a commit made with the real `git` in a clone of the bare repository: `setup` changes
/// the clone's files.
fn commit_with(world: &World, name: &str, setup: impl FnOnce(&Path)) {
    let work = world.repos.scratch(name).expect("scratch").join("work");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=Other",
                "-c",
                "user.email=other@example.invalid",
            ])
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let bare = world.repos.path(REPO).display().to_string();
    let shown = work.display().to_string();
    git(&["clone", "--quiet", &bare, &shown]);
    setup(&work);
    git(&["-C", &shown, "add", "--all"]);
    git(&["-C", &shown, "commit", "--quiet", "-m", name]);
    git(&[
        "-C",
        &shown,
        "push",
        "--quiet",
        "origin",
        "HEAD:refs/heads/main",
    ]);
}

/// A repository that holds other files, some beside ours in the cluster's folder: kept as they
/// were; a file at one of our paths with other content is replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_files_of_the_repository_are_kept() {
    bounded(240, async {
        let world = World::start().await;
        let ssh = SshGit::start(&world.repos).expect("sshd");
        commit_with(&world, "others", |work| {
            let write = |path: &str, text: &str| {
                let file = work.join(path);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(file, text).unwrap();
            };
            write("apps/web.yaml", "kind: Nothing\n");
            write("clusters/other/eksa-system/notes.txt", "another cluster\n");
            write(
                "clusters/edge/flux-system/gotk-sync.yaml",
                "# an old sync file\n",
            );
        });
        let before = world.commits();
        let (done, _) = world
            .bootstrap(&ssh.url(REPO), "main", &ssh_auth(&ssh), None)
            .await;
        done.expect("bootstrap");
        assert_eq!(world.commits(), before + 1);
        assert_eq!(
            world.git(&["show", "refs/heads/main:apps/web.yaml"]),
            "kind: Nothing\n"
        );
        assert_eq!(
            world.git(&[
                "show",
                "refs/heads/main:clusters/other/eksa-system/notes.txt"
            ]),
            "another cluster\n"
        );
        let changed = world.git(&["diff", "--name-only", "HEAD~1", "HEAD"]);
        let mut changed: Vec<&str> = changed.lines().collect();
        changed.sort_unstable();
        assert_eq!(changed, LAYOUT);
    })
    .await;
}

/// A symbolic link in the repository where the bootstrap writes (`clusters/edge` pointing
/// elsewhere in the checkout): refused before anything is written, nothing pushed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_where_the_files_go_is_refused() {
    bounded(240, async {
        let world = World::start().await;
        let ssh = SshGit::start(&world.repos).expect("sshd");
        commit_with(&world, "link", |work| {
            std::fs::create_dir_all(work.join("clusters")).unwrap();
            std::fs::create_dir_all(work.join("elsewhere")).unwrap();
            std::fs::write(work.join("elsewhere/keep.txt"), "kept\n").unwrap();
            std::os::unix::fs::symlink("../elsewhere", work.join("clusters/edge")).unwrap();
        });
        let head = world.head();
        let (done, _) = world
            .bootstrap(&ssh.url(REPO), "main", &ssh_auth(&ssh), None)
            .await;
        let err = done.expect_err("a link in the path");
        assert!(
            matches!(&err, GitOpsError::Git(GitError::LinkInPath { link, .. }) if link.contains("clusters/edge")),
            "{err:?}"
        );
        assert_eq!(world.head(), head);
        assert_eq!(
            world.files(),
            ["README.md", "clusters/edge", "elsewhere/keep.txt"]
        );
    })
    .await;
}

/// A Kustomization Flux cannot build (a broken `kustomization.yaml` another writer left under
/// the cluster's path): the error carries Flux's own message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_flux_reports_failed_shows_flux_message() {
    bounded(240, async {
        let world = World::start().await;
        let ssh = SshGit::start(&world.repos).expect("sshd");
        commit_with(&world, "broken", |work| {
            let dir = work.join("clusters/edge/apps");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("kustomization.yaml"),
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [missing.yaml]\n",
            )
            .unwrap();
        });
        let (done, _) = world
            .bootstrap(&ssh.url(REPO), "main", &ssh_auth(&ssh), None)
            .await;
        let err = done.expect_err("Flux cannot build");
        let GitOpsError::SyncFailed { message, revision, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(revision, &format!("main@sha1:{}", world.head()));
        assert!(message.contains("kustomize build failed"), "{message}");
        assert!(err.to_string().contains(message.as_str()), "{err}");
    })
    .await;
}

/// The facade's create of a management cluster whose spec names a FluxConfig: without the
/// install manifest or credentials, or with credentials of the wrong kind, a typed error naming
/// what to give, before anything (the kubeconfig given does not even exist).
#[tokio::test]
async fn a_create_with_gitops_and_no_inputs_says_what_to_give_before_anything() {
    let text = spec_text("ssh://git@git.example.invalid/fleet.git", "main");
    let spec = snow_api::check(&text).unwrap().into_valid().unwrap();
    let catalog = snow_api::release::ReleaseInputs::embedded().unwrap();
    let release = catalog.resolve(&spec, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let req = snow_provision::Request {
        spec: &spec,
        spec_text: &text,
        release: &release,
        secrets: None,
        registry_credentials: None,
        devices: snow_provision::DevicePaths::default(),
        inputs: None,
        dir: dir.path(),
    };
    let management = KubeconfigSource::file(dir.path().join("absent.kubeconfig"));
    let options = snow_provision::CreateOptions {
        checks: snow_provision::Checks::Skip,
        cni: snow_provision::CniSource::Manifest(
            snow_lifecycle::CniManifest::parse(include_str!(
                "../../lifecycle/tests/fixtures/cilium.yaml"
            ))
            .unwrap(),
        ),
        wait: snow_lifecycle::WaitOptions::default(),
        force: false,
    };
    let how =
        target::Create::<snow_provision::bootstrap::Kind>::OnManagement(&management, &options);
    let mut events = Vec::new();
    let err = target::create(how, &req, &mut |e| events.push(e))
        .await
        .expect_err("no inputs");
    let text = err.to_string();
    assert!(
        matches!(&err, ProvisionError::GitOps(GitOpsError::Missing { missing, .. }) if missing.len() == 2),
        "{err:?}"
    );
    assert!(text.contains("FluxConfig edge"), "{text}");
    assert!(text.contains("install manifest"), "{text}");
    assert!(text.contains("SSH credentials"), "{text}");
    assert!(err.is_input());
    assert!(events.is_empty(), "{events:?}");

    let inputs = GitOpsInputs {
        install: Some(install()),
        auth: Some(Auth::Https(HttpsAuth::default())),
        options: BootstrapOptions::default(),
    };
    let how =
        target::Create::<snow_provision::bootstrap::Kind>::OnManagement(&management, &options);
    let err = target::create_with(how, &req, &inputs, &mut |e| events.push(e))
        .await
        .expect_err("credentials of the wrong kind");
    assert!(
        matches!(
            &err,
            ProvisionError::GitOps(GitOpsError::WrongCredentials { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("SSH private key"), "{err}");

    // The fixture alone lacks two of the four controllers the repository's kustomization patches.
    let inputs = GitOpsInputs {
        install: Some(FIXTURE.into()),
        auth: Some(Auth::Ssh(SshAuth {
            private_key: Secret::new("-----BEGIN OPENSSH PRIVATE KEY-----\n"),
            passphrase: None,
            known_hosts: "git.example.invalid ssh-ed25519 AAAA\n".into(),
        })),
        options: BootstrapOptions::default(),
    };
    let how =
        target::Create::<snow_provision::bootstrap::Kind>::OnManagement(&management, &options);
    let err = target::create_with(how, &req, &inputs, &mut |e| events.push(e))
        .await
        .expect_err("an incomplete manifest");
    assert!(
        matches!(&err, ProvisionError::GitOps(GitOpsError::IncompleteManifest(missing)) if missing == &["helm-controller", "notification-controller"]),
        "{err:?}"
    );
    assert!(events.is_empty(), "{events:?}");
}

/// The facade's create of `edge` on a management cluster that has no Flux yet (the stand-in
/// with its simulated Cluster API, the two devices), its spec naming a FluxConfig: the cluster
/// created, then Flux installed there, one commit in the repository and Flux Ready at it; the
/// same create again commits nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facade_create_of_a_management_cluster_ends_with_its_gitops() {
    bounded(280, async {
        let site = support::site().await;
        let _workloads = site.api.start_workloads(WorkloadOptions::default());
        let _flux = site
            .api
            .start_flux(FluxOptions {
                step: Duration::from_millis(20),
                ..FluxOptions::default()
            })
            .expect("flux");
        let repos = GitRepos::new().expect("repos");
        repos.create(REPO).expect("repository");
        repos.commit(REPO, "main", "README.md", "# fleet\n").expect("commit");
        let ssh = SshGit::start(&repos).expect("sshd");
        let spec = site.spec(1).replacen(
            "spec:\n",
            "spec:\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
            1,
        );
        let text = format!(
            "{spec}---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: edge\nspec:\n  git:\n    repositoryUrl: {}\n",
            ssh.url(REPO)
        );
        let inputs = GitOpsInputs {
            install: Some(install()),
            auth: Some(ssh_auth(&ssh)),
            options: options(),
        };
        let options = snow_provision::CreateOptions {
            checks: snow_provision::Checks::Skip,
            cni: support::cni(),
            wait: support::wait(),
            force: false,
        };
        let management = KubeconfigSource::file(&site.kubeconfig);
        let count = |repos: &GitRepos| {
            let out = Command::new("git")
                .arg("--git-dir")
                .arg(repos.path(REPO))
                .args(["rev-list", "--count", "refs/heads/main"])
                .output()
                .expect("git");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        for round in 0..2 {
            let (made, _) = support::with_request(&site, &text, async |req, on_event| {
                let how = target::Create::<snow_provision::bootstrap::Kind>::OnManagement(
                    &management,
                    &options,
                );
                target::create_with(how, req, &inputs, on_event).await
            })
            .await;
            let made = made.unwrap_or_else(|e| panic!("create {round}: {e}\nsshd: {}", ssh.log()));
            let target::Created::OnManagement(made) = made else {
                panic!("a create on the management cluster");
            };
            let gitops = made.gitops.expect("GitOps set up");
            assert_eq!(gitops.committed, round == 0);
            assert_eq!(count(&repos), "2");
            let ks = site
                .api
                .get(KUSTOMIZE, "Kustomization", Some(NS), NS)
                .expect("Kustomization");
            assert_eq!(ks["status"]["lastAppliedRevision"], gitops.revision.as_str());
        }
    })
    .await;
}

/// The management cluster `edge` created on the site's management cluster with its GitOps
/// (the repository `fleet.git` over SSH), and what the tests of clusters by commit need.
struct Managed {
    site: support::Site,
    _workloads: WorkloadHandle,
    _flux: FluxHandle,
    repos: GitRepos,
    ssh: SshGit,
}

impl Managed {
    async fn start() -> Managed {
        let site = support::site().await;
        let workloads = site.api.start_workloads(WorkloadOptions::default());
        let flux = site
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
            .expect("commit");
        let ssh = SshGit::start(&repos).expect("sshd");
        let managed = Managed {
            site,
            _workloads: workloads,
            _flux: flux,
            repos,
            ssh,
        };
        let inputs = GitOpsInputs {
            install: Some(install()),
            ..managed.inputs(None)
        };
        let text = managed.management_text(1);
        let (made, _) = managed.create(&text, &inputs).await;
        made.unwrap_or_else(|e| panic!("the management cluster: {e}\nsshd: {}", managed.ssh.log()));
        managed
    }

    /// The credentials and bounded waits, stopping after `stop_after`.
    fn inputs(&self, stop_after: Option<BootstrapStep>) -> GitOpsInputs {
        GitOpsInputs {
            install: None,
            auth: Some(ssh_auth(&self.ssh)),
            options: BootstrapOptions {
                stop_after,
                ..options()
            },
        }
    }

    fn flux_config(&self, name: &str) -> String {
        format!(
            "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: {name}\nspec:\n  git:\n    repositoryUrl: {}\n",
            self.ssh.url(REPO)
        )
    }

    /// `edge`, managing itself, naming FluxConfig `edge`.
    fn management_text(&self, workers: u32) -> String {
        let spec = self.site.spec(workers).replacen(
            "spec:\n",
            "spec:\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
            1,
        );
        format!("{spec}{}", self.flux_config("edge"))
    }

    /// Workload cluster `second` of `edge`, naming FluxConfig `flux` (of `edge`'s spec).
    fn workload_text(&self, workers: u32, flux: &str) -> String {
        let spec = (self.site.spec(workers))
            .replace("name: edge", "name: second")
            .replace("192.168.1.100", "192.168.1.101")
            .replacen(
                "spec:\n",
                &format!(
                    "spec:\n  managementCluster: {{name: edge}}\n  gitOpsRef: {{kind: FluxConfig, name: {flux}}}\n"
                ),
                1,
            );
        format!("{spec}{}", self.flux_config(flux))
    }

    fn management(&self) -> KubeconfigSource {
        KubeconfigSource::file(&self.site.kubeconfig)
    }

    async fn create(
        &self,
        text: &str,
        inputs: &GitOpsInputs,
    ) -> (Result<target::Created, ProvisionError>, Vec<Event>) {
        let options = snow_provision::CreateOptions {
            checks: snow_provision::Checks::Skip,
            cni: support::cni(),
            wait: support::wait(),
            force: false,
        };
        let management = self.management();
        support::with_request(&self.site, text, async |req, on_event| {
            let how = target::Create::<snow_provision::bootstrap::Kind>::OnManagement(
                &management,
                &options,
            );
            target::create_with(how, req, inputs, on_event).await
        })
        .await
    }

    async fn upgrade(
        &self,
        text: &str,
        inputs: &GitOpsInputs,
    ) -> Result<(snow_lifecycle::UpgradeOutcome, Option<Bootstrapped>), ProvisionError> {
        let options = snow_provision::UpgradeOptions {
            checks: snow_provision::Checks::Skip,
            cni: support::cni(),
            wait: support::wait(),
            dry_run: false,
            backup: false,
        };
        let management = self.management();
        let (done, _) = support::with_request(&self.site, text, async |req, on_event| {
            snow_provision::upgrade_with(&management, req, &options, inputs, on_event).await
        })
        .await;
        done
    }

    async fn delete(
        &self,
        cluster: &str,
        inputs: &GitOpsInputs,
    ) -> Result<(snow_lifecycle::Deleted, Option<Bootstrapped>), ProvisionError> {
        let mgmt = Management::connect(&self.management())
            .await
            .expect("connect");
        let options = snow_lifecycle::DeleteOptions {
            wait: support::wait(),
        };
        let how = target::Delete::<snow_provision::bootstrap::Kind>::OnManagement(&mgmt, &options);
        target::delete_with(how, cluster, inputs, &mut |e| eprintln!("{e}")).await
    }

    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(self.repos.path(REPO))
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    fn commits(&self) -> usize {
        (self.git(&["rev-list", "--count", "refs/heads/main"]).trim())
            .parse()
            .expect("a count")
    }

    fn subject(&self) -> String {
        (self
            .git(&["log", "-1", "--format=%s", "refs/heads/main"])
            .trim())
        .to_owned()
    }

    fn files(&self) -> Vec<String> {
        (self
            .git(&["ls-tree", "-r", "--name-only", "refs/heads/main"])
            .lines())
        .map(str::to_owned)
        .collect()
    }

    fn declared(&self, kind: &str, name: &str) -> Option<Value> {
        (self.site.api).get(
            snow_api::names::EKSA_API_VERSION,
            kind,
            Some("default"),
            name,
        )
    }

    fn applied_revision(&self) -> String {
        let ks = (self.site.api)
            .get(KUSTOMIZE, "Kustomization", Some(NS), NS)
            .expect("Kustomization");
        ks["status"]["lastAppliedRevision"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

const WORKLOAD_FILES: [&str; 2] = [
    "clusters/edge/second/eksa-system/eksa-cluster.yaml",
    "clusters/edge/second/eksa-system/kustomization.yaml",
];
const CAPI: &str = "cluster.x-k8s.io/v1beta2";

/// A workload cluster of a GitOps management cluster, through the facade: its create (stopped
/// after the push, then after asking Flux, then run to the end) makes one commit of its two
/// files in the management cluster's tree, Flux applies them, the cluster is built; a worker
/// more is one more commit and the upgrade; its delete (stopped after the push, then run to
/// the end) removes its folder by one commit, Flux prunes its declared objects, the cluster is
/// gone; the management cluster's files are untouched throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_cluster_is_created_upgraded_and_deleted_by_commit() {
    bounded(290, async {
        let m = Managed::start().await;
        let base = m.commits();
        let management_files = m.files();

        let text = m.workload_text(1, "second");
        for step in [BootstrapStep::Pushed, BootstrapStep::Applied] {
            let (made, _) = m.create(&text, &m.inputs(Some(step))).await;
            assert!(
                matches!(&made, Err(ProvisionError::GitOps(GitOpsError::Stopped(s))) if *s == step),
                "{made:?}"
            );
            assert_eq!(m.commits(), base + 1);
        }
        for round in 0..2 {
            let (made, _) = m.create(&text, &m.inputs(None)).await;
            let made = made.unwrap_or_else(|e| panic!("create {round}: {e}"));
            let target::Created::OnManagement(made) = made else {
                panic!("a create on the management cluster");
            };
            let committed = made.gitops.expect("the workload's commit");
            assert!(!committed.committed, "the stopped runs made the commit");
            assert_eq!(m.commits(), base + 1);
            assert_eq!(committed.revision, m.applied_revision());
        }
        assert_eq!(m.subject(), gitops::COMMIT_MESSAGE);
        let mut expected = management_files.clone();
        expected.extend(WORKLOAD_FILES.map(str::to_owned));
        expected.sort();
        assert_eq!(m.files(), expected);
        let declared = m
            .declared("Cluster", "second")
            .expect("Flux applied the workload");
        assert_eq!(
            declared["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
            NS
        );
        let built = m
            .site
            .api
            .get(CAPI, "Cluster", Some("eksa-system"), "second");
        assert!(built.is_some(), "the cluster was not built");

        // A worker more: one commit, then the upgrade.
        let (upgraded, committed) = m
            .upgrade(&m.workload_text(2, "second"), &m.inputs(None))
            .await
            .expect("upgrade");
        assert!(upgraded.applied);
        assert!(committed.expect("a commit").committed);
        assert_eq!(m.commits(), base + 2);
        assert_eq!(m.subject(), gitops::by_commit::UPDATE_MESSAGE);
        let spec = m.git(&["show", &format!("refs/heads/main:{}", WORKLOAD_FILES[0])]);
        assert!(spec.contains("count: 2"), "{spec}");
        let declared = m.declared("Cluster", "second").expect("declared");
        assert_eq!(
            declared["spec"]["workerNodeGroupConfigurations"][0]["count"],
            2
        );
        let md = (m.site.api).get(
            CAPI,
            "MachineDeployment",
            Some("eksa-system"),
            "second-md-0",
        );
        assert_eq!(md.expect("md")["spec"]["replicas"], 2);

        // Delete: stopped after the push, then to the end.
        let stopped = m
            .delete("second", &m.inputs(Some(BootstrapStep::Pushed)))
            .await;
        assert!(
            matches!(
                &stopped,
                Err(ProvisionError::GitOps(GitOpsError::Stopped(_)))
            ),
            "{stopped:?}"
        );
        assert_eq!(m.commits(), base + 3);
        let (deleted, _) = m.delete("second", &m.inputs(None)).await.expect("delete");
        assert!(deleted.found);
        assert_eq!(m.commits(), base + 3);
        assert_eq!(m.subject(), gitops::by_commit::DELETE_MESSAGE);
        assert_eq!(m.files(), management_files);
        assert!(m.declared("Cluster", "second").is_none(), "Flux pruned it");
        assert!(m.declared("Cluster", "edge").is_some());
        let built = m
            .site
            .api
            .get(CAPI, "Cluster", Some("eksa-system"), "second");
        assert!(built.is_none(), "the cluster is gone");
    })
    .await;
}

/// EKS Anywhere's rules for a workload cluster's FluxConfig, before anything is committed or
/// applied: another spec than the management cluster's (another branch), and the management
/// cluster's own FluxConfig's name; without credentials, what to give.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_flux_config_unlike_its_management_clusters_is_refused_before_anything() {
    bounded(240, async {
        let m = Managed::start().await;
        let head = m.commits();
        let other_branch = m
            .workload_text(1, "second")
            .replace("spec:\n  git:\n", "spec:\n  branch: release\n  git:\n");
        let (made, events) = m.create(&other_branch, &m.inputs(None)).await;
        let err = made.expect_err("another branch");
        assert!(
            matches!(&err, ProvisionError::GitOps(GitOpsError::WorkloadMismatch(f)) if f.len() == 1 && f[0].field.as_deref() == Some("spec.branch")),
            "{err:?}"
        );
        assert!(err.to_string().contains("same between management and its workload clusters"), "{err}");
        assert!(err.is_input());
        assert!(!events.iter().any(|e| matches!(e, Event::Step(s) if s.starts_with("Applying"))));

        let same_name = m.workload_text(1, "edge");
        let (made, _) = m.create(&same_name, &m.inputs(None)).await;
        let err = made.expect_err("the management cluster's FluxConfig name");
        assert!(err.to_string().contains("another name"), "{err}");

        let no_credentials = GitOpsInputs::default();
        let (made, _) = m.create(&m.workload_text(1, "second"), &no_credentials).await;
        let err = made.expect_err("no credentials");
        assert!(
            matches!(&err, ProvisionError::GitOps(GitOpsError::Missing { missing, .. }) if missing.len() == 1),
            "{err:?}"
        );
        assert_eq!(m.commits(), head);
        assert!(m.site.api.get(CAPI, "Cluster", Some("eksa-system"), "second").is_none());
    })
    .await;
}

/// The management cluster's upgrade, EKS Anywhere's way: stopped with its declared objects
/// paused (annotated for Flux), then after Flux applied the new spec's commit, each time the
/// annotations left for the re-run; the run to the end makes no second commit and removes
/// them. An upgrade the lifecycle refuses (an immutable change) removes them too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_management_clusters_upgrade_pauses_commits_and_resumes() {
    bounded(290, async {
        let m = Managed::start().await;
        let base = m.commits();
        let paused = |m: &Managed| {
            let annotated = |kind: &str, name: &str| {
                m.declared(kind, name).expect(name)["metadata"]["annotations"]
                    [gitops::by_commit::RECONCILE]
                    == gitops::by_commit::DISABLED
            };
            [
                annotated("Cluster", "edge"),
                annotated("SnowDatacenterConfig", "edge"),
                annotated("SnowMachineConfig", "edge-cp"),
                annotated("SnowMachineConfig", "edge"),
            ]
        };
        let text = m.management_text(2);
        for (step, commits) in [(BootstrapStep::Paused, base), (BootstrapStep::Synced, base + 1)] {
            let stopped = m.upgrade(&text, &m.inputs(Some(step))).await;
            assert!(
                matches!(&stopped, Err(ProvisionError::GitOps(GitOpsError::Stopped(s))) if *s == step),
                "{stopped:?}"
            );
            assert_eq!(paused(&m), [true; 4], "after {step:?}");
            assert_eq!(m.commits(), commits);
        }
        let (_, committed) = m.upgrade(&text, &m.inputs(None)).await.expect("upgrade");
        let committed = committed.expect("the commit");
        assert!(!committed.committed);
        assert_eq!(m.commits(), base + 1);
        assert_eq!(m.subject(), gitops::by_commit::UPDATE_MESSAGE);
        assert_eq!(committed.revision, m.applied_revision());
        assert_eq!(paused(&m), [false; 4]);
        let spec = m.git(&["show", "refs/heads/main:clusters/edge/edge/eksa-system/eksa-cluster.yaml"]);
        assert!(spec.contains("count: 2"), "{spec}");
        let declared = m.declared("Cluster", "edge").expect("declared");
        assert_eq!(declared["spec"]["workerNodeGroupConfigurations"][0]["count"], 2);

        // Another endpoint cannot be upgraded to: refused after the pause, and resumed.
        let refused = m
            .upgrade(&text.replace("192.168.1.100", "192.168.1.109"), &m.inputs(None))
            .await;
        assert!(
            matches!(&refused, Err(ProvisionError::Lifecycle(_))),
            "{refused:?}"
        );
        assert_eq!(paused(&m), [false; 4]);
        assert_eq!(m.commits(), base + 1);
    })
    .await;
}
