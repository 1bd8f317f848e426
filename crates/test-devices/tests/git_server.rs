//! The git servers checked with the real `git` program: clone, commit and push over HTTPS (with
//! and without a token) and SSH, and what each refuses.

use snow_io::process::{Run, Stdin, no_secrets};
use snow_test_devices::TestCa;
use snow_test_devices::git_server::{GitRepos, HttpAuth, HttpsGit, SshGit, SshKey};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// Runs `git args` with no system or global configuration, no prompts and a fixed identity,
/// within 60 s; stdout, or the failure's stderr.
fn git(extra_env: &[(String, String)], args: &[&str]) -> Result<String, String> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let mut env: Vec<(String, String)> = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_AUTHOR_NAME", "Test"),
        ("GIT_AUTHOR_EMAIL", "test@example.invalid"),
        ("GIT_COMMITTER_NAME", "Test"),
        ("GIT_COMMITTER_EMAIL", "test@example.invalid"),
        ("LC_ALL", "C"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.extend_from_slice(extra_env);
    Run {
        program: Path::new("git"),
        args: &args,
        env: &env,
        stdin: Stdin::Null,
        timeout: Duration::from_secs(60),
        max_stdout: 1 << 20,
        redact: &no_secrets,
    }
    // Isolated: the machine's GIT_SSL_CAINFO, GIT_DIR and the like must not change the test.
    .run_isolated()
    .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
    .map_err(|f| format!("{}: {:?}: {}", f.command, f.kind, f.stderr))
}

/// Clones `url` into `dir`, commits `file` with `text` on `main` and pushes it; then a second,
/// fresh clone reads the file back.
fn round_trip(env: &[(String, String)], url: &str, scratch: &Path, text: &str) {
    let work = scratch.join("work");
    let work_s = work.display().to_string();
    git(env, &["clone", "--quiet", url, &work_s]).unwrap();
    std::fs::write(work.join("file.txt"), text).unwrap();
    git(env, &["-C", &work_s, "checkout", "--quiet", "-B", "main"]).unwrap();
    git(env, &["-C", &work_s, "add", "file.txt"]).unwrap();
    git(env, &["-C", &work_s, "commit", "--quiet", "-m", "first"]).unwrap();
    git(env, &["-C", &work_s, "push", "--quiet", "origin", "main"]).unwrap();
    let check = scratch.join("check");
    let check_s = check.display().to_string();
    git(
        env,
        &["clone", "--quiet", "--branch", "main", url, &check_s],
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(check.join("file.txt")).unwrap(),
        text
    );
    let log = git(env, &["-C", &check_s, "log", "--format=%s %an"]).unwrap();
    assert_eq!(log, "first Test");
}

fn https_env(server: &HttpsGit, header: Option<&str>) -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_CONFIG_COUNT".to_owned(), "1".to_owned()),
        ("GIT_CONFIG_KEY_0".to_owned(), "http.sslCAInfo".to_owned()),
        (
            "GIT_CONFIG_VALUE_0".to_owned(),
            server.ca_file.display().to_string(),
        ),
    ];
    if let Some(header) = header {
        env[0].1 = "2".to_owned();
        env.push(("GIT_CONFIG_KEY_1".to_owned(), "http.extraHeader".to_owned()));
        env.push(("GIT_CONFIG_VALUE_1".to_owned(), header.to_owned()));
    }
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_without_auth_clones_and_takes_pushes() {
    let repos = GitRepos::new().unwrap();
    repos.create("open.git").unwrap();
    let ca = TestCa::new("git test CA").unwrap();
    let server = HttpsGit::start(&repos, &ca, HttpAuth::None).await.unwrap();
    let env = https_env(&server, None);
    let url = server.url("open.git");
    let scratch = repos.scratch("client").unwrap();
    tokio::task::spawn_blocking(move || round_trip(&env, &url, &scratch, "hello\n"))
        .await
        .unwrap();
    assert!(server.requests() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_token_refuses_no_token_and_a_wrong_one() {
    let repos = GitRepos::new().unwrap();
    repos.create("private.git").unwrap();
    let ca = TestCa::new("git test CA").unwrap();
    let token = "tok-7f3a9c";
    let server = HttpsGit::start(&repos, &ca, HttpAuth::Token(token.into()))
        .await
        .unwrap();
    let url = server.url("private.git");
    let scratch = repos.scratch("client").unwrap();
    let good = https_env(&server, Some(&format!("Authorization: Bearer {token}")));
    let none = https_env(&server, None);
    let wrong = https_env(&server, Some("Authorization: Bearer tok-wrong"));
    let untrusted = vec![(
        "GIT_CONFIG_PARAMETERS".to_owned(),
        format!("'http.extraHeader'='Authorization: Bearer {token}'"),
    )];
    tokio::task::spawn_blocking(move || {
        let into = |name: &str| scratch.join(name).display().to_string();
        let err = git(&none, &["clone", "--quiet", &url, &into("none")]).unwrap_err();
        assert!(err.contains("could not read Username"), "{err}");
        let err = git(&wrong, &["clone", "--quiet", &url, &into("wrong")]).unwrap_err();
        assert!(err.contains("could not read Username"), "{err}");
        // Without the CA the certificate is not trusted.
        let err = git(&untrusted, &["clone", "--quiet", &url, &into("untrusted")]).unwrap_err();
        assert!(err.contains("certificate"), "{err}");
        round_trip(&good, &url, &scratch, "with a token\n");
    })
    .await
    .unwrap();
}

#[test]
fn ssh_clones_and_takes_pushes_with_the_client_key_only() {
    let repos = GitRepos::new().unwrap();
    repos.create("clusters.git").unwrap();
    let server = SshGit::start(&repos).unwrap();
    let url = server.url("clusters.git");
    assert!(
        url.starts_with(&format!("ssh://{}@127.0.0.1:{}/", server.user, server.port)),
        "{url}"
    );
    let scratch = repos.scratch("client").unwrap();
    let ssh = |key: &Path, known: &Path| {
        vec![("GIT_SSH_COMMAND".to_owned(), server.ssh_command(key, known))]
    };
    let good = ssh(
        &server.client_key.private_key_file,
        &server.known_hosts_file,
    );
    round_trip(&good, &url, &scratch, "over ssh\n");

    let into = |name: &str| scratch.join(name).display().to_string();
    // A known_hosts naming another host key for the address: refused before any login.
    let other_host = SshKey::generate(&scratch, "other_host").unwrap();
    let wrong_known = scratch.join("wrong_known_hosts");
    std::fs::write(
        &wrong_known,
        format!("{}\n", other_host.known_hosts_line(server.port)),
    )
    .unwrap();
    let env = ssh(&server.client_key.private_key_file, &wrong_known);
    let err = git(&env, &["clone", "--quiet", &url, &into("wrong-host")]).unwrap_err();
    assert!(
        err.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
            || err.contains("Host key verification failed"),
        "{err}"
    );
    // An empty known_hosts: the host is unknown, and StrictHostKeyChecking=yes refuses it.
    let empty_known = scratch.join("empty_known_hosts");
    std::fs::write(&empty_known, "").unwrap();
    let env = ssh(&server.client_key.private_key_file, &empty_known);
    let err = git(&env, &["clone", "--quiet", &url, &into("unknown-host")]).unwrap_err();
    assert!(err.contains("Host key verification failed"), "{err}");
    // Another client key: the server lets it not in.
    let other_client = SshKey::generate(&scratch, "other_client").unwrap();
    let env = ssh(&other_client.private_key_file, &server.known_hosts_file);
    let err = git(&env, &["clone", "--quiet", &url, &into("wrong-key")]).unwrap_err();
    assert!(err.contains("Permission denied"), "{err}");
}

#[test]
fn the_ssh_key_runs_git_shell_only() {
    let repos = GitRepos::new().unwrap();
    let server = SshGit::start(&repos).unwrap();
    let args: Vec<OsString> = [
        "-F",
        "/dev/null",
        "-i",
        &server.client_key.private_key_file.display().to_string(),
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        &format!("UserKnownHostsFile={}", server.known_hosts_file.display()),
        "-p",
        &server.port.to_string(),
        &format!("{}@127.0.0.1", server.user),
        "id",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let err = Run {
        program: Path::new("ssh"),
        args: &args,
        env: &[],
        stdin: Stdin::Null,
        timeout: Duration::from_secs(60),
        max_stdout: 1 << 16,
        redact: &no_secrets,
    }
    .run_isolated()
    .unwrap_err();
    // git-shell refuses any command but git's own.
    assert!(
        err.stderr.contains("unrecognized command"),
        "{err:?}\n{}",
        server.log()
    );
}
