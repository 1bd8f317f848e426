//! The git client of snowctl's libraries, for GitOps: a cluster's configuration written to a
//! branch of a git repository, as EKS Anywhere's CLI writes `clusters/<cluster>/…` before Flux
//! applies it.
//!
//! [`Repository::clone`] takes a checked [`Remote`] (`ssh://` or `https://`, no password in the
//! URL), its [`Auth`] and a branch; [`Repository::write`] writes files under plain relative
//! paths; [`Repository::commit`] commits only when the tree changed; [`Repository::push`] pushes,
//! and when another writer got there first fetches their head, applies the same changes once more
//! and pushes again. Errors are [`GitError`], which never shows a key, passphrase, token or URL
//! password.
//!
//! **Why the `git` program.** The `git` on `PATH` runs through `snow_io::process`, the
//! workspace's one process runner (a deadline, bounded output, secrets redacted from what an
//! error shows). libgit2 (the `git2` crate) would bring OpenSSL and libssh2, a second TLS stack
//! beside rustls on aws-lc-rs; gitoxide (`gix`) cannot push. The `git` program speaks SSH through
//! OpenSSH's `ssh` (host keys checked against the `known_hosts` given) and HTTPS through its own
//! libcurl, both as a git server's users already run them.
//!
//! **Isolation.** git runs with an environment of its own ([`snow_io::process::Run::run_isolated`]:
//! only `PATH` and `HOME` inherited), no system or global configuration (`GIT_CONFIG_NOSYSTEM=1`,
//! `GIT_CONFIG_GLOBAL=/dev/null`), no prompts (`GIT_TERMINAL_PROMPT=0`), only the `ssh` and
//! `https` transports (`GIT_ALLOW_PROTOCOL`), no redirects followed, no hooks, and the
//! author and committer the caller gives. ssh runs with `-F /dev/null` (no configuration of the
//! machine or the user), the key given and no agent, `StrictHostKeyChecking=yes` against the
//! `known_hosts` given only. Secrets go in files of a private temporary directory (0700; the
//! files 0600, written through `snow_io::files`) removed when the [`Repository`] is dropped, or
//! in the git process's environment; never on a command line.
//!
//! Everything here blocks (it waits for git); async callers run it on tokio's blocking pool.

mod auth;
mod remote;
mod repository;

pub use auth::{Auth, HttpCredential, HttpsAuth, Secret, SshAuth};
pub use remote::{Remote, RemoteProblem, Scheme};
pub use repository::{Change, CommitId, Identity, Limits, Repository};

/// `url` with any user information hidden, for messages.
pub(crate) fn shown_url(url: &str) -> String {
    snow_api::redact::redact_userinfo(url).into_owned()
}

/// Why a git operation failed. No variant holds a key, passphrase, token or URL password: URLs
/// are shown through `snow_api::redact::redact_userinfo` and git's messages with every secret
/// given replaced by `<redacted>`.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The remote URL is not accepted.
    #[error("git remote {url}: {problem}")]
    InvalidRemote {
        /// The URL, user information hidden.
        url: String,
        /// What is wrong.
        problem: RemoteProblem,
    },
    /// The credentials do not fit the remote, or are incomplete.
    #[error("credentials for {remote}: {problem}")]
    InvalidAuth {
        /// The remote.
        remote: String,
        /// What is wrong and what to give.
        problem: String,
    },
    /// The SSH key is encrypted and no passphrase was given.
    #[error(
        "the SSH private key is protected by a passphrase and none was given: give its passphrase, or a key without one"
    )]
    KeyNeedsPassphrase,
    /// A branch name, author or path given is not accepted.
    #[error("{what} {value:?}: {problem}")]
    InvalidInput {
        /// What it is (`branch`, `path`, `author name`, …).
        what: &'static str,
        /// The value.
        value: String,
        /// What is wrong.
        problem: String,
    },
    /// The repository has branches, but not this one.
    #[error(
        "{remote} has no branch {branch:?} (its branches: {}); create the branch there, or name one it has",
        if existing.is_empty() { "none".to_owned() } else { existing.join(", ") }
    )]
    BranchNotFound {
        /// The remote.
        remote: String,
        /// The branch asked for.
        branch: String,
        /// The branches it has.
        existing: Vec<String>,
    },
    /// The branch's checkout (or what git fetched for it) is larger than the limit.
    #[error(
        "branch {branch:?} of {remote} is larger than the limit of {limit} bytes ({what}: at least {size} bytes); keep cluster configuration in a repository of its own, or raise the limit"
    )]
    TooLarge {
        /// The remote.
        remote: String,
        /// The branch.
        branch: String,
        /// What was measured: the checkout, or the fetched objects.
        what: &'static str,
        /// Bytes counted (counting stops past the limit).
        size: u64,
        /// The limit ([`Limits::max_checkout_bytes`]).
        limit: u64,
    },
    /// A component of the path to write is a symbolic link in the checkout.
    #[error(
        "cannot write {path:?} in {remote}: {link:?} is a symbolic link in the repository, and snowctl never writes through a link; make it a directory in the repository, or choose another path"
    )]
    LinkInPath {
        /// The remote.
        remote: String,
        /// The path to write.
        path: String,
        /// The component that is a link.
        link: String,
    },
    /// The push was refused twice because the branch moved: someone else is committing.
    #[error(
        "the push to branch {branch:?} of {remote} was refused twice because the branch moved meanwhile (snowctl fetched it and applied its changes on the new head once): someone else is committing to it; wait until they are done and run again"
    )]
    PushRejected {
        /// The remote.
        remote: String,
        /// The branch.
        branch: String,
    },
    /// ssh refused the server's host key: it is not in the `known_hosts` given, or differs.
    #[error(
        "{remote}: the server's host key is not the one known_hosts names for it: {detail}; check the known_hosts given against the server's fingerprint"
    )]
    HostKeyRejected {
        /// The remote.
        remote: String,
        /// What ssh said (secrets hidden).
        detail: String,
    },
    /// The server refused the credentials.
    #[error(
        "{remote} refused the credentials: {detail}; check the key or token and its access to the repository"
    )]
    AuthenticationFailed {
        /// The remote.
        remote: String,
        /// What git said (secrets hidden).
        detail: String,
    },
    /// A git command did not finish within the time limit.
    #[error("git {operation} with {remote} did not finish within {seconds} s and was stopped")]
    TimedOut {
        /// The operation (`clone`, `fetch`, `push`, …).
        operation: &'static str,
        /// The remote.
        remote: String,
        /// The limit.
        seconds: u64,
    },
    /// A program is not installed.
    #[error("{program} is not installed (not found on PATH): install {package}")]
    ProgramMissing {
        /// The program.
        program: &'static str,
        /// The package that carries it.
        package: &'static str,
    },
    /// git failed otherwise.
    #[error("git {operation} with {remote} failed: {detail}")]
    Git {
        /// The operation.
        operation: &'static str,
        /// The remote.
        remote: String,
        /// The command line and the end of git's stderr (secrets hidden).
        detail: String,
    },
    /// A local file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The system's reason.
        source: std::io::Error,
    },
}
