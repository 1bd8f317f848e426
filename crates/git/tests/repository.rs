//! snow-git against real git servers on loopback (`snow_test_devices::git_server`: sshd with
//! git-shell, `git http-backend` behind TLS), results read back by the real `git` from a fresh
//! clone of the bare repository.

use snow_git::{
    Auth, Change, GitError, HttpCredential, HttpsAuth, Identity, Limits, Remote, Repository,
    Secret, SshAuth,
};
use snow_io::process::{Run, Stdin, no_secrets};
use snow_test_devices::TestCa;
use snow_test_devices::git_server::{GitRepos, HttpAuth, HttpsGit, SshGit, SshKey};
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const TOKEN: &str = "tok-5b9e1c7d-git";

fn identity() -> Identity {
    Identity {
        name: "snowctl".into(),
        email: "snowctl@example.invalid".into(),
    }
}

fn limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(60),
        max_checkout_bytes: 1 << 20,
    }
}

fn write(path: &str, text: &str) -> Change {
    Change::Write {
        path: path.into(),
        bytes: text.as_bytes().to_vec(),
    }
}

/// The real git, within 60 s, no configuration of the machine's.
fn git(args: &[&str]) -> String {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let env: Vec<(String, String)> = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_AUTHOR_NAME", "Seeder"),
        ("GIT_AUTHOR_EMAIL", "seeder@example.invalid"),
        ("GIT_COMMITTER_NAME", "Seeder"),
        ("GIT_COMMITTER_EMAIL", "seeder@example.invalid"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let out = Run {
        program: Path::new("git"),
        args: &args,
        env: &env,
        stdin: Stdin::Null,
        timeout: Duration::from_secs(60),
        max_stdout: 16 << 20,
        redact: &no_secrets,
    }
    .run()
    .unwrap_or_else(|f| panic!("{}: {:?}: {}", f.command, f.kind, f.stderr));
    String::from_utf8_lossy(&out).trim().to_owned()
}

/// A fresh clone of `branch` of the bare repository `name`, read by the real git.
struct Readback {
    dir: tempfile::TempDir,
}

impl Readback {
    fn of(repos: &GitRepos, name: &str, branch: &str) -> Readback {
        let dir = tempfile::tempdir().unwrap();
        let into = dir.path().join("clone");
        git(&[
            "clone",
            "--quiet",
            "--branch",
            branch,
            &repos.path(name).display().to_string(),
            &into.display().to_string(),
        ]);
        Readback { dir }
    }

    fn git(&self, args: &[&str]) -> String {
        let dir = self.dir.path().join("clone").display().to_string();
        let mut all = vec!["-C", dir.as_str()];
        all.extend_from_slice(args);
        git(&all)
    }

    /// `subject | author <email>` per commit, newest first.
    fn log(&self) -> Vec<String> {
        self.git(&["log", "--format=%s | %an <%ae>"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn show(&self, path: &str) -> String {
        self.git(&["show", &format!("HEAD:{path}")])
    }
}

fn ssh_auth(server: &SshGit) -> Auth {
    Auth::Ssh(SshAuth {
        private_key: Secret::new(server.client_key.private_key.clone()),
        passphrase: None,
        known_hosts: server.known_hosts.clone(),
    })
}

fn https_auth(server: &HttpsGit, credential: Option<HttpCredential>) -> Auth {
    Auth::Https(HttpsAuth {
        credential,
        ca_bundle_pem: Some(server.ca_pem.as_bytes().to_vec()),
    })
}

fn bearer(token: &str) -> Option<HttpCredential> {
    Some(HttpCredential::Bearer(Secret::new(token)))
}

/// An HTTPS server asking for [`TOKEN`], on a runtime of its own (the client blocks).
fn https_world(auth: HttpAuth) -> (tokio::runtime::Runtime, Arc<GitRepos>, HttpsGit) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let repos = Arc::new(GitRepos::new().unwrap());
    let ca = TestCa::new("snow-git test CA").unwrap();
    let server = runtime
        .block_on(HttpsGit::start(&repos, &ca, auth))
        .unwrap();
    (runtime, repos, server)
}

/// Secrets never appear in what an error shows.
fn assert_hidden(err: &GitError, secrets: &[&str]) {
    let shown = format!("{err}\n{err:?}");
    for secret in secrets {
        assert!(!shown.contains(secret), "{secret:?} shown in: {shown}");
    }
}

/// The lines of a private key's body: none may be shown.
fn key_lines(key: &str) -> Vec<&str> {
    key.lines()
        .filter(|l| !l.starts_with("-----") && l.len() > 16)
        .collect()
}

const CLUSTER: &str = "clusters/mgmt/mgmt/eksa-system/eksa-cluster.yaml";
const KUSTOMIZATION: &str = "clusters/mgmt/mgmt/eksa-system/kustomization.yaml";

#[test]
fn ssh_first_commit_into_an_empty_repository_and_no_second_commit_for_the_same_content() {
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let auth = ssh_auth(&server);
    let changes = [
        write(CLUSTER, "kind: Cluster\n"),
        write(KUSTOMIZATION, "resources:\n- eksa-cluster.yaml\n"),
    ];

    let mut repo = Repository::clone(&remote, &auth, "main", &identity(), limits()).unwrap();
    assert_eq!(
        repo.head().unwrap(),
        None,
        "an empty repository has no head"
    );
    repo.write(&changes).unwrap();
    let committed = repo
        .commit("Initial commit of cluster configuration")
        .unwrap();
    let pushed = repo.push().unwrap();
    assert!(committed.is_some());
    assert_eq!(pushed, committed);

    let back = Readback::of(&repos, "clusters.git", "main");
    assert_eq!(
        back.log(),
        ["Initial commit of cluster configuration | snowctl <snowctl@example.invalid>"]
    );
    assert_eq!(back.show(CLUSTER), "kind: Cluster");
    assert_eq!(back.git(&["rev-parse", "HEAD"]), pushed.unwrap().as_str());
    drop(repo);

    // A second run with the same content: no commit, nothing pushed.
    let mut again = Repository::clone(&remote, &auth, "main", &identity(), limits()).unwrap();
    assert!(again.head().unwrap().is_some());
    assert_eq!(
        again.read(CLUSTER, 1024).unwrap().as_deref(),
        Some(&b"kind: Cluster\n"[..])
    );
    again.write(&changes).unwrap();
    assert_eq!(again.commit("Update commit").unwrap(), None);
    assert_eq!(again.push().unwrap(), None);
    assert_eq!(Readback::of(&repos, "clusters.git", "main").log().len(), 1);
}

#[test]
fn ssh_a_concurrent_commit_is_fetched_and_the_changes_applied_on_it() {
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    repos
        .commit(
            "clusters.git",
            "main",
            "README.md",
            "cluster configuration\n",
        )
        .unwrap();
    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let mut repo =
        Repository::clone(&remote, &ssh_auth(&server), "main", &identity(), limits()).unwrap();
    // Another writer pushes after our clone.
    let theirs = repos
        .commit(
            "clusters.git",
            "main",
            "clusters/mgmt/w1/eksa-system/eksa-cluster.yaml",
            "w1\n",
        )
        .unwrap();
    repo.write(&[write(CLUSTER, "kind: Cluster\n")]).unwrap();
    let first = repo
        .commit("Update commit of cluster configuration")
        .unwrap()
        .unwrap();
    let pushed = repo.push().unwrap().unwrap();
    assert_ne!(pushed, first, "re-applied on their head: a new commit");

    let back = Readback::of(&repos, "clusters.git", "main");
    assert_eq!(back.git(&["rev-parse", "HEAD"]), pushed.as_str());
    assert_eq!(
        back.git(&["rev-parse", "HEAD^"]),
        theirs,
        "their commit is the parent"
    );
    assert_eq!(back.show(CLUSTER), "kind: Cluster");
    assert_eq!(
        back.show("clusters/mgmt/w1/eksa-system/eksa-cluster.yaml"),
        "w1"
    );
    assert_eq!(
        back.log()[0],
        "Update commit of cluster configuration | snowctl <snowctl@example.invalid>"
    );
}

#[test]
fn https_with_a_token_first_commit_and_a_concurrent_commit() {
    let (_runtime, repos, server) = https_world(HttpAuth::Token(TOKEN.into()));
    repos.create("clusters.git").unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let auth = https_auth(&server, bearer(TOKEN));
    let mut repo = Repository::clone(&remote, &auth, "main", &identity(), limits()).unwrap();
    repo.write(&[write(CLUSTER, "one\n")]).unwrap();
    repo.commit("first").unwrap().unwrap();
    let first = repo.push().unwrap().unwrap();
    drop(repo);

    // Basic auth with the token as password works as well.
    let basic = https_auth(
        &server,
        Some(HttpCredential::Basic {
            user: "x-access-token".into(),
            password: Secret::new(TOKEN),
        }),
    );
    let mut repo = Repository::clone(&remote, &basic, "main", &identity(), limits()).unwrap();
    assert_eq!(repo.head().unwrap(), Some(first.clone()));
    let theirs = repos
        .commit("clusters.git", "main", "other.txt", "theirs\n")
        .unwrap();
    repo.write(&[write(CLUSTER, "two\n")]).unwrap();
    repo.commit("second").unwrap().unwrap();
    let pushed = repo.push().unwrap().unwrap();

    let back = Readback::of(&repos, "clusters.git", "main");
    assert_eq!(back.git(&["rev-parse", "HEAD"]), pushed.as_str());
    assert_eq!(back.git(&["rev-parse", "HEAD^"]), theirs);
    assert_eq!(back.show(CLUSTER), "two");
    assert_eq!(back.show("other.txt"), "theirs");
}

#[test]
fn https_a_branch_that_moves_again_is_push_rejected() {
    let (_runtime, repos, server) = https_world(HttpAuth::Token(TOKEN.into()));
    repos.create("clusters.git").unwrap();
    repos
        .commit("clusters.git", "main", "README.md", "hi\n")
        .unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let auth = https_auth(&server, bearer(TOKEN));
    let mut repo = Repository::clone(&remote, &auth, "main", &identity(), limits()).unwrap();
    // Someone commits before every push we start.
    let count = Arc::new(AtomicUsize::new(0));
    let (hook_repos, hook_count) = (repos.clone(), count.clone());
    server.before_push(Some(Arc::new(move || {
        let n = hook_count.fetch_add(1, Ordering::SeqCst);
        hook_repos
            .commit("clusters.git", "main", "busy.txt", &format!("{n}\n"))
            .unwrap();
    })));
    repo.write(&[write(CLUSTER, "ours\n")]).unwrap();
    repo.commit("ours").unwrap().unwrap();
    let err = repo.push().unwrap_err();
    assert!(matches!(err, GitError::PushRejected { .. }), "{err}");
    assert!(
        err.to_string().contains("someone else is committing"),
        "{err}"
    );
    assert_eq!(count.load(Ordering::SeqCst), 2, "two pushes tried");
    assert_hidden(&err, &[TOKEN]);
    let back = Readback::of(&repos, "clusters.git", "main");
    assert!(back.git(&["ls-files"]).lines().all(|f| f != CLUSTER));
}

#[test]
fn wrong_credentials_are_refused_and_never_shown() {
    // SSH: a known_hosts naming another host key, and another client key.
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let scratch = repos.scratch("keys").unwrap();
    let other_host = SshKey::generate(&scratch, "other_host").unwrap();
    let key = server.client_key.private_key.clone();
    let wrong_host = Auth::Ssh(SshAuth {
        private_key: Secret::new(key.clone()),
        passphrase: None,
        known_hosts: other_host.known_hosts_line(server.port),
    });
    let err = Repository::clone(&remote, &wrong_host, "main", &identity(), limits()).unwrap_err();
    assert!(matches!(err, GitError::HostKeyRejected { .. }), "{err}");
    assert_hidden(&err, &key_lines(&key));

    let other_client = SshKey::generate(&scratch, "other_client").unwrap();
    let wrong_key = Auth::Ssh(SshAuth {
        private_key: Secret::new(other_client.private_key.clone()),
        passphrase: None,
        known_hosts: server.known_hosts.clone(),
    });
    let err = Repository::clone(&remote, &wrong_key, "main", &identity(), limits()).unwrap_err();
    assert!(
        matches!(err, GitError::AuthenticationFailed { .. }),
        "{err}"
    );
    assert_hidden(&err, &key_lines(&other_client.private_key));
    assert!(!format!("{wrong_key:?}").contains(key_lines(&other_client.private_key)[0]));

    // HTTPS: no token, and a wrong one.
    let (_runtime, https_repos, https) = https_world(HttpAuth::Token(TOKEN.into()));
    https_repos.create("clusters.git").unwrap();
    let remote = Remote::parse(&https.url("clusters.git")).unwrap();
    for credential in [None, bearer("tok-wrong-9f8e")] {
        let auth = https_auth(&https, credential);
        let err = Repository::clone(&remote, &auth, "main", &identity(), limits()).unwrap_err();
        assert!(
            matches!(err, GitError::AuthenticationFailed { .. }),
            "{err}"
        );
        assert_hidden(&err, &[TOKEN, "tok-wrong-9f8e"]);
    }
    // No CA: the server's certificate is not trusted.
    let untrusted = Auth::Https(HttpsAuth {
        credential: bearer(TOKEN),
        ca_bundle_pem: None,
    });
    let err = Repository::clone(&remote, &untrusted, "main", &identity(), limits()).unwrap_err();
    assert!(matches!(err, GitError::Git { .. }), "{err}");
    assert!(err.to_string().contains("certificate"), "{err}");
    assert_hidden(&err, &[TOKEN]);
}

#[test]
fn a_passphrase_reaches_ssh_through_askpass_only() {
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    // The server's client key, encrypted with a passphrase.
    let scratch = repos.scratch("keys").unwrap();
    let encrypted = scratch.join("encrypted");
    std::fs::copy(&server.client_key.private_key_file, &encrypted).unwrap();
    let passphrase = "pass-7c1d-phrase";
    let args: Vec<OsString> = ["-q", "-p", "-P", "", "-N", passphrase, "-f"]
        .iter()
        .map(OsString::from)
        .chain([encrypted.clone().into_os_string()])
        .collect();
    Run {
        program: Path::new("ssh-keygen"),
        args: &args,
        env: &[],
        stdin: Stdin::Null,
        timeout: Duration::from_secs(30),
        max_stdout: 1 << 16,
        redact: &no_secrets,
    }
    .run()
    .unwrap();
    let key = std::fs::read_to_string(&encrypted).unwrap();
    let auth = |passphrase: Option<&str>| {
        Auth::Ssh(SshAuth {
            private_key: Secret::new(key.clone()),
            passphrase: passphrase.map(Secret::new),
            known_hosts: server.known_hosts.clone(),
        })
    };
    let err = Repository::clone(&remote, &auth(None), "main", &identity(), limits()).unwrap_err();
    assert!(matches!(err, GitError::KeyNeedsPassphrase), "{err}");
    let err = Repository::clone(
        &remote,
        &auth(Some("wrong-phrase-x")),
        "main",
        &identity(),
        limits(),
    )
    .unwrap_err();
    assert!(
        matches!(err, GitError::AuthenticationFailed { .. }),
        "{err}"
    );
    assert_hidden(&err, &["wrong-phrase-x"]);
    let mut repo = Repository::clone(
        &remote,
        &auth(Some(passphrase)),
        "main",
        &identity(),
        limits(),
    )
    .unwrap();
    repo.write(&[write(CLUSTER, "x\n")]).unwrap();
    repo.commit("with a passphrase").unwrap();
    repo.push().unwrap().unwrap();
    assert_eq!(
        Readback::of(&repos, "clusters.git", "main").show(CLUSTER),
        "x"
    );
}

#[test]
fn a_missing_branch_is_branch_not_found() {
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    repos
        .commit("clusters.git", "main", "README.md", "hi\n")
        .unwrap();
    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let err = Repository::clone(
        &remote,
        &ssh_auth(&server),
        "release",
        &identity(),
        limits(),
    )
    .unwrap_err();
    match &err {
        GitError::BranchNotFound {
            branch, existing, ..
        } => {
            assert_eq!(branch, "release");
            assert_eq!(existing, &["main"]);
        }
        other => panic!("{other}"),
    }
    let err =
        Repository::clone(&remote, &ssh_auth(&server), "-x", &identity(), limits()).unwrap_err();
    assert!(
        matches!(err, GitError::InvalidInput { what: "branch", .. }),
        "{err}"
    );
}

#[test]
fn a_link_in_the_tree_is_never_written_through() {
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    // A repository whose `clusters` is a link to a directory outside it, and `top.yaml` a link.
    let seed = repos.scratch("seed").unwrap();
    let seed_s = seed.display().to_string();
    git(&[
        "clone",
        "--quiet",
        &repos.path("clusters.git").display().to_string(),
        &seed_s,
    ]);
    let outside = repos.scratch("outside").unwrap();
    std::os::unix::fs::symlink(&outside, seed.join("clusters")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", seed.join("top.yaml")).unwrap();
    git(&["-C", &seed_s, "checkout", "--quiet", "-B", "main"]);
    git(&["-C", &seed_s, "add", "clusters", "top.yaml"]);
    git(&["-C", &seed_s, "commit", "--quiet", "-m", "links"]);
    git(&["-C", &seed_s, "push", "--quiet", "origin", "main"]);

    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("clusters.git")).unwrap();
    let mut repo =
        Repository::clone(&remote, &ssh_auth(&server), "main", &identity(), limits()).unwrap();
    let err = repo
        .write(&[write("other/fine.yaml", "fine\n"), write(CLUSTER, "x\n")])
        .unwrap_err();
    match &err {
        GitError::LinkInPath { link, path, .. } => {
            assert_eq!((link.as_str(), path.as_str()), ("clusters", CLUSTER));
        }
        other => panic!("{other}"),
    }
    let err = repo.write(&[write("top.yaml", "x\n")]).unwrap_err();
    assert!(matches!(err, GitError::LinkInPath { .. }), "{err}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
    assert!(
        !repo.path().join("other").exists(),
        "nothing written when one change is refused"
    );
    assert_eq!(repo.commit("nothing").unwrap(), None);
}

#[test]
fn a_checkout_over_the_limit_is_refused() {
    let repos = GitRepos::new().unwrap();
    repos.create("big.git").unwrap();
    // Text that does not compress away: the fetched objects are large too.
    let big: String = (0..40_000u32)
        .map(|i| format!("{:08x}", i.wrapping_mul(2_654_435_761)))
        .collect();
    repos.commit("big.git", "main", "big.txt", &big).unwrap();
    let server = SshGit::start(&repos).unwrap();
    let remote = Remote::parse(&server.url("big.git")).unwrap();
    let small = Limits {
        max_checkout_bytes: 100_000,
        ..limits()
    };
    let err =
        Repository::clone(&remote, &ssh_auth(&server), "main", &identity(), small).unwrap_err();
    assert!(
        matches!(err, GitError::TooLarge { limit: 100_000, .. }),
        "{err}"
    );
    // Within the limit it is cloned.
    Repository::clone(&remote, &ssh_auth(&server), "main", &identity(), limits()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_a_time_out() {
    let ip = std::net::IpAddr::from([127, 0, 0, 1]);
    let port = std::net::TcpListener::bind((ip, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _hole = snow_test_devices::BlackHole::start(ip, port).await.unwrap();
    let remote = Remote::parse(&format!("https://127.0.0.1:{port}/clusters.git")).unwrap();
    let err = tokio::task::spawn_blocking(move || {
        let quick = Limits {
            timeout: Duration::from_secs(2),
            ..limits()
        };
        Repository::clone(
            &remote,
            &Auth::Https(HttpsAuth::default()),
            "main",
            &identity(),
            quick,
        )
        .unwrap_err()
    })
    .await
    .unwrap();
    assert!(
        matches!(err, GitError::TimedOut { seconds: 2, .. }),
        "{err}"
    );
}
