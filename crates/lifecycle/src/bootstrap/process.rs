//! Running a tool (kind) with a deadline and bounded captured output.
//!
//! std's process API in a blocking task (tokio's `process` feature would rebuild the whole
//! dependency graph for one caller): the child is polled until it exits or the deadline passes,
//! then killed; stdout is kept up to [`STDOUT_LIMIT`], stderr's last [`STDERR_TAIL`] bytes.

use crate::LifecycleError;
use std::{
    ffi::{OsStr, OsString},
    io::Read,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

/// The most stdout kept (kind's `get clusters` is a few lines).
pub(super) const STDOUT_LIMIT: usize = 1 << 20;
/// How much of the end of stderr an error quotes.
pub(super) const STDERR_TAIL: usize = 4096;
/// How often a running child is polled.
const POLL: Duration = Duration::from_millis(50);
/// How long the pipes may stay open after the child exited (a grandchild holding them).
const DRAIN: Duration = Duration::from_secs(2);

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

/// The command line as shown in messages.
pub(super) fn display(program: &Path, args: &[OsString]) -> String {
    let mut line = program.display().to_string();
    for arg in args {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// Reads all of `pipe`, keeping at most `limit` bytes: the first ones, or the last with `tail`.
fn drain(mut pipe: impl Read, limit: usize, tail: bool) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf) {
        if n == 0 {
            break;
        }
        if tail {
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > limit {
                kept.drain(..kept.len() - limit);
            }
        } else {
            let room = limit.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
    }
    kept
}

/// Runs `program args…` to completion within `timeout`; its stdout on success, else an error with
/// the exit status and the end of stderr.
pub(super) async fn run(
    program: &Path,
    args: Vec<OsString>,
    timeout: Duration,
) -> Result<String, LifecycleError> {
    let program = program.to_owned();
    let command = display(&program, &args);
    let task_command = command.clone();
    tokio::task::spawn_blocking(move || run_blocking(&program, &args, timeout, &task_command))
        .await
        .map_err(|e| LifecycleError::Command {
            command,
            status: format!("did not finish ({e})"),
            stderr: String::new(),
        })?
}

fn run_blocking(
    program: &Path,
    args: &[OsString],
    timeout: Duration,
    command: &str,
) -> Result<String, LifecycleError> {
    let failed = |status: String, stderr: String| LifecycleError::Command {
        command: command.to_owned(),
        status,
        stderr,
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("could not start: {e}"), String::new()))?;
    let (out_tx, out_rx) = mpsc::channel();
    let (err_tx, err_rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        thread::spawn(move || out_tx.send(drain(out, STDOUT_LIMIT, false)));
    }
    if let Some(err) = child.stderr.take() {
        thread::spawn(move || err_tx.send(drain(err, STDERR_TAIL, true)));
    }
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => thread::sleep(POLL),
            Err(e) => return Err(failed(format!("could not wait: {e}"), String::new())),
        }
    };
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim().to_owned();
    let stderr = text(err_rx.recv_timeout(DRAIN).unwrap_or_default());
    match status {
        None => Err(LifecycleError::CommandTimeout {
            command: command.to_owned(),
            after: format!("{}s", timeout.as_secs()),
            stderr,
        }),
        Some(status) if status.success() => {
            Ok(text(out_rx.recv_timeout(DRAIN).unwrap_or_default()))
        }
        Some(status) => Err(failed(status.to_string(), stderr)),
    }
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
        assert_eq!(status, "exit status: 3");
        assert!(
            stderr.ends_with("LAST") && stderr.len() <= STDERR_TAIL,
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
