//! The command-line reference (`docs/reference/cli.md`) as markdown, generated from the clap
//! definitions with the examples of [`crate::help`]: every command's about text, usage,
//! arguments and flags with their help, defaults, possible values and environment variables.
//! No IO: the test `reference` in `crates/cli/tests/it` compares the file with [`markdown`] and
//! rewrites it when asked.

use clap::{Arg, Command};
use std::fmt::Write as _;

/// The file [`markdown`] is written to, from the workspace root.
pub const PATH: &str = "docs/reference/cli.md";

/// The variable that makes the reference test rewrite [`PATH`] instead of comparing.
pub const UPDATE_VARIABLE: &str = "SNOWCTL_UPDATE_DOCS";

/// The reference of `snowctl` (as [`crate::help::command`] builds it) as markdown.
pub fn markdown() -> String {
    let mut cmd = crate::help::command();
    cmd.build();
    let mut out = String::from(
        "<!-- Generated from the clap definitions (crates/cli/src/args.rs, crates/cli/src/help.rs) \
         by snowctl::reference; do not edit. To update: SNOWCTL_UPDATE_DOCS=1 cargo test \
         --workspace --test it reference -->\n\n# Command-line reference\n\n",
    );
    out.push_str(
        "Every command, its arguments and flags, as `snowctl COMMAND --help` shows them. \
         Exit codes and environment variables: [exit-codes.md](exit-codes.md), \
         [environment.md](environment.md).\n\n",
    );
    let mut toc = String::new();
    let mut body = String::new();
    walk(&cmd, &mut toc, &mut body);
    out.push_str(&toc);
    out.push('\n');
    out.push_str(&body);
    out
}

fn walk(cmd: &Command, toc: &mut String, body: &mut String) {
    if cmd.is_hide_set() {
        return;
    }
    let name = cmd
        .get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_owned();
    let depth = name.split(' ').count().saturating_sub(1);
    let _ = writeln!(
        toc,
        "{}- [`{name}`](#{})",
        "  ".repeat(depth),
        anchor(&name)
    );
    section(cmd, &name, body);
    for sub in cmd.get_subcommands() {
        if sub.get_name() != "help" {
            walk(sub, toc, body);
        }
    }
}

/// GitHub's anchor of a heading holding only `name` in backquotes.
fn anchor(name: &str) -> String {
    name.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

fn section(cmd: &Command, name: &str, out: &mut String) {
    let _ = writeln!(out, "## `{name}`\n");
    let about = cmd.get_long_about().or_else(|| cmd.get_about());
    if let Some(about) = about {
        let _ = writeln!(out, "{}\n", one_line(&about.to_string()));
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim_end();
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let subcommands: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    if !subcommands.is_empty() {
        out.push_str("Commands:\n\n");
        for sub in subcommands {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(
                out,
                "- [`{}`](#{}): {}",
                sub.get_name(),
                anchor(&format!("{name} {}", sub.get_name())),
                one_line(&about)
            );
        }
        out.push('\n');
    }
    let args: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        // Global flags are listed once, at `snowctl`.
        .filter(|a| !a.is_global_set() || cmd.get_bin_name() == Some(cmd.get_name()))
        .collect();
    // As `--help` groups them: arguments, options, then each heading in order of appearance.
    let title = |arg: &Arg| match arg.get_help_heading() {
        Some(heading) if heading != "Options" => heading.to_owned(),
        _ if arg.is_positional() => "Arguments".to_owned(),
        _ => "Options".to_owned(),
    };
    let mut titles = vec!["Arguments".to_owned(), "Options".to_owned()];
    for arg in &args {
        let t = title(arg);
        if !titles.contains(&t) {
            titles.push(t);
        }
    }
    for t in titles {
        let group: Vec<&&Arg> = args.iter().filter(|a| title(a) == t).collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{t}:\n");
        for arg in group {
            let _ = writeln!(out, "- {}", describe(arg));
        }
        out.push('\n');
    }
    if let Some(after) = cmd.get_after_help() {
        let text = after.to_string();
        let text = text.strip_prefix("Examples:\n").unwrap_or(&text);
        let lines: Vec<&str> = text
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .collect();
        let _ = writeln!(out, "Examples:\n\n```sh\n{}\n```\n", lines.join("\n"));
    }
}

/// One argument: its flag or value name, then its help and what clap knows about its values.
fn describe(arg: &Arg) -> String {
    let values: Vec<String> = arg
        .get_value_names()
        .map(|names| names.iter().map(|n| format!("<{n}>")).collect())
        .unwrap_or_else(|| vec![format!("<{}>", arg.get_id().as_str().to_uppercase())]);
    let takes_value = arg.get_action().takes_values();
    let mut name = String::new();
    if let Some(short) = arg.get_short() {
        name.push_str(&format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        if !name.is_empty() {
            name.push_str(", ");
        }
        name.push_str(&format!("--{long}"));
    }
    if takes_value {
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(&values.join(" "));
    }
    let mut line = format!("`{name}`");
    let help = arg
        .get_long_help()
        .or_else(|| arg.get_help())
        .map(|h| one_line(&h.to_string()))
        .unwrap_or_default();
    if !help.is_empty() {
        line.push_str(": ");
        line.push_str(&help);
    }
    let mut facts = Vec::new();
    if arg.is_required_set() {
        facts.push("required".to_owned());
    }
    let repeatable = matches!(
        arg.get_action(),
        clap::ArgAction::Append | clap::ArgAction::Count
    );
    if repeatable && !help.contains("repeat") {
        facts.push("repeatable".to_owned());
    }
    if let Some(delimiter) = arg.get_value_delimiter() {
        facts.push(format!("separated by `{delimiter}`"));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| match v.get_help() {
            Some(help) => format!("`{}` ({})", v.get_name(), one_line(&help.to_string())),
            None => format!("`{}`", v.get_name()),
        })
        .collect();
    if takes_value && !possible.is_empty() {
        facts.push(format!("one of {}", possible.join(", ")));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty())
        .collect();
    if takes_value && !defaults.is_empty() {
        facts.push(format!("default `{}`", defaults.join(",")));
    }
    if let Some(env) = arg.get_env() {
        facts.push(format!("env `{}`", env.to_string_lossy()));
    }
    if !facts.is_empty() {
        line.push_str(&format!(" ({})", facts.join("; ")));
    }
    line
}

/// Help text on one markdown line: wrapped lines joined, and `<` and `>` escaped (markdown would
/// take `<version>` for an HTML tag and show nothing).
fn one_line(text: &str) -> String {
    (text.split_whitespace().collect::<Vec<_>>().join(" "))
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
