//! A branch of a remote repository checked out shallow into a private temporary directory:
//! files written under plain paths, committed when they changed, pushed with one retry on a
//! moved branch.

use crate::auth::Prepared;
use crate::{Auth, GitError, Remote};
use snow_io::process::{Failure, FailureKind, Run, Stdin};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The author and committer of the commits made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The name.
    pub name: String,
    /// The email address.
    pub email: String,
}

/// Bounds of a repository's use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The time each git command may take (a clone, a fetch, a push); past it git is killed.
    pub timeout: Duration,
    /// The most bytes a checkout may hold, and the most bytes of objects git may have fetched
    /// for it (both checked before the files are checked out).
    pub max_checkout_bytes: u64,
}

impl Default for Limits {
    /// 60 s per command, 64 MiB.
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(60),
            max_checkout_bytes: 64 << 20,
        }
    }
}

/// One change to the files of the checkout, at a plain relative path (`/`-separated names; no
/// `..`, `.`, empty name or `.git`).
#[derive(Clone, PartialEq, Eq)]
pub enum Change {
    /// Writes the file (its directories made as needed).
    Write {
        /// The path.
        path: String,
        /// The file's bytes.
        bytes: Vec<u8>,
    },
    /// Removes the file or directory (nothing when it is not there).
    Remove {
        /// The path.
        path: String,
    },
}

impl Change {
    fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Remove { path } => path,
        }
    }
}

impl fmt::Debug for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Write { path, bytes } => write!(f, "Write({path:?}, {} bytes)", bytes.len()),
            Change::Remove { path } => write!(f, "Remove({path:?})"),
        }
    }
}

/// A commit id (hexadecimal object name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommitId(String);

impl CommitId {
    /// The hexadecimal name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A branch of a remote repository checked out into a private temporary directory (removed,
/// with the credentials' files, on drop).
pub struct Repository {
    remote: Remote,
    branch: String,
    limits: Limits,
    prepared: Prepared,
    env: Vec<(String, String)>,
    work: PathBuf,
    /// The changes written since the last push, applied again on a moved branch.
    changes: Vec<Change>,
    /// The message of the commit not pushed yet.
    message: Option<String>,
    // Last: removed after everything that names paths in it.
    _dir: tempfile::TempDir,
}

impl fmt::Debug for Repository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Repository")
            .field("remote", &self.remote)
            .field("branch", &self.branch)
            .field("work", &self.work)
            .field("changes", &self.changes)
            .finish_non_exhaustive()
    }
}

/// git's configuration for every command, given through the environment.
const CONFIG: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.autocrlf", "false"),
    ("core.symlinks", "true"),
    ("core.fsmonitor", "false"),
    ("commit.gpgSign", "false"),
    ("gc.auto", "0"),
    ("http.followRedirects", "false"),
];

impl Repository {
    /// Checks out `branch` of `remote`: a shallow, single-branch clone (`--depth 1
    /// --single-branch --branch`), refused before its files are written when it holds more than
    /// [`Limits::max_checkout_bytes`]. A repository with no branch at all is empty: the first
    /// commit creates `branch`. One with branches but not this one is
    /// [`GitError::BranchNotFound`].
    pub fn clone(
        remote: &Remote,
        auth: &Auth,
        branch: &str,
        identity: &Identity,
        limits: Limits,
    ) -> Result<Repository, GitError> {
        check_identity(identity)?;
        let dir = tempfile::Builder::new()
            .prefix("snowctl-git-")
            .tempdir()
            .map_err(|source| GitError::Io {
                what: "creating a private temporary directory".into(),
                source,
            })?;
        let auth_dir =
            snow_io::files::make_dirs(dir.path(), Path::new("auth")).map_err(|source| {
                GitError::Io {
                    what: "creating the credentials' directory".into(),
                    source,
                }
            })?;
        let prepared = auth.prepare(remote, &auth_dir, limits.timeout)?;
        let mut env: Vec<(String, String)> = [
            ("LC_ALL", "C"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_ALLOW_PROTOCOL", "ssh:https"),
            ("GIT_LITERAL_PATHSPECS", "1"),
            ("GIT_AUTHOR_NAME", &identity.name),
            ("GIT_AUTHOR_EMAIL", &identity.email),
            ("GIT_COMMITTER_NAME", &identity.name),
            ("GIT_COMMITTER_EMAIL", &identity.email),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        env.extend(prepared.env.iter().cloned());
        let config: Vec<(String, String)> = CONFIG
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .chain(prepared.config.iter().cloned())
            .collect();
        env.push(("GIT_CONFIG_COUNT".into(), config.len().to_string()));
        for (i, (key, value)) in config.into_iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{i}"), key));
            env.push((format!("GIT_CONFIG_VALUE_{i}"), value));
        }
        let work = dir.path().join("work");
        let repo = Repository {
            remote: remote.clone(),
            branch: branch.to_owned(),
            limits,
            prepared,
            env,
            work,
            changes: Vec::new(),
            message: None,
            _dir: dir,
        };
        repo.check_branch()?;
        repo.checkout()?;
        Ok(repo)
    }

    /// The remote.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// The branch.
    pub fn branch(&self) -> &str {
        &self.branch
    }

    /// The checkout's directory (read it; write through [`Repository::write`]).
    pub fn path(&self) -> &Path {
        &self.work
    }

    /// The commit checked out, `None` on an empty repository's unborn branch.
    pub fn head(&self) -> Result<Option<CommitId>, GitError> {
        match self.git_raw(
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            1 << 10,
        ) {
            Ok(out) => Ok(Some(CommitId(out.trim().to_owned()))),
            Err(f) if matches!(f.kind, FailureKind::Status(_)) => Ok(None),
            Err(f) => Err(self.classify("rev-parse", f)),
        }
    }

    /// The file at `path` in the checkout, at most `limit` bytes; `None` when nothing is there.
    /// A link on the way is [`GitError::LinkInPath`].
    pub fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, GitError> {
        let parts = plain_path(path)?;
        self.check_links(path, &parts, false)?;
        match snow_io::files::existing(&self.work.join(path), limit) {
            Ok(snow_io::files::Existing::Absent) => Ok(None),
            Ok(snow_io::files::Existing::File(bytes)) => Ok(Some(bytes)),
            Ok(snow_io::files::Existing::Other) => Err(GitError::InvalidInput {
                what: "path",
                value: path.to_owned(),
                problem: format!("is not a regular file of at most {limit} bytes"),
            }),
            Err(source) => Err(GitError::Io {
                what: format!("reading {path} in the checkout"),
                source,
            }),
        }
    }

    /// Applies `changes` to the checkout's files, in order, touching no other file. Every path
    /// is checked first: none may pass through a symbolic link of the checkout
    /// ([`GitError::LinkInPath`]), or through a file. Nothing is written when one is refused.
    pub fn write(&mut self, changes: &[Change]) -> Result<(), GitError> {
        self.apply(changes)?;
        self.changes.extend(changes.iter().cloned());
        Ok(())
    }

    fn apply(&self, changes: &[Change]) -> Result<(), GitError> {
        for change in changes {
            let parts = plain_path(change.path())?;
            self.check_links(
                change.path(),
                &parts,
                matches!(change, Change::Write { .. }),
            )?;
        }
        for change in changes {
            let target = self.work.join(change.path());
            let done = match change {
                Change::Write { path, bytes } => {
                    snow_io::files::write_under(&self.work, Path::new(path), |f| {
                        std::io::Write::write_all(f, bytes)
                    })
                    .map(|_| ())
                }
                Change::Remove { .. } => match std::fs::symlink_metadata(&target) {
                    Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&target),
                    Ok(_) => std::fs::remove_file(&target),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e),
                },
            };
            done.map_err(|source| GitError::Io {
                what: format!("changing {} in the checkout", change.path()),
                source,
            })?;
        }
        Ok(())
    }

    /// Commits the paths written since the last push with `message`, only if that changes the
    /// tree: `None` when it does not (so a second run with the same content makes no commit).
    pub fn commit(&mut self, message: &str) -> Result<Option<CommitId>, GitError> {
        let id = self.commit_changes(message)?;
        if id.is_some() {
            self.message = Some(message.to_owned());
        }
        Ok(id)
    }

    fn commit_changes(&self, message: &str) -> Result<Option<CommitId>, GitError> {
        let paths: BTreeSet<&str> = self.changes.iter().map(Change::path).collect();
        if paths.is_empty() {
            return Ok(None);
        }
        let mut args = vec!["ls-files", "-z", "--"];
        args.extend(paths.iter().copied());
        let tracked = self.git("ls-files", &args, 64 << 20)?;
        let tracked: Vec<&str> = tracked.split('\0').filter(|s| !s.is_empty()).collect();
        let staged: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| {
                std::fs::symlink_metadata(self.work.join(p)).is_ok()
                    || tracked
                        .iter()
                        .any(|t| t == p || t.strip_prefix(p).is_some_and(|r| r.starts_with('/')))
            })
            .collect();
        if staged.is_empty() {
            return Ok(None);
        }
        // --force: a path the repository's .gitignore names is still ours to commit.
        let mut args = vec!["add", "--all", "--force", "--"];
        args.extend(staged.iter().copied());
        self.git("add", &args, 1 << 20)?;
        let changed = self.git("diff", &["diff", "--cached", "--name-only", "-z"], 64 << 20)?;
        if changed.is_empty() {
            return Ok(None);
        }
        self.git(
            "commit",
            &[
                "commit",
                "--quiet",
                "--no-verify",
                "--cleanup=strip",
                "-m",
                message,
            ],
            1 << 20,
        )?;
        self.head()
    }

    /// Pushes the commit made by [`Repository::commit`] to the branch and returns it; `None` when
    /// there is nothing to push (no commit, or the branch already holds the changes). When the
    /// branch moved since it was fetched (someone else pushed), its new head is fetched, the same
    /// changes are applied on it once and committed with the same message, and that is pushed;
    /// refused again, it is [`GitError::PushRejected`].
    pub fn push(&mut self) -> Result<Option<CommitId>, GitError> {
        let Some(message) = self.message.clone() else {
            return Ok(None);
        };
        let refspec = format!("HEAD:refs/heads/{}", self.branch);
        for attempt in 0..2 {
            if attempt > 0 {
                self.refresh()?;
                let changes = std::mem::take(&mut self.changes);
                let applied = self.apply(&changes);
                self.changes = changes;
                applied?;
                if self.commit_changes(&message)?.is_none() {
                    self.settle();
                    return Ok(None);
                }
            }
            match self.git_raw(&["push", "--quiet", "origin", &refspec], 1 << 20) {
                Ok(_) => {
                    let head = self.head()?;
                    self.settle();
                    return Ok(head);
                }
                Err(f) if moved(&f) => {}
                Err(f) => return Err(self.classify("push", f)),
            }
        }
        Err(GitError::PushRejected {
            remote: self.remote.to_string(),
            branch: self.branch.clone(),
        })
    }

    /// Nothing left to push.
    fn settle(&mut self) {
        self.changes.clear();
        self.message = None;
    }

    /// Fetches the branch's head and checks it out, untracked files removed.
    fn refresh(&self) -> Result<(), GitError> {
        let tracking = format!("refs/remotes/origin/{}", self.branch);
        let refspec = format!("+refs/heads/{}:{tracking}", self.branch);
        self.git(
            "fetch",
            &["fetch", "--quiet", "--depth", "1", "origin", &refspec],
            1 << 20,
        )?;
        self.check_size(&tracking)?;
        self.git("reset", &["reset", "--quiet", "--hard", &tracking], 1 << 20)?;
        self.git("clean", &["clean", "-ffdxq"], 1 << 20)?;
        Ok(())
    }

    /// The branch name is one git accepts, and the remote has it (or no branch at all).
    fn check_branch(&self) -> Result<(), GitError> {
        let invalid = |problem: &str| GitError::InvalidInput {
            what: "branch",
            value: self.branch.clone(),
            problem: problem.to_owned(),
        };
        if self.branch.is_empty() || self.branch.starts_with('-') {
            return Err(invalid("is empty or starts with '-'"));
        }
        let full = format!("refs/heads/{}", self.branch);
        self.run(None, &["check-ref-format", &full], 1 << 10)
            .map_err(|_| invalid("is not a valid git branch name (git check-ref-format)"))?;
        Ok(())
    }

    /// Clones the branch, or starts an empty repository's first commit.
    fn checkout(&self) -> Result<(), GitError> {
        let url = self.remote.url();
        let heads = self.run(None, &["ls-remote", "--heads", url], 16 << 20);
        let heads = heads.map_err(|f| self.classify("ls-remote", f))?;
        let existing: Vec<String> = heads
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter_map(|(_, r)| r.strip_prefix("refs/heads/"))
            .map(str::to_owned)
            .collect();
        let work = self.work.display().to_string();
        if existing.is_empty() {
            self.run(
                None,
                &["init", "--quiet", "--initial-branch", &self.branch, &work],
                1 << 10,
            )
            .map_err(|f| self.classify("init", f))?;
            self.git("remote", &["remote", "add", "origin", url], 1 << 10)?;
            return Ok(());
        }
        if !existing.contains(&self.branch) {
            return Err(self.branch_not_found(existing));
        }
        let cloned = self.run(
            None,
            &[
                "clone",
                "--quiet",
                "--depth",
                "1",
                "--single-branch",
                "--branch",
                &self.branch,
                "--no-checkout",
                url,
                &work,
            ],
            1 << 20,
        );
        match cloned {
            Ok(_) => {}
            // Deleted between the two calls.
            Err(f) if f.stderr.contains("not found in upstream") => {
                return Err(self.branch_not_found(existing));
            }
            Err(f) => return Err(self.classify("clone", f)),
        }
        self.check_size("HEAD")?;
        self.git("reset", &["reset", "--quiet", "--hard", "HEAD"], 1 << 20)?;
        Ok(())
    }

    fn branch_not_found(&self, existing: Vec<String>) -> GitError {
        GitError::BranchNotFound {
            remote: self.remote.to_string(),
            branch: self.branch.clone(),
            existing,
        }
    }

    /// Refuses `rev` when the objects fetched or its tree are over the limit.
    fn check_size(&self, rev: &str) -> Result<(), GitError> {
        let limit = self.limits.max_checkout_bytes;
        let too_large = |what, size| GitError::TooLarge {
            remote: self.remote.to_string(),
            branch: self.branch.clone(),
            what,
            size,
            limit,
        };
        let fetched = dir_size(&self.work.join(".git"), limit).map_err(|source| GitError::Io {
            what: "measuring the fetched objects".into(),
            source,
        })?;
        if fetched > limit {
            return Err(too_large("fetched objects", fetched));
        }
        // One line per file: "MODE TYPE OBJECT SIZE\tPATH"; a submodule's size is "-".
        let listing = self.git("ls-tree", &["ls-tree", "-r", "-l", "-z", rev], 256 << 20)?;
        let mut total: u64 = 0;
        for entry in listing.split('\0') {
            let head = entry.split_once('\t').map_or(entry, |(h, _)| h);
            if let Some(size) = head
                .split_whitespace()
                .nth(3)
                .and_then(|s| s.parse::<u64>().ok())
            {
                total = total.saturating_add(size);
                if total > limit {
                    return Err(too_large("checkout", total));
                }
            }
        }
        Ok(())
    }

    /// Every existing component of `path` is a directory (not a link, not a file) but the last,
    /// which is not a link (and, for a write, not a directory).
    fn check_links(&self, path: &str, parts: &[&str], write: bool) -> Result<(), GitError> {
        let mut at = self.work.clone();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let meta = match std::fs::symlink_metadata(&at) {
                Ok(meta) => meta,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(source) => {
                    return Err(GitError::Io {
                        what: format!("looking at {path} in the checkout"),
                        source,
                    });
                }
            };
            let shown = parts[..=i].join("/");
            if meta.file_type().is_symlink() {
                return Err(GitError::LinkInPath {
                    remote: self.remote.to_string(),
                    path: path.to_owned(),
                    link: shown,
                });
            }
            let last = i + 1 == parts.len();
            if !last && !meta.is_dir() {
                return Err(GitError::InvalidInput {
                    what: "path",
                    value: path.to_owned(),
                    problem: format!("{shown} is a file in the repository, not a directory"),
                });
            }
            if last && write && meta.is_dir() {
                return Err(GitError::InvalidInput {
                    what: "path",
                    value: path.to_owned(),
                    problem: "is a directory in the repository".into(),
                });
            }
        }
        Ok(())
    }

    /// `git -C WORK args`, its stdout as text.
    fn git(&self, operation: &'static str, args: &[&str], max: usize) -> Result<String, GitError> {
        self.git_raw(args, max)
            .map_err(|f| self.classify(operation, f))
    }

    fn git_raw(&self, args: &[&str], max: usize) -> Result<String, Failure> {
        self.run(Some(&self.work), args, max)
    }

    /// `git [-C dir] args`, isolated, within the time limit.
    fn run(&self, dir: Option<&Path>, args: &[&str], max: usize) -> Result<String, Failure> {
        let mut all: Vec<OsString> = Vec::with_capacity(args.len() + 2);
        if let Some(dir) = dir {
            all.push("-C".into());
            all.push(dir.into());
        }
        all.extend(args.iter().map(OsString::from));
        let redact = |text: &str| self.prepared.redact(text);
        Run {
            program: Path::new("git"),
            args: &all,
            env: &self.env,
            stdin: Stdin::Null,
            timeout: self.limits.timeout,
            max_stdout: max,
            redact: &redact,
        }
        .run_isolated()
        .map(|out| String::from_utf8_lossy(&out).into_owned())
    }

    /// The typed error for a failed git command.
    fn classify(&self, operation: &'static str, f: Failure) -> GitError {
        let remote = self.remote.to_string();
        match f.kind {
            FailureKind::NotFound => {
                return GitError::ProgramMissing {
                    program: "git",
                    package: "git",
                };
            }
            FailureKind::TimedOut => {
                return GitError::TimedOut {
                    operation,
                    remote,
                    seconds: self.limits.timeout.as_secs(),
                };
            }
            _ => {}
        }
        let stderr = &f.stderr;
        let has = |needles: &[&str]| needles.iter().any(|n| stderr.contains(n));
        if has(&[
            "Host key verification failed",
            "REMOTE HOST IDENTIFICATION HAS CHANGED",
        ]) {
            return GitError::HostKeyRejected {
                remote,
                detail: summary(stderr),
            };
        }
        if has(&[
            "Permission denied (",
            "Authentication failed",
            "could not read Username",
            "could not read Password",
            "returned error: 401",
            "returned error: 403",
        ]) {
            return GitError::AuthenticationFailed {
                remote,
                detail: summary(stderr),
            };
        }
        let detail = match (&f.kind, stderr.is_empty()) {
            (FailureKind::Status(s), true) => format!("{}: {s}", f.command),
            (FailureKind::Spawn(s), _) => format!("{}: {s}", f.command),
            (FailureKind::TooLarge, _) => format!("{}: printed more than expected", f.command),
            _ => format!("{}: {}", f.command, summary(stderr)),
        };
        GitError::Git {
            operation,
            remote,
            detail,
        }
    }
}

/// Whether a push was refused because the branch moved (not a fast-forward).
fn moved(f: &Failure) -> bool {
    f.stderr.contains("[rejected]")
        && (f.stderr.contains("fetch first") || f.stderr.contains("non-fast-forward"))
}

/// The last lines of git's stderr that say something (ssh's banners of `@` left out).
fn summary(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('@') && !l.starts_with("hint:"))
        .collect();
    lines[lines.len().saturating_sub(4)..].join("; ")
}

/// The bytes of the files under `dir` (links not followed), counting stopped past `limit`.
fn dir_size(dir: &Path, limit: u64) -> std::io::Result<u64> {
    let mut total: u64 = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total = total.saturating_add(meta.len());
                if total > limit {
                    return Ok(total);
                }
            }
        }
    }
    Ok(total)
}

/// The names of a plain relative path.
fn plain_path(path: &str) -> Result<Vec<&str>, GitError> {
    let invalid = |problem: &str| GitError::InvalidInput {
        what: "path",
        value: path.to_owned(),
        problem: problem.to_owned(),
    };
    if path.is_empty() || path.starts_with('/') {
        return Err(invalid(
            "must be a relative path in the repository (names separated by '/')",
        ));
    }
    if path.chars().any(char::is_control) {
        return Err(invalid("holds a control character"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts {
        if part.is_empty() || *part == "." || *part == ".." {
            return Err(invalid("holds an empty name, '.' or '..'"));
        }
        if part.eq_ignore_ascii_case(".git") {
            return Err(invalid("names .git, git's own directory"));
        }
    }
    Ok(parts)
}

fn check_identity(identity: &Identity) -> Result<(), GitError> {
    for (what, value) in [
        ("author name", &identity.name),
        ("author email", &identity.email),
    ] {
        if value.trim().is_empty()
            || value
                .chars()
                .any(|c| c.is_control() || c == '<' || c == '>')
        {
            return Err(GitError::InvalidInput {
                what,
                value: value.clone(),
                problem: "must be non-empty, without '<', '>' or control characters".into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_be_plain_and_outside_dot_git() {
        assert_eq!(plain_path("clusters/mgmt/a.yaml").unwrap().len(), 3);
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "a//b",
            "./a",
            ".git/hooks/x",
            "a/.GIT/x",
            "a\nb",
        ] {
            assert!(plain_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_rejection_is_told_from_other_failures() {
        let failure = |stderr: &str| Failure {
            kind: FailureKind::Status("exit status 1".into()),
            command: "git push".into(),
            stderr: stderr.into(),
        };
        assert!(moved(&failure(
            " ! [rejected]        HEAD -> main (fetch first)\nerror: failed to push some refs"
        )));
        assert!(moved(&failure(
            " ! [rejected] HEAD -> main (non-fast-forward)"
        )));
        assert!(!moved(&failure(
            " ! [remote rejected] HEAD -> main (pre-receive hook declined)"
        )));
    }

    #[test]
    fn identity_is_checked() {
        let ok = Identity {
            name: "snowctl".into(),
            email: "snowctl@example.com".into(),
        };
        check_identity(&ok).unwrap();
        let bad = Identity {
            name: "a <b>".into(),
            ..ok
        };
        assert!(check_identity(&bad).is_err());
    }
}
