//! GitOps with Flux, the EKS Anywhere way: the rules and defaults of a `FluxConfig` (EKS
//! Anywhere's `pkg/api/v1alpha1/fluxconfig.go` and `pkg/cluster/flux.go`), and [`GitOps`], a
//! FluxConfig that passed them, the only form in which the rest of snowctl takes one.
//!
//! EKS Anywhere accepts only `ssh://` URLs for a generic git repository; snowctl also accepts
//! `https://` (Flux reads it with a token or user and password, and a CA bundle, from its
//! source Secret). EKS Anywhere's branch rule (one or two segments, no hyphen in the first)
//! refuses names git allows, such as `release-1.2`; snowctl checks git's own ref-name rules.

use crate::{
    finding::{Finding, shorten},
    spec::object_id,
    types::flux::{FluxConfig, FluxConfigSpec},
};
use std::fmt;

/// The branch Flux syncs from when the FluxConfig names none.
pub const DEFAULT_BRANCH: &str = "main";
/// The namespace Flux runs in when the FluxConfig names none.
pub const DEFAULT_SYSTEM_NAMESPACE: &str = "flux-system";
/// The `kind` of the legacy GitHub-only GitOps object, which snowctl does not read.
pub const LEGACY_KIND: &str = "GitOpsConfig";

/// `clusters/<management cluster>`: where the files of a management cluster and of all its
/// workload clusters sit in the repository when the FluxConfig names no path.
pub fn default_cluster_config_path(management_cluster: &str) -> String {
    format!("clusters/{management_cluster}")
}

/// The SSH key algorithm of a generic git repository's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SshKeyAlgorithm {
    /// `rsa`.
    Rsa,
    /// `ecdsa`, EKS Anywhere's default.
    #[default]
    Ecdsa,
    /// `ed25519`.
    Ed25519,
}

impl SshKeyAlgorithm {
    /// Every algorithm, as written in a FluxConfig.
    pub const ALL: [SshKeyAlgorithm; 3] = [Self::Rsa, Self::Ecdsa, Self::Ed25519];

    /// The value as written in a FluxConfig (and given to `flux bootstrap --ssh-key-algorithm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rsa => "rsa",
            Self::Ecdsa => "ecdsa",
            Self::Ed25519 => "ed25519",
        }
    }

    /// The algorithm named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// How a generic git repository is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitScheme {
    /// `ssh://`: the key in Flux's source Secret (`identity`, `known_hosts`).
    Ssh,
    /// `https://`: a token or user and password, and a CA bundle, in Flux's source Secret.
    Https,
}

impl GitScheme {
    /// `ssh` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ssh => "ssh",
            Self::Https => "https",
        }
    }
}

/// A generic git repository's URL that passed [`GitUrl::parse`]: `ssh://[user@]host[:port]/path`
/// or `https://host[:port]/path`, never with a password or token in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitUrl {
    text: String,
    scheme: GitScheme,
    user: Option<String>,
    host: String,
    port: Option<u16>,
    path: String,
}

/// Why a repository URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitUrlError {
    /// Empty.
    #[error("the repository URL is empty")]
    Empty,
    /// `git@host:path`, the scp-like form git accepts but Flux does not.
    #[error("`{url}` is git's scp-like form, which Flux does not read")]
    ScpLike {
        /// The URL as written.
        url: String,
        /// The same repository as an `ssh://` URL.
        ssh: String,
    },
    /// No `scheme://`.
    #[error("`{url}` has no scheme")]
    NoScheme {
        /// The URL as written.
        url: String,
    },
    /// A scheme other than ssh and https.
    #[error("the scheme `{scheme}` is not supported")]
    Scheme {
        /// The scheme as written.
        scheme: String,
    },
    /// No host after `scheme://`.
    #[error("`{url}` has no host")]
    NoHost {
        /// The URL as written.
        url: String,
    },
    /// A port that is not a number from 1 to 65535.
    #[error("`{port}` is not a port number")]
    Port {
        /// The port as written.
        port: String,
    },
    /// Nothing after the host.
    #[error("`{url}` names no repository path")]
    NoPath {
        /// The URL as written.
        url: String,
    },
    /// A password (ssh) or any user information (https) in the URL: it would be stored in the
    /// spec, in git and on the cluster.
    #[error("the URL carries credentials")]
    Credentials,
    /// Whitespace or control characters.
    #[error("the URL contains whitespace or control characters")]
    Characters,
}

impl GitUrlError {
    /// What to write instead.
    pub fn hint(&self) -> String {
        match self {
            GitUrlError::ScpLike { ssh, .. } => format!(
                "write it as an ssh:// URL: `{ssh}` (on a plain SSH server a path relative to the user's home is written /~/path)"
            ),
            GitUrlError::Credentials => "leave the password or token out of the URL: give it as the repository's credentials, which go into Flux's source Secret only".into(),
            GitUrlError::Port { .. } => "write a port from 1 to 65535, or none for the scheme's default".into(),
            _ => "write ssh://[user@]host[:port]/path (as EKS Anywhere) or https://host[:port]/path".into(),
        }
    }
}

impl GitUrl {
    /// Reads a repository URL. The text is kept as written (it is what Flux's GitRepository gets).
    pub fn parse(text: &str) -> Result<GitUrl, GitUrlError> {
        if text.is_empty() {
            return Err(GitUrlError::Empty);
        }
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(GitUrlError::Characters);
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(match scp_like(text) {
                Some(ssh) => GitUrlError::ScpLike {
                    url: shorten(text).into_owned(),
                    ssh,
                },
                None => GitUrlError::NoScheme {
                    url: shorten(text).into_owned(),
                },
            });
        };
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "ssh" => GitScheme::Ssh,
            "https" => GitScheme::Https,
            _ => {
                return Err(GitUrlError::Scheme {
                    scheme: shorten(scheme).into_owned(),
                });
            }
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (user, host_port) = match authority.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, authority),
        };
        if let Some(user) = user
            && (scheme == GitScheme::Https || user.contains(':'))
        {
            return Err(GitUrlError::Credentials);
        }
        let (host, port) = split_port(host_port);
        if host.is_empty() || host == "[]" {
            return Err(GitUrlError::NoHost {
                url: shorten(text).into_owned(),
            });
        }
        let port =
            match port {
                None => None,
                Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                    GitUrlError::Port {
                        port: shorten(p).into_owned(),
                    }
                })?),
            };
        if path.trim_matches('/').is_empty() {
            return Err(GitUrlError::NoPath {
                url: shorten(text).into_owned(),
            });
        }
        Ok(GitUrl {
            text: text.to_owned(),
            scheme,
            user: user.filter(|u| !u.is_empty()).map(str::to_owned),
            host: host.to_owned(),
            port,
            path: path.to_owned(),
        })
    }

    /// The URL as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `ssh` or `https`.
    pub fn scheme(&self) -> GitScheme {
        self.scheme
    }

    /// The SSH user, when the URL names one.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The host (an IPv6 address keeps its brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, when the URL names one.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The path, from its leading `/`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last path element without `.git`: the name of a local clone (EKS Anywhere's).
    pub fn repository_name(&self) -> &str {
        let last = self.path.trim_end_matches('/').rsplit('/').next();
        let last = last.unwrap_or_default();
        last.strip_suffix(".git").unwrap_or(last)
    }
}

impl fmt::Display for GitUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `host:port` or `[v6]:port`.
fn split_port(host_port: &str) -> (&str, Option<&str>) {
    if host_port.starts_with('[') {
        return match host_port.find(']') {
            Some(end) => {
                let (host, rest) = host_port.split_at(end + 1);
                (host, rest.strip_prefix(':'))
            }
            None => (host_port, None),
        };
    }
    match host_port.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    }
}

/// `[user@]host:path` (git's scp-like syntax, no `/` before the first `:`) as an ssh:// URL.
fn scp_like(text: &str) -> Option<String> {
    let (before, path) = text.split_once(':')?;
    if before.contains('/') || before.is_empty() || path.is_empty() {
        return None;
    }
    let host = before.rsplit('@').next().unwrap_or(before);
    if host.is_empty() {
        return None;
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    Some(format!("ssh://{before}/{path}"))
}

/// A branch name git accepts (`git check-ref-format --branch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchName(String);

impl BranchName {
    /// The name, when git accepts it as a branch; else what is wrong with it.
    pub fn parse(name: &str) -> Result<BranchName, &'static str> {
        match branch_problem(name) {
            Some(problem) => Err(problem),
            None => Ok(BranchName(name.to_owned())),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Git's ref-name rules (`git help check-ref-format`) for `refs/heads/<name>`.
fn branch_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name == "HEAD" || name == "@" {
        return Some("git reserves this name");
    }
    if name.starts_with('-') {
        return Some("a branch name cannot start with `-`");
    }
    if name.chars().any(|c| {
        c.is_ascii_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
    }) {
        return Some(
            "it contains a space, a control character or one of ~ ^ : ? * [ \\, which git does not allow",
        );
    }
    if name.contains("..") {
        return Some("it contains `..`");
    }
    if name.contains("@{") {
        return Some("it contains `@{`");
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Some("it starts or ends with `/`, or has an empty part between two `/`");
    }
    if name.ends_with('.') {
        return Some("it ends with `.`");
    }
    if name
        .split('/')
        .any(|part| part.starts_with('.') || part.ends_with(".lock"))
    {
        return Some("a part of it starts with `.` or ends with `.lock`");
    }
    None
}

/// A relative path inside the repository: `/`-separated, no empty, `.` or `..` part, no
/// backslash or control character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoPath(String);

impl RepoPath {
    /// The path, when it stays inside the repository; else what is wrong with it.
    pub fn parse(path: &str) -> Result<RepoPath, &'static str> {
        if path.is_empty() {
            return Err("it is empty");
        }
        if path.starts_with('/') {
            return Err("it is absolute; the path is relative to the repository's root");
        }
        if path.split('/').any(|p| p == "..") {
            return Err(
                "it has a `..` part, which leaves the repository or another cluster's folder",
            );
        }
        if path.chars().any(|c| c.is_control() || c == '\\') {
            return Err("it contains a control character or a backslash");
        }
        if path.split('/').any(|p| p.is_empty() || p == ".") {
            return Err("it has an empty or `.` part (a doubled, leading `./` or trailing `/`)");
        }
        Ok(RepoPath(path.to_owned()))
    }

    /// The path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where the repository is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitProvider {
    /// A GitHub repository.
    GitHub {
        /// The user or organisation.
        owner: String,
        /// The repository's name (`[0-9A-Za-z-_.]+`).
        repository: String,
        /// Whether `owner` is a user rather than an organisation.
        personal: bool,
    },
    /// A generic git repository.
    Git {
        /// Its URL.
        url: GitUrl,
        /// The SSH key algorithm (used for an `ssh://` URL).
        ssh_key_algorithm: SshKeyAlgorithm,
    },
}

/// A FluxConfig that passed every rule ([`GitOps::check`]), defaults filled: the GitOps
/// configuration of a cluster, as rendering and the GitOps workflow take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitOps {
    name: String,
    namespace: String,
    provider: GitProvider,
    branch: BranchName,
    cluster_config_path: RepoPath,
    system_namespace: String,
}

impl GitOps {
    /// Checks `config` (defaults filled where empty: branch `main`, namespace `flux-system`, path
    /// `clusters/<management_cluster>`, key algorithm `ecdsa`); every finding at once, each
    /// about `FluxConfig/<name>` and its field.
    pub fn check(config: &FluxConfig, management_cluster: &str) -> Result<GitOps, Vec<Finding>> {
        let name = config.metadata.name.clone().unwrap_or_default();
        let object = object_id("FluxConfig", &name);
        let mut findings = Vec::new();
        let mut error = |check: &str, field: &str, message: String, hint: String| {
            findings.push(
                Finding::error(check, message)
                    .object(&object)
                    .field(field)
                    .hint(hint),
            );
        };
        let s: &FluxConfigSpec = &config.spec;
        let provider = match (&s.github, &s.git) {
            (Some(_), Some(_)) => {
                error(
                    "flux.provider",
                    "spec",
                    "must specify only one provider: both github and git are set".into(),
                    "keep `github` for a GitHub repository or `git` for any other, not both".into(),
                );
                None
            }
            (None, None) => {
                error(
                    "flux.provider",
                    "spec",
                    "must specify a provider. Valid options are git and github".into(),
                    "add `git: {repositoryUrl: ssh://git@host/org/repo.git}` or `github: {owner: ..., repository: ...}` under spec".into(),
                );
                None
            }
            (Some(github), None) => {
                if github.owner.is_empty() {
                    error(
                        "flux.github",
                        "spec.github.owner",
                        "the GitHub owner is empty".into(),
                        "name the user or organisation that owns the repository".into(),
                    );
                }
                let repo_ok = !github.repository.is_empty()
                    && github
                        .repository
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
                if !repo_ok {
                    error(
                        "flux.github",
                        "spec.github.repository",
                        format!(
                            "`{}` is not a GitHub repository name",
                            shorten(&github.repository)
                        ),
                        "use letters, digits, `-`, `_` and `.` only (the name alone, not owner/name or a URL)".into(),
                    );
                }
                (!github.owner.is_empty() && repo_ok).then(|| GitProvider::GitHub {
                    owner: github.owner.clone(),
                    repository: github.repository.clone(),
                    personal: github.personal.unwrap_or(false),
                })
            }
            (None, Some(git)) => {
                let algorithm = match git.ssh_key_algorithm.as_deref().unwrap_or("") {
                    "" => Some(SshKeyAlgorithm::default()),
                    other => {
                        let found = SshKeyAlgorithm::from_name(other);
                        if found.is_none() {
                            error(
                                "flux.ssh-key-algorithm",
                                "spec.git.sshKeyAlgorithm",
                                format!("`{}` is not an SSH key algorithm", shorten(other)),
                                "write rsa, ecdsa or ed25519".into(),
                            );
                        }
                        found
                    }
                };
                let url = match GitUrl::parse(&git.repository_url) {
                    Ok(url) => Some(url),
                    Err(err) => {
                        error(
                            "flux.repository-url",
                            "spec.git.repositoryUrl",
                            format!("repositoryUrl: {err}"),
                            err.hint(),
                        );
                        None
                    }
                };
                url.zip(algorithm)
                    .map(|(url, ssh_key_algorithm)| GitProvider::Git {
                        url,
                        ssh_key_algorithm,
                    })
            }
        };
        let branch = match BranchName::parse(s.branch.as_deref().unwrap_or(DEFAULT_BRANCH)) {
            Ok(b) => Some(b),
            Err(problem) => {
                error(
                    "flux.branch",
                    "spec.branch",
                    format!(
                        "branch `{}` is not a valid git branch name: {problem}",
                        shorten(s.branch.as_deref().unwrap_or_default())
                    ),
                    format!("write a branch name git accepts, e.g. `{DEFAULT_BRANCH}`"),
                );
                None
            }
        };
        let default_path = default_cluster_config_path(management_cluster);
        let path = s.cluster_config_path.as_deref().unwrap_or(&default_path);
        let path = match RepoPath::parse(path) {
            Ok(p) => Some(p),
            Err(problem) => {
                error(
                    "flux.cluster-config-path",
                    "spec.clusterConfigPath",
                    format!(
                        "clusterConfigPath `{}` cannot be used: {problem}",
                        shorten(path)
                    ),
                    format!(
                        "write a path relative to the repository's root, such as `{default_path}`"
                    ),
                );
                None
            }
        };
        let namespace = s
            .system_namespace
            .as_deref()
            .unwrap_or(DEFAULT_SYSTEM_NAMESPACE);
        if !is_dns_label(namespace) {
            error(
                "flux.system-namespace",
                "spec.systemNamespace",
                format!(
                    "systemNamespace `{}` is not a namespace name",
                    shorten(namespace)
                ),
                format!(
                    "use lowercase letters, digits and `-`, at most 63 characters, e.g. `{DEFAULT_SYSTEM_NAMESPACE}`"
                ),
            );
        }
        match (provider, branch, path) {
            (Some(provider), Some(branch), Some(cluster_config_path)) if findings.is_empty() => {
                Ok(GitOps {
                    name,
                    namespace: config
                        .metadata
                        .namespace
                        .clone()
                        .unwrap_or_else(|| crate::spec::DEFAULT_NAMESPACE.into()),
                    provider,
                    branch,
                    cluster_config_path,
                    system_namespace: namespace.to_owned(),
                })
            }
            _ => Err(findings),
        }
    }

    /// The FluxConfig's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The FluxConfig's namespace (the Cluster's).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Where the repository is.
    pub fn provider(&self) -> &GitProvider {
        &self.provider
    }

    /// The branch Flux syncs from.
    pub fn branch(&self) -> &BranchName {
        &self.branch
    }

    /// The folder of the management cluster's files (and its workload clusters') in the
    /// repository: the path Flux's Kustomization builds.
    pub fn cluster_config_path(&self) -> &RepoPath {
        &self.cluster_config_path
    }

    /// The namespace Flux runs in (its controllers, GitRepository, Kustomization and Secret).
    pub fn system_namespace(&self) -> &str {
        &self.system_namespace
    }

    /// The URL Flux's GitRepository reads: the generic git URL as written, or for GitHub
    /// `ssh://git@github.com/<owner>/<repository>` (what `flux bootstrap github` writes).
    pub fn repository_url(&self) -> String {
        match &self.provider {
            GitProvider::Git { url, .. } => url.as_str().to_owned(),
            GitProvider::GitHub {
                owner, repository, ..
            } => format!("ssh://git@github.com/{owner}/{repository}"),
        }
    }
}

/// A namespace name: a DNS-1123 label.
fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    matches!((b.first(), b.last()), (Some(f), Some(l)) if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric())
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// EKS Anywhere's update rule for a FluxConfig (its webhook): once created, no field of its spec
/// may change. One finding per changed field, each about `FluxConfig/<name>`, comparing the
/// specs with defaults filled (so writing a default out is not a change).
pub fn flux_config_changes(
    old: &FluxConfigSpec,
    new: &FluxConfigSpec,
    object: &str,
    from: &str,
) -> Vec<Finding> {
    let fields = |s: &FluxConfigSpec| -> Vec<(&'static str, String)> {
        let text = |v: Option<&str>, default: &str| {
            v.filter(|v| !v.is_empty()).unwrap_or(default).to_owned()
        };
        vec![
            ("spec.branch", text(s.branch.as_deref(), DEFAULT_BRANCH)),
            (
                "spec.clusterConfigPath",
                text(s.cluster_config_path.as_deref(), ""),
            ),
            (
                "spec.systemNamespace",
                text(s.system_namespace.as_deref(), DEFAULT_SYSTEM_NAMESPACE),
            ),
            (
                "spec.github.owner",
                s.github
                    .as_ref()
                    .map(|g| g.owner.clone())
                    .unwrap_or_default(),
            ),
            (
                "spec.github.repository",
                s.github
                    .as_ref()
                    .map(|g| g.repository.clone())
                    .unwrap_or_default(),
            ),
            (
                "spec.github.personal",
                s.github
                    .as_ref()
                    .map(|g| g.personal.unwrap_or(false).to_string())
                    .unwrap_or_default(),
            ),
            (
                "spec.git.repositoryUrl",
                s.git
                    .as_ref()
                    .map(|g| g.repository_url.clone())
                    .unwrap_or_default(),
            ),
            (
                "spec.git.sshKeyAlgorithm",
                s.git
                    .as_ref()
                    .map(|g| {
                        text(
                            g.ssh_key_algorithm.as_deref(),
                            SshKeyAlgorithm::default().as_str(),
                        )
                    })
                    .unwrap_or_default(),
            ),
        ]
    };
    let show = |v: &str| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            format!("`{}`", shorten(v))
        }
    };
    fields(old)
        .into_iter()
        .zip(fields(new))
        .filter(|((_, was), (_, is))| was != is)
        .map(|((field, was), (_, is))| {
            Finding::error(
                "flux.immutable",
                format!(
                    "{field} of an existing FluxConfig cannot change: it is {} {from}, {} in the spec",
                    show(&was),
                    show(&is)
                ),
            )
            .object(object)
            .field(field)
            .hint("set it back; EKS Anywhere makes a FluxConfig's whole spec immutable (another repository, branch or path needs a new cluster)")
        })
        .collect()
}

/// EKS Anywhere's rule for a workload cluster's GitOps (its create preflight): Flux runs only on
/// the management cluster, so a workload cluster's FluxConfig must say exactly what the
/// management cluster's says (the same repository, branch, path and namespace), under its own
/// name. `management` is the management cluster's checked FluxConfig; one finding per field
/// that differs, about `FluxConfig/<workload's name>`.
pub fn workload_matches_management(management: &GitOps, workload: &GitOps) -> Vec<Finding> {
    let object = object_id("FluxConfig", workload.name());
    let describe = |g: &GitOps| -> Vec<(&'static str, String)> {
        let (kind, repository, algorithm) = match g.provider() {
            GitProvider::GitHub {
                owner,
                repository,
                personal,
            } => (
                "github",
                format!("{owner}/{repository} (personal: {personal})"),
                String::new(),
            ),
            GitProvider::Git {
                url,
                ssh_key_algorithm,
            } => (
                "git",
                url.as_str().to_owned(),
                ssh_key_algorithm.as_str().to_owned(),
            ),
        };
        vec![
            ("spec", kind.to_owned()),
            ("spec.git.repositoryUrl", repository),
            ("spec.git.sshKeyAlgorithm", algorithm),
            ("spec.branch", g.branch().as_str().to_owned()),
            (
                "spec.clusterConfigPath",
                g.cluster_config_path().as_str().to_owned(),
            ),
            ("spec.systemNamespace", g.system_namespace().to_owned()),
        ]
    };
    describe(management)
        .into_iter()
        .zip(describe(workload))
        .filter(|((_, m), (_, w))| m != w)
        .map(|((field, m), (_, w))| {
            let field = match (field, workload.provider()) {
                ("spec.git.repositoryUrl", GitProvider::GitHub { .. }) => "spec.github",
                (f, _) => f,
            };
            Finding::error(
                "flux.workload",
                format!(
                    "expected fluxConfig.spec to be the same between management and its workload clusters: {field} is `{}` on the management cluster's FluxConfig {}, `{}` here",
                    shorten(&m),
                    management.name(),
                    shorten(&w)
                ),
            )
            .object(&object)
            .field(field)
            .hint("Flux runs on the management cluster only: copy the management cluster's FluxConfig spec, under another name")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = GitUrl::parse("ssh://git@git.example:2222/org/fleet.git").unwrap();
        assert_eq!(
            (u.scheme(), u.user(), u.host(), u.port(), u.path()),
            (
                GitScheme::Ssh,
                Some("git"),
                "git.example",
                Some(2222),
                "/org/fleet.git"
            )
        );
        assert_eq!(u.repository_name(), "fleet");
        let u = GitUrl::parse("https://[::1]:8443/fleet").unwrap();
        assert_eq!((u.host(), u.port()), ("[::1]", Some(8443)));
        assert!(matches!(
            GitUrl::parse("git@github.com:org/repo.git"),
            Err(GitUrlError::ScpLike { ssh, .. }) if ssh == "ssh://git@github.com/org/repo.git"
        ));
        assert!(matches!(
            GitUrl::parse("example.com/repo"),
            Err(GitUrlError::NoScheme { .. })
        ));
        assert!(matches!(
            GitUrl::parse("ssh:///repo"),
            Err(GitUrlError::NoHost { .. })
        ));
        assert!(matches!(
            GitUrl::parse("ssh://host"),
            Err(GitUrlError::NoPath { .. })
        ));
        assert!(matches!(
            GitUrl::parse("http://host/r"),
            Err(GitUrlError::Scheme { .. })
        ));
        assert!(matches!(
            GitUrl::parse("https://user:tok@host/r"),
            Err(GitUrlError::Credentials)
        ));
        assert!(matches!(
            GitUrl::parse("ssh://git:pw@host/r"),
            Err(GitUrlError::Credentials)
        ));
        assert!(matches!(
            GitUrl::parse("ssh://host:0/r"),
            Err(GitUrlError::Port { .. })
        ));
        // The error never shows the credentials.
        let err = GitUrl::parse("https://user:s3cret@host/r").unwrap_err();
        assert!(!err.to_string().contains("s3cret") && !err.hint().contains("s3cret"));
    }

    #[test]
    fn branches_follow_git() {
        for ok in [
            "main",
            "my-branch",
            "feature/my-thing",
            "v1.2",
            "release-1.2",
            "x",
            "a/b/c",
        ] {
            assert!(BranchName::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "-x", "a..b", "a b", "a:b", "a/", "/a", "a//b", ".a", "a.lock", "a.", "a@{b",
            "HEAD", "a~1", "a\\b",
        ] {
            assert!(BranchName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_stay_inside() {
        assert!(RepoPath::parse("clusters/mgmt").is_ok());
        for bad in ["", "/abs", "a/../b", "..", "a//b", "./a", "a/"] {
            assert!(RepoPath::parse(bad).is_err(), "{bad}");
        }
    }
}
