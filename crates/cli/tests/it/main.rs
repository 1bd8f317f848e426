//! The command line's integration tests, as one test binary (each binary links the whole
//! dependency tree, so one instead of eleven saves most of the link time). Each module drives the
//! real `snowctl` binary.

mod backup;
mod controller_binary;
mod controller_image;
mod controller_installed;
mod credentials;
mod dependencies;
mod devices;
mod download;
mod e2e_management;
mod gitops_create;
mod hostile;
mod import_cluster;
mod import_images;
mod init;
mod kubeconfig;
mod library_words;
mod lifecycle;
mod move_cluster;
mod preflight;
mod quick_start;
mod reference;
mod refusals;
mod registry;
mod registry_mirror;
mod release_defaults;
mod render;
mod scoped_user;
mod secrets_sweep;
mod self_managed;
mod spec_commands;
mod support_bundle;
mod upgrade_plan;
mod validate_release;

/// The embedded sample Bundles as a file.
const SAMPLE_BUNDLES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../snow-api/catalog/bundles.yaml"
);

/// `args` with `--bundles SAMPLE_BUNDLES` added when they are a command that reads the release
/// catalog and name none (`--bundles`, `--artifacts`, `--release-manifest`): such a command's
/// default, the release EKS Anywhere publishes, is fetched from the network
/// (`release_defaults` tests that path against a loopback server).
fn sample_release<S: AsRef<str>>(args: &[S]) -> Vec<String> {
    let mut out: Vec<String> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    // The subcommand's words, past global flags (`-v`).
    let words: Vec<&str> = (out.iter())
        .filter(|a| !a.starts_with('-'))
        .take(2)
        .map(String::as_str)
        .collect();
    let offline = out.iter().any(|a| a == "--offline");
    let reads_catalog = matches!(
        words.as_slice(),
        ["validate", ..] if !offline
    ) || matches!(
        words.as_slice(),
        ["init" | "controller" | "import-images", ..]
            | ["create" | "upgrade" | "delete", "cluster"]
            | ["upgrade", "management-components" | "plan"]
            | ["download", "artifacts"]
            | ["store", "cilium"]
    );
    let names_one = out.iter().any(|a| {
        ["--bundles", "--artifacts", "--release-manifest"]
            .iter()
            .any(|flag| a == flag || a.starts_with(&format!("{flag}=")))
    });
    if reads_catalog && !names_one {
        out.extend(["--bundles".to_owned(), SAMPLE_BUNDLES.to_owned()]);
    }
    out
}

/// The reference sample Bundles of `../shared/data` (EKS Anywhere's format, every section).
const REFERENCE_BUNDLES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/bundles/eksa-bundle-release-sample.yaml"
);

/// `snowctl` for the registry commands: no Docker config of this machine's, killed after
/// `limit` (a hung run fails its test instead of hanging it).
fn registry_snowctl(limit: std::time::Duration) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("snowctl").unwrap();
    cmd.env("DOCKER_CONFIG", "/nonexistent-snowctl-test")
        .timeout(limit);
    cmd
}

/// Bytes a process wrote, as text.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished command's exit code, stdout and stderr, for an assertion's message.
fn show(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Every key of a JSON report is camelCase, as Kubernetes writes its objects: no `_` (map keys
/// that are data, such as cluster names, labels or IPs, hold `.`, `/` or `-` and are skipped
/// when they do, or are named in `data_maps`).
fn assert_camel_case(value: &serde_json::Value, data_maps: &[&str]) {
    fn walk(value: &serde_json::Value, path: &str, data_maps: &[&str], bad: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, item) in map {
                    let at = format!("{path}.{key}");
                    if key.contains('_') && !key.contains(['.', '/', '-']) {
                        bad.push(at.clone());
                    }
                    if !data_maps.contains(&key.as_str()) {
                        walk(item, &at, data_maps, bad);
                    }
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}[{i}]"), data_maps, bad);
                }
            }
            _ => {}
        }
    }
    let mut bad = Vec::new();
    walk(value, "", data_maps, &mut bad);
    assert!(bad.is_empty(), "keys not in camelCase: {bad:?}\n{value:#}");
}
