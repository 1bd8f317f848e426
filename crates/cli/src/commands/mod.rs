//! One module per command.

pub mod credentials;

use crate::args::{Cli, Command};
use std::process::ExitCode;

/// Runs a parsed command line.
pub fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Credentials(cmd) => credentials::run(cmd, cli.verbose),
        _ => ExitCode::from(crate::exit::USAGE),
    }
}
