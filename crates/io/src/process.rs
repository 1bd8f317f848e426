//! The one way the libraries run a program (`helm` for Cilium, `kind` for the bootstrap cluster,
//! `git` for a GitOps repository):
//! a time limit past which the child is killed, stdout kept up to a limit (one byte past it stops
//! the reading, and the program, whose pipe closes), the last [`STDERR_TAIL`] bytes of stderr,
//! stdin fed from bytes or written in place for a secret, and secrets hidden from what an error
//! shows (the command line and stderr, through the caller's `redact`, and the user information
//! of any URL). [`Run::run_isolated`] gives the program no environment of the caller's but
//! `PATH` and `HOME` (a `GIT_SSL_CAINFO` or `GIT_DIR` of the machine's changes nothing).
//!
//! std's process API, blocking (tokio's `process` feature would rebuild the whole dependency
//! graph for two callers): async callers run it on tokio's blocking pool.

use std::{
    ffi::OsString,
    io::{self, Read, Write},
    path::Path,
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

/// How much of the end of stderr a failure quotes.
pub const STDERR_TAIL: usize = 4096;
/// How often a running child is polled.
const POLL: Duration = Duration::from_millis(20);
/// How long the pipes may stay open after the child exited or was killed (a grandchild may hold
/// them): past it, what was read so far is used.
const DRAIN: Duration = Duration::from_secs(2);

/// What the program reads on stdin.
pub enum Stdin<'a> {
    /// Nothing (`/dev/null`).
    Null,
    /// These bytes, written from a thread (the program may print before it has read them all).
    Bytes(Vec<u8>),
    /// A secret, written here by the caller's function so it is never copied.
    Secret(&'a dyn Fn(&mut ChildStdin) -> io::Result<()>),
}

/// One run of a program.
pub struct Run<'a> {
    /// The program: a path, or a name looked up on `PATH` by the system.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [OsString],
    /// Variables added to the inherited environment.
    pub env: &'a [(String, String)],
    /// Its input.
    pub stdin: Stdin<'a>,
    /// Past it the program is killed.
    pub timeout: Duration,
    /// The most bytes of stdout accepted.
    pub max_stdout: usize,
    /// Hides the caller's secrets in text shown (the command line, stderr).
    pub redact: &'a dyn Fn(&str) -> String,
}

/// Why a run failed: what happened, the command line and the end of stderr, secrets hidden.
#[derive(Debug)]
pub struct Failure {
    /// What happened.
    pub kind: FailureKind,
    /// The command line as shown (redacted).
    pub command: String,
    /// The end of stderr, trimmed (redacted; empty when there was none).
    pub stderr: String,
}

/// What happened to a run that failed.
#[derive(Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The program is not there.
    NotFound,
    /// It could not be started (or waited for): the system's reason.
    Spawn(String),
    /// It exited with a failure: `exit status 1`, `killed by signal 9`.
    Status(String),
    /// It did not finish within the time limit and was killed.
    TimedOut,
    /// It printed more than the limit on stdout and was stopped.
    TooLarge,
}

impl Run<'_> {
    /// Runs the program to completion within the time limit; its stdout on success.
    pub fn run(&self) -> Result<Vec<u8>, Failure> {
        self.run_in(false)
    }

    /// As [`Run::run`], the program seeing only [`ISOLATED_KEEP`] of this process's environment
    /// and the variables of `env`: nothing of the caller's environment (`GIT_DIR`,
    /// `GIT_SSH_COMMAND`, `SSH_AUTH_SOCK`, …) changes what it does.
    pub fn run_isolated(&self) -> Result<Vec<u8>, Failure> {
        self.run_in(true)
    }

    fn run_in(&self, isolated: bool) -> Result<Vec<u8>, Failure> {
        let command = self.shown(&display(self.program, self.args));
        let fail = |kind: FailureKind, stderr: &[u8]| Failure {
            kind,
            command: command.clone(),
            stderr: self.shown(String::from_utf8_lossy(stderr).trim()),
        };
        let mut command = Command::new(self.program);
        if isolated {
            command.env_clear();
            for name in ISOLATED_KEEP {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
        }
        let mut child = command
            .args(self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(match self.stdin {
                Stdin::Null => Stdio::null(),
                _ => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => fail(FailureKind::NotFound, b""),
                _ => fail(FailureKind::Spawn(e.to_string()), b""),
            })?;
        let (out_tx, out_rx) = mpsc::channel();
        let (err_tx, err_rx) = mpsc::channel();
        if let Some(pipe) = child.stdout.take() {
            // One byte past the limit tells "too large"; then the pipe closes and the program
            // stops on its next write.
            let limit = self.max_stdout.saturating_add(1) as u64;
            thread::spawn(move || {
                let mut kept = Vec::new();
                let _ = pipe.take(limit).read_to_end(&mut kept);
                out_tx.send(kept)
            });
        }
        if let Some(pipe) = child.stderr.take() {
            thread::spawn(move || err_tx.send(tail(pipe, STDERR_TAIL)));
        }
        // A write error means the program exited without reading everything; its status says why.
        let _ = self.feed(&mut child);
        let status = wait(&mut child, self.timeout);
        let stderr = err_rx.recv_timeout(DRAIN).unwrap_or_default();
        let Some(status) = status else {
            return Err(fail(FailureKind::TimedOut, &stderr));
        };
        let stdout = out_rx.recv_timeout(DRAIN).unwrap_or_default();
        if stdout.len() > self.max_stdout {
            return Err(fail(FailureKind::TooLarge, &stderr));
        }
        if !status.success() {
            return Err(fail(FailureKind::Status(describe(status)), &stderr));
        }
        Ok(stdout)
    }

    /// `text` with the caller's secrets and any URL's user information hidden.
    fn shown(&self, text: &str) -> String {
        snow_api::redact::redact_userinfo(&(self.redact)(text)).into_owned()
    }

    /// Writes the input to stdin and closes it.
    fn feed(&self, child: &mut Child) -> io::Result<()> {
        let Some(mut stdin) = child.stdin.take() else {
            return Ok(());
        };
        match &self.stdin {
            Stdin::Null => Ok(()),
            Stdin::Secret(write) => write(&mut stdin),
            Stdin::Bytes(bytes) => {
                let bytes = bytes.clone();
                thread::spawn(move || {
                    let _ = stdin.write_all(&bytes);
                });
                Ok(())
            }
        }
    }
}

/// What [`Run::run_isolated`] keeps of the environment: where programs are found and the home
/// directory (ssh and git look it up; their configuration there is switched off by the caller).
pub const ISOLATED_KEEP: &[&str] = &["PATH", "HOME"];

/// No secrets to hide beyond URLs' user information.
pub fn no_secrets(text: &str) -> String {
    text.to_owned()
}

/// The command line as shown in messages.
pub fn display(program: &Path, args: &[OsString]) -> String {
    let mut line = program.display().to_string();
    for arg in args {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// Waits for the child until `timeout`; kills it past that (`None`).
fn wait(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(POLL),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The last `limit` bytes of a stream, read to its end.
fn tail(mut pipe: impl Read, limit: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut chunk) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > limit {
            kept.drain(..kept.len() - limit);
        }
    }
    kept
}

/// `exit status 1` or `killed by signal 9`.
fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(signal) => format!("killed by signal {signal}"),
        None => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration, max_stdout: usize) -> Result<Vec<u8>, Failure> {
        let args: Vec<OsString> = vec!["-c".into(), script.into()];
        Run {
            program: Path::new("/bin/sh"),
            args: &args,
            env: &[],
            stdin: Stdin::Null,
            timeout,
            max_stdout,
            redact: &no_secrets,
        }
        .run()
    }

    #[test]
    fn stdout_is_returned_and_stderr_is_not_mixed_in() {
        let out = sh("echo hello; echo noise >&2", Duration::from_secs(10), 100).unwrap();
        assert_eq!(out, b"hello\n");
    }

    #[test]
    fn a_program_that_prints_too_much_is_stopped() {
        // `yes` prints forever: only the limit's reading stops it (the pipe closes).
        let err = sh("yes", Duration::from_secs(60), 1 << 16).unwrap_err();
        assert_eq!(err.kind, FailureKind::TooLarge, "{err:?}");
    }

    #[test]
    fn a_program_past_its_timeout_is_killed() {
        let err = sh(
            "echo started >&2; exec sleep 30",
            Duration::from_millis(300),
            100,
        )
        .unwrap_err();
        assert_eq!(err.kind, FailureKind::TimedOut, "{err:?}");
        assert_eq!(err.stderr, "started");
    }

    #[test]
    fn a_failure_shows_the_end_of_stderr_with_secrets_hidden() {
        let secret = "hunter2-secret";
        let script = format!(
            "head -c 100000 /dev/zero | tr '\\0' x >&2; echo >&2; echo \"login failed for {secret} at https://admin:pw@10.0.0.1/\" >&2; exit 3"
        );
        let args: Vec<OsString> = vec!["-c".into(), script.into()];
        let redact = |text: &str| text.replace(secret, "<redacted>");
        let err = Run {
            program: Path::new("/bin/sh"),
            args: &args,
            env: &[],
            stdin: Stdin::Null,
            timeout: Duration::from_secs(10),
            max_stdout: 100,
            redact: &redact,
        }
        .run()
        .unwrap_err();
        assert_eq!(err.kind, FailureKind::Status("exit status 3".into()));
        assert!(
            err.stderr
                .ends_with("login failed for <redacted> at https://<redacted>@10.0.0.1/"),
            "{}",
            err.stderr
        );
        assert!(err.stderr.len() <= STDERR_TAIL, "{}", err.stderr.len());
        // The command line (which holds the secret in its script) is redacted too.
        assert!(
            !err.command.contains(secret) && !format!("{err:?}").contains(secret),
            "{err:?}"
        );
    }

    #[test]
    fn stdin_is_fed_bytes_or_a_secret_written_in_place() {
        let args: Vec<OsString> = vec!["-c".into(), "cat".into()];
        let run = |stdin| {
            Run {
                program: Path::new("/bin/sh"),
                args: &args,
                env: &[],
                stdin,
                timeout: Duration::from_secs(10),
                max_stdout: 100,
                redact: &no_secrets,
            }
            .run()
            .unwrap()
        };
        assert_eq!(run(Stdin::Bytes(b"values".to_vec())), b"values");
        let write = |w: &mut ChildStdin| w.write_all(b"password");
        assert_eq!(run(Stdin::Secret(&write)), b"password");
    }

    #[test]
    fn an_isolated_run_sees_path_home_and_its_own_variables_only() {
        let args: Vec<OsString> = vec!["-c".into(), "env | cut -d= -f1 | sort".into()];
        let env = [("SNOWCTL_GIVEN".to_owned(), "1".to_owned())];
        let out = Run {
            program: Path::new("/bin/sh"),
            args: &args,
            env: &env,
            stdin: Stdin::Null,
            timeout: Duration::from_secs(10),
            max_stdout: 1 << 16,
            redact: &no_secrets,
        }
        .run_isolated()
        .unwrap();
        let names: Vec<String> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            // The shell sets these itself.
            .filter(|n| !["PWD", "SHLVL", "_", "OLDPWD"].contains(&n.as_str()))
            .collect();
        let allowed = ["HOME", "PATH", "SNOWCTL_GIVEN"];
        assert!(
            names.iter().all(|n| allowed.contains(&n.as_str())),
            "{names:?}"
        );
        assert!(names.contains(&"SNOWCTL_GIVEN".to_owned()), "{names:?}");
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let err = Run {
            program: Path::new("/nonexistent/snowctl-no-such-tool"),
            args: &[],
            env: &[],
            stdin: Stdin::Null,
            timeout: Duration::from_secs(10),
            max_stdout: 100,
            redact: &no_secrets,
        }
        .run()
        .unwrap_err();
        assert_eq!(err.kind, FailureKind::NotFound, "{err:?}");
    }
}
