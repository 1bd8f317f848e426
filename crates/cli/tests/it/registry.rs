//! `snowctl registry serve` through the binary: the flags refused all at once, the spec's
//! `registryMirrorConfiguration` printed with the CA it made, skopeo reading an image through
//! that CA, the same CA again after a restart, and a clean stop on SIGTERM. (The server itself
//! is tested in the snow-registry crate.)

use snow_test_devices::{layout::Layout, registry as support};
use std::{
    io::{BufRead as _, BufReader},
    process::{Command, Stdio},
};

fn snowctl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_snowctl"))
}

/// Runs `snowctl registry serve ARGS…`, which must refuse them with exit 2; its stderr.
fn refused(args: &[&str]) -> String {
    let out = snowctl()
        .args([
            "registry",
            "serve",
            "--archive",
            "x.tar",
            "--listen",
            "0.0.0.0:443",
        ])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr
}

#[test]
fn wrong_flags_are_said_together_with_exit_2() {
    let stderr = refused(&["--oci-namespace", "public.ecr.aws", "--address", "ten"]);
    for said in [
        "--address ten",
        "--oci-namespace public.ecr.aws",
        "--state-dir DIR",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    let stderr = refused(&["--state-dir", "state"]);
    assert!(stderr.contains("add --address IP"), "{stderr}");
}

/// Starts the server; returns it and what it printed on stdout (read up to the CA's end).
pub(super) fn start(
    layout: &std::path::Path,
    state: &std::path::Path,
    port: u16,
) -> (std::process::Child, String) {
    let mut child = snowctl()
        .args(["registry", "serve", "--archive"])
        .arg(layout)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--state-dir"])
        .arg(state)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut printed = String::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    while !printed.contains("END CERTIFICATE") {
        let mut line = String::new();
        if lines.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            panic!("the server stopped before printing its CA: {printed}");
        }
        printed.push_str(&line);
    }
    (child, printed)
}

pub(super) fn stop(mut child: std::process::Child) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn the_printed_ca_is_what_skopeo_trusts_and_stays_the_same_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut layout = Layout::new(&dir.path().join("layout"));
    let image = layout.image("amd64", &support::random_bytes(10_000));
    layout.name(&image, "public.ecr.aws/eks-distro/kubernetes/pause:v1");
    let root = layout.finish();
    let state = dir.path().join("state");
    let port = snow_test_kube::probe::free_addr().port();
    let (child, printed) = start(&root, &state, port);
    assert!(
        printed.starts_with(&format!(
            "registryMirrorConfiguration:\n  endpoint: \"127.0.0.1\"\n  port: \"{port}\"\n  caCertContent: |\n    -----BEGIN CERTIFICATE-----\n"
        )),
        "{printed}"
    );
    let ca: String = printed
        .lines()
        .skip_while(|l| !l.contains("caCertContent"))
        .skip(1)
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    std::fs::write(certs.join("ca.crt"), &ca).unwrap();
    let out = Command::new("skopeo")
        .args(["inspect", "--raw", "--cert-dir"])
        .arg(&certs)
        .arg(format!(
            "docker://127.0.0.1:{port}/eks-distro/kubernetes/pause:v1"
        ))
        .output()
        .expect("skopeo is missing: scripts/test-world installs it");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(support::sha256(&out.stdout), image.digest);
    stop(child);
    let (child, again) = start(&root, &state, port);
    assert_eq!(again, printed);
    stop(child);
}
