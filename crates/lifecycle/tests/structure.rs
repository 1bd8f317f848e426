//! The shape of snow-lifecycle's modules, read from its sources: no two modules import each
//! other, and the read-only views never reach into the day-one operations for what they read
//! (they read through snow-kube's live layer). A circle between two files meant a read layer
//! was missing; this test names any that comes back.
//!
//! A module is a file under `src` (`cni/install.rs` is `cni/install`, `cni/mod.rs` is `cni`);
//! a reference is a `crate::…` or `super::…` path in code (comments and strings left out),
//! `use` groups expanded, a name the crate root re-exports followed to the module it comes from.
//! Two levels are checked: files, and the crate's top-level modules (`cni/install` is part of
//! `cni`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The read-only views: what they read comes from snow-kube, not from an operation.
const DAY_TWO: [&str; 6] = [
    "describe",
    "support_bundle",
    "plan",
    "import",
    "site",
    "standing",
];
/// The day-one operations.
const DAY_ONE: [&str; 3] = ["create", "delete", "upgrade"];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `cni/install.rs` → `cni/install`, `cni/mod.rs` → `cni`, `lib.rs` → `` (the root).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let rel = rel.to_string_lossy().replace('\\', "/");
    match rel.as_str() {
        "lib" => String::new(),
        other => other.strip_suffix("/mod").unwrap_or(other).to_owned(),
    }
}

/// The code of a file with comments and the contents of string and character literals blanked
/// (kept as spaces, so positions and lines stay).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
            }
        } else if c == 'r' && (i == 0 || !ident(chars[i - 1])) && matches!(next, Some('"' | '#')) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('"', '\'', '{'), not a lifetime.
            let close = if next == Some('\\') {
                (i + 3..i + 12).find(|&k| chars.get(k) == Some(&'\''))
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match close {
                Some(k) => {
                    out.push_str("' '");
                    i = k + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (whitespace removed, `as` renames dropped).
fn expand(path: &str) -> Vec<String> {
    let path: String = path.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = path.find('{') else {
        let plain = path.split(" as ").next().unwrap_or_default();
        return vec![plain.replace(' ', "")];
    };
    let prefix = path[..open].replace(' ', "");
    let body = &path[open + 1..path.rfind('}').unwrap_or(path.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, ch) in body.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// Every `crate::…`/`super::…` path of `code`, groups expanded, with how many inline modules
/// (`mod tests { … }`) enclose it (a `super::` there stays in the file).
fn paths(code: &str) -> Vec<(String, usize)> {
    let bytes: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == '{' {
            // `mod NAME {`: the two words before the brace.
            let before: String = bytes[i.saturating_sub(80)..i].iter().collect();
            let words: Vec<&str> = before.split_whitespace().rev().take(2).collect();
            if words.len() == 2 && words[1] == "mod" && words[0].chars().all(ident) {
                inline_mods.push(depth);
            }
            depth += 1;
        } else if c == '}' {
            depth = depth.saturating_sub(1);
            if inline_mods.last() == Some(&depth) {
                inline_mods.pop();
            }
        }
        let starts = |w: &str| {
            let w: Vec<char> = w.chars().collect();
            bytes[i..].starts_with(&w) && (i == 0 || !ident(bytes[i - 1]))
        };
        if starts("crate::") || starts("super::") {
            let mut j = i;
            while j < bytes.len() && (ident(bytes[j]) || bytes[j] == ':') {
                j += 1;
            }
            if bytes.get(j) == Some(&'{') && bytes[j - 1] == ':' {
                let mut d = 0;
                while j < bytes.len() {
                    if bytes[j] == '{' {
                        d += 1;
                    } else if bytes[j] == '}' {
                        d -= 1;
                        if d == 0 {
                            j += 1;
                            break;
                        }
                    }
                    j += 1;
                }
            }
            let text: String = bytes[i..j].iter().collect();
            for p in expand(&text) {
                found.push((p, inline_mods.len()));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// The modules of the crate and the references between them: for each module, the modules it
/// names, each with one path that names it (for the message).
fn graph(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let texts: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            (module_of(src, f), code_only(&text))
        })
        .collect();
    let modules: BTreeSet<&str> = texts.keys().map(String::as_str).collect();
    // Names the root re-exports (`pub use create::{create, CreateOptions}`), to their module.
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    let root = &texts[""];
    for statement in root.split(';') {
        let Some(at) = statement.find("use ") else {
            continue;
        };
        for path in expand(&statement[at + 4..]) {
            let segments: Vec<&str> = path
                .trim_start_matches("crate::")
                .trim_start_matches("self::")
                .split("::")
                .collect();
            if segments.len() > 1 && modules.contains(segments[0]) {
                let name = segments[segments.len() - 1].to_owned();
                reexported.insert(name, segments[0].to_owned());
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (module, code) in &texts {
        for (path, mut inline) in paths(code) {
            let mut segments: Vec<&str> = path.split("::").collect();
            let mut base = module.clone();
            if segments[0] == "crate" {
                base.clear();
                segments.remove(0);
            } else {
                while segments.first() == Some(&"super") {
                    segments.remove(0);
                    if inline > 0 {
                        inline -= 1;
                    } else {
                        base = base
                            .rsplit_once('/')
                            .map_or(String::new(), |(p, _)| p.into());
                    }
                }
            }
            let mut target = base;
            for segment in segments {
                let deeper = if target.is_empty() {
                    segment.to_owned()
                } else {
                    format!("{target}/{segment}")
                };
                if modules.contains(deeper.as_str()) {
                    target = deeper;
                } else {
                    if target.is_empty()
                        && let Some(from) = reexported.get(segment)
                    {
                        target = from.clone();
                    }
                    break;
                }
            }
            if target != *module && !target.is_empty() && !module.is_empty() {
                edges
                    .entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(path);
            }
        }
    }
    edges
}

/// `a ↔ b` for every two modules that name each other, with a path each way.
fn circles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    let mut found = Vec::new();
    for (a, targets) in edges {
        for (b, path) in targets {
            if a < b
                && let Some(back) = edges.get(b).and_then(|t| t.get(a))
            {
                found.push(format!("{a} ↔ {b} ({a} names {path}, {b} names {back})"));
            }
        }
    }
    found
}

/// The same graph between top-level modules (`cni/install` counts as `cni`).
fn top_level(
    edges: &BTreeMap<String, BTreeMap<String, String>>,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let top = |m: &str| m.split('/').next().unwrap_or_default().to_owned();
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (a, targets) in edges {
        for (b, path) in targets {
            if top(a) != top(b) {
                out.entry(top(a))
                    .or_default()
                    .entry(top(b))
                    .or_insert_with(|| path.clone());
            }
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_two_modules_import_each_other() {
    let edges = graph(&src());
    assert!(
        edges.contains_key("create") && edges["create"].contains_key("apply"),
        "the reader found no reference of create to apply: {edges:?}"
    );
    let mut found = circles(&edges);
    // A circle of two top-level modules not already named as a circle of two files.
    for circle in circles(&top_level(&edges)) {
        let pair = circle.split(" (").next().unwrap_or_default();
        if !found.iter().any(|f| f.starts_with(&format!("{pair} ("))) {
            found.push(circle);
        }
    }
    assert!(
        found.is_empty(),
        "modules of snow-lifecycle that import each other:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn read_only_views_do_not_reach_into_day_one_operations() {
    let edges = top_level(&graph(&src()));
    let mut found = Vec::new();
    for view in DAY_TWO {
        for operation in DAY_ONE {
            if let Some(path) = edges.get(view).and_then(|t| t.get(operation)) {
                found.push(format!("{view} names {path}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "read-only views that read through an operation instead of snow-kube's live layer:\n  {}",
        found.join("\n  ")
    );
}

/// The reader itself: groups, `super::` out of an inline module, re-exports, comments.
#[test]
fn the_reader_finds_circles_through_groups_supers_and_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("cni")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod cni;\npub use a::{Thing, other};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a.rs"),
        "use super::{b::B, cni::install::go};\n// crate::c is a comment\nfn f() { let s = \"crate::d\"; }\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "fn g() { crate::Thing::new(); }\n").unwrap();
    std::fs::write(src.join("cni/mod.rs"), "pub mod install;\n").unwrap();
    std::fs::write(src.join("cni/install.rs"), "use super::super::a;\n").unwrap();
    let edges = graph(src);
    assert_eq!(
        edges["a"].keys().collect::<Vec<_>>(),
        ["b", "cni/install"],
        "{edges:?}"
    );
    let found = circles(&edges);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("a ↔ b (a names super::b::B, b names crate::Thing"));
    assert!(found[1].starts_with("a ↔ cni/install"));
    assert_eq!(circles(&top_level(&edges)).len(), 2);
}
