//! `snowctl credentials check|encode`.

use crate::args::CredentialsCommand;
use std::process::ExitCode;

/// Runs `snowctl credentials …`.
pub fn run(_cmd: CredentialsCommand, _verbose: u8) -> ExitCode {
    ExitCode::from(crate::exit::USAGE)
}
