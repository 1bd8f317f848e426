//! What a request names, checked before anything is looked up: repository names, tags and
//! digests as the OCI Distribution Spec defines them, and the rule that maps the name a node asks
//! for through a mirror to an image name of the archive.

/// The most characters of a repository name (clients cap a reference's host and name at 255).
pub const MAX_NAME: usize = 255;

/// The registry nodes pull from when a request names none: EKS Anywhere mirrors
/// `public.ecr.aws` when the spec lists no `ociNamespaces`, and containerd sends no `ns` for
/// images rewritten to the mirror's host (the kind bootstrap cluster's).
pub const DEFAULT_REGISTRY: &str = "public.ecr.aws";

/// Whether `name` is a repository name: `/`-separated components of `[a-z0-9]` runs joined by
/// `.`, `_`, `__` or runs of `-` (the spec's `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`), at most
/// [`MAX_NAME`] characters. `..`, empty components and upper case are not names.
pub fn is_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.split('/').all(is_component)
}

fn is_component(part: &str) -> bool {
    let bytes = part.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        // A separator: `.`, `_`, `__` or a run of `-`, between alphanumerics.
        let run = bytes[i..].iter().take_while(|b| **b == bytes[i]).count();
        let ok = match bytes[i] {
            b'.' => run == 1,
            b'_' => run <= 2,
            b'-' => true,
            _ => false,
        };
        if !ok {
            return false;
        }
        i += run;
    }
    true
}

/// Whether `tag` is a tag: `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
pub fn is_tag(tag: &str) -> bool {
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// Whether `digest` is a digest the archive can hold: `sha256:` and 64, or `sha512:` and 128,
/// lowercase hexadecimal digits.
pub fn is_digest(digest: &str) -> bool {
    let hex_ok = |hex: &str, len: usize| {
        hex.len() == len
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    match digest.split_once(':') {
        Some(("sha256", hex)) => hex_ok(hex, 64),
        Some(("sha512", hex)) => hex_ok(hex, 128),
        _ => false,
    }
}

/// An image name of the archive split into repository (with its registry host), tag and
/// digest: `public.ecr.aws/eks-distro/etcd:v3.5@sha256:…` → (`public.ecr.aws/eks-distro/etcd`,
/// `v3.5`, `sha256:…`).
pub fn split_image(image: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    // A `:` after the last `/` is the tag's (one before it is a host's port).
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], Some(&rest[slash + i + 1..]), digest),
        None => (rest, None, digest),
    }
}

/// How requested names map to the archive's: EKS Anywhere's `ociNamespaces` (registry →
/// namespace), as `registryMirrorConfiguration` gives them to the nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespaces {
    map: Vec<(String, String)>,
}

impl Namespaces {
    /// From `(registry, namespace)` pairs, as the spec's `ociNamespaces` lists them (an empty
    /// namespace maps the registry to the mirror's root, which needs no entry).
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Namespaces {
        let mut map: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(r, n)| (r, n.trim_matches('/').to_owned()))
            .filter(|(_, n)| !n.is_empty())
            .collect();
        // The longest namespace first, so `a/b` wins over `a`.
        map.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.cmp(b)));
        Namespaces { map }
    }

    /// The `(registry, namespace)` pairs.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.map
    }

    /// The archive names to try for a request of `path` (the name after `/v2/`) with the `ns`
    /// query parameter `ns` (the registry the node's reference names), in order:
    /// 1. a configured namespace at the start of `path` stripped, the rest under its registry
    ///    (only a namespace of `ns`'s registry when `ns` is given);
    /// 2. `ns/path`, or without `ns`, [`DEFAULT_REGISTRY`]`/path` and then `path` itself (a
    ///    client that puts the registry host in the path, as `skopeo` through a mirror prefix).
    pub fn candidates(&self, path: &str, ns: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        for (registry, namespace) in &self.map {
            if ns.is_some_and(|ns| ns != registry) {
                continue;
            }
            if let Some(rest) = path
                .strip_prefix(namespace.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                out.push(format!("{registry}/{rest}"));
            }
        }
        match ns {
            Some(ns) => out.push(format!("{ns}/{path}")),
            None => {
                out.push(format!("{DEFAULT_REGISTRY}/{path}"));
                out.push(path.to_owned());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_spec() {
        for good in [
            "a",
            "eks-distro/kubernetes/pause",
            "a.b/c__d/e--f",
            "x_y",
            "0",
        ] {
            assert!(is_name(good), "{good}");
        }
        for bad in [
            "", "A", "a/../b", "..", "a//b", "/a", "a/", "a..b", "a___b", "-a", "a.", "a%2e", "a b",
        ] {
            assert!(!is_name(bad), "{bad}");
        }
        assert!(!is_name(&"a".repeat(MAX_NAME + 1)));
    }

    #[test]
    fn tags_and_digests_follow_the_spec() {
        assert!(is_tag("v1.33.0-eks-1-33-9") && is_tag("_x") && !is_tag("-x") && !is_tag(""));
        assert!(!is_tag(&"a".repeat(129)) && !is_tag("a/b") && !is_tag("a:b"));
        let hex = "a".repeat(64);
        assert!(is_digest(&format!("sha256:{hex}")));
        assert!(!is_digest(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_digest("sha256:../../etc/passwd"));
        assert!(!is_digest(&format!("md5:{hex}")));
        assert!(is_digest(&format!("sha512:{}", "0".repeat(128))));
    }

    #[test]
    fn image_names_split_at_the_tag_not_the_port() {
        assert_eq!(
            split_image("public.ecr.aws/eks-distro/etcd:v3"),
            ("public.ecr.aws/eks-distro/etcd", Some("v3"), None)
        );
        assert_eq!(
            split_image("10.0.0.5:443/a/b@sha256:00"),
            ("10.0.0.5:443/a/b", None, Some("sha256:00"))
        );
        assert_eq!(
            split_image("localhost:5000/a:t@sha256:00"),
            ("localhost:5000/a", Some("t"), Some("sha256:00"))
        );
    }

    #[test]
    fn a_configured_namespace_is_stripped_before_the_name_is_tried_whole() {
        let ns = Namespaces::new([
            ("public.ecr.aws".into(), "eks-anywhere".into()),
            (
                "783794618700.dkr.ecr.us-west-2.amazonaws.com".into(),
                "curated-packages".into(),
            ),
        ]);
        assert_eq!(
            ns.candidates(
                "eks-anywhere/eks-anywhere/cli-tools",
                Some("public.ecr.aws")
            ),
            [
                "public.ecr.aws/eks-anywhere/cli-tools",
                "public.ecr.aws/eks-anywhere/eks-anywhere/cli-tools"
            ]
        );
        // Another registry's namespace is not stripped for this ns.
        assert_eq!(
            ns.candidates("curated-packages/x", Some("public.ecr.aws")),
            ["public.ecr.aws/curated-packages/x"]
        );
        assert_eq!(
            ns.candidates("eks-distro/kubernetes/pause", None),
            [
                "public.ecr.aws/eks-distro/kubernetes/pause",
                "eks-distro/kubernetes/pause"
            ]
        );
    }
}
