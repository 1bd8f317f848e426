//! The generated command-line reference (`docs/reference/cli.md`) is the one the clap
//! definitions give, every command's `--help` has examples, and every example parses.

use snowctl::{help, reference};
use std::path::PathBuf;

fn workspace_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[test]
fn the_cli_reference_is_the_one_the_clap_definitions_give() {
    let path = workspace_file(reference::PATH);
    let wanted = reference::markdown();
    if std::env::var_os(reference::UPDATE_VARIABLE).is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &wanted).unwrap();
        return;
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    if found != wanted {
        let line = (found.lines().zip(wanted.lines()))
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| found.lines().count().min(wanted.lines().count()));
        panic!(
            "{} is stale (first difference at line {}: {:?} should be {:?}); regenerate it with\n  {}=1 cargo test --workspace --test it reference",
            reference::PATH,
            line + 1,
            found.lines().nth(line).unwrap_or(""),
            wanted.lines().nth(line).unwrap_or(""),
            reference::UPDATE_VARIABLE,
        );
    }
}

/// The path of every command that has no subcommand, below `snowctl`.
fn leaves(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .collect();
    if subs.is_empty() && !path.is_empty() {
        out.push(path.clone());
    }
    for sub in subs {
        path.push(sub.get_name().to_owned());
        leaves(sub, path, out);
        path.pop();
    }
}

#[test]
fn every_command_has_examples_in_its_help() {
    let cmd = help::command();
    let mut found = Vec::new();
    leaves(&cmd, &mut Vec::new(), &mut found);
    assert!(found.len() > 20, "{found:?}");
    let mut missing = Vec::new();
    for path in &found {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        if help::examples(&words).is_empty() {
            missing.push(words.join(" "));
        }
    }
    assert!(
        missing.is_empty(),
        "no examples for: {missing:?} (add them to crates/cli/src/help.rs)"
    );
    // Every table entry names a command that exists, and shows in its help.
    for (path, examples) in help::EXAMPLES {
        let mut sub = cmd.clone();
        for word in *path {
            sub = sub
                .find_subcommand(word)
                .unwrap_or_else(|| panic!("help.rs names {path:?}, which is no command"))
                .clone();
        }
        let mut text = Vec::new();
        sub.write_long_help(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let shown = help::examples_text(examples);
        assert!(text.contains(&shown), "{path:?} --help:\n{text}");
        for line in shown.lines() {
            assert!(line.len() <= help::EXAMPLE_WIDTH, "{line:?} is too long");
        }
    }
}

#[test]
fn every_example_parses_with_the_current_flags() {
    let mut failed = Vec::new();
    for (path, examples) in help::EXAMPLES {
        for example in *examples {
            let args = help::example_args(example.line);
            assert_eq!(args.first(), Some(&"snowctl"), "{}", example.line);
            // Each example runs the command it is listed under.
            assert_eq!(&args[1..=path.len()], *path, "{}", example.line);
            if let Err(e) = help::command().try_get_matches_from(&args) {
                failed.push(format!("{}\n    {}", example.line, e.render()));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "examples clap refuses:\n{}",
        failed.join("\n")
    );
}

#[test]
fn create_cluster_groups_every_flag_under_a_heading() {
    let cmd = help::command();
    let create = cmd
        .find_subcommand("create")
        .and_then(|c| c.find_subcommand("cluster"))
        .unwrap();
    let bare: Vec<&str> = create
        .get_arguments()
        .filter(|a| a.get_help_heading().is_none())
        .map(|a| a.get_id().as_str())
        .collect();
    // Only the flags of the command itself stay under "Options".
    assert_eq!(
        bare,
        ["dry_run", "no_support_bundle"],
        "add new flags to help.rs"
    );
    let mut text = Vec::new();
    create.clone().write_long_help(&mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    for (heading, _) in help::CREATE_CLUSTER_HEADINGS {
        assert!(text.contains(&format!("{heading}:")), "{heading}\n{text}");
    }
}
