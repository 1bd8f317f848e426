//! `snowctl credentials create-scoped-user` through the binary against two devices (moto serves
//! IAM on its one port, so `--iam-port 8243`) and a third with a root profile and nothing
//! listening: exit codes, the file (0600, one profile per device), a re-run, the refusals of
//! unusable output files, and no secret in anything the binary prints.

use super::{show, text};
use snow_test_devices::fleet;
use snow_test_devices::{TestCa, loopback_ip};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn snowctl(args: &[&str], files: &(PathBuf, PathBuf)) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(["credentials", "create-scoped-user", "--iam-port", "8243"])
        .args(args)
        .env("EKSA_AWS_CREDENTIALS_FILE", &files.0)
        .env("EKSA_AWS_CA_BUNDLES_FILE", &files.1)
        .args(["--timeout", "5s"])
        .env("NO_COLOR", "1")
        .output()
        .expect("snowctl runs")
}

/// Every `aws_access_key_id` and `aws_secret_access_key` value of the file.
fn values(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("aws_"))
        .filter_map(|l| l.split_once(" = ").map(|(_, v)| v.to_owned()))
        .collect()
}

fn assert_no_secret(out: &Output, file: &Path) {
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let values = values(file);
    assert!(!values.is_empty());
    for value in values {
        assert!(
            !printed.contains(&value),
            "a key of {} was printed:\n{}",
            file.display(),
            show(out)
        );
    }
    assert!(!printed.contains(fleet::SECRET), "{}", show(out));
}

#[test]
fn scoped_users_through_the_binary() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("scoped user CLI CA").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = rt.block_on(fleet::fleet(&ca, 2, &[]));
    let down = loopback_ip();
    let files = f.write_files(&ca, &[down], dir.path());
    let (ip_a, ip_b) = (f.ips[0].to_string(), f.ips[1].to_string());
    let out_file = dir.path().join("eksa-credentials");
    let out_arg = out_file.to_str().unwrap();
    let both = format!("{ip_a},{ip_b}");

    // Every profile of the root file: the down device fails (exit 1), the others are done.
    let out = snowctl(&["--user", "eksa", "--output-file", out_arg], &files);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stdout = text(&out.stdout);
    for ip in [&ip_a, &ip_b] {
        assert!(
            stdout.contains(&format!(
                "{ip}: user eksa: created; policy set; new access key written"
            )),
            "{}",
            show(&out)
        );
    }
    assert!(
        stdout.contains(&format!(
            "{down}: failed: GetUser: IAM on {down}:8243: connection to port 8243 refused"
        )),
        "{}",
        show(&out)
    );
    assert!(
        stdout.contains("2 device profile(s) of user eksa"),
        "{}",
        show(&out)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let written = std::fs::read_to_string(&out_file).unwrap();
    assert!(written.contains(&format!("[{ip_a}]")) && written.contains(&format!("[{ip_b}]")));
    assert!(!written.contains(&format!("[{down}]")));
    assert_no_secret(&out, &out_file);

    // A re-run on the two devices: nothing new, exit 0, the same file.
    let out = snowctl(
        &[
            "--user",
            "eksa",
            "--output-file",
            out_arg,
            "--devices",
            &both,
        ],
        &files,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stdout).contains(&format!(
            "{ip_a}: user eksa: found; policy unchanged; access key kept"
        )),
        "{}",
        show(&out)
    );
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), written);
    assert_no_secret(&out, &out_file);

    // --rotate: new keys in the file, still nothing printed.
    let out = snowctl(
        &[
            "--user",
            "eksa",
            "--output-file",
            out_arg,
            "--devices",
            &both,
            "--rotate",
        ],
        &files,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("new access key written, old access key deleted"),
        "{}",
        show(&out)
    );
    assert_ne!(std::fs::read_to_string(&out_file).unwrap(), written);
    assert_no_secret(&out, &out_file);

    // Unusable input is exit 2 and touches nothing: the root file as output, a file a person
    // wrote, a bad user name.
    let root = files.0.to_str().unwrap();
    let before = std::fs::read(&files.0).unwrap();
    let out = snowctl(&["--user", "eksa", "--output-file", root], &files);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("is the root credentials file"),
        "{}",
        show(&out)
    );
    let mine = dir.path().join("mine");
    std::fs::write(&mine, "# mine\n").unwrap();
    let out = snowctl(
        &["--user", "eksa", "--output-file", mine.to_str().unwrap()],
        &files,
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("is not a file snowctl wrote"),
        "{}",
        show(&out)
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "# mine\n");
    let out = snowctl(&["--user", "no spaces", "--output-file", out_arg], &files);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(std::fs::read(&files.0).unwrap(), before);
}
