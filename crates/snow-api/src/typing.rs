//! Strict typing of a located YAML tree against a CRD's OpenAPI schema.
//!
//! This is what an API server with strict field validation does, but it reports *every* unknown
//! field, wrong type and out-of-range value with its position instead of the first one, and it
//! types scalars by the schema: `kubernetesVersion: 1.30` is the string `"1.30"`, not a float.
//! What cannot be typed is left out of the resulting JSON (and its path remembered), so the typed
//! value still deserialises and semantic validation can run on the rest.

use crate::{
    finding::{Finding, Location, shorten},
    limits::MAX_SUGGESTED_KEY_BYTES,
    yaml::{Node, NodeKind},
};
use serde_json::{Map, Number, Value};
use std::{
    collections::{HashMap, HashSet},
    sync::LazyLock,
};

/// Positions of the fields of one object, by field path.
///
/// Recorded for every field but looked up only for findings, so a list (no hashing) is the
/// cheaper store.
#[derive(Debug, Default, Clone)]
pub struct Positions {
    entries: Vec<(String, Location)>,
}

impl Positions {
    /// Records where `path` is written; the first record of a path wins.
    pub fn insert(&mut self, path: &str, at: Location) {
        self.entries.push((path.to_owned(), at));
    }

    /// An index for many look-ups.
    pub fn index(&self) -> PositionIndex<'_> {
        let mut by_path = HashMap::with_capacity(self.entries.len());
        for (path, at) in &self.entries {
            by_path.entry(path.as_str()).or_insert(*at);
        }
        PositionIndex { by_path }
    }

    /// Where `path` is written, or else its nearest written ancestor (one look-up; use
    /// [`Positions::index`] for many).
    pub fn locate(&self, path: &str) -> Option<Location> {
        self.index().locate(path)
    }
}

/// Positions indexed by path.
#[derive(Debug)]
pub struct PositionIndex<'a> {
    by_path: HashMap<&'a str, Location>,
}

impl PositionIndex<'_> {
    /// Where `path` is written, or else its nearest written ancestor.
    pub fn locate(&self, path: &str) -> Option<Location> {
        let mut current = path;
        loop {
            if let Some(at) = self.by_path.get(current) {
                return Some(*at);
            }
            let cut = current.rfind(['.', '['])?;
            current = &current[..cut];
        }
    }
}

/// The typing context of one object.
pub struct Typer<'a> {
    object: &'a str,
    /// Findings from typing.
    pub findings: Vec<Finding>,
    /// Field positions.
    pub positions: Positions,
    /// Paths whose values were dropped because they could not be typed.
    pub broken: HashSet<String>,
}

/// Joins a field name onto a path: `a.b`, or `a["x.y/z"]` for keys that are not plain names.
///
/// A key longer than [`crate::limits::MAX_SHOWN_CHARS`] is shortened (see [`shorten`]): paths
/// end up in messages.
pub fn child_path(path: &str, key: &str) -> String {
    let key = shorten(key);
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.into_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key:?}]"),
    }
}

fn type_name(schema: &Value) -> &str {
    schema.get("type").and_then(Value::as_str).unwrap_or("")
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// The schema used for `metadata`: the ObjectMeta fields a spec file may carry.
static METADATA_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let string_map =
        serde_json::json!({"type": "object", "additionalProperties": {"type": "string"}});
    let free = serde_json::json!({"x-kubernetes-preserve-unknown-fields": true});
    serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "namespace": {"type": "string"},
            "generateName": {"type": "string"},
            "labels": string_map,
            "annotations": string_map,
            "uid": {"type": "string"},
            "resourceVersion": {"type": "string"},
            "generation": {"type": "integer"},
            "creationTimestamp": free,
            "deletionTimestamp": free,
            "deletionGracePeriodSeconds": {"type": "integer"},
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "ownerReferences": {"type": "array", "items": free},
            "managedFields": {"type": "array", "items": free},
            "selfLink": {"type": "string"},
        }
    })
});

impl<'a> Typer<'a> {
    /// A typer for the object named `object` (`Kind/name`).
    pub fn new(object: &'a str) -> Self {
        Typer {
            object,
            findings: Vec::new(),
            positions: Positions::default(),
            broken: HashSet::new(),
        }
    }

    fn error(
        &mut self,
        check: &str,
        path: &str,
        at: Location,
        message: String,
        hint: Option<String>,
    ) {
        let mut finding = Finding::error(check, message).object(self.object).at(at);
        if !path.is_empty() {
            finding = finding.field(path);
        }
        if let Some(hint) = hint {
            finding = finding.hint(hint);
        }
        self.findings.push(finding);
        self.broken.insert(path.to_owned());
    }

    /// Types `node` against `schema`; `None` for null, and for values that could not be typed
    /// (those get a finding).
    pub fn value(&mut self, node: &Node, schema: &Value, path: &str) -> Option<Value> {
        if path.is_empty() {
            self.positions.insert(path, node.at);
        }
        if node.is_null() {
            return None;
        }
        let schema = if path == "metadata" {
            &*METADATA_SCHEMA
        } else {
            schema
        };
        if flag(schema, "x-kubernetes-int-or-string") {
            return self.int_or_string(node, path);
        }
        match type_name(schema) {
            "object" => self.object(node, schema, path),
            "array" => self.array(node, schema, path),
            "string" => self.string(node, schema, path),
            "integer" => self.integer(node, schema, path),
            "boolean" => self.boolean(node, path),
            "number" => self.number(node, path),
            _ if flag(schema, "x-kubernetes-preserve-unknown-fields") => self.untyped(node, path),
            _ => self.untyped(node, path),
        }
    }

    fn mismatch(&mut self, node: &Node, path: &str, expected: &str) -> Option<Value> {
        let found = match &node.kind {
            NodeKind::Scalar { value, plain: true } => format!("`{}`", shorten(value)),
            NodeKind::Scalar {
                value,
                plain: false,
            } => {
                format!("the quoted string `{}`", shorten(value))
            }
            _ => node.describe().to_owned(),
        };
        self.error(
            "schema.type",
            path,
            node.at,
            format!("expected {expected}, found {found}"),
            Some(format!("write {expected} here")),
        );
        None
    }

    fn object(&mut self, node: &Node, schema: &Value, path: &str) -> Option<Value> {
        let NodeKind::Map(entries) = &node.kind else {
            return self.mismatch(node, path, "a mapping");
        };
        let props = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties").filter(|v| v.is_object());
        let free = flag(schema, "x-kubernetes-preserve-unknown-fields");
        let mut out = Map::new();
        // Small mappings (nearly all) find duplicates by scanning; large ones hash.
        let mut seen: HashMap<&str, Location> = HashMap::new();
        let mut seen_small: Vec<(&str, Location)> = Vec::new();
        let small = entries.len() <= 16;
        for (key, value) in entries {
            let Some(name) = key
                .as_str()
                .filter(|_| !matches!(key.kind, NodeKind::Scalar { .. } if key.is_null()))
            else {
                self.error(
                    "schema.key",
                    path,
                    key.at,
                    format!("a mapping key must be a string, found {}", key.describe()),
                    None,
                );
                continue;
            };
            let field = child_path(path, name);
            let duplicate = if small {
                let first = seen_small
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, at)| *at);
                seen_small.push((name, key.at));
                first
            } else {
                seen.insert(name, key.at)
            };
            if let Some(first) = duplicate {
                self.error(
                    "schema.duplicate-key",
                    &field,
                    key.at,
                    format!(
                        "`{}` is set twice (first at line {})",
                        shorten(name),
                        first.line
                    ),
                    Some("keep one of them: YAML readers disagree on which one wins".into()),
                );
                continue;
            }
            self.positions.insert(&field, key.at);
            let sub = props.and_then(|p| p.get(name)).or(additional);
            let typed = match sub {
                Some(sub) => self.value(value, sub, &field),
                None if free => self.untyped(value, &field),
                None => {
                    let hint = unknown_field_hint(name, props);
                    self.error(
                        "schema.unknown-field",
                        &field,
                        key.at,
                        format!("unknown field `{}`", shorten(name)),
                        Some(hint),
                    );
                    continue;
                }
            };
            if let Some(typed) = typed {
                out.insert(name.to_owned(), typed);
            }
        }
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                let field = child_path(path, name);
                if !out.contains_key(name) && !self.broken.contains(&field) {
                    self.error(
                        "schema.required",
                        &field,
                        node.at,
                        format!("missing required field `{name}`"),
                        Some(format!(
                            "add `{name}` under {}",
                            if path.is_empty() { "the object" } else { path }
                        )),
                    );
                }
            }
        }
        Some(Value::Object(out))
    }

    /// The schema's minimum and maximum size (`minItems`/`maxItems`, `minLength`/`maxLength`).
    fn size(&mut self, schema: &Value, b: &SizeBounds, len: u64, path: &str, at: Location) {
        let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
        if let Some(min) = bound(b.keys.0).filter(|m| len < *m) {
            let message = format!("needs at least {min} {}, has {len}", b.units.0);
            self.error(b.checks.0, path, at, message, None);
        }
        if let Some(max) = bound(b.keys.1).filter(|m| len > *m) {
            let message = format!("allows at most {max} {}, has {len}", b.units.1);
            self.error(b.checks.1, path, at, message, None);
        }
    }

    fn array(&mut self, node: &Node, schema: &Value, path: &str) -> Option<Value> {
        let NodeKind::Seq(items) = &node.kind else {
            return self.mismatch(node, path, "a list");
        };
        let item_schema = schema.get("items").unwrap_or(&Value::Null);
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("{path}[{i}]");
            self.positions.insert(&field, item.at);
            if let Some(typed) = self.value(item, item_schema, &field) {
                out.push(typed);
            }
        }
        let bounds = SizeBounds {
            keys: ("minItems", "maxItems"),
            checks: ("schema.min-items", "schema.max-items"),
            units: ("item(s)", "item(s)"),
        };
        self.size(schema, &bounds, items.len() as u64, path, node.at);
        Some(Value::Array(out))
    }

    fn string(&mut self, node: &Node, schema: &Value, path: &str) -> Option<Value> {
        let NodeKind::Scalar { value, .. } = &node.kind else {
            return self.mismatch(node, path, "a string");
        };
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.iter().any(|a| a.as_str() == Some(value))
        {
            let list: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
            self.error(
                "schema.enum",
                path,
                node.at,
                format!("`{}` is not one of {}", shorten(value), list.join(", ")),
                Some(format!("use one of: {}", list.join(", "))),
            );
            return None;
        }
        let bounds = SizeBounds {
            keys: ("minLength", "maxLength"),
            checks: ("schema.length", "schema.length"),
            units: ("character(s)", "characters"),
        };
        self.size(schema, &bounds, value.chars().count() as u64, path, node.at);
        Some(Value::String(value.clone()))
    }

    fn integer(&mut self, node: &Node, schema: &Value, path: &str) -> Option<Value> {
        let parsed = match &node.kind {
            NodeKind::Scalar { value, plain: true } => parse_int(value),
            _ => return self.mismatch(node, path, "an integer"),
        };
        let n = match parsed {
            IntParse::Ok(n) => n,
            IntParse::TooLarge => {
                self.error(
                    "schema.range",
                    path,
                    node.at,
                    format!(
                        "`{}` is too large for an integer",
                        shorten(node.as_str().unwrap_or(""))
                    ),
                    Some("use a realistic number".into()),
                );
                return None;
            }
            IntParse::NotInt => return self.mismatch(node, path, "an integer"),
        };
        // Schema bounds are JSON numbers and may be written as floats (`8.0`).
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64).map(|b| b as i64);
        if let Some(min) = bound("minimum").filter(|m| n < *m) {
            self.error(
                "schema.range",
                path,
                node.at,
                format!("{n} is below the minimum of {min}"),
                Some(format!("use a value of at least {min}")),
            );
            return None;
        }
        if let Some(max) = bound("maximum").filter(|m| n > *m) {
            self.error(
                "schema.range",
                path,
                node.at,
                format!("{n} is above the maximum of {max}"),
                Some(format!("use a value of at most {max}")),
            );
            return None;
        }
        if schema.get("format").and_then(Value::as_str) == Some("int32")
            && i32::try_from(n).is_err()
        {
            self.error(
                "schema.range",
                path,
                node.at,
                format!("{n} does not fit a 32-bit integer"),
                None,
            );
            return None;
        }
        Some(Value::Number(n.into()))
    }

    fn boolean(&mut self, node: &Node, path: &str) -> Option<Value> {
        match &node.kind {
            NodeKind::Scalar { value, plain: true } => match value.as_str() {
                "true" | "True" | "TRUE" => Some(Value::Bool(true)),
                "false" | "False" | "FALSE" => Some(Value::Bool(false)),
                "yes" | "Yes" | "YES" | "no" | "No" | "NO" | "on" | "On" | "off" | "Off" => {
                    self.error(
                        "schema.type",
                        path,
                        node.at,
                        format!("expected true or false, found `{value}`"),
                        Some(
                            "YAML 1.2 (and Kubernetes) read only true and false as booleans".into(),
                        ),
                    );
                    None
                }
                _ => self.mismatch(node, path, "true or false"),
            },
            _ => self.mismatch(node, path, "true or false"),
        }
    }

    fn number(&mut self, node: &Node, path: &str) -> Option<Value> {
        match &node.kind {
            NodeKind::Scalar { value, plain: true } => {
                match value.parse::<f64>().ok().and_then(Number::from_f64) {
                    Some(n) => Some(Value::Number(n)),
                    None => self.mismatch(node, path, "a number"),
                }
            }
            _ => self.mismatch(node, path, "a number"),
        }
    }

    fn int_or_string(&mut self, node: &Node, path: &str) -> Option<Value> {
        match &node.kind {
            NodeKind::Scalar { value, plain } => match (plain, parse_int(value)) {
                (true, IntParse::Ok(n)) => Some(Value::Number(n.into())),
                _ => Some(Value::String(value.clone())),
            },
            _ => self.mismatch(node, path, "an integer or a string"),
        }
    }

    /// Free-form content: YAML 1.2 core-schema typing.
    fn untyped(&mut self, node: &Node, path: &str) -> Option<Value> {
        self.positions.insert(path, node.at);
        match &node.kind {
            NodeKind::Scalar { .. } if node.is_null() => Some(Value::Null),
            NodeKind::Scalar {
                value,
                plain: false,
            } => Some(Value::String(value.clone())),
            NodeKind::Scalar { value, plain: true } => Some(core_scalar(value)),
            NodeKind::Seq(items) => Some(Value::Array(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| self.untyped(item, &format!("{path}[{i}]")))
                    .collect(),
            )),
            NodeKind::Map(entries) => {
                let mut out = Map::new();
                for (key, value) in entries {
                    let Some(name) = key.as_str() else {
                        self.error(
                            "schema.key",
                            path,
                            key.at,
                            format!("a mapping key must be a string, found {}", key.describe()),
                            None,
                        );
                        continue;
                    };
                    let field = child_path(path, name);
                    if let Some(v) = self.untyped(value, &field) {
                        out.insert(name.to_owned(), v);
                    }
                }
                Some(Value::Object(out))
            }
        }
    }
}

/// Which schema keys bound a size, the check ids and the units in messages (min, max).
struct SizeBounds {
    keys: (&'static str, &'static str),
    checks: (&'static str, &'static str),
    units: (&'static str, &'static str),
}

enum IntParse {
    Ok(i64),
    TooLarge,
    NotInt,
}

/// YAML 1.2 core-schema integers: decimal with optional sign, `0o` octal, `0x` hex.
fn parse_int(text: &str) -> IntParse {
    let (digits, radix) = if let Some(hex) = text.strip_prefix("0x") {
        (hex, 16)
    } else if let Some(oct) = text.strip_prefix("0o") {
        (oct, 8)
    } else {
        (text, 10)
    };
    let unsigned = digits.strip_prefix(['-', '+']).unwrap_or(digits);
    if unsigned.is_empty()
        || !unsigned.chars().all(|c| c.is_digit(radix))
        || (radix != 10 && unsigned.len() != digits.len())
    {
        return IntParse::NotInt;
    }
    match i64::from_str_radix(digits.strip_prefix('+').unwrap_or(digits), radix) {
        Ok(n) => IntParse::Ok(n),
        Err(_) => IntParse::TooLarge,
    }
}

fn core_scalar(text: &str) -> Value {
    match text {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let IntParse::Ok(n) = parse_int(text) {
        return Value::Number(n.into());
    }
    let looks_numeric = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.'))
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    if looks_numeric && let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
        return Value::Number(n);
    }
    Value::String(text.to_owned())
}

/// "did you mean" for a misspelt field, else the list of fields that exist here. A name longer
/// than [`MAX_SUGGESTED_KEY_BYTES`] is no misspelling of a field: it gets the list, without the
/// cost of an edit distance over all of it.
fn unknown_field_hint(name: &str, props: Option<&Map<String, Value>>) -> String {
    let Some(props) = props else {
        return "remove it: this object takes no fields".into();
    };
    let lower = name.to_ascii_lowercase();
    let best = props
        .keys()
        .filter(|_| name.len() <= MAX_SUGGESTED_KEY_BYTES)
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), k))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, k)) if d <= 2.max(name.len() / 4) => format!("did you mean `{k}`?"),
        _ => {
            let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
            names.sort_unstable();
            format!("remove it, or use one of: {}", names.join(", "))
        }
    }
}

/// Levenshtein distance (small inputs only: field names).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse_stream};
    use serde_json::json;

    fn typed(yaml: &str, schema: Value) -> (Option<Value>, Vec<Finding>) {
        let docs = parse_stream(yaml, Budget::default()).unwrap();
        let root = docs[0].root.as_ref().unwrap();
        let mut typer = Typer::new("Test/x");
        let v = typer.value(root, &schema, "");
        (v, typer.findings)
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "version": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
            "flag": {"type": "boolean"},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "list": {"type": "array", "maxItems": 2, "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }})
    }

    #[test]
    fn types_scalars_by_schema() {
        let (v, f) = typed(
            "version: 1.30\ncount: 3\nflag: true\nlabels: {a: 1}\n",
            schema(),
        );
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(
            v.unwrap(),
            json!({"version": "1.30", "count": 3, "flag": true, "labels": {"a": "1"}})
        );
    }

    #[test]
    fn reports_every_problem_with_positions() {
        let yaml = "versoin: x\ncount: three\nflag: yes\nkind: c\nlist: [{name: a}, {}, {name: c}]\ncount: 2\n";
        let (_, f) = typed(yaml, schema());
        let checks: Vec<(&str, Option<&str>, usize)> = f
            .iter()
            .map(|f| (f.check.as_str(), f.field.as_deref(), f.line.unwrap()))
            .collect();
        assert_eq!(
            checks,
            vec![
                ("schema.unknown-field", Some("versoin"), 1),
                ("schema.type", Some("count"), 2),
                ("schema.type", Some("flag"), 3),
                ("schema.enum", Some("kind"), 4),
                ("schema.required", Some("list[1].name"), 5),
                ("schema.max-items", Some("list"), 5),
                ("schema.duplicate-key", Some("count"), 6),
            ]
        );
        assert_eq!(f[0].hint.as_deref(), Some("did you mean `version`?"));
    }

    /// 15 unknown keys of 1 MiB each once cost half a minute of edit distances and repeated
    /// every key in full in each message.
    #[test]
    fn long_unknown_keys_are_neither_compared_nor_repeated() {
        let key = "versio".repeat((1 << 20) / 6);
        // Explicit keys: an implicit key may not be longer than 1024 characters.
        let yaml: String = (0..15).map(|i| format!("? {key}{i}\n: x\n")).collect();
        let (_, f) = typed(&yaml, schema());
        assert_eq!(f.len(), 15, "{:?}", f.first().map(|f| &f.field));
        for (i, finding) in f.iter().enumerate() {
            assert_eq!(finding.check, "schema.unknown-field");
            let shown = format!("{finding} {:?}", finding.field);
            assert!(shown.len() < 1_000, "{} bytes shown", shown.len());
            let length = key.len() + i.to_string().len();
            assert!(shown.contains(&format!("… ({length} bytes)")), "{shown}");
            assert!(
                finding
                    .hint
                    .as_deref()
                    .unwrap()
                    .starts_with("remove it, or use one of")
            );
        }
        // A short misspelling still gets its suggestion; a duplicate long key is shortened too.
        let (_, f) = typed(
            &format!("versoin: x\n? {key}\n: 1\n? {key}\n: 2\n"),
            schema(),
        );
        assert_eq!(f[0].hint.as_deref(), Some("did you mean `version`?"));
        assert!(f.iter().all(|f| f.to_string().len() < 1_000));
    }

    #[test]
    fn huge_and_negative_integers() {
        let (_, f) = typed("count: 99999999999999999999999\n", schema());
        assert_eq!(f[0].check, "schema.range");
        let (_, f) = typed("count: -1\n", schema());
        assert!(f[0].message.contains("below the minimum"), "{f:?}");
    }

    #[test]
    fn positions_fall_back_to_ancestors() {
        let mut p = Positions::default();
        p.insert("spec", Location { line: 3, column: 1 });
        p.insert("spec.network", Location { line: 5, column: 3 });
        assert_eq!(
            p.locate("spec.network.directNetworkInterfaces[1].index")
                .unwrap()
                .line,
            5
        );
        assert_eq!(p.locate("spec.devices").unwrap().line, 3);
        assert!(p.locate("status").is_none());
    }

    #[test]
    fn paths_quote_odd_keys() {
        assert_eq!(
            child_path("labels", "node.kubernetes.io/x"),
            "labels[\"node.kubernetes.io/x\"]"
        );
        assert_eq!(child_path("", "spec"), "spec");
    }
}
