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

/// The Kubernetes version a generated spec has by default.
const DEFAULT_VERSION: &str = snow_api::template::DEFAULT_KUBERNETES_VERSION;

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
fn generate_with_a_gitops_url_adds_the_flux_config_and_the_reference() {
    let spec = generate(&[
        "--devices",
        "192.168.1.11",
        "--endpoint",
        "192.168.1.100",
        "--kubernetes-version",
        "1.33",
        "--gitops-url",
        "ssh://git@192.168.1.5/fleet/edge.git",
    ]);
    assert!(
        spec.contains("  gitOpsRef:\n    kind: FluxConfig\n    name: edge\n"),
        "{spec}"
    );
    assert!(
        spec.contains("kind: FluxConfig\nmetadata:\n  name: edge\n"),
        "{spec}"
    );
    assert!(spec.contains("repositoryUrl: \"ssh://git@192.168.1.5/fleet/edge.git\""));
    let r = validate_stdin(&spec, "json");
    assert_eq!(r.code, 0, "{}", r.stdout);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        report["findings"].as_array().unwrap().len(),
        0,
        "{}",
        r.stdout
    );

    // git's scp-like form is refused, naming the URL to write.
    let r = run(snowctl().args([
        "generate",
        "clusterconfig",
        "edge",
        "--provider",
        "snow",
        "--gitops-url",
        "git@github.com:acme/fleet.git",
    ]));
    assert_eq!(r.code, 2);
    assert!(
        // The CLI hides a URL's user, as every URL it shows.
        r.stderr.contains("--gitops-url")
            && r.stderr.contains("write it as an ssh:// URL")
            && r.stderr.contains("@github.com/acme/fleet.git`"),
        "{}",
        r.stderr
    );
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
        "fluxconfigs",
    ] {
        assert!(
            r.stdout
                .contains(&format!("name: {plural}.anywhere.eks.amazonaws.com")),
            "{plural}"
        );
    }
    assert_eq!(
        r.stdout.matches("kind: CustomResourceDefinition").count(),
        5
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
    let spec = generate(&["--devices", "192.168.1.11", "--endpoint", "192.168.1.100"]);
    let spec = spec.replace(
        &format!("kubernetesVersion: \"{DEFAULT_VERSION}\""),
        "kubernetesVersion: \"1.28\"",
    );
    assert!(spec.contains("\"1.28\""), "{spec}");
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

/// `generate` refuses a Kubernetes version the catalog lacks, where render and create would
/// refuse the spec later, and names the versions it has; `--bundles` checks another catalog.
#[test]
fn generate_checks_the_version_against_the_catalog() {
    let r = run(snowctl().args([
        "generate",
        "clusterconfig",
        "edge",
        "--provider",
        "snow",
        "--kubernetes-version",
        "1.28",
    ]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.starts_with(
            "error: --kubernetes-version: Kubernetes 1.28 is not in snowctl's embedded catalog (it has 1.30, "
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("hint: pick one of those versions, or pass --bundles FILE")
    );
    // A Bundles manifest with only 1.28 makes 1.28 valid and the default invalid.
    let dir = tempfile::tempdir().unwrap();
    let embedded = snow_api::release::ReleaseInputs::embedded_bundles_yaml();
    let only = embedded.replacen("kubeVersion: '1.30'", "kubeVersion: '1.28'", 1);
    assert_ne!(only, embedded);
    let bundles = dir.path().join("bundles.yaml");
    std::fs::write(&bundles, only).unwrap();
    let bundles = bundles.to_str().unwrap();
    let spec = generate(&["--kubernetes-version", "1.28", "--bundles", bundles]);
    assert!(spec.contains("kubernetesVersion: \"1.28\""), "{spec}");
    let r = run(snowctl().args([
        "generate",
        "clusterconfig",
        "edge",
        "--provider",
        "snow",
        "--kubernetes-version",
        "1.30",
        "--bundles",
        bundles,
    ]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("Kubernetes 1.30 is not in"),
        "{}",
        r.stderr
    );
}

/// `-o yaml` prints the same report as `-o json`, as YAML.
#[test]
fn yaml_output_is_the_json_report() {
    let spec = std::fs::read_to_string(fixture("three-mistakes.yaml")).unwrap();
    let json = validate_stdin(&spec, "json");
    let yaml = validate_stdin(&spec, "yaml");
    assert_eq!((json.code, yaml.code), (1, 1));
    let from_json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let from_yaml: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).unwrap();
    assert_eq!(from_yaml, from_json, "{}", yaml.stdout);
    assert!(
        !yaml.stdout.trim_start().starts_with('{'),
        "{}",
        yaml.stdout
    );
}

/// A file that cannot be read is said in one form by every kind of command: `error: …` naming
/// the file, exit 2; without a terminal (as here) or with NO_COLOR, no decoration.
#[test]
fn an_unreadable_file_is_one_error_form_everywhere() {
    let missing = "/nonexistent/edge.yaml";
    for args in [
        vec!["validate", "--offline", "-f", missing],
        vec!["render", "-f", missing],
        vec!["describe", "cluster", "edge", "--kubeconfig", missing],
        vec![
            "credentials",
            "check",
            "--credentials",
            missing,
            "--ca-bundle",
            missing,
        ],
    ] {
        let r = run(snowctl().args(&args).env("NO_COLOR", "1"));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(missing), "{args:?}: {}", r.stderr);
        assert!(
            !r.stderr
                .chars()
                .any(|c| matches!(c, '❌' | '×' | '⚠' | '🎉' | '✅')),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// `snowctl version`: the version, the embedded catalog's Kubernetes versions, the release
/// manifest it defaults to, and each program found on PATH or not.
#[test]
fn version_reports_the_catalog_and_the_programs_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let helm = dir.path().join("helm");
    std::fs::write(&helm, "#!/bin/sh\n").unwrap();
    let mut perms = std::fs::metadata(&helm).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&helm, perms).unwrap();
    let r = run(snowctl()
        .args(["version", "-o", "json"])
        .env("PATH", dir.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        v["releaseManifest"],
        "https://anywhere-assets.eks.amazonaws.com/releases/eks-a/manifest.yaml"
    );
    let versions = v["embeddedCatalog"]["kubernetesVersions"]
        .as_array()
        .unwrap();
    assert!(versions.iter().any(|k| k == DEFAULT_VERSION), "{v}");
    let programs = v["programs"].as_array().unwrap();
    let path_of = |name: &str| {
        programs
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["path"].clone())
            .unwrap()
    };
    assert_eq!(path_of("helm"), helm.display().to_string());
    assert_eq!(path_of("kind"), serde_json::Value::Null);
    assert_eq!(path_of("docker"), serde_json::Value::Null);
    let text = run(snowctl().arg("version").env("PATH", dir.path()));
    assert!(
        text.stdout
            .starts_with(&format!("snowctl {}\n", env!("CARGO_PKG_VERSION"))),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("kind   not found on PATH"),
        "{}",
        text.stdout
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

/// Without the device files, each command's hint names only flags it has: `validate` offers
/// `--offline`, `devices describe` (which has none) does not.
#[test]
fn a_missing_device_file_hint_names_only_the_commands_flags() {
    let r = run(snowctl().args(["devices", "describe", "--devices", "127.0.0.1"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("hint: pass --credentials FILE or set EKSA_AWS_CREDENTIALS_FILE"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("--offline"), "{}", r.stderr);
    let spec = generate(&["--devices", "192.168.1.11", "--endpoint", "192.168.1.100"]);
    let r = run(snowctl().args(["validate", "-f", "-"]).write_stdin(spec));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("or run with --offline for the static checks only"),
        "{}",
        r.stderr
    );
}

/// `-vv` shows the libraries' debug log (each Kubernetes request), never a password a
/// kubeconfig's server URL holds nor its token; without it, no log.
#[test]
fn very_verbose_logs_each_request_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    // Port 1 on loopback: nothing listens, the request fails at once.
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://admin:hunter2pw@127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: tok-SECRET-123\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
    )
    .unwrap();
    let describe = |verbose: &[&str]| {
        let mut cmd = snowctl();
        cmd.args(verbose)
            .args(["describe", "cluster", "edge", "--kubeconfig"])
            .arg(&kubeconfig);
        run(&mut cmd)
    };
    let loud = describe(&["-vv"]);
    assert_eq!(loud.code, 1, "{}", loud.stderr);
    assert!(loud.stderr.contains("requesting"), "{}", loud.stderr);
    assert!(
        loud.stderr.contains("https://<redacted>@127.0.0.1:1/"),
        "{}",
        loud.stderr
    );
    for secret in ["hunter2pw", "tok-SECRET-123"] {
        assert!(!loud.stderr.contains(secret), "{}", loud.stderr);
    }
    let quiet = describe(&[]);
    assert_eq!(quiet.code, 1, "{}", quiet.stderr);
    assert!(!quiet.stderr.contains("requesting"), "{}", quiet.stderr);
}
