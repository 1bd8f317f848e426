//! A password planted wherever a user may put one — a kubeconfig's server URL, a release
//! manifest's URL, a registry's URL or password — appears in nothing snowctl writes: not on
//! stdout or stderr (errors, hints, progress, events, the `-vv` log), not in a file it writes
//! (kubeconfigs, backups, the support bundle, the release cache), not in an object it writes to
//! the management cluster.
//!
//! The commands are found, not listed: every `--help` example that names a kubeconfig
//! (`snowctl::help::EXAMPLES`) runs against an unreachable server, and every command with a
//! `--release-manifest` flag (walked in clap's tree) runs with an unreachable URL; each must show
//! the URL, redacted, so that a redaction removed anywhere on the way shows the password instead.

use super::{show, text};
use clap::CommandFactory;
use snow_test_devices::{TestCa, loopback_ip, release_site};
use snow_test_kube::edge_spec::EdgeSpec;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The password planted.
const PLANTED: &str = "PlantedPw9x7Q";

/// The unreachable management cluster, with a user name and the password in its URL.
const UNREACHABLE: &str = "https://admin:PlantedPw9x7Q@127.0.0.1:1";

/// How it must be shown.
const SHOWN: &str = "https://<redacted>@127.0.0.1:1";

/// A kubeconfig for `server`.
fn kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\n"
    )
}

/// Fails naming `what` when `bytes` hold the planted password.
fn assert_hidden(what: &str, bytes: &[u8]) {
    let shown = String::from_utf8_lossy(bytes);
    assert!(
        !shown.contains(PLANTED),
        "the planted password is in {what}:\n{shown}"
    );
}

/// Every file under `dir` but `inputs` holds no planted password; a `.tar.gz` is unpacked and
/// its files read too. Returns how many files were read.
fn assert_files_hidden(dir: &Path, inputs: &BTreeSet<PathBuf>) -> usize {
    let mut read = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            if !meta.is_file() || inputs.contains(&path) {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            assert_hidden(&path.display().to_string(), &bytes);
            read += 1;
            if path.to_string_lossy().ends_with(".tar.gz") {
                let unpacked = tempfile::tempdir().unwrap();
                let status = Command::new("tar")
                    .arg("-xzf")
                    .arg(&path)
                    .arg("-C")
                    .arg(unpacked.path())
                    .status()
                    .unwrap();
                assert!(status.success(), "tar -xzf {}", path.display());
                read += assert_files_hidden(unpacked.path(), &BTreeSet::new());
            }
        }
    }
    read
}

/// The words of an example's command line after `snowctl`, a shell tail (`> FILE`, `| …`) cut,
/// and the file a `< FILE` feeds to its standard input.
fn example_words(line: &str) -> (Vec<String>, Option<String>) {
    let mut words = Vec::new();
    let mut stdin = None;
    let mut it = line.split_whitespace().skip(1);
    while let Some(word) = it.next() {
        match word {
            ">" | "|" | "&&" => break,
            "<" => stdin = it.next().map(str::to_owned),
            // A fixed health port could be taken by another test: any free port.
            "127.0.0.1:8081" => words.push("127.0.0.1:0".to_owned()),
            _ => words.push(word.to_owned()),
        }
    }
    (words, stdin)
}

/// The command path of `words` (`["describe", "cluster"]`): its leading words that are not flags.
fn command_path(words: &[String]) -> Vec<String> {
    let mut path = Vec::new();
    let mut command = snowctl::args::Cli::command();
    for word in words.iter().filter(|w| !w.starts_with('-')) {
        match command.find_subcommand(word) {
            Some(sub) => {
                path.push(word.clone());
                command = sub.clone();
            }
            None => break,
        }
    }
    path
}

/// Every command path below `snowctl` with a `--LONG` flag.
fn paths_with_flag(long: &str) -> BTreeSet<Vec<String>> {
    fn walk(
        command: &clap::Command,
        path: &mut Vec<String>,
        long: &str,
        out: &mut BTreeSet<Vec<String>>,
    ) {
        if command.get_arguments().any(|a| a.get_long() == Some(long)) {
            out.insert(path.clone());
        }
        for sub in command.get_subcommands() {
            path.push(sub.get_name().to_owned());
            walk(sub, path, long, out);
            path.pop();
        }
    }
    let mut out = BTreeSet::new();
    walk(
        &snowctl::args::Cli::command(),
        &mut Vec::new(),
        long,
        &mut out,
    );
    out
}

/// Runs snowctl with `-vv` in `dir`, no kubeconfig of this machine's, the cache in `dir`,
/// `stdin` fed, killed after `limit` (a controller runs until it is stopped).
fn run_in(dir: &Path, args: &[String], stdin: Option<&[u8]>, limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .arg("-vv")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("DOCKER_CONFIG", dir.join("no-docker-config"))
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env_remove("REGISTRY_USERNAME")
        .env_remove("REGISTRY_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("snowctl runs");
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        let _ = input.write_all(bytes);
    }
    drop(input);
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
    }
    child.wait_with_output().unwrap()
}

/// What the examples read, written in `dir` (the device files and `edge.yaml`, the spec on the
/// devices of the lifecycle tests): their paths, which the sweep of written files skips.
fn inputs(dir: &Path) -> BTreeSet<PathBuf> {
    let mut inputs: BTreeSet<PathBuf> = device_files(dir).into_iter().collect();
    let spec = dir.join("edge.yaml");
    let devices = super::lifecycle::DEVICES;
    let yaml = EdgeSpec {
        devices: &devices,
        ..EdgeSpec::default()
    }
    .yaml();
    std::fs::write(&spec, yaml).unwrap();
    inputs.insert(spec);
    inputs
}

/// The device files (credentials INI, CA bundle) for the spec's devices.
fn device_files(dir: &Path) -> Vec<PathBuf> {
    let ca = TestCa::new("sweep devices").unwrap();
    let mut bundle = String::new();
    let mut ini = String::new();
    for (i, ip) in super::lifecycle::DEVICES.iter().enumerate() {
        let cert = ca.server_certificate(ip.parse().unwrap()).unwrap();
        bundle.push_str(&cert.cert_pem);
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = AKIDSWEEPDEVICE{i}\naws_secret_access_key = sweepSecretKey{i}xyzxyzxyzxyz\nregion = snow\n\n"
        ));
    }
    let mut written = Vec::new();
    for (name, content) in [
        ("credentials", &ini),
        ("read-only-credentials", &ini),
        ("ca-bundle.pem", &bundle),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        written.push(path);
    }
    written
}

/// Every `--help` example that names a kubeconfig, its kubeconfigs pointing at an unreachable
/// server whose URL holds the password: the password is shown by none of them, and every command
/// that takes `--kubeconfig` shows the URL redacted in at least one run.
#[test]
fn every_command_with_a_kubeconfig_hides_a_password_in_its_server_url() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut inputs = inputs(root);
    std::fs::create_dir(root.join("edge")).unwrap();
    for name in [
        "mgmt.kubeconfig",
        "old.kubeconfig",
        "new.kubeconfig",
        "legacy.kubeconfig",
        "edge/edge-eks-a-cluster.kubeconfig",
    ] {
        let path = root.join(name);
        std::fs::write(&path, kubeconfig(UNREACHABLE)).unwrap();
        inputs.insert(path);
    }
    // Commands that stop for a tool, the devices or the components before they reach the
    // management cluster in their example get a run that passes those steps (a Cilium manifest,
    // no device checks, the components from a directory).
    let cilium = super::lifecycle::CILIUM;
    let (components, bundles) = super::init::components_dir(root);
    let (components, bundles) = (components.to_str().unwrap(), bundles.to_str().unwrap());
    let devices = [
        "--credentials",
        "credentials",
        "--ca-bundle",
        "ca-bundle.pem",
    ];
    let more: Vec<Vec<String>> = [
        &[
            "init",
            "--kubeconfig",
            "mgmt.kubeconfig",
            "--components-dir",
            components,
            "--bundles",
            bundles,
        ][..],
        &[
            "upgrade",
            "management-components",
            "--kubeconfig",
            "mgmt.kubeconfig",
            "--components-dir",
            components,
            "--bundles",
            bundles,
        ],
        &[
            "upgrade",
            "plan",
            "management-components",
            "--kubeconfig",
            "mgmt.kubeconfig",
            "--components-dir",
            components,
            "--bundles",
            bundles,
        ],
        &[
            "create",
            "cluster",
            "-f",
            "edge.yaml",
            "--kubeconfig",
            "mgmt.kubeconfig",
            "--skip-validations",
            "--cni-manifest",
            cilium,
        ],
        &[
            "upgrade",
            "cluster",
            "-f",
            "edge.yaml",
            "--kubeconfig",
            "mgmt.kubeconfig",
            "--skip-validations",
            "--cni-manifest",
            cilium,
        ],
        &[
            "store",
            "cilium",
            "-f",
            "edge.yaml",
            "--kubeconfig",
            "mgmt.kubeconfig",
            "--cni-manifest",
            cilium,
        ],
    ]
    .iter()
    .map(|words| {
        let mut words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        if words.iter().any(|w| w == "--components-dir") {
            words.extend(devices.map(str::to_owned));
        }
        words
    })
    .collect();

    let mut runs: Vec<(Vec<String>, Option<String>)> = snowctl::help::EXAMPLES
        .iter()
        .flat_map(|(_, examples)| examples.iter())
        .filter(|example| example.line.contains("kubeconfig"))
        .map(|example| example_words(example.line))
        .collect();
    runs.extend(more.into_iter().map(|words| (words, None)));

    let mut shown_by: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut last_output = std::collections::BTreeMap::new();
    for (words, stdin) in &runs {
        let stdin = stdin.as_ref().map(|f| std::fs::read(root.join(f)).unwrap());
        let args = super::sample_release(words);
        let out = run_in(root, &args, stdin.as_deref(), Duration::from_secs(30));
        let what = format!("snowctl {}", args.join(" "));
        assert_hidden(
            &format!("the output of {what}\n{}", show(&out)),
            &out.stdout,
        );
        assert_hidden(&format!("the output of {what}"), &out.stderr);
        if text(&out.stderr).contains(SHOWN) {
            shown_by.insert(command_path(words));
        } else {
            last_output.insert(command_path(words), format!("{what}\n{}", show(&out)));
        }
    }
    let takes_kubeconfig = paths_with_flag("kubeconfig");
    let never_shown: Vec<&Vec<String>> = takes_kubeconfig.difference(&shown_by).collect();
    assert!(
        never_shown.is_empty(),
        "these commands take --kubeconfig but no run reached the server to show its URL redacted ({SHOWN}); add a run that does: {never_shown:?}\n\n{}",
        never_shown
            .iter()
            .filter_map(|path| last_output.get(*path))
            .cloned()
            .collect::<Vec<String>>()
            .join("\n\n")
    );
    assert!(assert_files_hidden(root, &inputs) > 0);
}

/// Every command with `--release-manifest`, given an unreachable URL holding the password, names
/// the URL redacted; a reachable one (the loopback release site) is fetched and cached, and
/// neither the output nor the cache holds the password, online or offline from the cache.
#[test]
fn every_command_with_a_release_manifest_hides_a_password_in_its_url() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut inputs = inputs(root);
    let mgmt = root.join("mgmt.kubeconfig");
    std::fs::write(&mgmt, kubeconfig("https://127.0.0.1:1")).unwrap();
    inputs.insert(mgmt);

    let url = format!("{UNREACHABLE}/releases/eks-a/manifest.yaml");
    // These ask the management cluster first (what a command will not do to a cluster is said
    // before any download; `delete cluster` reads the release only for a self-managed cluster):
    // with it unreachable, the release is never asked for. The release is read by the same code
    // in every command, which the others sweep.
    let reads_it_later: [&[&str]; 4] = [
        &["delete", "cluster"],
        &["create", "cluster"],
        &["upgrade", "cluster"],
        &["upgrade", "plan", "cluster"],
    ];
    let mut missed = Vec::new();
    for path in paths_with_flag("release-manifest") {
        let path_words: Vec<&str> = path.iter().map(String::as_str).collect();
        // The command's first example that names no other release source.
        let example = snowctl::help::examples(&path_words)
            .iter()
            .map(|e| example_words(e.line).0)
            .find(|words| {
                !words.iter().any(|w| {
                    [
                        "--bundles",
                        "--artifacts",
                        "--release-manifest",
                        "--offline",
                    ]
                    .contains(&w.as_str())
                })
            })
            .unwrap_or_else(|| path.clone());
        let mut args = example;
        args.extend(["--release-manifest".to_owned(), url.clone()]);
        let out = run_in(root, &args, None, Duration::from_secs(30));
        let what = format!("snowctl {}", args.join(" "));
        assert_hidden(&format!("the output of {what}"), &out.stdout);
        assert_hidden(&format!("the output of {what}"), &out.stderr);
        if !text(&out.stderr).contains(SHOWN) && !reads_it_later.contains(&path_words.as_slice()) {
            missed.push(format!("{what}\n{}", show(&out)));
        }
    }
    assert!(
        missed.is_empty(),
        "these runs did not show the release URL redacted:\n{}",
        missed.join("\n\n")
    );

    // A reachable release site, its URL with the password: fetched, cached, then offline.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("sweep release site").unwrap();
    let eksd = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/eksd/kubernetes-1-21-eks-4.yaml"
    ))
    .unwrap();
    let server = rt
        .block_on(release_site::start(loopback_ip(), &ca, eksd))
        .unwrap();
    let pem = root.join("release-ca.pem");
    std::fs::write(&pem, ca.pem()).unwrap();
    inputs.insert(pem.clone());
    let with_login = format!(
        "{}{}",
        server
            .base
            .replacen("https://", &format!("https://admin:{PLANTED}@"), 1),
        release_site::RELEASE_MANIFEST_PATH
    );
    let list = || -> Output {
        let args: Vec<String> = [
            "import-images",
            "--list",
            "--kubernetes-version",
            "1.31",
            "--release-manifest",
            &with_login,
            "--ca-cert",
            pem.to_str().unwrap(),
        ]
        .map(str::to_owned)
        .to_vec();
        run_in(root, &args, None, Duration::from_secs(60))
    };
    let online = list();
    assert_eq!(online.status.code(), Some(0), "{}", show(&online));
    assert!(
        text(&online.stderr).contains("<redacted>@"),
        "{}",
        show(&online)
    );
    assert_hidden("the output of import-images --list", &online.stderr);
    server.stop();
    let offline = list();
    assert_eq!(offline.status.code(), Some(0), "{}", show(&offline));
    assert!(
        text(&offline.stderr).contains("the copy in the cache"),
        "{}",
        show(&offline)
    );
    assert_hidden(
        "the offline output of import-images --list",
        &offline.stderr,
    );
    assert!(assert_files_hidden(root, &inputs) > 0);
}

/// A registry's password, given on standard input, and a registry written with a login in it:
/// neither is shown when the registry cannot be reached or the value is refused.
#[test]
fn a_registry_password_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let bundles = super::SAMPLE_BUNDLES;
    let runs: Vec<(Vec<&str>, Option<&[u8]>)> = vec![
        (
            vec![
                "import-images",
                "--registry",
                "127.0.0.1:1/eks-a",
                "--source-registry",
                "127.0.0.1:1",
                "--kubernetes-version",
                "1.33",
                "--bundles",
                bundles,
                "--username",
                "admin",
                "--password-stdin",
            ],
            Some(PLANTED.as_bytes()),
        ),
        (
            vec![
                "import-images",
                "--registry",
                "admin:PlantedPw9x7Q@127.0.0.1:1/eks-a",
                "--source-registry",
                "127.0.0.1:1",
                "--kubernetes-version",
                "1.33",
                "--bundles",
                bundles,
            ],
            None,
        ),
        (
            vec![
                "import-images",
                "--registry",
                "https://admin:PlantedPw9x7Q@127.0.0.1:1/eks-a",
                "--source-registry",
                "127.0.0.1:1",
                "--kubernetes-version",
                "1.33",
                "--bundles",
                bundles,
            ],
            None,
        ),
    ];
    for (words, stdin) in runs {
        let args: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        let out = run_in(root, &args, stdin, Duration::from_secs(60));
        let what = format!("snowctl {}\n{}", args.join(" "), show(&out));
        assert_ne!(out.status.code(), Some(0), "{what}");
        assert_hidden(&what, &out.stdout);
        assert_hidden(&what, &out.stderr);
    }
    assert_files_hidden(root, &BTreeSet::new());
}

/// On a management cluster that answers, with the password in its URL: create, describe, get,
/// plan, upgrade (with its backup), move to a directory, the support bundle and delete show it
/// nowhere, write it into no file and no object of the management cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_a_live_management_clusters_url_reaches_no_output_file_or_object() {
    let m = super::lifecycle::management().await;
    // Cluster API's CRDs labelled as clusterctl (and `snowctl init`) label them, so that the
    // backups of upgrade and move find the cluster's kinds.
    for mut crd in m.api.objects() {
        let group = crd["spec"]["group"].as_str().unwrap_or_default().to_owned();
        if crd["kind"] == "CustomResourceDefinition" && group.ends_with("cluster.x-k8s.io") {
            crd["metadata"]["labels"]["clusterctl.cluster.x-k8s.io"] = serde_json::json!("");
            m.api.put(crd).unwrap();
        }
    }
    let root = m.dir.path().to_path_buf();
    let url = m.api.url();
    let planted = std::fs::read_to_string(&m.kubeconfig).unwrap().replace(
        &url,
        &url.replacen("https://", &format!("https://admin:{PLANTED}@"), 1),
    );
    assert!(planted.contains(PLANTED));
    let kubeconfig = root.join("planted.kubeconfig");
    std::fs::write(&kubeconfig, planted).unwrap();
    let devices = super::lifecycle::DEVICES;
    let spec = m.write_spec(
        "edge.yaml",
        &EdgeSpec {
            devices: &devices,
            ..EdgeSpec::default()
        }
        .yaml(),
    );
    let inputs: BTreeSet<PathBuf> = [
        kubeconfig.clone(),
        m.kubeconfig.clone(),
        m.credentials.clone(),
        m.ca_bundle.clone(),
        spec.clone(),
    ]
    .into_iter()
    .collect();
    let spec = spec.to_str().unwrap().to_owned();
    let kc = kubeconfig.to_str().unwrap().to_owned();
    let fast = [
        "--skip-validations",
        "--poll-interval",
        "50ms",
        "--per-machine-wait-timeout=1m",
        "--cni-manifest",
        super::lifecycle::CILIUM,
    ];
    // Only create and upgrade are given the device files (for the CAPAS identity Secret; with
    // --skip-validations and a key pair named they call no device): the others would ask the
    // devices, which are not on loopback.
    let runs: Vec<(Vec<&str>, bool)> = vec![
        (
            [&["create", "cluster", "-f", &spec][..], &fast].concat(),
            true,
        ),
        (vec!["describe", "cluster", "edge"], false),
        (vec!["describe", "cluster", "edge", "-o", "json"], false),
        (vec!["get", "clusters", "-o", "json"], false),
        (vec!["upgrade", "plan", "cluster", "-f", &spec], false),
        (vec!["upgrade", "cluster", "-f", &spec, "--dry-run"], false),
        (
            [&["upgrade", "cluster", "-f", &spec][..], &fast].concat(),
            true,
        ),
        (
            vec![
                "support-bundle",
                "edge",
                "--output-file",
                "edge-support.tar.gz",
            ],
            false,
        ),
        (
            vec!["move", "cluster", "edge", "--to-directory", "edge-backup"],
            false,
        ),
        (
            vec!["delete", "cluster", "edge", "--poll-interval", "50ms"],
            false,
        ),
    ];
    let mut redacted_urls = 0;
    for (words, with_devices) in runs {
        let mut args = super::sample_release(&words);
        args.extend(["--kubeconfig".to_owned(), kc.clone()]);
        let (root2, credentials, bundle) =
            (root.clone(), m.credentials.clone(), m.ca_bundle.clone());
        let out = tokio::task::spawn_blocking(move || {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowctl"));
            cmd.arg("-vv")
                .args(&args)
                .current_dir(&root2)
                .env("NO_COLOR", "1")
                .env_remove("KUBECONFIG")
                .env_remove("EKSA_AWS_CREDENTIALS_FILE")
                .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
            if with_devices {
                cmd.env("EKSA_AWS_CREDENTIALS_FILE", credentials)
                    .env("EKSA_AWS_CA_BUNDLES_FILE", bundle);
            }
            cmd.output().unwrap()
        })
        .await
        .unwrap();
        let what = format!("snowctl {}\n{}", words.join(" "), show(&out));
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert_hidden(&what, &out.stdout);
        assert_hidden(&what, &out.stderr);
        redacted_urls += text(&out.stderr).matches("<redacted>@").count();
    }
    // The -vv log names the server of each request: redacted, never absent.
    assert!(redacted_urls > 0);
    let written = assert_files_hidden(&root, &inputs);
    assert!(written >= 2, "{written} files read");
    for object in m.api.objects() {
        assert_hidden(
            &format!("{} {}", object["kind"], object["metadata"]["name"]),
            object.to_string().as_bytes(),
        );
    }
}
