//! The one place values become YAML text. Every value that reaches a template goes through
//! [`emit`], so quoting is decided once: strings are double-quoted with JSON escapes (valid YAML,
//! and immune to `*`, `&`, `:` and the like), multi-line strings become literal blocks, keys are
//! quoted unless they are plainly safe.

use serde_json::Value;
use std::fmt::Write as _;

/// A scalar as YAML text (`null` for anything that is not a scalar).
pub fn scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::String(s) => quote(s),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(o) if o.is_empty() => "{}".into(),
        _ => "null".into(),
    }
}

/// Whether a string can be written unquoted and still read back as the same string by any YAML
/// 1.1 or 1.2 reader: it starts with a letter or `/`, holds only `[A-Za-z0-9._/:@=+-]`, does not
/// end with `:`, and is not a word some reader takes for a boolean or null.
fn plain_ok(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf", "infinity",
    ];
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | ':' | '@' | '=' | '+' | '-')
        })
        && !s.ends_with(':')
        && !WORDS.contains(&s.to_ascii_lowercase().as_str())
}

/// A JSON-escaped, double-quoted string.
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn key(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !k.starts_with('-')
        && !matches!(
            k,
            "true" | "false" | "null" | "y" | "n" | "yes" | "no" | "on" | "off"
        )
        && k.parse::<f64>().is_err();
    if plain { k.to_owned() } else { quote(k) }
}

/// Whether a string can be a literal block (`|`): printable, no trailing spaces on lines, no
/// leading space on the first line.
fn literal_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\n'])
        && !s.ends_with("\n\n")
        && s.lines().all(|l| !l.ends_with([' ', '\t']))
        && s.chars()
            .all(|c| c == '\n' || (!c.is_control() && c != '\u{feff}'))
}

fn block_string(s: &str, indent: usize, out: &mut String) {
    // `|` keeps one trailing newline, `|-` none; more than one is never emitted as a block.
    out.push_str(if s.ends_with('\n') { "|\n" } else { "|-\n" });
    let pad = " ".repeat(indent);
    for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{pad}{line}");
        }
    }
}

/// A value as block YAML: one `key: value` or `- item` per line, each line indented by
/// `indent` spaces, with a trailing newline. Scalars and empty collections render inline.
pub fn emit(value: &Value, indent: usize) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => emit_map(map, indent, &mut out),
        Value::Array(items) if !items.is_empty() => emit_seq(items, indent, &mut out),
        Value::String(s) if literal_ok(s) => {
            block_string(s, indent + 2, &mut out);
        }
        other => {
            out.push_str(&" ".repeat(indent));
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn emit_value_after_key(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            emit_map(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            emit_seq(items, indent, out);
        }
        Value::String(s) if literal_ok(s) => {
            out.push(' ');
            block_string(s, indent + 2, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn emit_map(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for (k, v) in map {
        let _ = write!(out, "{pad}{}:", key(k));
        emit_value_after_key(v, indent, out);
    }
}

fn emit_seq(items: &[Value], indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for item in items {
        match item {
            Value::Object(map) if !map.is_empty() => {
                // The first entry shares the dash's line.
                let mut inner = String::new();
                emit_map(map, indent + 2, &mut inner);
                let _ = write!(out, "{pad}- ");
                out.push_str(inner.get(indent + 2..).unwrap_or(""));
            }
            Value::Array(inner) if !inner.is_empty() => {
                let _ = writeln!(out, "{pad}-");
                emit_seq(inner, indent + 2, out);
            }
            Value::String(s) if literal_ok(s) => {
                let _ = write!(out, "{pad}- ");
                block_string(s, indent + 2, out);
            }
            other => {
                let _ = writeln!(out, "{pad}- {}", scalar(other));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(v: &Value) {
        let text = format!("root:\n{}", emit(v, 2));
        let back: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(&back["root"], v, "\n{text}");
    }

    #[test]
    fn awkward_values_round_trip() {
        round_trip(&json!({
            "star": "*alias", "amp": "&anchor", "colon": "a: b", "hash": "a #b", "quote": "it's \"x\"",
            "empty": "", "spaces": "  lead", "num": "1.30", "bool": "true", "null": "null",
            "multi": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            "multi-no-newline": "[Service]\nEnvironment=\"A=b\"", "trailing": "line one \nline two",
            "tab": "a\tb", "unicode": "ünï ✓", "y": "y", "on": "On", "hex": "0x1F", "sexagesimal": "1:30",
            "date": "2025-08-31", "exp": "1e5", "inf": "inf", "half": ".5", "dash": "-a", "colon-end": "a:",
            "at": "@x", "url": "https://x.example/a?b=c", "image": "public.ecr.aws/a/b:v1.2-eks-1-30-58",
            "label": "node-role.kubernetes.io/control-plane", "ip": "1.2.3.4", "cidr": "10.1.0.0/16", "list": ["a", 1, true, {"k": "v", "n": [1, 2]}, [], {}],
            "emptyList": [], "emptyMap": {}, "odd key: x": 1, "123": "k", "n": 5, "f": false,
        }));
    }
}
