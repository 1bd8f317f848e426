//! The libraries speak their own language: no string in a library's source names a command-line
//! flag (`--name`), a snowctl command (`snowctl init`) or one of the environment variables the
//! CLI reads. Their errors and findings
//! carry data (a field, a value, a check id); the CLI alone turns them into hints that name flags,
//! commands and variables (`crates/cli/src/exit.rs`). ARCHITECTURE.md says so; this test holds it by
//! reading every library's `src` (string literals only, up to a file's `#[cfg(test)]` module).

use clap::CommandFactory;
use std::path::{Path, PathBuf};

/// Flags a library legitimately writes: command lines of other programs it runs or renders, and
/// other programs' commands a hint tells the user to run. Each entry is a file and the exact
/// string literals allowed there.
const ALLOWED: &[(&str, &[&str], &str)] = &[
    (
        "crates/capi-render/src/controller.rs",
        &[
            "--log-format",
            "--leader-election-namespace",
            "--health-addr",
            "--webhook-addr",
            "--webhook-cert-dir",
            "--cni-stored",
            "--bundles",
            "--eksd-release",
        ],
        "the controller Deployment's container arguments (the controller program's own flags)",
    ),
    (
        "crates/capi-render/src/cilium.rs",
        &[
            "--version",
            "--namespace",
            "--kube-version",
            "--insecure-skip-tls-verify",
            "--username",
            "--password-stdin",
            "--insecure",
        ],
        "the `helm template` and `helm registry login` command lines",
    ),
    (
        "crates/lifecycle/src/bootstrap/kind.rs",
        &["--name", "--kubeconfig", "--image", "--config"],
        "the `kind` command lines",
    ),
    (
        "crates/controller/src/machine_config.rs",
        &[
            "the CAPAS bootstrap credentials Secret {ns}/{name} is missing (install CAPAS with clusterctl init --infrastructure snow)",
        ],
        "clusterctl's flags, in a status message (no CLI in between to translate it)",
    ),
    (
        "crates/credentials/src/check.rs",
        &[
            "add the certificate of device {ip} to {source} (`snowballEdge list-certificates`, then `snowballEdge get-certificate --certificate-arn …`)",
            "fix {source} first: it should hold each device's certificate (`snowballEdge list-certificates`, then `snowballEdge get-certificate --certificate-arn …`)",
        ],
        "the snowballEdge client's flags: a command the user runs against the device",
    ),
    (
        "crates/snow-validate/src/preflight.rs",
        &[
            "unlock it with `snowballEdge unlock-device --endpoint https://{ip} --manifest-file … --unlock-code …`",
            "import the public key on {ip} with `aws ec2 import-key-pair --key-name {key} --endpoint-url https://{ip}:8243 --profile {ip} …`, or leave sshKeyName empty so that snowctl generates and imports one",
        ],
        "the snowballEdge and aws clients' flags: commands the user runs against the device",
    ),
    (
        "crates/lifecycle/src/init/components.rs",
        &["the snowctl controller is rendered, never read from a manifest"],
        "the component's name (the snowctl controller), not the `controller` command",
    ),
    (
        "crates/provision/src/self_managed.rs",
        &["Installing the snowctl controller on management cluster"],
        "the component's name (the snowctl controller) in a step's name, not the `controller` \
         command",
    ),
    (
        "crates/images/src/controller_image.rs",
        &["snowctl controller", "snowctl build controller-image"],
        "the image's title and its history's `created_by`: part of the image's reproducible \
         bytes, which name the program that builds and runs it",
    ),
    (
        "crates/credentials/src/write.rs",
        &["# Written by snowctl: one profile per Snow device, for EKSA_AWS_CREDENTIALS_FILE."],
        "the marker line that tells a file the writer wrote before: changing it would make \
         every file written so far look foreign",
    ),
    (
        "crates/git/src/repository.rs",
        &[
            "--verify",
            "--quiet",
            "--all",
            "--force",
            "--cached",
            "--name-only",
            "--no-verify",
            "--cleanup=strip",
            "--depth",
            "--hard",
            "--heads",
            "--initial-branch",
            "--single-branch",
            "--branch",
            "--no-checkout",
        ],
        "the `git` command lines snow-git runs",
    ),
];

/// The crates that are not libraries for other tools: the CLI itself and the test stand-ins.
const NOT_LIBRARIES: &[&str] = &["cli", "test-devices", "test-kube"];

/// The environment variables the CLI reads on the user's behalf (see `crates/cli/src/env.rs`)
/// that a library message could be tempted to name.
fn names_variable(word: &str) -> bool {
    word.starts_with("EKSA_") || word.starts_with("REGISTRY_") || word == "KUBECONFIG"
}

/// The snowctl commands (clap's top-level subcommands).
fn commands() -> Vec<String> {
    snowctl::args::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect()
}

/// Whether `text` names a snowctl command: `snowctl` followed by one of `commands` as a word.
fn names_command(text: &str, commands: &[String]) -> bool {
    text.match_indices("snowctl ").any(|(i, m)| {
        let after = &text[i + m.len()..];
        let word: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        commands.contains(&word)
    })
}

/// Whether `text` has a `--flag` word: `--` at the start or after a space, quote, backtick or
/// parenthesis, followed by a lowercase letter.
fn names_flag(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(2)).any(|i| {
        bytes[i] == b'-'
            && bytes[i + 1] == b'-'
            && bytes[i + 2].is_ascii_lowercase()
            && (i == 0 || b" \t\n\"`('".contains(&bytes[i - 1]))
    })
}

/// The string literals of Rust source up to its `#[cfg(test)]` line, each with its first line:
/// comments skipped, escapes kept as written, raw strings read to their closing `"#…`.
fn literals(source: &str) -> Vec<(usize, String)> {
    let source = match source.find("\n#[cfg(test)]") {
        Some(end) => &source[..end],
        None => source,
    };
    let chars: Vec<char> = source.chars().collect();
    let (mut i, mut line, mut found) = (0, 1, Vec::new());
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && at(i + 1) == '/') {
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
            i += 2;
        } else if c == '\'' {
            // A char literal ('x', '\n', '"') is skipped; a lifetime ('a) is not one.
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == 'r'
            && (at(i + 1) == '"' || at(i + 1) == '#')
            && !ident(at(i.wrapping_sub(1)))
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let start = line;
            let mut text = String::new();
            j += 1;
            while j < chars.len() && !chars[j..].iter().collect::<String>().starts_with(&close) {
                line += usize::from(chars[j] == '\n');
                text.push(chars[j]);
                j += 1;
            }
            found.push((start, text));
            i = j + close.len();
        } else if c == '"' {
            let start = line;
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    text.push(chars[i]);
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                text.push(at(i));
                i += 1;
            }
            found.push((start, text));
            i += 1;
        } else {
            i += 1;
        }
    }
    found
}

fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

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

#[test]
fn libraries_name_no_flags_or_environment_variables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let krate = krate.unwrap().path();
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        if !NOT_LIBRARIES.contains(&name.as_str()) {
            rust_files(&krate.join("src"), &mut files);
        }
    }
    assert!(
        files.len() > 50,
        "the libraries' sources are read: {files:?}"
    );
    let commands = commands();
    assert!(
        commands.iter().any(|c| c == "init"),
        "the commands are read: {commands:?}"
    );
    let mut wrong = Vec::new();
    for file in &files {
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        let allowed = ALLOWED
            .iter()
            .filter(|(f, _, _)| *f == shown)
            .flat_map(|(_, literals, _)| literals.iter());
        let allowed: Vec<&&str> = allowed.collect();
        for (line, text) in literals(&std::fs::read_to_string(file).unwrap()) {
            let variable = text.split(|c: char| !ident(c)).any(names_variable);
            let cli_word = names_flag(&text) || names_command(&text, &commands) || variable;
            if cli_word && !allowed.contains(&&text.as_str()) {
                wrong.push(format!("{shown}:{line}: {text:?}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "library strings that name a CLI flag, command or environment variable (say it in the \
         library's terms and let crates/cli/src/exit.rs name the flag or command):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scanner_finds_flags_and_variables_in_literals_only() {
    let source = r##"
// a comment naming --offline and EKSA_AWS_CREDENTIALS_FILE is not a literal
fn f<'a>(x: &'a str) -> char {
    let _ = "pass --credentials FILE";
    let _ = r#"set "EKSA_AWS_CA_BUNDLES_FILE""#;
    let _ = "DirAvailable--etc-kubernetes";
    '"'
}
#[cfg(test)]
mod tests { const X: &str = "--not-read"; }
"##;
    let found = literals(source);
    let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "pass --credentials FILE",
            "set \"EKSA_AWS_CA_BUNDLES_FILE\"",
            "DirAvailable--etc-kubernetes"
        ]
    );
    assert_eq!(found[0].0, 4);
    assert!(names_flag(texts[0]) && !names_flag(texts[2]));
    assert!(texts[1].split(|c: char| !ident(c)).any(names_variable));
}

#[test]
fn a_command_counts_only_after_snowctl() {
    let commands = vec!["init".to_owned(), "download".to_owned()];
    assert!(names_command("install it there (snowctl init)", &commands));
    assert!(names_command(
        "`snowctl download artifacts` resumes",
        &commands
    ));
    assert!(!names_command("snowctl does not downgrade", &commands));
    assert!(!names_command("snowctl initializes", &commands));
    assert!(!names_command("init it", &commands));
}
