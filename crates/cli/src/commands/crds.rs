//! `snowctl crds`: the CRDs of the EKS Anywhere Snow kinds, for `kubectl apply -f -`.

use crate::{exit, output::Io};
use std::process::ExitCode;

/// Prints the four CRDs as multi-document YAML.
pub fn run(io: &mut Io<'_>) -> ExitCode {
    match snow_api::crds_yaml() {
        Ok(yaml) => {
            io.out(&yaml);
            ExitCode::SUCCESS
        }
        Err(err) => {
            io.err(&format!("error: {err}\n"));
            ExitCode::from(exit::USAGE)
        }
    }
}
