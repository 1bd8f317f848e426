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
//!
//! Where clusterctl has no bound, this module has two, so a hostile manifest is an error naming
//! its line, not gigabytes: `${` nested at most [`MAX_DEPTH`] deep, and at most
//! [`MAX_SUBSTITUTED_BYTES`] of text made from one manifest. The text a secret variable
//! ([`Values::is_secret`]) put into a manifest is kept aside ([`Substituted::secrets`]) so that
//! what is printed from the manifest can hide it.

use super::redact::Redactor;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// How deep `${` may nest (a default holding `${...}` is one level deeper). clusterctl's own
/// manifests nest one deep (no default names another variable); 8 leaves room for hand-written
/// ones, while each byte of a manifest is scanned at most 8 times.
pub const MAX_DEPTH: usize = 8;

/// The most text substitution may make of one manifest: twice the most a components file may
/// hold ([`super::source::MAX_COMPONENTS_BYTES`], 16 MiB, also the archive's and the download's
/// bound), so a file at the read limit can still have its variables replaced, and what reading
/// bounds cannot grow by more than that again (the largest real manifest, about 1.2 MB, grows
/// by a few KiB).
pub const MAX_SUBSTITUTED_BYTES: usize = 32 << 20;

/// Missing variables named per component in a message; the rest are counted ("… and N more").
/// A real stack lacks two at most (the device credentials). Defined beside the error that lists
/// them ([`crate::LifecycleError::MissingVariables`]).
pub use crate::error::MAX_MISSING_LISTED;

/// A variable of a manifest, with the default of its first occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// The default text (`""` when none).
    pub default: String,
}

/// A `${...}` that cannot be read or substituted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}, {expression}: {reason}")]
pub struct SubstError {
    /// The line of the manifest (1-based) where the expression starts.
    pub line: usize,
    /// Its column (1-based, in characters).
    pub column: usize,
    /// The expression as written (cut to 80 characters).
    pub expression: String,
    /// Why.
    pub reason: String,
}

/// One parsed `${...}`; a default is a range of the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expr<'a> {
    /// `${V}` or `${V<op>default}`.
    Value {
        name: &'a str,
        default: (usize, usize),
    },
    /// `${#V}`.
    Length(&'a str),
    /// `${V^^}`, `${V^}`, `${V,,}`, `${V,}`.
    Case {
        name: &'a str,
        upper: bool,
        all: bool,
    },
}

impl<'a> Expr<'a> {
    fn name(&self) -> &'a str {
        match self {
            Expr::Value { name, .. } | Expr::Length(name) | Expr::Case { name, .. } => name,
        }
    }
}

/// What a walk over a manifest meets: text as it stays (with its start), or an expression
/// (`at..end` is the whole `${...}`).
#[derive(Clone, Copy)]
enum Piece<'a> {
    Text(&'a str, usize),
    Expr(Expr<'a>, usize, usize),
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A manifest as written: every position is a byte offset into it.
#[derive(Clone, Copy)]
struct Manifest<'a> {
    text: &'a str,
}

impl<'a> Manifest<'a> {
    /// An error about `text[at..end]`, with its line and column.
    fn error(&self, at: usize, end: usize, reason: impl Into<String>) -> SubstError {
        let (line, column) = line_column(self.text, at);
        SubstError {
            line,
            column,
            expression: self.text[at..end].chars().take(80).collect(),
            reason: reason.into(),
        }
    }

    /// The end (exclusive, after the `}`) of the expression at `at` (`${`), within `..end`,
    /// counting nested `${`; `depth` is how deep `at` is nested already.
    fn closing(&self, at: usize, end: usize, depth: usize) -> Result<usize, SubstError> {
        let bytes = self.text.as_bytes();
        let mut open = 0usize;
        let mut i = at;
        while i < end {
            if bytes[i] == b'$' && i + 1 < end && bytes[i + 1] == b'{' {
                open += 1;
                if depth + open > MAX_DEPTH {
                    return Err(self.error(
                        at,
                        end,
                        format!("`${{` is nested more than {MAX_DEPTH} deep"),
                    ));
                }
                i += 2;
                continue;
            }
            if bytes[i] == b'}' {
                open -= 1;
                if open == 0 {
                    return Ok(i + 1);
                }
            }
            i += 1;
        }
        Err(self.error(at, end, "missing closing brace"))
    }

    /// Parses the expression `text[at..end]` (`${...}`).
    fn parse(&self, at: usize, end: usize) -> Result<Expr<'a>, SubstError> {
        let text = self.text;
        let fail = |reason: &str| Err(self.error(at, end, reason));
        let raw = &text[at + 2..end - 1];
        let inner = raw.trim();
        let start = at + 2 + (raw.len() - raw.trim_start().len());
        if let Some(name) = inner.strip_prefix('#') {
            if !name.is_empty() && name.chars().all(is_name_char) {
                return Ok(Expr::Length(name));
            }
            return fail("not a variable length expression");
        }
        let split = inner.find(|c| !is_name_char(c)).unwrap_or(inner.len());
        let (name, rest) = inner.split_at(split);
        if name.is_empty() {
            return fail("no variable name");
        }
        let case = |upper, all| Ok(Expr::Case { name, upper, all });
        match rest {
            "" => Ok(Expr::Value {
                name,
                default: (end, end),
            }),
            "^^" => case(true, true),
            "^" => case(true, false),
            ",," => case(false, true),
            "," => case(false, false),
            _ => {
                for op in [":=", ":-", ":?", ":+", "="] {
                    if rest.starts_with(op) {
                        let from = start + split + op.len();
                        return Ok(Expr::Value {
                            name,
                            default: (from, start + inner.len()),
                        });
                    }
                }
                if rest.starts_with('-') {
                    return fail("missing closing brace");
                }
                fail(
                    "this form is not supported by snowctl (use ${VAR}, ${VAR:=default} or ${VAR:-default})",
                )
            }
        }
    }

    /// Walks `text[start..end]`, `depth` deep, calling `visit` for each piece in order.
    fn walk(
        &self,
        start: usize,
        end: usize,
        depth: usize,
        visit: &mut dyn FnMut(Piece<'a>) -> Result<(), SubstError>,
    ) -> Result<(), SubstError> {
        let text = self.text;
        let mut i = start;
        while let Some(found) = text[i..end].find('$') {
            let at = i + found;
            if at > i {
                visit(Piece::Text(&text[i..at], i))?;
            }
            let tail = &text[at..end];
            if tail.starts_with("$$") {
                visit(Piece::Text("$", at))?;
                i = at + 2;
            } else if tail.starts_with("${") {
                let close = self.closing(at, end, depth)?;
                visit(Piece::Expr(self.parse(at, close)?, at, close))?;
                i = close;
            } else {
                visit(Piece::Text("$", at))?;
                i = at + 1;
            }
        }
        if i < end {
            visit(Piece::Text(&text[i..end], i))?;
        }
        Ok(())
    }
}

/// The line and column (1-based; the column in characters) of byte `at` of `text`.
pub(crate) fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// Every variable of `text`, in order of first occurrence, with the default of that occurrence
/// (variables only named inside a default are not listed, as in clusterctl).
pub fn variables(text: &str) -> Result<Vec<Variable>, SubstError> {
    let manifest = Manifest { text };
    let mut found: Vec<Variable> = Vec::new();
    // Linear in the number of variables, however many there are.
    let mut seen: HashSet<&str> = HashSet::new();
    manifest.walk(0, text.len(), 0, &mut |piece| {
        if let Piece::Expr(expr, ..) = piece
            && seen.insert(expr.name())
        {
            let default = match expr {
                Expr::Value {
                    default: (from, to),
                    ..
                } => text[from..to].to_owned(),
                _ => String::new(),
            };
            found.push(Variable {
                name: expr.name().to_owned(),
                default,
            });
        }
        Ok(())
    })?;
    Ok(found)
}

/// The variables of `text` that have neither a value in `values` nor a default.
pub fn missing(text: &str, values: &Values) -> Result<Vec<String>, SubstError> {
    Ok(variables(text)?
        .into_iter()
        .filter(|v| v.default.is_empty() && values.get(&v.name).is_none())
        .map(|v| v.name)
        .collect())
}

/// A manifest with its variables substituted.
pub struct Substituted {
    /// The text.
    pub text: String,
    /// What secret variables put into it.
    pub secrets: Redactor,
}

impl std::fmt::Debug for Substituted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The text can hold secrets.
        f.debug_struct("Substituted")
            .field("bytes", &self.text.len())
            .field("secrets", &self.secrets)
            .finish()
    }
}

/// Substitution into one growing text, bounded.
struct Substituter<'a, 'v> {
    manifest: Manifest<'a>,
    values: &'v Values,
    max_bytes: usize,
    out: String,
    /// Bytes made so far (with `count_only`, the text itself is not kept).
    made: usize,
    count_only: bool,
    secrets: BTreeSet<String>,
    /// With `Some((offset, None))`: the start of the top-level piece that made byte `offset`
    /// of the text, once found.
    locate: Option<(usize, Option<usize>)>,
}

impl Substituter<'_, '_> {
    fn push(&mut self, text: &str, at: usize, end: usize) -> Result<(), SubstError> {
        if self.made + text.len() > self.max_bytes {
            return Err(self.manifest.error(
                at,
                end,
                format!(
                    "with its variables substituted the manifest would be larger than {} MiB",
                    self.max_bytes >> 20
                ),
            ));
        }
        self.made += text.len();
        if !self.count_only {
            self.out.push_str(text);
        }
        Ok(())
    }

    fn range(&mut self, start: usize, end: usize, depth: usize) -> Result<(), SubstError> {
        let manifest = self.manifest;
        manifest.walk(start, end, depth, &mut |piece| {
            let before = self.made;
            let at = match piece {
                Piece::Text(text, at) => {
                    self.push(text, at, at + text.len())?;
                    at
                }
                Piece::Expr(expr, at, end) => {
                    self.expr(expr, at, end, depth)?;
                    at
                }
            };
            if depth == 0
                && let Some((offset, found @ None)) = &mut self.locate
                && self.made > *offset
            {
                // Text keeps its place; a substituted value points at its `${`.
                *found = Some(match piece {
                    Piece::Text(..) => at + (*offset - before),
                    Piece::Expr(..) => at,
                });
            }
            Ok(())
        })
    }

    fn expr(
        &mut self,
        expr: Expr<'_>,
        at: usize,
        end: usize,
        depth: usize,
    ) -> Result<(), SubstError> {
        let value = self.values.get(expr.name()).unwrap_or_default();
        let text = match expr {
            Expr::Value {
                default: (from, to),
                ..
            } if value.is_empty() => return self.range(from, to, depth + 1),
            Expr::Value { .. } => value,
            Expr::Length(_) => return self.push(&value.chars().count().to_string(), at, end),
            Expr::Case { upper, all, .. } => {
                let change = |s: &str| {
                    if upper {
                        s.to_uppercase()
                    } else {
                        s.to_lowercase()
                    }
                };
                if all {
                    change(&value)
                } else {
                    let mut chars = value.chars();
                    match chars.next() {
                        Some(first) => change(&first.to_string()) + chars.as_str(),
                        None => String::new(),
                    }
                }
            }
        };
        if !self.count_only
            && !text.is_empty()
            && self.values.is_secret(expr.name())
            && !self.secrets.contains(&text)
        {
            self.secrets.insert(text.clone());
        }
        self.push(&text, at, end)
    }
}

fn substituter<'a, 'v>(text: &'a str, values: &'v Values) -> Substituter<'a, 'v> {
    Substituter {
        manifest: Manifest { text },
        values,
        max_bytes: MAX_SUBSTITUTED_BYTES,
        out: String::new(),
        made: 0,
        count_only: false,
        secrets: BTreeSet::new(),
        locate: None,
    }
}

/// `text` with every `${...}` replaced (check [`missing`] first: a missing variable becomes
/// empty text here), at most [`MAX_SUBSTITUTED_BYTES`] of it.
pub fn substitute(text: &str, values: &Values) -> Result<Substituted, SubstError> {
    substitute_at_most(text, values, MAX_SUBSTITUTED_BYTES)
}

fn substitute_at_most(
    text: &str,
    values: &Values,
    max_bytes: usize,
) -> Result<Substituted, SubstError> {
    let mut s = substituter(text, values);
    s.max_bytes = max_bytes;
    s.out.reserve(text.len());
    s.range(0, text.len(), 0)?;
    Ok(Substituted {
        text: s.out,
        secrets: Redactor::new(s.secrets),
    })
}

/// Where byte `offset` of `substitute(text, values)`'s text comes from in `text`: the same
/// character for text that stays, the start of the `${...}` for a substituted value (so a
/// message can point at the line as written and never show a value). `None` when `text` does
/// not substitute (it always does after [`substitute`] succeeded with the same values).
pub fn source_offset(text: &str, values: &Values, offset: usize) -> Option<usize> {
    let mut s = substituter(text, values);
    s.count_only = true;
    s.locate = Some((offset, None));
    s.range(0, text.len(), 0).ok()?;
    match s.locate {
        Some((_, Some(at))) => Some(at),
        // Past the end (an error at the end of the stream).
        _ => Some(text.len()),
    }
}

/// Words of a variable's name that make it secret wherever its value comes from (clusterctl
/// providers' own names: `AWS_B64ENCODED_CREDENTIALS`, `VSPHERE_PASSWORD`,
/// `AZURE_CLIENT_SECRET`, `GITHUB_TOKEN`).
const SECRET_NAME_WORDS: [&str; 6] = [
    "B64ENCODED",
    "CREDENTIALS",
    "PASSWORD",
    "SECRET",
    "TOKEN",
    "KEY",
];

/// Variable values: given ones first, then the environment (clusterctl's order: its own
/// settings, then the environment, where a variable set to the empty string counts as set).
#[derive(Clone, Default)]
pub struct Values {
    given: BTreeMap<String, String>,
    environment: BTreeMap<String, String>,
    secret: BTreeSet<String>,
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
        Values {
            given,
            environment,
            secret: BTreeSet::new(),
        }
    }

    /// Adds or replaces a given value.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.given.insert(name.to_owned(), value.into());
    }

    /// Adds or replaces a given value that is a secret (the device credentials): see
    /// [`Values::is_secret`].
    pub fn set_secret(&mut self, name: &str, value: impl Into<String>) {
        self.set(name, value);
        self.secret.insert(name.to_owned());
    }

    /// The value of `name`, if any.
    pub fn get(&self, name: &str) -> Option<String> {
        self.given
            .get(name)
            .or_else(|| self.environment.get(name))
            .cloned()
    }

    /// Whether what `name` gives is hidden in what is printed from a manifest: a value given
    /// with [`Values::set_secret`], or a name with one of the words `B64ENCODED`,
    /// `CREDENTIALS`, `PASSWORD`, `SECRET`, `TOKEN` or `KEY` (between `_`).
    pub fn is_secret(&self, name: &str) -> bool {
        self.secret.contains(name)
            || name
                .split('_')
                .any(|word| SECRET_NAME_WORDS.contains(&word.to_ascii_uppercase().as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Values {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Values::new(BTreeMap::new(), map)
    }

    fn text(text: &str, values: &Values) -> String {
        substitute(text, values).unwrap().text
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
            ("${ B:= x }", " x"),
            ("${#A}", "1"),
            ("${A^^}", "A"),
            ("$(POD_NAMESPACE) $A $$ $${A}", "$(POD_NAMESPACE) $A $ ${A}"),
        ];
        for (input, want) in cases {
            assert_eq!(text(input, &values), want, "{input}");
        }
    }

    #[test]
    fn every_missing_variable_is_listed_with_first_defaults() {
        let input = "${X} ${Y:=} ${Z:=z} ${A} ${X:=late} ${W:=${INNER}}";
        let values = env(&[("A", "a")]);
        assert_eq!(missing(input, &values).unwrap(), ["X", "Y"]);
        let vars = variables(input).unwrap();
        assert_eq!(vars[0].default, "");
        assert_eq!(vars[2].default, "z");
        assert_eq!(vars[4].default, "${INNER}");
        assert!(vars.iter().all(|v| v.name != "INNER"));
        // Set to the empty string counts as set.
        assert!(missing("${E}", &env(&[("E", "")])).unwrap().is_empty());
    }

    #[test]
    fn unreadable_forms_are_errors_with_their_line() {
        for input in ["${A", "${A-d}", "${A:1:2}", "${}", "${A/x/y}"] {
            let err = substitute(&format!("a: 1\nb: x{input}\n"), &env(&[])).unwrap_err();
            assert_eq!((err.line, err.column), (2, 5), "{input}: {err}");
        }
    }

    #[test]
    fn nesting_is_bounded_at_its_line() {
        let deep = |n: usize| format!("a: 1\nb: {}{}\n", "${A:=".repeat(n), "}".repeat(n));
        assert_eq!(text(&deep(MAX_DEPTH), &env(&[])), "a: 1\nb: \n");
        // The line: 100,000 deep (it took 2 GB and aborted).
        for input in [deep(MAX_DEPTH + 1), deep(100_000)] {
            let err = substitute(&input, &env(&[])).unwrap_err();
            assert_eq!((err.line, err.column), (2, 4), "{err}");
            assert!(err.reason.contains("nested more than 8 deep"), "{err}");
            assert!(err.expression.chars().count() <= 80);
            assert!(variables(&input).is_err());
        }
    }

    #[test]
    fn the_substituted_text_is_bounded() {
        let values = env(&[("BIG", &"b".repeat(1 << 20))]);
        let input = "k: x\nv: ${BIG}${BIG}${BIG}\n";
        assert_eq!(
            substitute_at_most(input, &values, 3 << 20)
                .unwrap_err()
                .line,
            2
        );
        let err = substitute_at_most(input, &values, (3 << 20) + 20).unwrap();
        assert_eq!(err.text.len(), (3 << 20) + 9);
        // The real bound: 33 copies of 1 MiB are past it.
        let err = substitute(&"${BIG}".repeat(33), &values).unwrap_err();
        assert!(err.reason.contains("larger than 32 MiB"), "{err}");
    }

    #[test]
    fn thousands_of_variables_are_listed_once_each() {
        let input: String = (0..50_000).map(|i| format!("${{V{i}}}${{V{i}}}")).collect();
        let vars = missing(&input, &env(&[])).unwrap();
        assert_eq!(vars.len(), 50_000);
        assert_eq!(vars[49_999], "V49999");
    }

    #[test]
    fn source_offsets_point_at_the_text_as_written() {
        let values = env(&[("A", "value-a"), ("B", "")]);
        let input = "k: ${A} x $$ ${B:=d}!";
        let out = text(input, &values);
        assert_eq!(out, "k: value-a x $ d!");
        let at = |o: usize| source_offset(input, &values, o).unwrap();
        assert_eq!(at(0), 0);
        assert_eq!(at(3), 3); // inside the value: its `${`
        assert_eq!(at(9), 3);
        assert_eq!(at(11), 8); // `x`
        assert_eq!(at(13), 10); // the `$` of `$$`
        assert_eq!(at(15), 13); // the default
        assert_eq!(at(16), 20); // `!`
        assert_eq!(at(17), input.len());
    }

    #[test]
    fn secret_variables_are_kept_aside() {
        let mut values = env(&[("DB_PASSWORD", "pw1"), ("PLAIN", "p")]);
        values.set_secret("DEVICE", "dev");
        let done = substitute(
            "${DB_PASSWORD} ${DEVICE^^} ${#DEVICE} ${PLAIN} ${X:=${DEVICE}}",
            &values,
        )
        .unwrap();
        assert_eq!(done.text, "pw1 DEV 3 p dev");
        assert_eq!(
            done.secrets.redact(&done.text),
            "<redacted> <redacted> 3 p <redacted>"
        );
        assert!(!format!("{done:?}").contains("pw1"));
        for name in ["AWS_B64ENCODED_CREDENTIALS", "VSPHERE_PASSWORD", "DEVICE"] {
            assert!(values.is_secret(name), "{name}");
        }
        for name in ["PLAIN", "CAPI_DIAGNOSTICS_ADDRESS", "KEYRING_PATHX"] {
            assert!(!values.is_secret(name), "{name}");
        }
    }
}
