//! Running a tool (kind) through the crate's one runner ([`crate::process`]: a deadline, bounded
//! output, killed past the deadline) on tokio's blocking pool, and finding it on the search path.

use crate::LifecycleError;
use crate::process::{Failure, FailureKind, Run, Stdin, display, no_secrets};
use std::{
    ffi::{OsStr, OsString},
    path::{Path, PathBuf},
    time::Duration,
};

/// The most stdout accepted (kind's `get clusters` is a few lines).
pub(super) const STDOUT_LIMIT: usize = 1 << 20;

/// `program` itself when it names a file (it has a `/`), else the first executable file of that
/// name in `search` (a `PATH`-style list).
pub fn find_executable(program: &Path, search: Option<&OsStr>) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return is_executable(program).then(|| program.to_owned());
    }
    std::env::split_paths(search?)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `program args…` to completion within `timeout` through [`crate::process`]; its stdout
/// (at most [`STDOUT_LIMIT`], trimmed) on success, else an error with the exit status and the end
/// of stderr.
pub(super) async fn run(
    program: &Path,
    args: Vec<OsString>,
    timeout: Duration,
) -> Result<String, LifecycleError> {
    let program = program.to_owned();
    let command = display(&program, &args);
    let ran = tokio::task::spawn_blocking(move || {
        Run {
            program: &program,
            args: &args,
            env: &[],
            stdin: Stdin::Null,
            timeout,
            max_stdout: STDOUT_LIMIT,
            redact: &no_secrets,
        }
        .run()
    })
    .await
    .map_err(|e| LifecycleError::Command {
        command,
        status: format!("did not finish ({e})"),
        stderr: String::new(),
    })?;
    let Failure {
        kind,
        command,
        stderr,
    } = match ran {
        Ok(out) => return Ok(String::from_utf8_lossy(&out).trim().to_owned()),
        Err(failure) => failure,
    };
    let status = match kind {
        FailureKind::TimedOut => {
            return Err(LifecycleError::CommandTimeout {
                command,
                after: format!("{}s", timeout.as_secs()),
                stderr,
            });
        }
        FailureKind::NotFound => "could not start: not found".to_owned(),
        FailureKind::Spawn(reason) => format!("could not start: {reason}"),
        FailureKind::Status(status) => status,
        FailureKind::TooLarge => format!("printed more than {STDOUT_LIMIT} bytes; it was stopped"),
    };
    Err(LifecycleError::Command {
        command,
        status,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<OsString> {
        vec!["-c".into(), script.into()]
    }

    #[tokio::test]
    async fn output_status_and_stderr_tail() {
        let sh_path = Path::new("/bin/sh");
        let out = run(
            sh_path,
            sh("echo hello; echo noise >&2"),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!(out, "hello");

        let script = "head -c 100000 /dev/zero | tr '\\0' x >&2; echo LAST >&2; exit 3";
        let err = run(sh_path, sh(script), Duration::from_secs(10))
            .await
            .unwrap_err();
        let LifecycleError::Command { status, stderr, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(status, "exit status 3");
        assert!(
            stderr.ends_with("LAST") && stderr.len() <= crate::process::STDERR_TAIL,
            "{}",
            stderr.len()
        );
    }

    #[tokio::test]
    async fn a_command_past_its_deadline_is_killed() {
        let err = run(
            Path::new("/bin/sh"),
            sh("echo started >&2; exec sleep 30"),
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&err, LifecycleError::CommandTimeout { stderr, .. } if stderr == "started"),
            "{err:?}"
        );
    }

    #[test]
    fn executables_are_found_on_the_search_path_only_when_executable() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let search = std::env::join_paths([dir.path()]).unwrap();
        assert_eq!(find_executable(Path::new("tool"), Some(&search)), None);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            find_executable(Path::new("tool"), Some(&search)),
            Some(tool.clone())
        );
        assert_eq!(find_executable(&tool, None), Some(tool));
        assert_eq!(find_executable(Path::new("absent"), Some(&search)), None);
    }
}
