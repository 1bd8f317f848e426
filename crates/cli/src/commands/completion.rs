//! `snowctl completion SHELL`.

use crate::{args::Cli, output::Io};
use clap::CommandFactory;
use std::process::ExitCode;

/// Prints the completion script for `shell`.
pub fn run(shell: clap_complete::Shell, io: &mut Io<'_>) -> ExitCode {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "snowctl", &mut buf);
    io.out(&String::from_utf8_lossy(&buf));
    ExitCode::SUCCESS
}
