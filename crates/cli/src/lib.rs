//! The `snowctl` command line: clap definitions ([`args`]), their resolution into plain settings
//! ([`settings`]), one function per command ([`commands`]), and the printing of reports
//! ([`output`]); what `--help` adds to the definitions ([`help`]: examples, headings) and the
//! generated command-line reference ([`reference`]). The work itself is in the library crates (`snow-api`, `snow-credentials`,
//! `snow-validate`, `capi-render`, `snow-images`, `snow-provision` (the one front for cluster
//! work, over `snow-lifecycle`), `snow-controller`): other tools depend on those, not on this
//! crate.
//!
//! `main.rs` only calls [`run`]. Each command takes its parsed arguments and writers, so it can be
//! tested without a process.

pub mod args;
pub mod commands;
pub mod env;
pub mod exit;
pub mod help;
pub mod logging;
pub mod output;
pub mod progress;
pub mod reference;
pub mod settings;

use clap::FromArgMatches;
use std::process::ExitCode;

/// Parses the process arguments, runs the command and returns the exit code.
pub fn run() -> ExitCode {
    // The clap definitions with the examples and headings of `help` added to `--help`.
    let mut command = help::command();
    let parsed = command
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|matches| args::Cli::from_arg_matches(&matches))
        .map_err(|err| err.format(&mut command));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with exit 0, usage errors to stderr with 2.
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Unlocked handles: each write takes the lock briefly, so log lines from other threads
    // (the controller's tracing) are never blocked behind a command holding stderr.
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    // The environment, read once: every resolver takes it from here.
    let environment = env::Environment::from_process();
    let style = output::Style::detect(environment.var_os(env::NO_COLOR), cli.quiet);
    commands::dispatch(
        cli,
        &environment,
        &mut output::Io {
            stdout: &mut stdout,
            stderr: &mut stderr,
            style,
        },
    )
}
