//! Hiding what secret variables put into a manifest ([`super::envsubst::Values::is_secret`]):
//! wherever the substituted text lands (a Secret, a ConfigMap, an annotation, a key, an error
//! message), what is printed shows [`REDACTED`] in its place.

use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// What a hidden value is shown as.
pub const REDACTED: &str = "<redacted>";

/// The texts secret variables were replaced with, each found and hidden wherever it appears in
/// full.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Longest first, so a secret holding another is hidden whole.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secret texts)", self.secrets.len())
    }
}

impl Redactor {
    /// A redactor of `secrets` (empty ones are left out).
    pub fn new(secrets: BTreeSet<String>) -> Redactor {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Redactor { secrets }
    }

    /// Whether it hides nothing.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Adds what `other` hides.
    pub fn extend(&mut self, other: &Redactor) {
        let all: BTreeSet<String> = self
            .secrets
            .drain(..)
            .chain(other.secrets.iter().cloned())
            .collect();
        *self = Redactor::new(all);
    }

    /// `text` with each secret replaced by [`REDACTED`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
        out
    }

    /// `value` with each secret replaced in every string and every key.
    pub fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact(s).into_owned()),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.redact(k).into_owned(), self.value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_hidden_in_values_keys_and_text() {
        let r = Redactor::new(
            [
                "s3cr3t".to_owned(),
                "s3cr3t-longer".to_owned(),
                String::new(),
            ]
            .into(),
        );
        let object =
            json!({"data": {"a": "x-s3cr3t-longer-y", "s3cr3t": ["s3cr3t", 1]}, "n": "plain"});
        assert_eq!(
            r.value(&object),
            json!({"data": {"a": "x-<redacted>-y", "<redacted>": ["<redacted>", 1]}, "n": "plain"})
        );
        assert_eq!(r.redact("no secret"), "no secret");
        assert!(!format!("{r:?}").contains("s3cr3t"));
        assert!(Redactor::default().is_empty());
    }
}
