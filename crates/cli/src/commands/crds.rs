//! `snowctl crds`: the CRDs of the EKS Anywhere Snow kinds, for `kubectl apply -f -`.

use crate::{exit, output::Io};
use std::process::ExitCode;

/// Prints the four CRDs as multi-document YAML.
pub fn run(io: &mut Io<'_>) -> ExitCode {
    let mut out = String::new();
    for crd in snow_api::crds() {
        match serde_saphyr::to_string(&crd) {
            Ok(yaml) => {
                out.push_str("---\n");
                out.push_str(&yaml);
            }
            Err(err) => {
                io.err(&format!("error: could not serialise a CRD: {err}\n"));
                return ExitCode::from(exit::USAGE);
            }
        }
    }
    io.out(&out);
    ExitCode::SUCCESS
}
