//! `cni::helm` against a fake `helm`: helm cannot be installed on these machines, so each test
//! writes a small shell script that records its arguments, stdin and environment and prints a
//! Cilium manifest (tests/fixtures/cilium.yaml). The exact command contract, the values
//! on stdin, the mirror login with the password on stdin only, and the errors are checked.
//!
//! `SNOWCTL_E2E_HELM=1` with `SNOWCTL_E2E_CILIUM_CHART=<chart .tgz or directory>` also renders a
//! real chart offline with the real helm on PATH.

use snow_api::{
    ValidSpec,
    release::ReleaseInputs,
    template::{TemplateOptions, cluster_config},
};
use snow_credentials::{RegistryCredentials, SecretString};
use snow_lifecycle::cni::helm::{HelmError, HelmOptions, render, render_template};
use std::{
    path::{Path, PathBuf},
    sync::Mutex,
    time::Duration,
};

const MANIFEST: &str = include_str!("fixtures/cilium.yaml");
const PASSWORD: &str = "pw-Sup3r-s3cret";

/// Writing an executable while another thread forks can make its exec fail ("text file busy"):
/// the tests that write or run a fake helm take turns.
static FAKE_HELM: Mutex<()> = Mutex::new(());

/// A directory with a fake `helm` that records each call `n` as `args.n`, `stdin.n`, `env.n` and
/// prints `manifest.yaml`; `fail` (stderr text) makes `template` fail, `login-fail` makes
/// `registry login` fail echoing its stdin, `sleep` makes it hang.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let script = r#"#!/bin/sh
dir=$(dirname "$0")
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/count"
printf '%s\n' "$@" > "$dir/args.$n"
cat > "$dir/stdin.$n"
echo "HELM_EXPERIMENTAL_OCI=$HELM_EXPERIMENTAL_OCI HTTPS_PROXY=$HTTPS_PROXY" > "$dir/env.$n"
[ -f "$dir/sleep" ] && sleep 30
if [ "$1" = registry ]; then
  if [ -f "$dir/login-fail" ]; then echo "Error: login denied for password $(cat "$dir/stdin.$n")" >&2; exit 1; fi
  echo "Login Succeeded"; exit 0
fi
if [ -f "$dir/fail" ]; then cat "$dir/fail" >&2; exit 3; fi
cat "$dir/manifest.yaml"
"#;
        let path = dir.path().join("helm");
        std::fs::write(&path, script).unwrap();
        set_executable(&path);
        std::fs::write(dir.path().join("manifest.yaml"), MANIFEST).unwrap();
        Fake { dir }
    }

    fn options(&self) -> HelmOptions {
        HelmOptions {
            helm: self.dir.path().join("helm"),
            timeout: Duration::from_secs(20),
            attempts: 1,
            retry_delay: Duration::from_millis(10),
            ..HelmOptions::default()
        }
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn calls(&self) -> usize {
        self.read("count").trim().parse().unwrap_or(0)
    }

    fn args(&self, n: usize) -> Vec<String> {
        self.read(&format!("args.{n}"))
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn set(&self, name: &str, content: &str) {
        std::fs::write(self.dir.path().join(name), content).unwrap();
    }
}

#[cfg(unix)]
fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn spec(edits: &[(&str, &str)]) -> ValidSpec {
    let mut text = cluster_config(&TemplateOptions {
        name: "edge".into(),
        devices: vec!["192.168.1.11".into()],
        endpoint: Some("192.168.1.100".into()),
        kubernetes_version: Some("1.33".into()),
        ..Default::default()
    })
    .unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "the template lacks {from:?}");
        text = text.replacen(from, to, 1);
    }
    snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

fn run(spec: &ValidSpec, opts: &HelmOptions) -> Result<String, HelmError> {
    let inputs = ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(spec, None).unwrap();
    render(spec, &release, opts)
}

const MIRROR: &str = "  registryMirrorConfiguration:\n    endpoint: 10.1.2.3\n    port: \"5000\"\n    authenticate: true\n  proxyConfiguration:\n    httpProxy: http://10.1.2.4:3128\n    httpsProxy: http://10.1.2.4:3128\n  kubernetesVersion:";

#[test]
fn helm_template_gets_the_exact_arguments_and_the_values_on_stdin() {
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let fake = Fake::new();
    let manifest = run(&spec(&[]), &fake.options()).unwrap();
    assert_eq!(manifest, MANIFEST);
    assert_eq!(fake.calls(), 1);
    assert_eq!(
        fake.args(1),
        [
            "template",
            "oci://public.ecr.aws/eks/cilium/cilium",
            "--version",
            "1.19.4-1",
            "--namespace",
            "kube-system",
            "--kube-version",
            "1.33",
            "--insecure-skip-tls-verify",
            "-f",
            "-",
        ]
    );
    let values: serde_json::Value = serde_saphyr::from_str(&fake.read("stdin.1")).unwrap();
    assert_eq!(
        values["image"]["repository"],
        "public.ecr.aws/eks/cilium/cilium"
    );
    assert_eq!(values["image"]["tag"], "v1.19.4-1");
    assert_eq!(
        values["operator"]["image"]["repository"],
        "public.ecr.aws/eks/cilium/operator"
    );
    assert_eq!(values["routingMode"], "tunnel");
    assert_eq!(values["tunnelProtocol"], "geneve");
    assert_eq!(values["cni"]["chainingMode"], "portmap");
    assert_eq!(fake.read("env.1"), "HELM_EXPERIMENTAL_OCI=1 HTTPS_PROXY=\n");
}

#[test]
fn an_authenticated_mirror_logs_in_first_with_the_password_on_stdin_only() {
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let fake = Fake::new();
    let s = spec(&[("  kubernetesVersion:", MIRROR)]);
    let opts = HelmOptions {
        login: Some(RegistryCredentials::new(
            "mirror-user".into(),
            SecretString::new(PASSWORD.into()),
        )),
        ..fake.options()
    };
    assert!(!format!("{opts:?}").contains(PASSWORD));
    run(&s, &opts).unwrap();
    assert_eq!(fake.calls(), 2);
    assert_eq!(
        fake.args(1),
        [
            "registry",
            "login",
            "10.1.2.3:5000",
            "--username",
            "mirror-user",
            "--password-stdin",
            "--insecure",
        ]
    );
    assert_eq!(fake.read("stdin.1"), PASSWORD);
    assert_eq!(fake.args(2)[1], "oci://10.1.2.3:5000/eks/cilium/cilium");
    assert_eq!(
        fake.read("env.2"),
        "HELM_EXPERIMENTAL_OCI=1 HTTPS_PROXY=http://10.1.2.4:3128\n"
    );
    for n in 1..=2 {
        assert!(!fake.read(&format!("args.{n}")).contains(PASSWORD));
    }
    assert!(!fake.read("stdin.2").contains(PASSWORD));

    // A refused login: the error names the command and keeps helm's words, without the password.
    fake.set("login-fail", "");
    let err = run(&s, &opts).unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(matches!(err, HelmError::Failed { .. }), "{text}");
    assert!(text.contains("registry login 10.1.2.3:5000"), "{text}");
    assert!(
        text.contains("login denied for password <redacted>"),
        "{text}"
    );
    assert!(!text.contains(PASSWORD), "{text}");

    // No login given: a clear error before helm runs.
    let calls = fake.calls();
    let err = run(&s, &fake.options()).unwrap_err();
    assert!(
        matches!(&err, HelmError::LoginMissing { registry } if registry == "10.1.2.3:5000"),
        "{err:?}"
    );
    assert_eq!(fake.calls(), calls);
}

#[test]
fn a_failing_helm_is_retried_then_reported_with_its_status_and_stderr() {
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let fake = Fake::new();
    fake.set(
        "fail",
        "Error: failed to download \"oci://public.ecr.aws/eks/cilium/cilium\"\n",
    );
    let opts = HelmOptions {
        attempts: 2,
        ..fake.options()
    };
    let err = run(&spec(&[]), &opts).unwrap_err();
    assert_eq!(fake.calls(), 2);
    assert_eq!(
        err.to_string(),
        "`helm template oci://public.ecr.aws/eks/cilium/cilium` failed (exit status 3): Error: failed to download \"oci://public.ecr.aws/eks/cilium/cilium\""
    );
}

#[test]
fn a_hanging_helm_is_stopped_and_a_flood_is_refused() {
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let fake = Fake::new();
    fake.set("sleep", "");
    let opts = HelmOptions {
        timeout: Duration::from_millis(300),
        ..fake.options()
    };
    let err = run(&spec(&[]), &opts).unwrap_err();
    assert!(matches!(err, HelmError::TimedOut { .. }), "{err}");
    std::fs::remove_file(fake.dir.path().join("sleep")).unwrap();
    let opts = HelmOptions {
        max_output: 100,
        ..fake.options()
    };
    let err = run(&spec(&[]), &opts).unwrap_err();
    assert!(
        matches!(err, HelmError::TooLarge { limit: 100, .. }),
        "{err}"
    );
}

#[test]
fn a_missing_helm_says_to_install_it_and_names_no_cli_flag() {
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let opts = HelmOptions {
        helm: dir.path().join("no-such-helm"),
        ..HelmOptions::default()
    };
    let err = run(&spec(&[]), &opts).unwrap_err();
    assert!(matches!(err, HelmError::NotFound { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("install helm"), "{text}");
    // The CLI's hint names its flag (`--cni-manifest`); the library's message does not.
    assert!(!text.contains("--"), "{text}");
}

#[test]
fn policy_always_appends_the_allow_all_policies() {
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let fake = Fake::new();
    let s = spec(&[(
        "      cilium: {}",
        "      cilium: {policyEnforcementMode: always}",
    )]);
    let manifest = run(&s, &fake.options()).unwrap();
    let (head, tail) = manifest.split_at(MANIFEST.len());
    assert_eq!(head, MANIFEST);
    assert!(tail.starts_with("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"));
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(tail).unwrap();
    let names: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names.first().map(String::as_str),
        Some("NetworkPolicy/allow-all-kube-system")
    );
    assert!(
        names.contains(&"Namespace/capas-system".to_owned()),
        "{names:?}"
    );
    assert_eq!(names.len(), 1 + 2 + 12 + 2);
}

/// Real helm, opt-in: `SNOWCTL_E2E_HELM=1 SNOWCTL_E2E_CILIUM_CHART=/path/to/cilium-chart.tgz`.
/// The chart file replaces the OCI reference (as `create --artifacts` does) so the render needs no
/// network.
#[test]
#[allow(clippy::print_stderr, reason = "a skipped opt-in test says so")]
fn real_helm_renders_a_local_cilium_chart() {
    if std::env::var("SNOWCTL_E2E_HELM").as_deref() != Ok("1") {
        eprintln!("skipped: set SNOWCTL_E2E_HELM=1 and SNOWCTL_E2E_CILIUM_CHART to run real helm");
        return;
    }
    let Ok(chart) = std::env::var("SNOWCTL_E2E_CILIUM_CHART") else {
        eprintln!(
            "skipped: SNOWCTL_E2E_CILIUM_CHART (a Cilium chart .tgz or directory) is not set"
        );
        return;
    };
    let _turn = FAKE_HELM.lock().unwrap_or_else(|e| e.into_inner());
    let s = spec(&[]);
    let inputs = ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(&s, None).unwrap();
    let template = capi_render::cilium::helm_template(&s, &release)
        .unwrap()
        .with_chart_file(&PathBuf::from(chart));
    let manifest = render_template(
        &template,
        &HelmOptions {
            attempts: 1,
            ..HelmOptions::default()
        },
    )
    .unwrap();
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&manifest).unwrap();
    let has = |kind: &str, name: &str| {
        docs.iter()
            .any(|d| d["kind"] == kind && d["metadata"]["name"] == name)
    };
    assert!(has("DaemonSet", "cilium") && has("Deployment", "cilium-operator"));
    assert!(manifest.contains("public.ecr.aws/eks/cilium/cilium:v1.19.4-1"));
}
