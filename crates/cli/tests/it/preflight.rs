//! `snowctl validate` without `--offline`: static validation, then preflight against devices, in
//! one report with `device` filled. Devices here are a Device API stand-in over TLS and closed
//! EC2 ports on loopback (moto-backed runs are in snow-validate's tests).

use assert_cmd::Command;
use snow_test_devices::{DeviceApiStandIn, DeviceState, Faults, TestCa, loopback_ip};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

const ACCESS_KEY: &str = "AKIDCLIPREFLIGHT0001";
const SECRET: &str = "cliPreflightSecretKey000000000000000001";

fn snowctl() -> Command {
    let mut cmd = Command::cargo_bin("snowctl").unwrap();
    cmd.env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env("NO_COLOR", "1")
        .timeout(std::time::Duration::from_secs(60));
    cmd
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

fn spec(dir: &Path, devices: &[IpAddr]) -> PathBuf {
    let list: Vec<String> = devices.iter().map(ToString::to_string).collect();
    let out = snowctl()
        .args(["generate", "clusterconfig", "snow", "--provider", "snow"])
        .arg(format!("--devices={}", list.join(",")))
        .args(["--endpoint", "192.0.2.10", "--kubernetes-version", "1.31"])
        .args([
            "--ssh-key-name",
            "snow-key",
            "--instance-type",
            "sbe-c.large",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    write(dir, "cluster.yaml", &yaml)
}

#[test]
fn preflight_reports_per_device_findings_in_the_static_report_shape() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("cli test CA").unwrap();
    let (locked, fine) = (loopback_ip(), loopback_ip());
    let _servers: Vec<DeviceApiStandIn> = rt.block_on(async {
        let mut v = Vec::new();
        for (ip, state) in [
            (
                locked,
                DeviceState {
                    unlock_state: "LOCKED".into(),
                    ..DeviceState::default()
                },
            ),
            (fine, DeviceState::default()),
        ] {
            let cert = ca.server_certificate(ip).unwrap();
            v.push(
                DeviceApiStandIn::start(
                    ip,
                    9092,
                    &cert,
                    ACCESS_KEY,
                    SECRET,
                    state,
                    Faults::default(),
                )
                .await
                .unwrap(),
            );
        }
        v
    });
    let cluster = spec(dir.path(), &[locked, fine]);
    let mut ini = String::new();
    for ip in [locked, fine] {
        ini.push_str(&format!("[{ip}]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET}\nregion = snow\n"));
    }
    let creds = write(dir.path(), "credentials", &ini);
    let bundle = write(dir.path(), "ca.pem", ca.pem());

    let out = snowctl()
        .args(super::sample_release(&[
            "validate",
            "-o",
            "json",
            "--skip-ip-check",
            "--timeout",
            "5s",
        ]))
        .arg("-f")
        .arg(&cluster)
        .env("EKSA_AWS_CREDENTIALS_FILE", &creds)
        .env("EKSA_AWS_CA_BUNDLES_FILE", &bundle)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "no progress lines when piped: {stderr}");
    assert!(!stdout.contains(SECRET) && !stdout.contains(ACCESS_KEY));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["ok"], false);
    let findings = report["findings"].as_array().unwrap();
    let errors: Vec<(String, String)> = findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_owned(),
                f["device"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    // EC2 (port 8243) is closed on both: refused. The Device API answers: one device is locked.
    assert!(
        errors.contains(&("preflight.unlocked".into(), locked.to_string())),
        "{errors:?}"
    );
    assert!(
        !errors.contains(&("preflight.unlocked".into(), fine.to_string())),
        "{errors:?}"
    );
    for ip in [locked, fine] {
        assert!(
            errors.contains(&("preflight.reachability".into(), ip.to_string())),
            "{errors:?}"
        );
    }
    let refused = findings
        .iter()
        .find(|f| f["check"] == "preflight.reachability")
        .unwrap();
    assert!(
        refused["message"].as_str().unwrap().contains("8243"),
        "{refused}"
    );
    assert_eq!(report["preflight"]["devices"].as_array().unwrap().len(), 2);
    assert!(
        findings
            .iter()
            .any(|f| f["check"] == "preflight.endpoint-in-use" && f["severity"] == "info")
    );
    assert!(
        report.get("defaults").is_some(),
        "the static report's keys stay"
    );

    // A credentials finding points at the credentials file and its line, not at the spec's.
    let ini = format!("{ini}[default]\nregion = snow\n");
    let warned_at = ini.lines().count() - 1;
    let creds = write(dir.path(), "credentials", &ini);
    let out = snowctl()
        .args(super::sample_release(&[
            "validate",
            "--skip-ip-check",
            "--timeout",
            "5s",
        ]))
        .arg("-f")
        .arg(&cluster)
        .env("EKSA_AWS_CREDENTIALS_FILE", &creds)
        .env("EKSA_AWS_CA_BUNDLES_FILE", &bundle)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let at = format!("--> {}:{warned_at}:", creds.display());
    assert!(
        stdout.contains("credentials.non-device-profile"),
        "{stdout}"
    );
    assert!(stdout.contains(&at), "{at} missing:\n{stdout}");
    assert!(
        !stdout.contains(&format!("--> {}:{warned_at}:", cluster.display())),
        "{stdout}"
    );
}

#[test]
fn preflight_without_credentials_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = spec(dir.path(), &["192.0.2.20".parse().unwrap()]);
    let out = snowctl()
        .args(["validate", "-o", "json", "-f"])
        .arg(&cluster)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("preflight.input") && stdout.contains("EKSA_AWS_CREDENTIALS_FILE"),
        "{stdout}"
    );
    // --offline still needs nothing.
    let out = snowctl()
        .args(["validate", "--offline", "-f"])
        .arg(&cluster)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_authenticated_mirror_without_its_variables_is_a_preflight_finding_on_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let ip = loopback_ip();
    let cluster = spec(dir.path(), &[ip]);
    let text = std::fs::read_to_string(&cluster).unwrap().replacen(
        "  kubernetesVersion:",
        "  registryMirrorConfiguration: {endpoint: 10.1.1.5, authenticate: true}\n  kubernetesVersion:",
        1,
    );
    let cluster = write(dir.path(), "mirror.yaml", &text);
    let ca = TestCa::new("nothing listens").unwrap();
    let credentials = write(
        dir.path(),
        "credentials",
        &format!(
            "[{ip}]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET}\nregion = snow\n"
        ),
    );
    let bundle = write(dir.path(), "ca.pem", ca.pem());
    let validate = |env: &[(&str, &str)]| {
        let out = snowctl()
            .args(super::sample_release(&[
                "validate",
                "-o",
                "json",
                "--timeout",
                "2s",
            ]))
            .arg("-f")
            .arg(&cluster)
            .arg("--credentials")
            .arg(&credentials)
            .arg("--ca-bundle")
            .arg(&bundle)
            .env_remove("REGISTRY_USERNAME")
            .env_remove("REGISTRY_PASSWORD")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mirror: Vec<serde_json::Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["check"] == "registry-mirror.credentials")
            .cloned()
            .collect();
        (out.status.code(), mirror)
    };
    let (code, mirror) = validate(&[]);
    assert_eq!(code, Some(1));
    assert_eq!(mirror.len(), 2, "{mirror:?}");
    for (finding, value) in mirror.iter().zip(["user name", "password"]) {
        assert_eq!(
            finding["field"],
            "spec.registryMirrorConfiguration.authenticate"
        );
        assert!(
            finding["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("the registry mirror's {value} is not given")),
            "{finding}"
        );
        // The library says what is missing; the CLI's hint names the variables.
        assert_eq!(
            finding["hint"],
            "export REGISTRY_USERNAME and REGISTRY_PASSWORD, or set authenticate: false"
        );
    }
    let (_, mirror) = validate(&[("REGISTRY_USERNAME", "robot"), ("REGISTRY_PASSWORD", "pw")]);
    assert!(mirror.is_empty(), "{mirror:?}");
}
