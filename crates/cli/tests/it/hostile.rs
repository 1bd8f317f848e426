//! Hostile and careless inputs, end to end through the binary: each is answered with exit 1 or 2
//! and a first line that names the problem, in bounded memory and output. Inputs are generated
//! here (nothing large is committed). Each run goes through GNU time (`/usr/bin/time -v`, Debian's
//! `time`, installed by `.ci/run`) for its peak memory; the wall time is measured and printed
//! (`cargo test -p snowctl --test it hostile -- --nocapture` shows the table) but not asserted, as a
//! loaded machine makes any time bound flaky.

use snow_test_devices::TestCa;
use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Instant,
};

/// The bounds the issue sets for every case.
const MAX_PEAK_KIB: u64 = 512 * 1024;
const MAX_OUTPUT_BYTES: u64 = 2 << 20;

struct Case {
    name: &'static str,
    args: Vec<String>,
    /// Text the first line of output (stderr, else stdout) must hold; for `credentials check`,
    /// whose report starts with the device table, the first finding line.
    first_line: &'static str,
    /// The exit codes accepted.
    exits: &'static [i32],
}

/// A valid spec to build hostile variants on.
fn base_spec() -> String {
    snow_api::template::cluster_config(&snow_api::template::TemplateOptions {
        name: "edge".into(),
        devices: vec!["192.168.1.11".into(), "192.168.1.12".into()],
        endpoint: Some("192.168.1.100".into()),
        ssh_key_name: Some("key".into()),
        ..Default::default()
    })
    .unwrap()
}

fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.display().to_string()
}

fn validate(file: String) -> Vec<String> {
    vec!["validate".into(), "--offline".into(), "-f".into(), file]
}

fn credentials_check(credentials: &str, bundle: &str) -> Vec<String> {
    [
        "credentials",
        "check",
        "--credentials",
        credentials,
        "--ca-bundle",
        bundle,
    ]
    .map(str::to_owned)
    .to_vec()
}

fn spec_cases(dir: &Path) -> Vec<Case> {
    let big = "x".repeat(1 << 20);
    let aliases = vec!["*a"; 1000].join(", ");
    let alias_bomb = format!(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: edge\n  annotations:\n    a: &a \"{big}\"\n    b: [{aliases}]\n"
    );
    let pools: String = (0..1500)
        .map(|i| format!("  - {{ipStart: 10.0.{}.1, ipEnd: 10.0.{}.250, subnet: 10.0.0.0/8, gateway: 10.0.0.1}}\n", i % 250, i % 250))
        .collect();
    let overlapping = format!(
        "{}---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowIPPool\nmetadata: {{name: pool}}\nspec:\n  pools:\n{pools}",
        base_spec()
    );
    let keys = |n: usize| -> String {
        let keys: String = (0..n).map(|i| format!(", unknownKey{i}: 1")).collect();
        format!(
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {{name: edge{keys}}}\nspec: {{}}\n"
        )
    };
    let long_keys: String = (0..15)
        .map(|i| format!("  {}{i}: 1\n", "k".repeat(1 << 20)))
        .collect();
    let long_keys = format!(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: edge\n{long_keys}spec: {{}}\n"
    );
    let huge = dir.join("huge.yaml");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(70 << 20)
        .unwrap();
    vec![
        Case {
            name: "a 1 MB string aliased 1,000 times",
            args: validate(write(dir, "alias.yaml", alias_bomb)),
            first_line: "more than 67108864 bytes",
            exits: &[2],
        },
        Case {
            name: "1,500 overlapping IP pools",
            args: validate(write(dir, "pools.yaml", overlapping)),
            first_line: "SnowIPPool",
            exits: &[1],
        },
        Case {
            name: "5,000 unknown keys on one line",
            args: validate(write(dir, "keys5k.yaml", keys(5_000))),
            first_line: "Cluster",
            exits: &[1],
        },
        Case {
            name: "20,000 unknown keys on one line",
            args: validate(write(dir, "keys20k.yaml", keys(20_000))),
            first_line: "Cluster",
            exits: &[1],
        },
        Case {
            name: "15 keys of 1 MiB",
            args: validate(write(dir, "longkeys.yaml", long_keys)),
            // A plain key over 1,024 characters is a YAML syntax error.
            first_line: "error[yaml.syntax]",
            exits: &[2],
        },
        Case {
            name: "render -f /dev/zero",
            args: ["render", "--no-secrets", "-f", "/dev/zero"]
                .map(str::to_owned)
                .to_vec(),
            first_line: "larger than 64 MiB",
            exits: &[2],
        },
        Case {
            name: "a 70 MiB spec",
            args: validate(huge.display().to_string()),
            first_line: "larger than 64 MiB",
            exits: &[2],
        },
    ]
}

/// A credentials file as a careful user keeps it: readable by its owner only.
fn write_secret(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> String {
    let path = write(dir, name, content);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

fn credentials_cases(dir: &Path) -> Vec<Case> {
    let ca = TestCa::new("hostile").unwrap();
    let profile = "[192.168.1.11]\naws_access_key_id = AKIDHOSTILE000000001\naws_secret_access_key = hostileSecretKey000000000000000000000001\nregion = snow\n";
    let good_ini = write_secret(dir, "credentials", profile);
    // The device's own certificate: it covers the device, so only the case's problem is found.
    let covering = ca
        .server_certificate("192.168.1.11".parse().unwrap())
        .unwrap()
        .cert_pem;
    let good_pem = write(dir, "device.pem", &covering);
    let long_secret = format!(
        "[192.168.1.11]\naws_access_key_id = AKIDHOSTILE000000001\naws_secret_access_key = {}\nregion = snow\n",
        "s".repeat(900 * 1024)
    );
    let long_line = format!("{profile}{}\n", "x".repeat(200 * 1024));
    let mut garbage = Vec::with_capacity(12 << 20);
    let mut x: u32 = 7;
    while garbage.len() < 12 << 20 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        garbage.push(b'!' + (x >> 16) as u8 % 90);
    }
    let check = |name, ini: &str, pem: &str, first_line, exits| Case {
        name,
        args: credentials_check(ini, pem),
        first_line,
        exits,
    };
    vec![
        // Each repeat is a warning (capped); past 256 certificates the bundle is refused.
        check(
            "5,600 duplicate certificates",
            &good_ini,
            &write(dir, "dups.pem", covering.repeat(5_600)),
            "duplicate-certificate",
            &[1],
        ),
        check(
            "100,000 unclosed BEGIN lines",
            &good_ini,
            &write(
                dir,
                "begins.pem",
                "-----BEGIN CERTIFICATE-----\n".repeat(100_000),
            ),
            "no END line",
            &[1],
        ),
        check(
            "a 12 MB garbage bundle",
            &good_ini,
            &write(dir, "garbage.pem", &garbage),
            "larger than 8192 KiB",
            &[1],
        ),
        check(
            "a bundle of NUL bytes",
            &good_ini,
            &write(dir, "nul.pem", vec![0u8; 4096]),
            "binary data",
            &[1],
        ),
        check(
            "a 900 KB secret key",
            &write_secret(dir, "longsecret.ini", long_secret),
            &good_pem,
            "key-too-long",
            &[1],
        ),
        check(
            "a syntax error on a 200 KB line",
            &write_secret(dir, "longline.ini", long_line),
            &good_pem,
            "line 5 is neither",
            &[1],
        ),
    ]
}

/// `spec` with a registry mirror whose second `ociNamespaces` registry is `registry`, and the
/// mirror's login required (`authenticate: true`).
fn with_mirror(spec: &str, registry: &str) -> String {
    let mirror = format!(
        "  registryMirrorConfiguration:\n    endpoint: 10.0.0.5\n    port: \"5000\"\n    authenticate: true\n    ociNamespaces:\n    - registry: public.ecr.aws\n      namespace: ecr\n    - registry: {registry:?}\n      namespace: other\n"
    );
    let mut out = String::new();
    for line in spec.lines() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("  kubernetesVersion:") {
            out.push_str(&mirror);
        }
    }
    assert!(out.contains("registryMirrorConfiguration"), "{spec}");
    out
}

/// A kubeconfig of `server` with token authentication and `cluster_extra` under the cluster.
fn kubeconfig(server: &str, cluster_extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: {server}\n{cluster_extra}contexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\n"
    )
}

fn describe_with(kubeconfig: &str) -> Vec<String> {
    ["describe", "cluster", "edge", "--kubeconfig", kubeconfig]
        .map(str::to_owned)
        .to_vec()
}

fn kubeconfig_and_output_cases(dir: &Path) -> Vec<Case> {
    let profile = "[192.168.1.11]\naws_access_key_id = AKIDHOSTILE000000001\naws_secret_access_key = hostileSecretKey000000000000000000000001\nregion = snow\n";
    let credentials = write_secret(dir, "scoped-root-credentials", profile);
    let ca = TestCa::new("hostile-scoped").unwrap();
    let pem = ca
        .server_certificate("192.168.1.11".parse().unwrap())
        .unwrap()
        .cert_pem;
    let bundle = write(dir, "scoped-ca.pem", pem);
    let scoped = |output: &str| -> Vec<String> {
        [
            "credentials",
            "create-scoped-user",
            "--user",
            "eksa",
            "--credentials",
            &credentials,
            "--ca-bundle",
            &bundle,
            "--devices",
            "192.168.1.11",
            "--output-file",
            output,
        ]
        .map(str::to_owned)
        .to_vec()
    };
    vec![
        Case {
            name: "a kubeconfig of bytes ff fe 41",
            args: describe_with(&write(dir, "utf16.kubeconfig", b"\xff\xfeA")),
            first_line: "utf16.kubeconfig: not UTF-8 text",
            exits: &[2],
        },
        Case {
            name: "--kubeconfig /dev/zero",
            args: describe_with("/dev/zero"),
            first_line: "larger than 16 MiB",
            exits: &[2],
        },
        Case {
            name: "a kubeconfig naming /dev/zero as its CA",
            args: describe_with(&write(
                dir,
                "zero-ca.kubeconfig",
                kubeconfig(
                    "https://127.0.0.1:1",
                    "    certificate-authority: /dev/zero\n",
                ),
            )),
            first_line: "/dev/zero, which is not a regular file",
            exits: &[2],
        },
        Case {
            name: "store cilium --cni-manifest of no Cilium",
            args: [
                "store",
                "cilium",
                "-f",
                &write(dir, "store-spec.yaml", base_spec()),
                "--cni-manifest",
                &write(
                    dir,
                    "not-cilium.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
                ),
                "--kubeconfig",
                &write(
                    dir,
                    "store.kubeconfig",
                    kubeconfig("https://127.0.0.1:1", ""),
                ),
            ]
            .map(str::to_owned)
            .to_vec(),
            first_line: "not-cilium.yaml: the manifest has no DaemonSet kube-system/cilium",
            exits: &[2],
        },
        Case {
            name: "create-scoped-user -o /dev/zero",
            args: scoped("/dev/zero"),
            first_line: "/dev/zero is not a regular file",
            exits: &[2],
        },
    ]
}

/// `init --dry-run` over the shipped stack (`super::init::components_dir`, in a directory of
/// its own) with Cluster API core's components file replaced by `core`.
fn init_dry_run(dir: &Path, name: &str, core: &str, device_files: &[&str]) -> Vec<String> {
    let dir = dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let (components, bundles) = super::init::components_dir(&dir);
    std::fs::write(super::init::core_file(&components), core).unwrap();
    let mut args = vec![
        "init".to_owned(),
        "--dry-run".into(),
        "--components-dir".into(),
    ];
    args.push(components.display().to_string());
    args.push("--bundles".into());
    args.push(bundles.display().to_string());
    args.extend(device_files.iter().map(|a| (*a).to_owned()));
    args
}

fn init_cases(dir: &Path) -> Vec<Case> {
    let ca = TestCa::new("hostile init").unwrap();
    let cert = ca
        .server_certificate("192.168.1.11".parse().unwrap())
        .unwrap()
        .cert_pem;
    let pem = write(dir, "init-ca.pem", cert);
    let ini = write_secret(
        dir,
        "init-credentials",
        "[192.168.1.11]\naws_access_key_id = AKIDHOSTILE000000001\naws_secret_access_key = hostileSecretKey000000000000000000000001\nregion = snow\n",
    );
    let device_files = ["--credentials", &ini, "--ca-bundle", &pem];
    let nested = format!("a: {}{}\n", "${A:=".repeat(100_000), "}".repeat(100_000));
    let reference = "${AWS_B64ENCODED_CA_BUNDLES}";
    let references = format!("a: {}\n", reference.repeat((15 << 20) / reference.len()));
    let missing: String = (0..200_000)
        .map(|i| format!("k{i}: ${{SNOWCTL_HOSTILE_MISSING_VARIABLE_{i:06}}}\n"))
        .collect();
    vec![
        Case {
            name: "a components line nested 100,000 deep",
            args: init_dry_run(dir, "nested", &nested, &device_files),
            first_line: "`${` is nested more than 8 deep",
            exits: &[2],
        },
        Case {
            name: "15 MiB of ${AWS_B64ENCODED_CA_BUNDLES}",
            args: init_dry_run(dir, "references", &references, &device_files),
            first_line: "would be larger than 32 MiB",
            exits: &[2],
        },
        Case {
            name: "200,000 distinct missing variables",
            args: init_dry_run(dir, "missing", &missing, &[]),
            first_line: "variables without a value or a default",
            exits: &[1],
        },
    ]
}

/// Runs one case under GNU time; returns (exit code, first output line, output bytes, peak KiB).
fn run(case: &Case, dir: &Path) -> (Option<i32>, String, u64, u64, f64) {
    let slug: String = case
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let out: PathBuf = dir.join(format!("{slug}.out"));
    let err: PathBuf = dir.join(format!("{slug}.err"));
    let timing = dir.join(format!("{slug}.time"));
    let start = Instant::now();
    let status = Command::new("/usr/bin/time")
        .arg("-v")
        .arg("-o")
        .arg(&timing)
        .arg(env!("CARGO_BIN_EXE_snowctl"))
        .args(&case.args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .status()
        .expect("GNU time (/usr/bin/time) runs snowctl");
    let seconds = start.elapsed().as_secs_f64();
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let first = |p: &Path| {
        let text = std::fs::read(p).unwrap_or_default();
        let head = &text[..text.len().min(4096)];
        String::from_utf8_lossy(head)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_owned()
    };
    let first_finding = |p: &Path| {
        let text = std::fs::read(p).unwrap_or_default();
        String::from_utf8_lossy(&text)
            .lines()
            .find(|l| l.contains("error[") || l.contains("warning["))
            .unwrap_or("")
            .to_owned()
    };
    let first_line = match first(&err) {
        line if !line.is_empty() => line,
        // `credentials check` starts with its device table: its first finding says the cause.
        _ if case.args[0] == "credentials" => first_finding(&out),
        _ => first(&out),
    };
    let report = std::fs::read_to_string(&timing).unwrap_or_default();
    let peak = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(u64::MAX);
    // GNU time exits with the command's code.
    (
        status.code(),
        first_line,
        size(&out) + size(&err),
        peak,
        seconds,
    )
}

#[test]
fn hostile_inputs_are_refused_in_bounded_memory_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases = spec_cases(dir.path());
    cases.extend(credentials_cases(dir.path()));
    cases.extend(kubeconfig_and_output_cases(dir.path()));
    cases.extend(init_cases(dir.path()));
    let mut table = String::from("case | exit | peak MiB | output KiB | seconds | first line\n");
    let mut problems = Vec::new();
    for case in &cases {
        let (code, first_line, output, peak, seconds) = run(case, dir.path());
        let shown: String = first_line.chars().take(100).collect();
        let _ = writeln!(
            table,
            "{} | {code:?} | {} | {} | {seconds:.2} | {shown}",
            case.name,
            peak / 1024,
            output / 1024
        );
        if !code.is_some_and(|c| case.exits.contains(&c)) {
            problems.push(format!(
                "{}: exit {code:?}, not {:?}",
                case.name, case.exits
            ));
        }
        if peak > MAX_PEAK_KIB {
            problems.push(format!("{}: peak memory {peak} KiB", case.name));
        }
        if output > MAX_OUTPUT_BYTES {
            problems.push(format!("{}: {output} bytes of output", case.name));
        }
        if !first_line.contains(case.first_line) {
            problems.push(format!(
                "{}: first line {shown:?} lacks {:?}",
                case.name, case.first_line
            ));
        }
    }
    #[allow(clippy::print_stderr, reason = "the measured table, for `--nocapture`")]
    {
        eprintln!("{table}");
    }
    assert!(problems.is_empty(), "{}\n{table}", problems.join("\n"));
}

/// `create-scoped-user -o FIFO` is refused without opening the FIFO (which blocks until a reader
/// comes). A deadline only ends a hung run; it is not a timing assertion.
#[test]
fn create_scoped_user_refuses_a_fifo_as_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let cases = kubeconfig_and_output_cases(dir.path());
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut args = cases
        .into_iter()
        .find(|c| c.name == "create-scoped-user -o /dev/zero")
        .unwrap()
        .args;
    *args.last_mut().unwrap() = fifo.display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("create-scoped-user -o FIFO still ran after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = super::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", super::show(&out));
    assert!(err.contains("fifo is not a regular file"), "{err}");
}

/// A password in a kubeconfig's server URL is shown nowhere: not in the connection error.
#[test]
fn a_password_in_a_kubeconfig_url_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "userinfo.kubeconfig",
        kubeconfig("https://admin:Sup3rSecretPW@127.0.0.1:1", ""),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(describe_with(&file))
        .output()
        .unwrap();
    let shown = super::show(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(!shown.contains("Sup3rSecretPW"), "{shown}");
    assert!(
        shown.contains("cannot reach the management cluster at https://<redacted>@127.0.0.1:1"),
        "{shown}"
    );
}

/// `insecure-skip-tls-verify: true` in a kubeconfig the user gives is honoured, and said once.
#[test]
fn insecure_skip_tls_verify_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "insecure.kubeconfig",
        kubeconfig(
            "https://127.0.0.1:1",
            "    insecure-skip-tls-verify: true\n",
        ),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(describe_with(&file))
        .output()
        .unwrap();
    let err = super::text(&out.stderr);
    assert_eq!(
        err.matches(
            "has insecure-skip-tls-verify: true: the API server's certificate is not checked"
        )
        .count(),
        1,
        "{}",
        super::show(&out)
    );
    assert!(err.contains("insecure.kubeconfig"), "{err}");
}

/// `download artifacts --output-file out.tar`: a link planted at `out.tar.partial` is not followed, and a
/// file at `out.tar` the tool did not write is not replaced, even an empty one beside a partial
/// archive.
#[test]
fn download_never_writes_through_a_planted_partial_link_or_over_a_foreign_output() {
    use super::REFERENCE_BUNDLES as SAMPLE;
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.tar");
    let partial = dir.path().join("out.tar.partial");
    let download = || {
        Command::new(env!("CARGO_BIN_EXE_snowctl"))
            .args([
                "download",
                "artifacts",
                "--output-file",
                output.to_str().unwrap(),
            ])
            .args(["--image", "public.ecr.aws/x/y:v1"])
            // Nothing listens there: the archive is opened before any registry is asked.
            .args(["--source-registry", "127.0.0.1:1", "--source-insecure"])
            .args(["--bundles", SAMPLE, "--no-components"])
            .env("DOCKER_CONFIG", "/nonexistent-snowctl-test")
            .output()
            .unwrap()
    };
    // A link at the partial path, to a file of someone else's.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&victim, &partial).unwrap();
    let out = download();
    let shown = super::show(&out);
    assert_ne!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("out.tar.partial is not a regular file"),
        "{shown}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(!output.exists(), "{shown}");

    // An empty out.tar beside a partial archive: the partial is not renamed over it.
    std::fs::remove_file(&partial).unwrap();
    std::fs::write(&partial, b"").unwrap();
    std::fs::write(&output, b"").unwrap();
    let out = download();
    let shown = super::show(&out);
    assert_ne!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("out.tar exists beside"), "{shown}");
    assert_eq!(std::fs::read(&output).unwrap(), b"");
}

/// `create cluster` without a management cluster writes the kind files (the config, the audit
/// policy, `certs.d/<registry>/hosts.toml` with the mirror's login) in place of links planted
/// there, never through them; a linked directory on the way is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_files_are_not_written_through_planted_links() {
    use std::os::unix::fs::PermissionsExt;
    let site = super::self_managed::site().await;
    let spec = std::fs::read_to_string(site.dir.path().join("cluster.yaml")).unwrap();
    std::fs::write(
        site.dir.path().join("mirror.yaml"),
        with_mirror(&spec, "quay.io"),
    )
    .unwrap();
    let kind = snow_test_kube::kind::FakeKind::new(&site.boot.kubeconfig()).unwrap();
    // kind fails: the files are written, nothing after them runs.
    std::fs::write(kind.path("fail"), "ERROR: stop here\n").unwrap();
    let path = format!(
        "{}:{}",
        kind.bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let login = [
        ("REGISTRY_USERNAME", "mirror-user"),
        ("REGISTRY_PASSWORD", "Mirr0rPassw0rd"),
    ];
    let create = [
        "create",
        "cluster",
        "-f",
        "mirror.yaml",
        "--skip-validations",
        "--cni-manifest",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../lifecycle/tests/fixtures/cilium.yaml"
        ),
    ];
    let generated = site.dir.path().join("edge/generated");
    let outside = tempfile::tempdir().unwrap();
    let planted = [
        "kind_tmp.yaml",
        "kubernetes/audit-policy.yaml",
        "certs.d/public.ecr.aws/hosts.toml",
        "certs.d/quay.io/hosts.toml",
    ];
    let mut victims = Vec::new();
    for (i, relative) in planted.iter().enumerate() {
        let victim = outside.path().join(format!("victim-{i}"));
        std::fs::write(&victim, "keep me\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = generated.join(relative);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        victims.push(victim);
    }
    let out = site.snowctl_with(&create, Some(path.clone()), &login).await;
    let shown = super::show(&out);
    assert!(shown.contains("stop here"), "{shown}");
    for victim in &victims {
        assert_eq!(
            std::fs::read_to_string(victim).unwrap(),
            "keep me\n",
            "{shown}"
        );
        let mode = std::fs::metadata(victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{}", victim.display());
    }
    for relative in planted {
        let meta = std::fs::symlink_metadata(generated.join(relative)).unwrap();
        assert!(meta.file_type().is_file(), "{relative}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{relative}");
    }

    // A linked directory: refused, naming it; nothing written where it points.
    std::fs::remove_dir_all(generated.join("certs.d")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), generated.join("certs.d")).unwrap();
    let out = site.snowctl_with(&create, Some(path), &login).await;
    let shown = super::show(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("edge/generated/certs.d is a symbolic link"),
        "{shown}"
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// A registry named as a path (`../../../../x`, `/abs/dir`) is a finding on its field, not a
/// directory the kind driver and the nodes' containerd files would be written under.
#[test]
fn a_registry_named_as_a_path_is_a_finding_on_its_field() {
    let dir = tempfile::tempdir().unwrap();
    for registry in ["../../../../x", "/abs/dir"] {
        let file = write(
            dir.path(),
            "registry.yaml",
            with_mirror(&base_spec(), registry),
        );
        let out = Command::new(env!("CARGO_BIN_EXE_snowctl"))
            .args(validate(file))
            .output()
            .unwrap();
        let shown = super::show(&out);
        assert_eq!(out.status.code(), Some(1), "{shown}");
        assert!(
            shown.contains("spec.registryMirrorConfiguration.ociNamespaces[1].registry"),
            "{shown}"
        );
        assert!(
            shown.contains(&format!("ociNamespaces registry `{registry}` has a `/`")),
            "{shown}"
        );
    }
}

/// `snowctl` with a deadline: a hostile archive that would keep it running fails the test
/// instead of hanging it.
fn snowctl_within_deadline() -> assert_cmd::Command {
    super::registry_snowctl(std::time::Duration::from_secs(60))
}

/// A layout directory with one two-platform image named `name`.
fn layout_with(dir: &Path, name: &str) -> PathBuf {
    use snow_test_devices::{layout::Layout, registry::random_bytes};
    let mut layout = Layout::new(dir);
    let amd = layout.image("amd64", &random_bytes(2048));
    let arm = layout.image("arm64", &random_bytes(2048));
    let index = layout.index(vec![
        amd.descriptor(Some(("linux", "amd64"))),
        arm.descriptor(Some(("linux", "arm64"))),
    ]);
    layout.name(&index, name);
    layout.finish()
}

/// Archives of issue 25 through `import-images --from`: each answered within the deadline, with
/// exit 2 and an error naming the entry, or listed with its names escaped.
#[test]
fn import_images_from_hostile_archives_is_answered_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let from = |path: &Path, extra: &[&str]| {
        let mut args = vec!["import-images".to_owned(), "--from".to_owned()];
        args.push(path.display().to_string());
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let out = snowctl_within_deadline().args(args).output().unwrap();
        (
            out.status.code(),
            crate::text(&out.stdout),
            crate::text(&out.stderr),
        )
    };

    // Twelve links to `.`: refused at once, the link named (it never ended).
    let loops = layout_with(&dir.path().join("loops"), "public.ecr.aws/a/b:v1");
    for i in 0..12 {
        std::os::unix::fs::symlink(".", loops.join(format!("l{i}"))).unwrap();
    }
    let (code, _, err) = from(&loops, &["--list"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(": a symbolic link to ., a directory read already (a loop"),
        "{err}"
    );

    // A dangling link is named (it was "DIR: No such file or directory").
    let dangling = layout_with(&dir.path().join("dangling"), "public.ecr.aws/a/b:v1");
    std::os::unix::fs::symlink("nowhere", dangling.join("blobs/sha256/gone")).unwrap();
    let (code, _, err) = from(&dangling, &["--list"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("blobs/sha256/gone: a symbolic link to nowhere, which does not exist"),
        "{err}"
    );

    // Terminal escapes in a name: listed escaped, and escaped in the error that refuses it.
    let evil = "public.ecr.aws/a/b\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}1m:v1";
    let escapes = layout_with(&dir.path().join("escapes"), evil);
    let (code, out, err) = from(&escapes, &["--list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(
        out.contains("b\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\u{9b}1m:v1 sha256:"),
        "{out}"
    );
    let (code, out, err) = from(&escapes, &["--list", "-o", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !out.contains('\u{9b}') && out.contains("[2J\\u009b1m:v1"),
        "{out:?}"
    );
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["images"][0]["name"], evil);
    let (code, out, err) = from(&escapes, &["--registry", "127.0.0.1:9/site", "--insecure"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        !err.contains('\u{1b}') && err.contains("\\u{1b}]0;owned"),
        "{err:?}"
    );

    // One 8 MiB layer listed 20,000 times, no diff_ids: hashed once (it took 150 s).
    let many = dir.path().join("many");
    std::fs::create_dir(&many).unwrap();
    std::fs::write(
        many.join("layer.tar"),
        snow_test_devices::registry::random_bytes(8 << 20),
    )
    .unwrap();
    std::fs::write(many.join("config.json"), r#"{"rootfs":{"type":"layers"}}"#).unwrap();
    let manifest = serde_json::json!([{
        "Config": "config.json",
        "RepoTags": ["public.ecr.aws/a/many:v1"],
        "Layers": vec!["layer.tar"; 20_000],
    }]);
    std::fs::write(many.join("manifest.json"), manifest.to_string()).unwrap();
    let (code, out, err) = from(&many, &["--list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("public.ecr.aws/a/many:v1 sha256:"), "{out}");

    // A truncated tar: says it is incomplete, where it ends and what to do.
    let whole = dir.path().join("whole.tar");
    let tarred = Command::new("tar")
        .arg("-cf")
        .arg(&whole)
        .arg("-C")
        .arg(&loops)
        .args(["oci-layout", "blobs", "index.json"])
        .status()
        .unwrap();
    assert!(tarred.success());
    let cut = dir.path().join("cut.tar");
    // oci-layout (2 blocks), blobs/, blobs/sha256/, the first blob's header, 1 byte of it.
    std::fs::write(&cut, &std::fs::read(&whole).unwrap()[..2561]).unwrap();
    let (code, _, err) = from(&cut, &["--list"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("is incomplete: the file ends at byte 2561, inside blobs/sha256/")
            && err.contains("holds neither index.json nor manifest.json")
            && err.contains("Copy it again in full"),
        "{err}"
    );
}

/// A push to a registry that answers manifest PUTs without `Location`, as AWS ECR does (it
/// panicked inside oci-client), and an index of an index 200 deep (it was "copied (0 blobs)",
/// exit 0, its children never pushed).
#[test]
fn import_images_pushes_to_an_ecr_like_registry_and_refuses_too_deep_indexes() {
    use snow_test_devices::{
        layout::Layout,
        registry::{self as support, NoLocationFront, Registry, Tls},
    };
    let tls = Tls::generate();
    let registry = Registry::start(None);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let front = rt.block_on(NoLocationFront::start(&registry, &tls));
    let dir = tempfile::tempdir().unwrap();
    let root = layout_with(dir.path(), "public.ecr.aws/a/multi:v1");
    let multi_digest = {
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root.join("index.json")).unwrap()).unwrap();
        index["manifests"][0]["digest"].as_str().unwrap().to_owned()
    };
    // The same layout, plus an index of an index … 200 deep.
    let mut layout = Layout::new(&root);
    let mut deep = layout.image("amd64", &support::random_bytes(1024));
    for _ in 0..200 {
        deep = layout.index(vec![deep.descriptor(None)]);
    }
    layout.name(&deep, "public.ecr.aws/a/deep:v1");
    let index_json = root.join("index.json");
    let before: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_json).unwrap()).unwrap();
    layout.finish();
    let mut after: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_json).unwrap()).unwrap();
    after["manifests"]
        .as_array_mut()
        .unwrap()
        .push(before["manifests"][0].clone());
    std::fs::write(&index_json, after.to_string()).unwrap();

    let import = |extra: &[&str]| {
        let mut args: Vec<String> = ["import-images", "--from"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        args.push(root.display().to_string());
        args.extend(["--registry".to_owned(), format!("{}/site", front.host)]);
        args.extend(["--ca-cert".to_owned(), tls.ca_file.display().to_string()]);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let out = snowctl_within_deadline().args(args).output().unwrap();
        (
            out.status.code(),
            crate::text(&out.stdout),
            crate::text(&out.stderr),
        )
    };
    let (code, out, err) = import(&["--image", "public.ecr.aws/a/multi:v1"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        !err.contains("panicked") && out.contains("1 copied"),
        "{out}{err}"
    );
    let client = support::client(&[&registry], None);
    let tagged = format!("{}/site/a/multi:v1", registry.host);
    assert_eq!(
        rt.block_on(support::manifest(&client, &tagged)).1,
        multi_digest
    );

    let (code, out, err) = import(&[]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("failed: public.ecr.aws/a/deep:v1")
            && err.contains("is nested 9 deep")
            && !err.contains("panicked"),
        "{out}{err}"
    );
}
