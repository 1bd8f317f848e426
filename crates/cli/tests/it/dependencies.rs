//! What ARCHITECTURE.md says of the dependencies, read from `cargo tree` (offline: from
//! Cargo.lock and the manifests, nothing built): the CLI's direct dependencies are a short list
//! (logic a library user needs belongs in a library, so the CLI needs no client of its own), and
//! no library depends on clap (only the CLI parses arguments).

use std::process::Command;

/// The packages `cargo tree` prints for `args` (one name per line, deduplicated).
fn tree(args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--edges", "normal", "--prefix", "none"])
        .args(["--format", "{p}"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_cli_depends_directly_on_the_libraries_and_a_short_list() {
    let mut allowed = vec![
        // The workspace's libraries.
        "capi-render",
        "snow-api",
        "snow-controller",
        "snow-credentials",
        "snow-images",
        // Not snow-lifecycle: the CLI's cluster work goes through snow-provision, the facade.
        "snow-provision",
        "snow-registry",
        "snow-validate",
        // Argument parsing.
        "clap",
        "clap_complete",
        // Terminal output: progress bars, JSON and YAML reports.
        "indicatif",
        "serde",
        "serde-saphyr",
        "serde_json",
        // Logging.
        "tracing",
        "tracing-subscriber",
        // The async runtime.
        "tokio",
        // The settings' own error type.
        "thiserror",
        // The binary selects the Kubernetes version the libraries are built for (k8s-openapi's
        // rule: libraries select none).
        "k8s-openapi",
        // The package itself.
        "snowctl",
    ];
    allowed.sort_unstable();
    let direct = tree(&["--package", "snowctl", "--depth", "1"]);
    assert_eq!(direct, allowed, "the CLI's direct normal dependencies");
}

#[test]
fn no_library_depends_on_clap() {
    let mut args = Vec::new();
    for library in [
        "snow-api",
        "snow-credentials",
        "snow-validate",
        "capi-render",
        "snow-images",
        "snow-io",
        "snow-kube",
        "snow-lifecycle",
        "snow-provision",
        "snow-controller",
        "snow-git",
        "snow-registry",
    ] {
        args.extend(["--package", library]);
    }
    let all = tree(&args);
    assert!(all.iter().any(|p| p == "kube"), "the tree is read: {all:?}");
    let parsers: Vec<&String> = all.iter().filter(|p| p.starts_with("clap")).collect();
    assert!(parsers.is_empty(), "{parsers:?}");
}
