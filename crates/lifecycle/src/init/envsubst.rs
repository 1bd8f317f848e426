//! clusterctl's variable substitution in components manifests (its simple processor over
//! drone/envsubst), rule for rule:
//!
//! - only `${...}` is special: `$VAR` and `$(VAR)` (Kubernetes' own expansion syntax) stay as
//!   written, and `$$` is a literal `$` (so `$${X}` gives the text `${X}`);
//! - `${ VAR }` is read as `${VAR}`;
//! - `${V:=d}`, `${V=d}`, `${V:-d}`, `${V:?d}` and `${V:+d}` all give V's value when it is not
//!   empty, else `d` (which may itself hold `${...}`);
//! - `${#V}` is the length of the value, `${V^^}`/`${V^}` upper-case it (all / the first letter),
//!   `${V,,}`/`${V,}` lower-case it;
//! - a variable is **missing** when it has no value and its default (from its first occurrence)
//!   is empty; every missing variable is reported at once, before anything is substituted.
//!
//! The other forms drone/envsubst accepts (substrings, prefix and suffix removal, replacement)
//! are refused with an error naming them rather than substituted differently.

use std::collections::BTreeMap;

/// A variable of a manifest, with the default of its first occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// The default text (`""` when none).
    pub default: String,
}

/// A `${...}` that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{expression}: {reason}")]
pub struct SubstError {
    /// The expression as written (cut to 80 characters).
    pub expression: String,
    /// Why.
    pub reason: String,
}

/// One parsed `${...}`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr {
    /// `${V}` or `${V<op>default}`.
    Value { name: String, default: String },
    /// `${#V}`.
    Length(String),
    /// `${V^^}`, `${V^}`, `${V,,}`, `${V,}`.
    Case {
        name: String,
        upper: bool,
        all: bool,
    },
}

impl Expr {
    fn name(&self) -> &str {
        match self {
            Expr::Value { name, .. } | Expr::Length(name) | Expr::Case { name, .. } => name,
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn error(expression: &str, reason: impl Into<String>) -> SubstError {
    SubstError {
        expression: expression.chars().take(80).collect(),
        reason: reason.into(),
    }
}

/// The end (exclusive, after the `}`) of the expression starting at `start` (`${`), counting
/// nested `${`.
fn closing(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'{') {
            depth += 1;
            i += 2;
            continue;
        }
        if bytes[i] == b'}' {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
        i += 1;
    }
    None
}

/// Parses the inside of `${...}` (without the braces).
fn parse(inner: &str, whole: &str) -> Result<Expr, SubstError> {
    let inner = inner.trim();
    if let Some(name) = inner.strip_prefix('#') {
        if !name.is_empty() && name.chars().all(is_name_char) {
            return Ok(Expr::Length(name.to_owned()));
        }
        return Err(error(whole, "not a variable length expression"));
    }
    let end = inner.find(|c| !is_name_char(c)).unwrap_or(inner.len());
    let (name, rest) = inner.split_at(end);
    if name.is_empty() {
        return Err(error(whole, "no variable name"));
    }
    let name = name.to_owned();
    let case = |upper, all| {
        Ok(Expr::Case {
            name: name.clone(),
            upper,
            all,
        })
    };
    match rest {
        "" => Ok(Expr::Value {
            name,
            default: String::new(),
        }),
        "^^" => case(true, true),
        "^" => case(true, false),
        ",," => case(false, true),
        "," => case(false, false),
        _ => {
            for op in [":=", ":-", ":?", ":+", "="] {
                if let Some(default) = rest.strip_prefix(op) {
                    return Ok(Expr::Value {
                        name,
                        default: default.to_owned(),
                    });
                }
            }
            if rest.starts_with('-') {
                return Err(error(whole, "missing closing brace"));
            }
            Err(error(
                whole,
                "this form is not supported by snowctl (use ${VAR}, ${VAR:=default} or ${VAR:-default})",
            ))
        }
    }
}

/// Walks `text`, calling `on_expr` for each `${...}` with its parsed form, and returns the text
/// with each replaced by what `on_expr` returns.
fn walk(
    text: &str,
    on_expr: &mut dyn FnMut(&Expr) -> Result<String, SubstError>,
) -> Result<String, SubstError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if tail.starts_with("${") {
            let end = closing(tail, 0).ok_or_else(|| error(tail, "missing closing brace"))?;
            let expr = parse(&tail[2..end - 1], &tail[..end])?;
            out.push_str(&on_expr(&expr)?);
            rest = &tail[end..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Every variable of `text`, in order of first occurrence, with the default of that occurrence
/// (variables only named inside a default are not listed, as in clusterctl).
pub fn variables(text: &str) -> Result<Vec<Variable>, SubstError> {
    let mut found: Vec<Variable> = Vec::new();
    walk(text, &mut |expr| {
        if !found.iter().any(|v| v.name == expr.name()) {
            let default = match expr {
                Expr::Value { default, .. } => default.clone(),
                _ => String::new(),
            };
            found.push(Variable {
                name: expr.name().to_owned(),
                default,
            });
        }
        Ok(String::new())
    })?;
    Ok(found)
}

/// The variables of `text` that have neither a value in `values` nor a default.
pub fn missing(
    text: &str,
    values: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, SubstError> {
    Ok(variables(text)?
        .into_iter()
        .filter(|v| v.default.is_empty() && values(&v.name).is_none())
        .map(|v| v.name)
        .collect())
}

/// `text` with every `${...}` replaced (check [`missing`] first: a missing variable becomes
/// empty text here).
pub fn substitute(
    text: &str,
    values: &dyn Fn(&str) -> Option<String>,
) -> Result<String, SubstError> {
    walk(text, &mut |expr| {
        let value = values(expr.name()).unwrap_or_default();
        Ok(match expr {
            Expr::Value { default, .. } if value.is_empty() => substitute(default, values)?,
            Expr::Value { .. } => value,
            Expr::Length(_) => value.chars().count().to_string(),
            Expr::Case { upper, all, .. } => {
                let change = |s: &str| {
                    if *upper {
                        s.to_uppercase()
                    } else {
                        s.to_lowercase()
                    }
                };
                if *all {
                    change(&value)
                } else {
                    let mut chars = value.chars();
                    match chars.next() {
                        Some(first) => change(&first.to_string()) + chars.as_str(),
                        None => String::new(),
                    }
                }
            }
        })
    })
}

/// Variable values: given ones first, then the environment (clusterctl's order: its own
/// settings, then the environment, where a variable set to the empty string counts as set).
#[derive(Clone, Default)]
pub struct Values {
    given: BTreeMap<String, String>,
    environment: BTreeMap<String, String>,
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values can be secrets (AWS_B64ENCODED_CREDENTIALS): names only.
        f.debug_struct("Values")
            .field("given", &self.given.keys().collect::<Vec<_>>())
            .field("environment", &self.environment.len())
            .finish()
    }
}

impl Values {
    /// Values from `given` (the Snow values) over `environment`.
    pub fn new(given: BTreeMap<String, String>, environment: BTreeMap<String, String>) -> Values {
        Values { given, environment }
    }

    /// Adds or replaces a given value.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.given.insert(name.to_owned(), value.into());
    }

    /// The value of `name`, if any.
    pub fn get(&self, name: &str) -> Option<String> {
        self.given
            .get(name)
            .or_else(|| self.environment.get(name))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn values_defaults_and_operators() {
        let values = env(&[("A", "a"), ("EMPTY", "")]);
        let cases = [
            ("x=${A}", "x=a"),
            ("${ A }", "a"),
            ("${A:=d}", "a"),
            ("${B:=d}", "d"),
            ("${B=d}", "d"),
            ("${B:-d}", "d"),
            ("${B:?d}", "d"),
            ("${B:+d}", "d"),
            ("${EMPTY:=d}", "d"),
            ("${B:=:8443}", ":8443"),
            ("${B:=${A}-x}", "a-x"),
            ("${#A}", "1"),
            ("${A^^}", "A"),
            ("$(POD_NAMESPACE) $A $$ $${A}", "$(POD_NAMESPACE) $A $ ${A}"),
        ];
        for (text, want) in cases {
            assert_eq!(substitute(text, &values).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn every_missing_variable_is_listed_with_first_defaults() {
        let text = "${X} ${Y:=} ${Z:=z} ${A} ${X:=late} ${W:=${INNER}}";
        let values = env(&[("A", "a")]);
        assert_eq!(missing(text, &values).unwrap(), ["X", "Y"]);
        let vars = variables(text).unwrap();
        assert_eq!(vars[0].default, "");
        assert!(vars.iter().all(|v| v.name != "INNER"));
        // Set to the empty string counts as set.
        assert!(missing("${E}", &env(&[("E", "")])).unwrap().is_empty());
    }

    #[test]
    fn unreadable_forms_are_errors() {
        for text in ["${A", "${A-d}", "${A:1:2}", "${}", "${A/x/y}"] {
            assert!(substitute(text, &env(&[])).is_err(), "{text}");
        }
    }
}
