//! Syntax rules shared by the validators: Kubernetes versions, label keys and values, DNS names,
//! proxies, instance types (durations: [`crate::duration`]).

use std::net::IpAddr;

/// A Kubernetes minor version, `1.NN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    /// Major (always 1).
    pub major: u32,
    /// Minor.
    pub minor: u32,
}

impl KubeVersion {
    /// Parses `1.NN` (exactly two numeric parts).
    pub fn parse(text: &str) -> Option<KubeVersion> {
        let (major, minor) = text.split_once('.')?;
        let numeric =
            |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
        if !numeric(major) || !numeric(minor) {
            return None;
        }
        Some(KubeVersion {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The oldest and newest Kubernetes versions EKS Anywhere knows (its version constants).
pub const OLDEST_KUBE_MINOR: u32 = 18;
/// See [`OLDEST_KUBE_MINOR`].
pub const NEWEST_KUBE_MINOR: u32 = 36;

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, at most 63 characters: a label name or value.
pub fn is_label_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    s.len() <= 63
        && first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A label value: empty or a label name.
pub fn is_label_value(s: &str) -> bool {
    s.is_empty() || is_label_name(s)
}

/// Dot-separated DNS labels of `[a-z0-9-]` (any case when `any_case`), each 1–63 characters,
/// starting and ending alphanumeric, at most 253 characters in all.
fn is_dns_name(s: &str, any_case: bool) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            matches!((b.first(), b.last()), (Some(f), Some(l)) if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric())
                && b.len() <= 63
                && b.iter().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || (any_case && c.is_ascii_uppercase())
                })
        })
}

/// A DNS-1123 subdomain: lowercase labels of `[a-z0-9-]`, dot-separated, at most 253 characters.
pub fn is_dns_subdomain(s: &str) -> bool {
    is_dns_name(s, false)
}

/// A qualified name (label or taint key): `[prefix/]name`, the prefix a DNS subdomain.
pub fn is_qualified_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(s),
    }
}

/// A host name (any case) or wildcard domain, as accepted in certificate SANs.
pub fn is_domain_name(s: &str) -> bool {
    is_dns_name(s.strip_prefix("*.").unwrap_or(s), true)
}

/// A host: an IP address or a domain name.
pub fn is_host(s: &str) -> bool {
    s.parse::<IpAddr>().is_ok() || is_domain_name(s)
}

/// Checks a proxy address: a URL `scheme://host[:port][/...]` or `host:port`. Returns what is
/// wrong, if anything.
pub fn proxy_problem(s: &str) -> Option<String> {
    if s.trim().is_empty() {
        return Some("is empty".into());
    }
    let (scheme, rest) = match s.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, s),
    };
    if let Some(scheme) = scheme
        && !matches!(scheme, "http" | "https" | "socks5" | "socks5h")
    {
        return Some(format!("has the scheme `{scheme}`; use http or https"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = split_host_port(authority);
    if !is_host(host) {
        return Some(format!(
            "has the host `{host}`, which is neither an IP address nor a domain name"
        ));
    }
    match port {
        Some(port) => match port.parse::<u32>() {
            Ok(p) if (1..=65535).contains(&p) => None,
            _ => Some(format!("has the port `{port}`; a port is 1 to 65535")),
        },
        None if scheme.is_none() => Some("has no port; write host:port or a URL".into()),
        None => None,
    }
}

/// Splits `host:port`, `[v6]:port`, `host`.
pub fn split_host_port(s: &str) -> (&str, Option<&str>) {
    if let Some(rest) = s.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        return (host, after.strip_prefix(':'));
    }
    if s.matches(':').count() == 1
        && let Some((host, port)) = s.split_once(':')
    {
        return (host, Some(port));
    }
    (s, None)
}

/// An upstream registry as an image reference names it: `host[:port]`, the host a domain name
/// (any case, no wildcard), an IPv4 address or a bracketed IPv6 address, the port 1 to 65535.
/// containerd finds a registry's settings at `certs.d/<registry>/hosts.toml`, so nothing else
/// (a `/`, `..`, a scheme, a path) can be one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegistryHost(String);

impl RegistryHost {
    /// The registry as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for RegistryHost {
    /// What is wrong with it.
    type Err = String;

    fn from_str(s: &str) -> Result<RegistryHost, String> {
        if s.is_empty() {
            return Err("is empty".into());
        }
        if s.contains("://") {
            return Err("has a scheme; write the host (and port) only".into());
        }
        if s.contains('/') {
            return Err("has a `/`; a registry is host[:port], without a path".into());
        }
        let (host, port) = split_host_port(s);
        let bracketed = s.starts_with('[');
        let host_ok = if bracketed {
            host.parse::<std::net::Ipv6Addr>().is_ok()
        } else {
            host.parse::<std::net::Ipv4Addr>().is_ok() || is_dns_name(host, true)
        };
        if !host_ok {
            return Err(format!(
                "has the host `{host}`, which is neither a domain name nor an IP address (an IPv6 address goes in brackets)"
            ));
        }
        if let Some(port) = port
            && !port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
        {
            return Err(format!("has the port `{port}`; a port is 1 to 65535"));
        }
        // `[v6]x`: something after the bracket that is not `:port`.
        if bracketed && !s.ends_with(']') && port.is_none() {
            return Err("has text after the IPv6 address".into());
        }
        Ok(RegistryHost(s.to_owned()))
    }
}

impl std::fmt::Display for RegistryHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The default vCPUs of a Snow instance type `sbe-[cg].{N}xlarge` / `large`, when it has the
/// accepted shape `^sbe-[cg]\.\d*x?large$`.
pub fn instance_type_vcpus(instance_type: &str) -> Option<u32> {
    let rest = instance_type
        .strip_prefix("sbe-c.")
        .or_else(|| instance_type.strip_prefix("sbe-g."))?;
    let size = rest.strip_suffix("large")?;
    let digits = size.strip_suffix('x').unwrap_or(size);
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match (size.ends_with('x'), digits.is_empty()) {
        (false, true) => Some(2),
        (false, false) => None,
        (true, true) => Some(4),
        (true, false) => digits.parse::<u32>().ok().map(|n| n.saturating_mul(4)),
    }
}

/// Whether the instance type matches EKS Anywhere's accepted shape `^sbe-[cg]\.\d*x?large$`.
pub fn is_snow_instance_type(instance_type: &str) -> bool {
    let Some(rest) = instance_type
        .strip_prefix("sbe-c.")
        .or_else(|| instance_type.strip_prefix("sbe-g."))
    else {
        return false;
    };
    let Some(size) = rest.strip_suffix("large") else {
        return false;
    };
    let digits = size.strip_suffix('x').unwrap_or(size);
    digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_is_host_and_port_only() {
        for ok in [
            "public.ecr.aws",
            "783794618700.dkr.ecr.us-west-2.amazonaws.com",
            "Registry.Example:5000",
            "10.0.0.5:443",
            "[fe80::1]:5000",
            "[fe80::1]",
            "localhost",
        ] {
            assert_eq!(
                ok.parse::<RegistryHost>().map(|r| r.to_string()),
                Ok(ok.to_owned()),
                "{ok}"
            );
        }
        for bad in [
            "",
            "../../../../x",
            "/abs/dir",
            "..",
            ".",
            "a/b",
            "https://public.ecr.aws",
            "host:0",
            "host:99999",
            "host:",
            "*.example.com",
            "fe80::1",
            "[fe80::1]x",
            "host name",
            "host\\x",
        ] {
            assert!(bad.parse::<RegistryHost>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn instance_types_match_eksa() {
        for ok in [
            "sbe-c.large",
            "sbe-c.xlarge",
            "sbe-c.2xlarge",
            "sbe-g.4xlarge",
            "sbe-c.4large",
        ] {
            assert!(is_snow_instance_type(ok), "{ok}");
        }
        for bad in [
            "sbe-c-large",
            "sbe-c.elarge",
            "sbe-g.largex",
            "t3.large",
            "sbe-x.large",
            "",
        ] {
            assert!(!is_snow_instance_type(bad), "{bad}");
        }
        assert_eq!(instance_type_vcpus("sbe-c.large"), Some(2));
        assert_eq!(instance_type_vcpus("sbe-c.xlarge"), Some(4));
        assert_eq!(instance_type_vcpus("sbe-g.4xlarge"), Some(16));
    }

    #[test]
    fn versions() {
        assert_eq!(
            KubeVersion::parse("1.30"),
            Some(KubeVersion {
                major: 1,
                minor: 30
            })
        );
        assert_eq!(
            KubeVersion::parse("1.3"),
            Some(KubeVersion { major: 1, minor: 3 })
        );
        for bad in ["1.30.1", "v1.30", "1", "", "1.x", "1.30 "] {
            assert_eq!(KubeVersion::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_and_hosts() {
        assert!(is_qualified_name("node-role.kubernetes.io/control-plane"));
        assert!(is_qualified_name("app"));
        assert!(!is_qualified_name("-app"));
        assert!(!is_qualified_name("Bad_Prefix/x"));
        assert!(is_label_value(""));
        assert!(!is_label_value("has space"));
        assert!(is_domain_name("api.example.com"));
        assert!(!is_domain_name("api..example.com"));
        assert!(is_host("10.0.0.1"));
    }

    #[test]
    fn proxies() {
        assert_eq!(proxy_problem("http://10.0.0.1:3128"), None);
        assert_eq!(proxy_problem("proxy.example.com:3128"), None);
        assert_eq!(proxy_problem("https://proxy.example.com"), None);
        assert!(proxy_problem("proxy.example.com").is_some());
        assert!(proxy_problem("10.0.0.1:70000").is_some());
        assert!(proxy_problem("ftp://x:1").is_some());
    }
}
