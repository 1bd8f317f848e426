//! Exit codes, the same for every command.

use std::process::ExitCode;

/// Everything passed.
pub const OK: u8 = 0;
/// The input was read, and it has findings of severity error.
pub const FINDINGS: u8 = 1;
/// Usage error, or an input that could not be read at all.
pub const USAGE: u8 = 2;

/// The exit code for a list of findings: 1 if any is an error, else 0.
pub fn for_findings(findings: &[snow_api::Finding]) -> ExitCode {
    if snow_api::has_errors(findings) {
        ExitCode::from(FINDINGS)
    } else {
        ExitCode::from(OK)
    }
}
