//! The simulated Flux against real git servers (`snow_test_devices::git_server`: `sshd` with
//! `git-shell`, `git http-backend` over HTTPS), Flux installed from its real manifests
//! (`tests/data/flux`, built with `kubectl kustomize` and applied with `kubectl apply
//! --server-side`), kubectl reading what the controllers wrote.

mod common;
#[path = "common/webhook.rs"]
mod webhook;

use common::{Result, bounded};
use serde_json::{Value, json};
use snow_test_devices::TestCa;
use snow_test_devices::git_server::{GitRepos, HttpAuth, HttpsGit, SshGit, SshKey};
use snow_test_kube::{FluxHandle, FluxOptions, KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const SOURCE: &str = "source.toolkit.fluxcd.io/v1";
const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io/v1";
const NS: &str = "flux-system";

/// The test's copy of `tests/data/flux` with the bases' release URLs pointed at the local
/// files and `install` narrowed to what is copied; built with `kubectl kustomize`.
fn flux_install_yaml(dir: &Path) -> Result<String> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/flux");
    let root = dir.join("flux");
    copy(&data, &root)?;
    for controller in ["source-controller", "kustomize-controller"] {
        let file = root.join(format!(
            "flux2-manifests/bases/{controller}/kustomization.yaml"
        ));
        let text = std::fs::read_to_string(&file)?;
        let release = format!("https://github.com/fluxcd/{controller}/releases/download/v1.9.4/");
        let crd = std::fs::read_dir(root.join(format!("{controller}/config/crd/bases")))?
            .next()
            .ok_or("no CRD copied")??
            .file_name();
        let text = text
            .replace(
                &format!("{release}{controller}.crds.yaml"),
                &format!(
                    "../../../{controller}/config/crd/bases/{}",
                    crd.to_string_lossy()
                ),
            )
            .replace(
                &format!("{release}{controller}.deployment.yaml"),
                &format!("../../../{controller}/config/manager"),
            );
        assert!(!text.contains("https://"), "{text}");
        std::fs::write(&file, text)?;
    }
    let install = root.join("flux2-manifests/install/kustomization.yaml");
    let kept: Vec<String> = std::fs::read_to_string(&install)?
        .lines()
        .filter(|l| {
            !(l.contains("../bases/") || l.contains("../policies"))
                || l.contains("source-controller")
                || l.contains("kustomize-controller")
        })
        .map(str::to_owned)
        .collect();
    std::fs::write(&install, kept.join("\n"))?;
    let out = Command::new("kubectl")
        .args(["kustomize", "--load-restrictor=LoadRestrictionsNone"])
        .arg(root.join("flux2-manifests/install"))
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "kubectl kustomize: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// A stand-in with its deployment controller, the simulated Flux started, a kubeconfig file.
struct World {
    stand_in: KubeStandIn,
    workloads: WorkloadHandle,
    flux: FluxHandle,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl World {
    /// Flux's controllers stall (never Available) when `stalled`.
    async fn start(stalled: bool) -> Result<World> {
        let stand_in = KubeStandIn::start().await?;
        let stall = if stalled {
            ["source-controller", "kustomize-controller"]
                .map(|d| (NS.to_owned(), d.to_owned()))
                .to_vec()
        } else {
            Vec::new()
        };
        let workloads = stand_in.start_workloads(WorkloadOptions {
            stall,
            ..WorkloadOptions::default()
        });
        let flux = stand_in.start_flux(FluxOptions::default())?;
        let dir = tempfile::tempdir()?;
        let kubeconfig = stand_in.write_kubeconfig(dir.path())?;
        let world = World {
            stand_in,
            workloads,
            flux,
            dir,
            kubeconfig,
        };
        let install = flux_install_yaml(world.dir.path())?;
        world.kubectl(
            &["apply", "--server-side", "--validate=false", "-f", "-"],
            Some(&install),
        )?;
        Ok(world)
    }

    fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Result<String> {
        use std::io::Write;
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        if let Some(mut pipe) = child.stdin.take() {
            // kubectl may exit without reading it all; its status and stderr say why.
            let _ = pipe.write_all(stdin.unwrap_or_default().as_bytes());
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(
                format!("kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into(),
            );
        }
        Ok(String::from_utf8(out.stdout)?)
    }

    fn apply(&self, object: Value) -> Result {
        self.kubectl(
            &["apply", "--server-side", "--validate=false", "-f", "-"],
            Some(&object.to_string()),
        )?;
        Ok(())
    }

    /// Waits (polling, up to a minute) until `kind` `name` of `flux-system` satisfies `ok`;
    /// returns it, or an error showing it as it last was.
    async fn until(
        &self,
        api: &str,
        kind: &str,
        name: &str,
        ok: impl Fn(&Value) -> bool,
    ) -> Result<Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let found = self.stand_in.get(api, kind, Some(NS), name);
            if let Some(o) = &found
                && ok(o)
            {
                return Ok(o.clone());
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("{kind} {name} not as expected: {found:#?}").into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `name`'s Ready condition is False with `reason`; returns its message.
    async fn failure(&self, api: &str, kind: &str, name: &str, reason: &str) -> Result<String> {
        let o = self
            .until(api, kind, name, |o| ready_is(o, "False", reason))
            .await?;
        Ok(message(&o))
    }

    fn config_map(&self, name: &str) -> Option<Value> {
        self.stand_in.get("v1", "ConfigMap", Some("default"), name)
    }
}

/// The repository `fleet.git` (`file` committed on `main`) served over SSH, and what a `flux
/// bootstrap` leaves in `flux-system`: the Secret, the GitRepository and a Kustomization of
/// `path`, all named `flux-system`.
struct Fleet {
    repos: GitRepos,
    _ssh: SshGit,
    /// The first commit.
    first: String,
}

impl World {
    fn fleet(&self, file: &str, text: &str, path: &str) -> Result<Fleet> {
        let repos = GitRepos::new()?;
        repos.create("fleet.git")?;
        let first = repos.commit("fleet.git", "main", file, text)?;
        let ssh = SshGit::start(&repos)?;
        self.apply(ssh_secret(
            "flux-system",
            &ssh.client_key.private_key,
            &ssh.known_hosts,
        ))?;
        self.apply(git_repository(
            "flux-system",
            &ssh.url("fleet.git"),
            "main",
            Some("flux-system"),
        ))?;
        self.apply(kustomization("flux-system", "flux-system", path))?;
        Ok(Fleet {
            repos,
            _ssh: ssh,
            first,
        })
    }
}

fn ready(o: &Value) -> Option<&Value> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

fn ready_is(o: &Value, status: &str, reason: &str) -> bool {
    ready(o).is_some_and(|c| c["status"] == status && c["reason"] == reason)
}

fn message(o: &Value) -> String {
    ready(o)
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn config_maps(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n  namespace: default\ndata:\n  name: {n}\n"))
        .collect::<Vec<_>>()
        .join("---\n")
}

fn ssh_secret(name: &str, identity: &str, known_hosts: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS},
        "stringData": {"identity": identity, "known_hosts": known_hosts}})
}

fn git_repository(name: &str, url: &str, branch: &str, secret: Option<&str>) -> Value {
    let mut spec = json!({"interval": "1m", "url": url, "ref": {"branch": branch}});
    if let Some(secret) = secret {
        spec["secretRef"] = json!({"name": secret});
    }
    json!({"apiVersion": SOURCE, "kind": "GitRepository", "metadata": {"name": name, "namespace": NS}, "spec": spec})
}

fn kustomization(name: &str, source: &str, path: &str) -> Value {
    json!({"apiVersion": KUSTOMIZE, "kind": "Kustomization", "metadata": {"name": name, "namespace": NS},
        "spec": {"interval": "10m", "path": path, "prune": true, "sourceRef": {"kind": "GitRepository", "name": source}}})
}

fn inventory(o: &Value) -> Vec<String> {
    o["status"]["inventory"]["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} {}",
                e["id"].as_str().unwrap_or_default(),
                e["v"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// Over SSH: the commit applied, then a second commit applied with the removed ConfigMap pruned
/// and the one annotated `kustomize.toolkit.fluxcd.io/reconcile: disabled` left as it was;
/// kubectl and kube-rs read what the controllers wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_ssh_a_commit_is_applied_and_the_next_prunes_what_it_removed() -> Result {
    bounded(120, async {
        let world = World::start(false).await?;
        let fleet = world.fleet(
            "clusters/edge/config.yaml",
            &config_maps(&["a", "b", "c"]),
            "./clusters/edge",
        )?;

        let revision = format!("main@sha1:{}", fleet.first);
        let repo = world
            .until(SOURCE, "GitRepository", "flux-system", |o| {
                ready_is(o, "True", "Succeeded")
            })
            .await?;
        assert_eq!(repo["status"]["artifact"]["revision"], revision.as_str());
        assert_eq!(
            message(&repo),
            format!("stored artifact for revision '{revision}'")
        );
        let ks = world
            .until(KUSTOMIZE, "Kustomization", "flux-system", |o| {
                ready_is(o, "True", "ReconciliationSucceeded")
            })
            .await?;
        assert_eq!(message(&ks), format!("Applied revision: {revision}"));
        assert_eq!(ks["status"]["lastAppliedRevision"], revision.as_str());
        assert_eq!(ks["status"]["lastAttemptedRevision"], revision.as_str());
        assert_eq!(
            inventory(&ks),
            [
                "default_a__ConfigMap v1",
                "default_b__ConfigMap v1",
                "default_c__ConfigMap v1"
            ]
        );
        let a = world.config_map("a").ok_or("ConfigMap a not applied")?;
        assert_eq!(
            a["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
            "flux-system"
        );
        assert_eq!(
            a["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/namespace"],
            NS
        );
        assert_eq!(
            a["metadata"]["managedFields"][0]["manager"],
            "kustomize-controller"
        );
        assert_eq!(a["metadata"]["managedFields"][0]["operation"], "Apply");

        // What real clients read back: kubectl, and kube-rs.
        let listed: Value = serde_json::from_str(
            &world.kubectl(&["get", "kustomizations", "-n", NS, "-o", "json"], None)?,
        )?;
        assert_eq!(
            listed["items"][0]["status"]["lastAppliedRevision"],
            revision.as_str()
        );
        let client = common::client_with(&world.stand_in.kubeconfig()).await?;
        let resource = kube::api::ApiResource {
            group: "source.toolkit.fluxcd.io".into(),
            version: "v1".into(),
            api_version: SOURCE.into(),
            kind: "GitRepository".into(),
            plural: "gitrepositories".into(),
        };
        let read = kube::Api::<kube::api::DynamicObject>::namespaced_with(client, NS, &resource)
            .get("flux-system")
            .await?;
        assert_eq!(
            read.data["status"]["artifact"]["revision"],
            revision.as_str()
        );

        // As EKS Anywhere pauses an object during an upgrade: Flux leaves it as it is.
        world.kubectl(
            &[
                "annotate",
                "-n",
                "default",
                "configmaps/c",
                "kustomize.toolkit.fluxcd.io/reconcile=disabled",
            ],
            None,
        )?;
        let changed_c = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\ndata:\n  name: changed\n";
        let second = fleet.repos.commit(
            "fleet.git",
            "main",
            "clusters/edge/config.yaml",
            &format!("{}{changed_c}", config_maps(&["a"])),
        )?;
        // As `flux reconcile source git` asks.
        world.kubectl(
            &[
                "annotate",
                "--overwrite",
                "-n",
                NS,
                "gitrepositories/flux-system",
                "reconcile.fluxcd.io/requestedAt=2026-12-07T00:00:00Z",
            ],
            None,
        )?;
        let revision = format!("main@sha1:{second}");
        let repo = world
            .until(SOURCE, "GitRepository", "flux-system", |o| {
                o["status"]["artifact"]["revision"] == revision.as_str()
            })
            .await?;
        assert_eq!(
            repo["status"]["lastHandledReconcileAt"],
            "2026-12-07T00:00:00Z"
        );
        let ks = world
            .until(KUSTOMIZE, "Kustomization", "flux-system", |o| {
                o["status"]["lastAppliedRevision"] == revision.as_str()
            })
            .await?;
        assert_eq!(
            inventory(&ks),
            ["default_a__ConfigMap v1", "default_c__ConfigMap v1"]
        );
        assert!(world.config_map("b").is_none(), "b was not pruned");
        assert!(world.config_map("a").is_some());
        assert_eq!(world.config_map("c").ok_or("c pruned")?["data"]["name"], "c");
        Ok(())
    })
    .await
}

/// Over HTTPS with the CA and a token, as basic auth and as a bearer token; a wrong token fails
/// without showing it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_with_the_ca_and_a_token_and_a_wrong_token_is_not_shown() -> Result {
    bounded(120, async {
        let world = World::start(false).await?;
        let repos = GitRepos::new()?;
        repos.create("fleet.git")?;
        let commit = repos.commit("fleet.git", "main", "apps/config.yaml", &config_maps(&["h"]))?;
        let ca = TestCa::new("git CA")?;
        let token = "s3cret-token-4711";
        let https = HttpsGit::start(&repos, &ca, HttpAuth::Token(token.into())).await?;
        let url = https.url("fleet.git");
        let secrets = [
            ("basic", json!({"username": "flux", "password": token, "ca.crt": ca.pem()})),
            ("bearer", json!({"bearerToken": token, "ca.crt": ca.pem()})),
            ("wrong", json!({"username": "flux", "password": "not-the-token-0815", "ca.crt": ca.pem()})),
            ("no-ca", json!({"username": "flux", "password": token})),
        ];
        for (name, data) in &secrets {
            world.apply(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS}, "stringData": data}))?;
            world.apply(git_repository(name, &url, "main", Some(name)))?;
        }
        world.apply(kustomization("apps", "bearer", "./apps"))?;
        for name in ["basic", "bearer"] {
            let repo = world.until(SOURCE, "GitRepository", name, |o| ready(o).is_some()).await?;
            assert!(ready_is(&repo, "True", "Succeeded"), "{name}: {repo:#}");
            assert_eq!(repo["status"]["artifact"]["revision"], format!("main@sha1:{commit}").as_str());
        }
        let wrong = world.until(SOURCE, "GitRepository", "wrong", |o| ready(o).is_some()).await?;
        assert!(ready_is(&wrong, "False", "GitOperationFailed"), "{wrong:#}");
        assert!(message(&wrong).starts_with(&format!("failed to checkout and determine revision: unable to clone '{url}': ")), "{}", message(&wrong));
        let no_ca = world.until(SOURCE, "GitRepository", "no-ca", |o| ready(o).is_some()).await?;
        assert!(ready_is(&no_ca, "False", "GitOperationFailed"), "{no_ca:#}");
        for o in [&wrong, &no_ca] {
            let text = o["status"].to_string();
            assert!(!text.contains("not-the-token-0815") && !text.contains(token), "{text}");
        }
        world.until(KUSTOMIZE, "Kustomization", "apps", |o| ready_is(o, "True", "ReconciliationSucceeded")).await?;
        assert!(world.config_map("h").is_some());
        Ok(())
    })
    .await
}

/// A host key not in known_hosts, a missing branch, a missing Secret or `known_hosts`, a URL
/// Flux does not take, a missing path and a build that fails: each with source-controller's or
/// kustomize-controller's reason, and the private key nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_host_key_missing_branch_secret_or_path_and_a_failed_build_say_so() -> Result {
    bounded(120, async {
        let world = World::start(false).await?;
        let repos = GitRepos::new()?;
        repos.create("fleet.git")?;
        repos.commit(
            "fleet.git",
            "main",
            "broken/kustomization.yaml",
            "resources:\n- missing.yaml\n",
        )?;
        let ssh = SshGit::start(&repos)?;
        let other = SshKey::generate(&repos.scratch("other")?, "other_host_key")?;
        let url = ssh.url("fleet.git");
        world.apply(ssh_secret(
            "good",
            &ssh.client_key.private_key,
            &ssh.known_hosts,
        ))?;
        world.apply(ssh_secret(
            "other-host",
            &ssh.client_key.private_key,
            &other.known_hosts_line(ssh.port),
        ))?;
        world.apply(ssh_secret("no-hosts", &ssh.client_key.private_key, ""))?;
        world.apply(git_repository("no-known-hosts", &url, "main", Some("no-hosts")))?;
        world.apply(git_repository(
            "wrong-host-key",
            &url,
            "main",
            Some("other-host"),
        ))?;
        world.apply(git_repository("no-branch", &url, "nope", Some("good")))?;
        world.apply(git_repository("no-secret", &url, "main", Some("absent")))?;
        world.apply(git_repository(
            "scp-like",
            "git@127.0.0.1:fleet.git",
            "main",
            Some("good"),
        ))?;
        world.apply(git_repository("good", &url, "main", Some("good")))?;
        world.apply(kustomization("no-path", "good", "./clusters/absent"))?;
        world.apply(kustomization("broken", "good", "./broken"))?;
        world.apply(kustomization("no-source", "absent", "./"))?;

        let wrong = world
            .failure(SOURCE, "GitRepository", "wrong-host-key", "GitOperationFailed")
            .await?;
        assert!(wrong.contains("Host key verification failed."), "{wrong}");
        let repository = world
            .stand_in
            .get(SOURCE, "GitRepository", Some(NS), "wrong-host-key")
            .ok_or("gone")?;
        let fetch_failed = repository["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "FetchFailed")
            .ok_or("no FetchFailed")?;
        assert_eq!(fetch_failed["status"], "True");
        let branch = world
            .failure(SOURCE, "GitRepository", "no-branch", "GitOperationFailed")
            .await?;
        assert!(branch.contains("nope"), "{branch}");
        let secret = world
            .failure(SOURCE, "GitRepository", "no-secret", "AuthenticationFailed")
            .await?;
        assert_eq!(
            secret,
            "failed to get secret 'flux-system/absent': secrets \"absent\" not found"
        );
        world
            .failure(SOURCE, "GitRepository", "scp-like", "URLInvalid")
            .await?;
        let hosts = world
            .failure(SOURCE, "GitRepository", "no-known-hosts", "AuthenticationFailed")
            .await?;
        assert_eq!(
            hosts,
            "failed to configure authentication options: invalid 'ssh' auth option: 'known_hosts' is required"
        );

        // Before the source has an artifact the reason is the same; the message tells them apart.
        let no_path = world
            .until(KUSTOMIZE, "Kustomization", "no-path", |o| {
                ready_is(o, "False", "ArtifactFailed") && message(o).starts_with("kustomization path")
            })
            .await?;
        assert!(no_path["status"]["lastAttemptedRevision"].is_null());
        let no_path = message(&no_path);
        assert!(
            no_path.starts_with("kustomization path not found: stat ")
                && no_path.ends_with("/clusters/absent: no such file or directory"),
            "{no_path}"
        );
        let broken = world
            .failure(KUSTOMIZE, "Kustomization", "broken", "BuildFailed")
            .await?;
        assert!(
            broken.starts_with("kustomize build failed: ") && broken.contains("missing.yaml"),
            "{broken}"
        );
        world
            .failure(KUSTOMIZE, "Kustomization", "no-source", "ArtifactFailed")
            .await?;

        for (api, kind) in [(SOURCE, "GitRepository"), (KUSTOMIZE, "Kustomization")] {
            for o in world.stand_in.list(api, kind, Some(NS)) {
                assert!(!o["status"].to_string().contains("PRIVATE KEY"), "{o:#}");
            }
        }
        Ok(())
    })
    .await
}

/// Without Flux's controllers running nothing gets a status; once they are Available it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_happens_until_flux_s_deployments_are_available() -> Result {
    bounded(120, async {
        let world = World::start(true).await?;
        let _fleet = world.fleet("apps/config.yaml", &config_maps(&["quiet"]), "./apps")?;
        // Several passes of the simulation, asked to reconcile now each time.
        for _ in 0..10 {
            world.flux.reconcile_now();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let repo = world
            .stand_in
            .get(SOURCE, "GitRepository", Some(NS), "flux-system")
            .ok_or("gone")?;
        assert!(repo["status"].is_null(), "{repo:#}");
        assert!(world.config_map("quiet").is_none());
        let deployment = world
            .stand_in
            .get("apps/v1", "Deployment", Some(NS), "source-controller")
            .ok_or("not installed")?;
        assert_eq!(deployment["status"]["availableReplicas"], 0);

        world.workloads.set_stall(Vec::new());
        world
            .until(KUSTOMIZE, "Kustomization", "flux-system", |o| {
                ready_is(o, "True", "ReconciliationSucceeded")
            })
            .await?;
        assert!(world.config_map("quiet").is_some());
        Ok(())
    })
    .await
}

/// The webhook Service `hooks` in `flux-system`, and its certificate's name.
const HOOK_HOST: &str = "hooks.flux-system.svc";

/// A validating webhook server that denies ConfigMaps labelled `deny` (code 403, `Forbidden`).
async fn denying_webhook(
    ca: &TestCa,
) -> Result<(std::net::SocketAddr, snow_test_devices::https::Serving)> {
    webhook::serve(ca, HOOK_HOST, |_, _, review: Value| async move {
        if review["request"]["object"]["metadata"]["labels"]["deny"].is_null() {
            json!({"allowed": true})
        } else {
            json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "configmaps must not say no"}})
        }
    })
    .await
}

/// A commit a webhook denies: the Kustomization says so with the webhook's message, the
/// Namespace of the first stage is applied, the denied stage is not (nothing of it written),
/// and the inventory stays the last good one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_denial_shows_in_the_kustomization_status() -> Result {
    bounded(120, async {
        use base64::Engine as _;
        let world = World::start(false).await?;
        let ca = TestCa::new("webhook CA")?;
        let (addr, _serving) = denying_webhook(&ca).await?;
        world.apply(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks", "namespace": NS}, "spec": {"ports": [{"port": 443}]}}))?;
        world.stand_in.map_service(NS, "hooks", 443, addr);
        world.apply(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "deny"},
            "webhooks": [{"name": "deny.flux.test", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {"namespace": NS, "name": "hooks", "path": "/validate"}, "caBundle": base64::engine::general_purpose::STANDARD.encode(ca.pem())},
                "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}]}))?;

        let fleet = world.fleet("apps/config.yaml", &config_maps(&["fine"]), "./apps")?;
        let good = fleet.first;
        let good = format!("main@sha1:{good}");
        world.until(KUSTOMIZE, "Kustomization", "flux-system", |o| o["status"]["lastAppliedRevision"] == good.as_str()).await?;

        let denied = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n  namespace: default\ndata:\n  name: changed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: no\n  namespace: default\n  labels:\n    deny: \"yes\"\n";
        let bad = fleet.repos.commit("fleet.git", "main", "apps/config.yaml", denied)?;
        world.flux.reconcile_now();
        let bad = format!("main@sha1:{bad}");
        let ks = world.until(KUSTOMIZE, "Kustomization", "flux-system", |o| o["status"]["lastAttemptedRevision"] == bad.as_str() && ready(o).is_some_and(|c| c["status"] == "False")).await?;
        assert!(ready_is(&ks, "False", "ReconciliationFailed"), "{ks:#}");
        assert_eq!(
            message(&ks),
            "ConfigMap/default/no dry-run failed (Forbidden): admission webhook \"deny.flux.test\" denied the request: configmaps must not say no\nNamespace/team created\n"
        );
        assert_eq!(ks["status"]["lastAppliedRevision"], good.as_str());
        assert_eq!(inventory(&ks), ["default_fine__ConfigMap v1"]);
        assert!(world.stand_in.get("v1", "Namespace", None, "team").is_some(), "the first stage is applied");
        assert_eq!(world.config_map("fine").ok_or("fine gone")?["data"]["name"], "fine", "nothing of the denied stage is applied");
        assert!(world.config_map("no").is_none());
        Ok(())
    })
    .await
}

/// kustomize-controller applies as its ServiceAccount: without Flux's `cluster-reconciler`
/// binding (to `cluster-admin`) RBAC refuses it a Service (Flux's `crd-controller` role, still
/// bound, allows ConfigMaps for leader election), and the Kustomization says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kustomize_controller_applies_under_its_service_account_s_rbac() -> Result {
    bounded(120, async {
        let world = World::start(false).await?;
        world.kubectl(&["delete", "clusterrolebinding", "cluster-reconciler"], None)?;
        let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: guarded\n  namespace: default\nspec:\n  ports:\n  - port: 80\n";
        let _fleet = world.fleet("apps/service.yaml", service, "./apps")?;
        let ks = world.until(KUSTOMIZE, "Kustomization", "flux-system", |o| ready_is(o, "False", "ReconciliationFailed")).await?;
        assert_eq!(
            message(&ks),
            "Service/default/guarded dry-run failed (Forbidden): services \"guarded\" is forbidden: User \"system:serviceaccount:flux-system:kustomize-controller\" cannot patch resource \"services\" in API group \"\" in the namespace \"default\"\n"
        );
        assert!(world.stand_in.get("v1", "Service", Some("default"), "guarded").is_none());
        Ok(())
    })
    .await
}

/// EKS Anywhere's layout: no kustomization file at the Kustomization's path, one in a
/// sub-directory; Flux generates one of the directory and the loose YAML file. A
/// `targetNamespace` puts every namespaced object there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_without_a_kustomization_file_is_generated_as_flux_generates_it() -> Result {
    bounded(120, async {
        let world = World::start(false).await?;
        let fleet = world.fleet(
            "clusters/edge/loose.yaml",
            &config_maps(&["loose"]),
            "./clusters/edge",
        )?;
        fleet.repos.commit(
            "fleet.git",
            "main",
            "clusters/edge/edge/eksa-system/cluster.yaml",
            &config_maps(&["spec"]),
        )?;
        fleet.repos.commit(
            "fleet.git",
            "main",
            "clusters/edge/edge/eksa-system/ignored.yaml",
            &config_maps(&["not-listed"]),
        )?;
        let last = fleet.repos.commit(
            "fleet.git",
            "main",
            "clusters/edge/edge/eksa-system/kustomization.yaml",
            "resources:\n- cluster.yaml\n",
        )?;
        world.apply(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
        )?;
        let mut targeted = kustomization(
            "targeted",
            "flux-system",
            "./clusters/edge/edge/eksa-system",
        );
        targeted["spec"]["targetNamespace"] = json!("team");
        world.apply(targeted)?;
        world.flux.reconcile_now();
        let last = format!("main@sha1:{last}");
        let ks = world
            .until(KUSTOMIZE, "Kustomization", "flux-system", |o| {
                o["status"]["lastAppliedRevision"] == last.as_str()
            })
            .await?;
        assert_eq!(
            inventory(&ks),
            ["default_loose__ConfigMap v1", "default_spec__ConfigMap v1"]
        );
        assert!(world.config_map("not-listed").is_none());
        let targeted = world
            .until(KUSTOMIZE, "Kustomization", "targeted", |o| {
                o["status"]["lastAppliedRevision"] == last.as_str()
            })
            .await?;
        assert_eq!(inventory(&targeted), ["team_spec__ConfigMap v1"]);
        assert!(
            world
                .stand_in
                .get("v1", "ConfigMap", Some("team"), "spec")
                .is_some()
        );
        Ok(())
    })
    .await
}
