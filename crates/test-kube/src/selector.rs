//! Label selectors (`=`, `==`, `!=`, `in`, `notin`, `k`, `!k`; commas AND) and field selectors
//! (`metadata.name`, `metadata.namespace`).

use super::status::ApiError;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

/// Splits on commas outside parentheses.
fn terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn set(values: &str) -> Option<Vec<String>> {
    let inner = values.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

impl LabelSelector {
    pub(crate) fn parse(s: &str) -> Result<LabelSelector, ApiError> {
        let bad =
            |t: &str| ApiError::bad_request(format!("unable to parse requirement: found '{t}'"));
        let mut reqs = Vec::new();
        for term in terms(s) {
            let req = if let Some(key) = term.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEquals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("==") {
                Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once('=') {
                Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once(" notin ") {
                Requirement::NotIn(k.trim().to_owned(), set(v).ok_or_else(|| bad(term))?)
            } else if let Some((k, v)) = term.split_once(" in ") {
                Requirement::In(k.trim().to_owned(), set(v).ok_or_else(|| bad(term))?)
            } else {
                Requirement::Exists(term.to_owned())
            };
            let key = match &req {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(bad(term));
            }
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    /// A selector as objects hold it (`matchLabels`, `matchExpressions` with `In`, `NotIn`,
    /// `Exists`, `DoesNotExist`).
    pub(crate) fn from_object(selector: &Value) -> Result<LabelSelector, ApiError> {
        let bad = |why: String| ApiError::bad_request(why);
        let mut reqs = Vec::new();
        for (k, v) in selector["matchLabels"].as_object().into_iter().flatten() {
            let v = v
                .as_str()
                .ok_or_else(|| bad(format!("matchLabels[{k}]: not a string")))?;
            reqs.push(Requirement::Equals(k.clone(), v.to_owned()));
        }
        for e in selector["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let key = e["key"].as_str().unwrap_or_default().to_owned();
            if !valid_key(&key) {
                return Err(bad(format!("matchExpressions: invalid key {key:?}")));
            }
            let values: Vec<String> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            reqs.push(match e["operator"].as_str().unwrap_or_default() {
                "In" => Requirement::In(key, values),
                "NotIn" => Requirement::NotIn(key, values),
                "Exists" => Requirement::Exists(key),
                "DoesNotExist" => Requirement::NotExists(key),
                other => {
                    return Err(bad(format!(
                        "{other:?} is not a valid label selector operator"
                    )));
                }
            });
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether it selects everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label = |k: &str| labels.get(k).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => !label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
        })
    }
}

/// A parsed field selector over `metadata.name` and `metadata.namespace`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub(crate) fn parse(s: &str) -> Result<FieldSelector, ApiError> {
        let mut reqs = Vec::new();
        for term in terms(s) {
            let (field, equal, value) = if let Some((k, v)) = term.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = term.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = term.split_once('=') {
                (k, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                )));
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            reqs.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(FieldSelector(reqs))
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let actual = match field.as_str() {
                "metadata.name" => object["metadata"]["name"].as_str(),
                _ => object["metadata"]["namespace"].as_str(),
            }
            .unwrap_or_default();
            (actual == value) == *equal
        })
    }
}
