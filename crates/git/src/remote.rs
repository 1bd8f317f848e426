//! A git remote's URL, checked once where it enters: `ssh://[USER@]HOST[:PORT]/PATH` or
//! `https://HOST[:PORT]/PATH`, nothing else.

use std::fmt;

/// How a remote is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `ssh://`: a private key and `known_hosts` ([`crate::SshAuth`]).
    Ssh,
    /// `https://`: an optional token and CA bundle ([`crate::HttpsAuth`]).
    Https,
}

/// A checked remote URL. It holds no password: credentials come separately, in [`crate::Auth`].
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    url: String,
    scheme: Scheme,
    host: String,
}

/// What is wrong with a remote URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteProblem {
    /// Empty.
    Empty,
    /// Whitespace or a control character.
    Unprintable,
    /// scp-like `USER@HOST:PATH`, which git reads as SSH but which has no place for a port and
    /// is read differently by different tools; the `ssh://` form says the same unambiguously.
    ScpStyle {
        /// The same remote as an `ssh://` URL.
        suggestion: String,
    },
    /// Not a URL at all.
    NotAUrl,
    /// A scheme other than `ssh` and `https` (`http` sends credentials in clear; `git` and
    /// `file` are not for a cluster's repository).
    Scheme(String),
    /// No host.
    NoHost,
    /// A host or user name that is not a plain name (a leading `-` would be read as an option
    /// by ssh).
    BadHost,
    /// A port that is not a number from 1 to 65535.
    BadPort,
    /// No repository path after the host.
    NoPath,
    /// A password in the URL.
    Password,
    /// User information in an `https://` URL: the token goes in [`crate::HttpsAuth`].
    UserInHttps,
}

impl fmt::Display for RemoteProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteProblem::Empty => f.write_str("the URL is empty"),
            RemoteProblem::Unprintable => {
                f.write_str("the URL holds whitespace or a control character")
            }
            RemoteProblem::ScpStyle { suggestion } => write!(
                f,
                "scp-like addresses (USER@HOST:PATH) are not accepted; write it as an ssh:// URL: {suggestion}"
            ),
            RemoteProblem::NotAUrl => f.write_str(
                "not a URL; write ssh://USER@HOST[:PORT]/PATH or https://HOST[:PORT]/PATH",
            ),
            RemoteProblem::Scheme(scheme) => write!(
                f,
                "the scheme {scheme:?} is not supported; use ssh:// or https://"
            ),
            RemoteProblem::NoHost => f.write_str("the URL names no host"),
            RemoteProblem::BadHost => f.write_str(
                "the host or user name holds characters other than letters, digits, '.', '-' and '_', or starts with '-'",
            ),
            RemoteProblem::BadPort => f.write_str("the port is not a number from 1 to 65535"),
            RemoteProblem::NoPath => f.write_str("the URL names no repository path after the host"),
            RemoteProblem::Password => f.write_str(
                "the URL holds a password; give credentials separately (an SSH key, or an HTTPS token), never in the URL",
            ),
            RemoteProblem::UserInHttps => f.write_str(
                "an https:// URL must not hold a user name; give the token (and its user) as the HTTPS credential",
            ),
        }
    }
}

impl Remote {
    /// Checks `url`. The error names the problem; its URL is shown with any password hidden.
    pub fn parse(url: &str) -> Result<Remote, crate::GitError> {
        let invalid = |problem| crate::GitError::InvalidRemote {
            url: crate::shown_url(url),
            problem,
        };
        if url.is_empty() {
            return Err(invalid(RemoteProblem::Empty));
        }
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid(RemoteProblem::Unprintable));
        }
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(invalid(
                scp_like(url).map_or(RemoteProblem::NotAUrl, |suggestion| {
                    RemoteProblem::ScpStyle { suggestion }
                }),
            ));
        };
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "ssh" => Scheme::Ssh,
            "https" => Scheme::Https,
            _ => return Err(invalid(RemoteProblem::Scheme(scheme.to_owned()))),
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hostport)) => (Some(userinfo), hostport),
            None => (None, authority),
        };
        if let Some(userinfo) = userinfo {
            if userinfo.contains(':') {
                return Err(invalid(RemoteProblem::Password));
            }
            if scheme == Scheme::Https {
                return Err(invalid(RemoteProblem::UserInHttps));
            }
            if !plain_name(userinfo) {
                return Err(invalid(RemoteProblem::BadHost));
            }
        }
        let (host, port) = split_port(hostport).map_err(invalid)?;
        if host.is_empty() {
            return Err(invalid(RemoteProblem::NoHost));
        }
        let bracketed = host.starts_with('[') && host.ends_with(']');
        let host_ok = if bracketed {
            host[1..host.len() - 1]
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        } else {
            plain_name(host)
        };
        if !host_ok {
            return Err(invalid(RemoteProblem::BadHost));
        }
        if let Some(port) = port
            && !matches!(port.parse::<u16>(), Ok(p) if p > 0)
        {
            return Err(invalid(RemoteProblem::BadPort));
        }
        if path.trim_matches('/').is_empty() {
            return Err(invalid(RemoteProblem::NoPath));
        }
        Ok(Remote {
            url: url.to_owned(),
            scheme,
            host: host.to_owned(),
        })
    }

    /// The URL, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How it is reached.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host (an IPv6 address in brackets).
    pub fn host(&self) -> &str {
        &self.host
    }
}

impl fmt::Display for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::shown_url(&self.url))
    }
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Remote({self})")
    }
}

/// `HOST[:PORT]` split; an IPv6 address is in brackets.
fn split_port(hostport: &str) -> Result<(&str, Option<&str>), RemoteProblem> {
    if hostport.starts_with('[') {
        let Some(end) = hostport.find(']') else {
            return Err(RemoteProblem::BadHost);
        };
        let rest = &hostport[end + 1..];
        return match rest.strip_prefix(':') {
            Some(port) => Ok((&hostport[..=end], Some(port))),
            None if rest.is_empty() => Ok((hostport, None)),
            None => Err(RemoteProblem::BadHost),
        };
    }
    Ok(match hostport.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (hostport, None),
    })
}

/// Letters, digits, `.`, `-`, `_`, not starting with `-`.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// The `ssh://` form of an scp-like address (`[USER@]HOST:PATH`, as git reads it: a colon before
/// any slash), if `url` is one.
fn scp_like(url: &str) -> Option<String> {
    let colon = url.find(':')?;
    if url[..colon].contains('/') {
        return None;
    }
    let (authority, path) = (&url[..colon], &url[colon + 1..]);
    let (user, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    if host.is_empty() || user.is_some_and(|u| u.contains(':')) {
        return None;
    }
    let user = user.map(|u| format!("{u}@")).unwrap_or_default();
    let path = path.strip_prefix('/').unwrap_or(path);
    Some(format!("ssh://{user}{host}/{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GitError;

    fn problem(url: &str) -> RemoteProblem {
        match Remote::parse(url) {
            Err(GitError::InvalidRemote { problem, .. }) => problem,
            other => panic!("{url}: {other:?}"),
        }
    }

    #[test]
    fn ssh_and_https_urls_are_accepted() {
        let r = Remote::parse("ssh://git@git.example.com:2222/org/clusters.git").unwrap();
        assert_eq!((r.scheme(), r.host()), (Scheme::Ssh, "git.example.com"));
        let r = Remote::parse("https://git.example.com/org/clusters.git").unwrap();
        assert_eq!(r.scheme(), Scheme::Https);
        let r = Remote::parse("ssh://git@[fd00::1]:22/repo.git").unwrap();
        assert_eq!(r.host(), "[fd00::1]");
        Remote::parse("ssh://10.0.0.5/srv/git/repo.git").unwrap();
    }

    #[test]
    fn scp_style_is_refused_with_the_ssh_url_to_write() {
        assert_eq!(
            problem("git@github.com:org/clusters.git"),
            RemoteProblem::ScpStyle {
                suggestion: "ssh://git@github.com/org/clusters.git".into()
            }
        );
        let text = Remote::parse("git@github.com:org/clusters.git")
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("ssh://git@github.com/org/clusters.git"),
            "{text}"
        );
    }

    #[test]
    fn bad_urls_are_refused_and_passwords_never_shown() {
        assert_eq!(problem(""), RemoteProblem::Empty);
        assert_eq!(problem("ssh://host/a b"), RemoteProblem::Unprintable);
        assert_eq!(problem("clusters"), RemoteProblem::NotAUrl);
        assert_eq!(
            problem("http://host/repo.git"),
            RemoteProblem::Scheme("http".into())
        );
        assert_eq!(
            problem("file:///srv/repo.git"),
            RemoteProblem::Scheme("file".into())
        );
        assert_eq!(problem("ssh:///repo.git"), RemoteProblem::NoHost);
        assert_eq!(
            problem("ssh://-oProxyCommand=x/repo"),
            RemoteProblem::BadHost
        );
        assert_eq!(problem("ssh://host:99999/repo"), RemoteProblem::BadPort);
        assert_eq!(problem("ssh://host:0/repo"), RemoteProblem::BadPort);
        assert_eq!(problem("https://host"), RemoteProblem::NoPath);
        assert_eq!(problem("https://host/"), RemoteProblem::NoPath);
        assert_eq!(
            problem("https://git@host/r.git"),
            RemoteProblem::UserInHttps
        );
        let err = Remote::parse("https://user:hunter2@host/r.git").unwrap_err();
        assert!(matches!(
            err,
            GitError::InvalidRemote {
                problem: RemoteProblem::Password,
                ..
            }
        ));
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(!format!("{err:?}").contains("hunter2"), "{err:?}");
    }
}
