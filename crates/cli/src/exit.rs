//! Exit codes, the same for every command, and the one way a command says why it stops.

use crate::output::{self, Io};
use snow_lifecycle::{LifecycleError, cni::helm::HelmError};
use snow_provision::ProvisionError;
use std::{fmt::Display, process::ExitCode};

/// Everything passed.
pub const OK: u8 = 0;
/// The input was read and has findings of severity error, or the work failed.
pub const FINDINGS: u8 = 1;
/// Usage error, or an input that could not be read at all.
pub const USAGE: u8 = 2;

/// What a command returns: its exit code either way, so that `?` can stop it early once the
/// reason has been printed.
pub type Outcome = Result<ExitCode, ExitCode>;

/// The exit code for a list of findings: 1 if any is an error, else 0.
pub fn for_findings(findings: &[snow_api::Finding]) -> ExitCode {
    ExitCode::from(if snow_api::has_errors(findings) {
        FINDINGS
    } else {
        OK
    })
}

/// Says `error: {what}` and gives exit 2 (usage, or input that cannot be used).
pub fn usage(io: &mut Io<'_>, what: impl Display) -> ExitCode {
    io.err(&format!("error: {what}\n"));
    ExitCode::from(USAGE)
}

/// Says `error: {what}` and gives exit 1 (the work failed).
pub fn failed(io: &mut Io<'_>, what: impl Display) -> ExitCode {
    io.err(&format!("error: {what}\n"));
    ExitCode::from(FINDINGS)
}

/// Says what went wrong in the lifecycle and what to do; exit 2 when the input (a kubeconfig,
/// the components, a backup directory) cannot be used, else 1.
pub fn lifecycle(io: &mut Io<'_>, err: &LifecycleError) -> ExitCode {
    if let Some((about, findings)) = err.findings() {
        io.err(&snow_api::finding_text::text(findings, about, None, &[]));
    }
    io.err(&format!("❌ error: {err}\n"));
    if let Some(hint) = err.hint() {
        io.err(&format!("  hint: {hint}\n"));
    }
    ExitCode::from(if lifecycle_input(err) {
        USAGE
    } else {
        FINDINGS
    })
}

/// Whether a lifecycle error is input that cannot be used (exit 2): a kubeconfig, the
/// components, a backup directory. The one place this is decided, for [`lifecycle`] and
/// [`is_input`].
fn lifecycle_input(err: &LifecycleError) -> bool {
    matches!(
        err,
        LifecycleError::Kubeconfig { .. }
            | LifecycleError::Components { .. }
            | LifecycleError::Backup { .. }
    )
}

/// Says why a workflow stopped, with its findings and what to do; exit 2 for input that cannot be
/// used, else 1.
pub fn provision(io: &mut Io<'_>, err: &ProvisionError) -> ExitCode {
    if let ProvisionError::Interrupted { step, source, left } = err {
        io.err(&format!("❌ {step} failed\n"));
        let code = provision(io, source);
        io.err(&format!("  {left}\n"));
        return code;
    }
    match err {
        ProvisionError::Lifecycle(e) => lifecycle(io, e),
        ProvisionError::Input(finding) => {
            io.err(&output::diagnostic(finding, "preflight", None));
            ExitCode::from(USAGE)
        }
        e @ ProvisionError::Preflight { findings } => {
            io.err(&snow_api::finding_text::text(
                findings,
                "preflight",
                None,
                &[],
            ));
            io.err(&format!("❌ {e}\n"));
            ExitCode::from(FINDINGS)
        }
        e @ ProvisionError::ClusterExists { cluster } => {
            let code = failed(io, e);
            io.err(&format!(
                "  hint: delete it there first (snowctl delete cluster {cluster})\n"
            ));
            code
        }
        e if is_input(e) => usage(io, e),
        e => failed(io, e),
    }
}

/// Whether a provisioning error (the step behind an interruption) is input that cannot be used
/// (exit 2), as opposed to findings or a failure (exit 1).
pub fn is_input(err: &ProvisionError) -> bool {
    match err.cause() {
        ProvisionError::Input(_)
        | ProvisionError::HelmManifest(_)
        | ProvisionError::Helm(HelmError::NotFound { .. }) => true,
        ProvisionError::Lifecycle(e) => lifecycle_input(e),
        _ => false,
    }
}

/// A runtime for one command (multi-threaded for the controller and image transfers).
pub fn runtime(io: &mut Io<'_>, threads: bool) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = if threads {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| failed(io, format_args!("cannot start the async runtime: {e}")))
}
