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

/// What a command file may call in `crate::settings`: its resolvers (`XxxSettings::resolve`) and
/// `fetch_catalog`, the release read after the management cluster has said the command may act.
/// A finding per other call: `file: settings::thing`.
fn settings_calls(file: &str, source: &str) -> Vec<String> {
    // Comments name functions freely; the code is what counts.
    let code: String = source
        .lines()
        .map(|line| {
            // A `//` outside a string literal (an even number of quotes before it).
            let comment = (line.match_indices("//"))
                .find(|&(at, _)| line[..at].matches('"').count() % 2 == 0);
            comment.map_or(line, |(at, _)| &line[..at])
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    let mut types = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut rest = code.as_str();
    while let Some(at) = rest.find("settings::") {
        rest = &rest[at + "settings::".len()..];
        // A path (`settings::a::b`), then a call, or a `use` group (`settings::a::{B, c}`).
        let end = rest
            .find(|c: char| !(ident(c) || c == ':'))
            .unwrap_or(rest.len());
        let path = &rest[..end];
        let after = rest[end..].trim_start();
        let mut named: Vec<String> = Vec::new();
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let close = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            // Nested groups flattened: a prefix (`cluster::`) is no item.
            named.extend(
                (group[..close].split([',', '{', '}']))
                    .map(|p| p.split_whitespace().collect::<String>())
                    .filter(|p| !p.is_empty() && p != "self" && !p.ends_with("::")),
            );
        } else {
            let last = path.rsplit("::").next().unwrap_or_default();
            if after.starts_with('(') && last != "resolve" && last != "fetch_catalog" {
                found.push(format!("{file}: settings::{path}"));
            }
            if last.starts_with(char::is_uppercase) {
                types.push(last.to_owned());
            }
            continue;
        }
        for item in named {
            let last = item.rsplit("::").next().unwrap_or_default();
            match last.starts_with(char::is_uppercase) {
                // A type (or a constant): its calls are checked below.
                true => types.push(last.to_owned()),
                // A function (or a module) brought in by name, to be called without `settings::`.
                false if last != "fetch_catalog" => {
                    found.push(format!("{file}: settings::{path}{item}"));
                }
                false => {}
            }
        }
    }
    // A settings type's associated functions: only `resolve`.
    types.sort();
    types.dedup();
    for ty in types.iter().filter(|t| t.chars().any(char::is_lowercase)) {
        let mut rest = code.as_str();
        let needle = format!("{ty}::");
        while let Some(at) = rest.find(&needle) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + needle.len()..];
            if before.is_some_and(ident) {
                continue;
            }
            let end = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
            let call = rest[end..].trim_start().starts_with('(');
            // An enum's variant (`CniSettings::Manifest(…)`) is no function.
            let variant = rest[..end].starts_with(char::is_uppercase);
            if call && !variant && &rest[..end] != "resolve" {
                found.push(format!("{file}: {ty}::{}", &rest[..end]));
            }
        }
    }
    found
}

/// ARCHITECTURE.md: every command resolves its settings once, through a pure resolver, and then
/// calls only the libraries; the one other call into `settings` is `fetch_catalog`, the release
/// read after the management cluster has said the command may act (create, upgrade, its plan,
/// delete).
#[test]
fn commands_call_only_their_resolvers_in_settings() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut found = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let source = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        found.extend(settings_calls(&name, &source));
        files += 1;
    }
    assert!(files > 10, "{files} command files");
    assert!(found.is_empty(), "{found:#?}");
}

/// The scanner finds what it must: a function called by path or imported, a settings type's
/// other functions; and lets resolvers, `fetch_catalog`, types, constants and comments be.
#[test]
fn the_settings_scanner_finds_other_calls() {
    let bad = r#"
use crate::settings::{self, GlobalSettings, RenderInputs, load_spec, cluster::{FromNothing, check}};
use crate::settings::devices::{CleanupSettings, fleet};
fn f() {
    let a = settings::management(&x, e);
    let b = RenderInputs::new(flags, catalog);
    let c = CleanupSettings::resolve(&args, environment);
}
"#;
    assert_eq!(
        settings_calls("bad.rs", bad),
        [
            "bad.rs: settings::load_spec",
            "bad.rs: settings::check",
            "bad.rs: settings::devices::fleet",
            "bad.rs: settings::management",
            "bad.rs: RenderInputs::new",
        ]
    );
    let good = r#"
use crate::settings::{GlobalSettings, CreateSettings, cluster::FromNothing};
// settings::management(&args) is what it did before.
fn f() {
    let s = CreateSettings::resolve(&args, environment);
    let g = GlobalSettings::resolve(&cli);
    let c = settings::fetch_catalog(source);
    io.err(settings::NO_CONTROLLER_NOTE);
    let t: settings::gitops::GitOpsSettings = todo!();
    let url = "https://example.com"; // settings::x()
}
"#;
    assert_eq!(settings_calls("good.rs", good), Vec::<String>::new());
}
