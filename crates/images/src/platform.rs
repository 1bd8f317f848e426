//! Which platforms of a multi-platform image (an index) are kept.

use crate::ImagesError;
use serde_json::Value;
use std::fmt;

/// One platform, `OS/ARCH[/VARIANT]` (e.g. `linux/amd64`, `linux/arm64/v8`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Platform {
    /// `linux`.
    pub os: String,
    /// `amd64`, `arm64`, …
    pub architecture: String,
    /// `v8`, `v7`, … when given (an entry without a variant matches any variant asked for).
    pub variant: Option<String>,
}

impl Platform {
    /// linux/amd64, what Snow devices run.
    pub fn linux_amd64() -> Platform {
        Platform {
            os: "linux".into(),
            architecture: "amd64".into(),
            variant: None,
        }
    }

    /// Parses `OS/ARCH[/VARIANT]`.
    pub fn parse(text: &str) -> Result<Platform, ImagesError> {
        let parts: Vec<&str> = text.trim().split('/').collect();
        let bad = || ImagesError::InvalidPlatform {
            platform: text.to_owned(),
        };
        let valid =
            |s: &&str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !(2..=3).contains(&parts.len()) || !parts.iter().all(valid) {
            return Err(bad());
        }
        Ok(Platform {
            os: parts[0].to_owned(),
            architecture: parts[1].to_owned(),
            variant: parts.get(2).map(|v| (*v).to_owned()),
        })
    }

    /// Whether an index entry (its `platform` object) is this platform.
    pub fn matches(&self, entry: &Value) -> bool {
        let platform = entry.get("platform");
        let field = |k: &str| platform.and_then(|p| p.get(k)).and_then(Value::as_str);
        field("os") == Some(self.os.as_str())
            && field("architecture") == Some(self.architecture.as_str())
            && match (&self.variant, field("variant")) {
                (Some(wanted), Some(found)) => wanted == found,
                _ => true,
            }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(v) = &self.variant {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

/// The platforms kept of an index: all of them (the index byte for byte) or the ones listed
/// (the index rewritten to those entries when some are dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Platforms {
    /// Every platform; the index is kept as it is.
    All,
    /// Only these.
    Only(Vec<Platform>),
}

impl Default for Platforms {
    /// linux/amd64 only.
    fn default() -> Self {
        Platforms::Only(vec![Platform::linux_amd64()])
    }
}

impl Platforms {
    /// `all` or a list of `OS/ARCH[/VARIANT]`; an empty list is linux/amd64.
    pub fn parse(texts: &[String]) -> Result<Platforms, ImagesError> {
        if texts.iter().any(|t| t.trim() == "all") {
            return Ok(Platforms::All);
        }
        if texts.is_empty() {
            return Ok(Platforms::default());
        }
        let mut list = texts
            .iter()
            .flat_map(|t| t.split(','))
            .map(Platform::parse)
            .collect::<Result<Vec<_>, _>>()?;
        list.sort();
        list.dedup();
        Ok(Platforms::Only(list))
    }

    /// Whether an index entry is kept.
    pub fn keeps(&self, entry: &Value) -> bool {
        match self {
            Platforms::All => true,
            Platforms::Only(list) => list.iter().any(|p| p.matches(entry)),
        }
    }
}

impl fmt::Display for Platforms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Platforms::All => f.write_str("all platforms"),
            Platforms::Only(list) => {
                let names: Vec<String> = list.iter().map(ToString::to_string).collect();
                f.write_str(&names.join(", "))
            }
        }
    }
}

/// An index reduced to the kept platforms: its body and digest (the original's when every entry
/// is kept) and the kept entries.
pub(crate) struct ReducedIndex {
    pub(crate) body: bytes::Bytes,
    pub(crate) digest: String,
    pub(crate) entries: Vec<Value>,
}

/// Keeps the entries of `index` (whose bytes are `body`, digest `digest`) that `platforms`
/// keeps; a rewritten index is serialized anew and gets its own digest. `name` is the image, for
/// the error when nothing is left.
pub(crate) fn reduce_index(
    index: &Value,
    body: bytes::Bytes,
    digest: String,
    platforms: &Platforms,
    name: &str,
) -> Result<ReducedIndex, String> {
    let entries: Vec<Value> = index
        .get("manifests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let kept: Vec<Value> = entries
        .iter()
        .filter(|e| platforms.keeps(e))
        .cloned()
        .collect();
    if kept.is_empty() {
        return Err(format!(
            "{name} has no image for {platforms} (platforms of the index: {})",
            entries
                .iter()
                .filter_map(|e| e.get("platform"))
                .map(|p| {
                    let f = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("?");
                    format!("{}/{}", f("os"), f("architecture"))
                })
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if kept.len() == entries.len() {
        return Ok(ReducedIndex {
            body,
            digest,
            entries: kept,
        });
    }
    let mut rewritten = index.clone();
    rewritten["manifests"] = Value::Array(kept.clone());
    let bytes = serde_json::to_vec_pretty(&rewritten)
        .map_err(|e| format!("rewriting the index of {name}: {e}"))?;
    Ok(ReducedIndex {
        digest: crate::registry::sha256(&bytes),
        body: bytes::Bytes::from(bytes),
        entries: kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platforms_parse_and_match() {
        let arm: Value = serde_json::json!({"platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}});
        let amd: Value = serde_json::json!({"platform": {"os": "linux", "architecture": "amd64"}});
        let default = Platforms::parse(&[]).unwrap();
        assert!(default.keeps(&amd) && !default.keeps(&arm));
        let both = Platforms::parse(&["linux/amd64,linux/arm64/v8".into()]).unwrap();
        assert!(both.keeps(&amd) && both.keeps(&arm));
        assert!(
            !Platforms::parse(&["linux/arm64/v7".into()])
                .unwrap()
                .keeps(&arm)
        );
        assert_eq!(Platforms::parse(&["all".into()]).unwrap(), Platforms::All);
        assert!(Platforms::parse(&["amd64".into()]).is_err());
        assert!(Platforms::parse(&["linux/".into()]).is_err());
        assert_eq!(both.to_string(), "linux/amd64, linux/arm64/v8");
    }
}
