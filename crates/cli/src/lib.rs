//! snowctl as a library: the commands of the `snowctl` binary, callable from other tools.
//!
//! `main.rs` only calls [`run`]. Each command is a function in [`commands`] that takes its parsed
//! arguments and writers, so it can be embedded and tested without a process.

pub mod args;
pub mod commands;
pub mod controller;
pub mod exit;
pub mod lifecycle;
pub mod output;

use clap::Parser;
use std::process::ExitCode;

/// Parses the process arguments, runs the command and returns the exit code.
pub fn run() -> ExitCode {
    let cli = match args::Cli::try_parse() {
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
    commands::dispatch(
        cli,
        &mut output::Io {
            stdout: &mut stdout,
            stderr: &mut stderr,
        },
    )
}
