//! `snowctl generate`, `validate --offline`, `crds`, `completion` and `--version`, run as a user
//! would: the real binary, its stdout, stderr and exit code.

use assert_cmd::Command;
use std::path::PathBuf;

fn snowctl() -> Command {
    let mut cmd = Command::cargo_bin("snowctl").expect("binary is built");
    cmd.env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
    cmd
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/specs")
        .join(name)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn generate(extra: &[&str]) -> String {
    let mut args = vec!["generate", "clusterconfig", "edge", "--provider", "snow"];
    args.extend_from_slice(extra);
    let r = run(snowctl().args(&args));
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

fn validate_stdin(text: &str, output: &str) -> Run {
    run(snowctl()
        .args(["validate", "--offline", "-f", "-", "-o", output])
        .write_stdin(text))
}

#[test]
fn generated_spec_without_devices_lists_exactly_what_to_fill() {
    let spec = generate(&[]);
    insta::assert_snapshot!("generate_default", spec);
    let r = validate_stdin(&spec, "text");
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("validate_generated_text", r.stdout);
    let r = validate_stdin(&spec, "json");
    assert_eq!(r.code, 1);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let fields: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.controlPlaneConfiguration.endpoint.host",
            "spec.devices[0]",
            "spec.devices[0]"
        ]
    );
}

#[test]
fn generated_spec_with_devices_and_endpoint_validates() {
    for os in ["ubuntu", "bottlerocket"] {
        let spec = generate(&[
            "--devices",
            "192.168.1.11,192.168.1.12",
            "--endpoint",
            "192.168.1.100",
            "--os",
            os,
            "--kubernetes-version",
            "1.33",
            "--instance-type",
            "sbe-c.xlarge",
            "--ssh-key-name",
            "edge-key",
        ]);
        assert!(
            spec.contains("kubernetesVersion: \"1.33\"")
                && spec.contains("sshKeyName: \"edge-key\"")
        );
        let r = validate_stdin(&spec, "json");
        assert_eq!(r.code, 0, "{os}: {}", r.stdout);
        let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(report["ok"], true);
        assert_eq!(
            report["findings"].as_array().unwrap().len(),
            0,
            "{}",
            r.stdout
        );
    }
}

#[test]
fn generate_rejects_bad_flags_with_usage_errors() {
    let r = run(snowctl().args([
        "generate",
        "clusterconfig",
        "9bad",
        "--provider",
        "snow",
        "--devices",
        "1.2.3,x",
        "--endpoint",
        "host",
    ]));
    assert_eq!(r.code, 2);
    insta::assert_snapshot!("generate_bad_flags", r.stderr);
    let r = run(snowctl().args(["generate", "clusterconfig", "edge"]));
    assert_eq!(r.code, 2, "--provider is required");
    let r = run(snowctl().args(["generate", "clusterconfig", "edge", "--provider", "vsphere"]));
    assert_eq!(r.code, 2);
}

#[test]
fn validate_reports_every_mistake_in_text_and_json() {
    let path = fixture("three-mistakes.yaml");
    let r = run(snowctl().current_dir(path.parent().unwrap()).args([
        "validate",
        "--offline",
        "-f",
        "three-mistakes.yaml",
    ]));
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("validate_three_mistakes_text", r.stdout);
    let r = run(snowctl().current_dir(path.parent().unwrap()).args([
        "validate",
        "--offline",
        "-f",
        "three-mistakes.yaml",
        "-o",
        "json",
    ]));
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("validate_three_mistakes_json", r.stdout);
}

#[test]
fn unreadable_input_exits_2() {
    let r = run(snowctl().args(["validate", "--offline", "-f", "/nonexistent/cluster.yaml"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot read /nonexistent/cluster.yaml"),
        "{}",
        r.stderr
    );
    let r = validate_stdin("a: [1,\nb: c\n", "text");
    assert_eq!(r.code, 2);
    insta::assert_snapshot!("validate_syntax_error", r.stderr);
    let r = validate_stdin("a: [1,\nb: c\n", "json");
    assert_eq!(r.code, 2);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["findings"][0]["check"], "yaml.syntax");
    assert_eq!(report["findings"][0]["line"], 1);
    let out = snowctl()
        .args(["validate", "--offline", "-f", "-"])
        .write_stdin(vec![0x7f, b'E', b'L', b'F', 0, 1, 2])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Without --offline the devices are checked only for a spec without errors; an empty file
    // is a finding (exit 1), and preflight says it was skipped.
    let r = run(snowctl()
        .args(["validate", "-f", "-", "-o", "json"])
        .write_stdin(""));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("preflight.skipped"), "{}", r.stdout);
}

#[test]
fn empty_file_is_a_finding() {
    let r = validate_stdin("", "json");
    assert_eq!(r.code, 1);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["findings"][0]["check"], "document.missing-cluster");
}

#[test]
fn crds_completion_and_version() {
    let r = run(snowctl().arg("crds"));
    assert_eq!(r.code, 0);
    for plural in [
        "clusters",
        "snowdatacenterconfigs",
        "snowmachineconfigs",
        "snowippools",
    ] {
        assert!(
            r.stdout
                .contains(&format!("name: {plural}.anywhere.eks.amazonaws.com")),
            "{plural}"
        );
    }
    assert_eq!(
        r.stdout.matches("kind: CustomResourceDefinition").count(),
        4
    );
    for shell in ["bash", "zsh", "fish"] {
        let r = run(snowctl().args(["completion", shell]));
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("snowctl"));
    }
    let r = run(snowctl().arg("--version"));
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout.trim(),
        format!("snowctl {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_version_outside_the_embedded_bundle_is_a_warning() {
    let spec = generate(&[
        "--devices",
        "192.168.1.11",
        "--endpoint",
        "192.168.1.100",
        "--kubernetes-version",
        "1.28",
    ]);
    let r = validate_stdin(&spec, "json");
    assert_eq!(r.code, 0, "{}", r.stdout);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["findings"][0]["check"], "release.version");
    assert_eq!(report["findings"][0]["severity"], "warning");
    assert!(report["findings"][0]["line"].is_number());
}

/// Every duration flag reads Go's syntax through one parser: a bare number, a unit Go lacks and
/// a value outside the flag's range are usage errors that say what to write.
#[test]
fn duration_flags_read_one_syntax() {
    // Flags are read before the file, so any spec does.
    let spec = fixture("three-mistakes.yaml");
    for (value, says) in [
        ("10", "has no unit"),
        ("1d", "is not a unit"),
        ("-5s", "cannot be negative"),
        ("11m", "is not from 1s to 10m"),
    ] {
        let r = run(snowctl()
            .arg("validate")
            .arg(format!("--timeout={value}"))
            .arg("-f")
            .arg(&spec));
        assert_eq!(r.code, 2, "{value}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{value}: {}", r.stderr);
    }
    let r = run(snowctl()
        .args([
            "create",
            "cluster",
            "--per-machine-wait-timeout",
            "5 m",
            "-f",
        ])
        .arg(&spec));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("write a duration such as 90s"),
        "{}",
        r.stderr
    );
}

/// One flag and one set of values for the node OS: `devices images --os` takes what `generate
/// clusterconfig --os` and `import-images --os` take, checked before any device is asked.
#[test]
fn the_os_flag_takes_the_os_family_values_everywhere() {
    let images = |os: &[&str]| {
        let mut args = vec!["devices", "images", "--devices", "127.0.0.1"];
        args.extend(os);
        args.extend(["--kubernetes-version", "1.31"]);
        let out = snowctl().args(&args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = images(&["--os", "windows"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("possible values: ubuntu, bottlerocket"),
        "{stderr}"
    );
    let (code, stderr) = images(&["--os-family", "ubuntu"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--os-family"), "{stderr}");
    let generate = snowctl()
        .args([
            "generate",
            "clusterconfig",
            "edge",
            "--provider",
            "snow",
            "--os",
            "windows",
        ])
        .output()
        .unwrap();
    assert_eq!(generate.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&generate.stderr).contains("possible values: ubuntu, bottlerocket")
    );
}
