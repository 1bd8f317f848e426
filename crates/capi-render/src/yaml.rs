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
/// end with `:`, and is not a word some reader takes for a boolean or null (in any case).
///
/// Starting with a letter or `/` rules out every number form of either version (`0x1F`, `0o17`,
/// `017`, `1_000`, `1e3`, `.inf`, sexagesimal `1:20`), timestamps, `~`, `<<` and `=`; what is
/// left for a reader to resolve is the words.
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

/// A JSON-escaped, double-quoted string. JSON leaves DEL, the C1 controls and the Unicode line
/// breaks raw, which YAML does not allow or reads as line breaks: those are escaped too.
pub fn quote(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    if !json.chars().any(needs_escape) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if needs_escape(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters JSON does not escape that YAML 1.1 does not keep as they are inside a scalar: those
/// outside its printable set, its line breaks other than `\n` (NEL, LS, PS) and the byte-order
/// mark.
fn needs_escape(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// A mapping key: plain when [`plain_ok`] and made of name characters (`[A-Za-z0-9_./-]`), else
/// quoted.
fn key(k: &str) -> String {
    let plain = plain_ok(k)
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'));
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
            .all(|c| c == '\n' || (!c.is_control() && !needs_escape(c)))
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

    /// Keys a YAML 1.1 reader resolves to something other than a string when written plain.
    const AWKWARD_KEYS: &[&str] = &[
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "y",
        "Y",
        "n",
        "N",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "null",
        "Null",
        "NULL",
        "~",
        "",
        "0x1F",
        "0X1f",
        "0o17",
        "017",
        "0b101",
        "1_000",
        "-1",
        "+1",
        "1",
        "1.5",
        "1e3",
        "1E-3",
        "1.0e+3",
        ".inf",
        ".Inf",
        "-.inf",
        ".NaN",
        ".nan",
        "inf",
        "nan",
        "1:20",
        "190:20:30.15",
        "2025-08-31",
        "2001-12-14t21:59:43.10-05:00",
        "<<",
        "=",
        "-",
        "?",
        ":",
        "a:",
        "-a",
        "&a",
        "*a",
        "!a",
        "%a",
        "@a",
        "`a",
        "#a",
        "a #b",
        "a: b",
        "[a]",
        "{a}",
        "'a'",
        "\"a\"",
        "|",
        ">",
        " a",
        "a ",
        "a\tb",
        "a\nb",
        "\u{7f}",
        "\u{85}",
        "\u{9f}",
        "ünï",
        "a\u{2028}b",
        "\u{feff}a",
        "x\ny\u{85}z",
        "node-role.kubernetes.io/control-plane",
        "feature-gates",
        "v",
        "x",
        "_a",
        ".a",
        "/a",
    ];

    /// A seeded generator of keys from characters YAML gives meaning to.
    fn generated_keys(count: usize) -> Vec<String> {
        const PIECES: &[&str] = &[
            "0", "1", "7", "9", "x", "X", "o", "b", "e", "E", "_", ".", ":", "-", "+", "~", "y",
            "n", "on", "off", "yes", "no", "true", "null", "inf", "nan", "Inf", "NaN", "a", "Z",
            "/", "=", "<", "#", " ", "'", "\"", "\\", "\u{85}", "é", "\n", "\u{2028}",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|_| {
                let len = 1 + next() % 5;
                (0..len)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    /// Renders every key as a mapping key and as a string value, loads the text with PyYAML (a
    /// YAML 1.1 reader, like kubectl's) and checks each comes back as the same string.
    #[test]
    fn keys_and_values_read_back_as_the_same_strings_in_yaml_1_1() {
        let mut keys: Vec<String> = AWKWARD_KEYS.iter().map(|k| (*k).to_owned()).collect();
        keys.extend(generated_keys(3_000));
        let map: serde_json::Map<String, Value> = keys
            .iter()
            .map(|k| (k.clone(), Value::String(k.clone())))
            .collect();
        let text = emit(&Value::Object(map.clone()), 0);
        let script = "import sys, yaml, json\n\
            data = yaml.safe_load(sys.stdin.buffer)\n\
            print(json.dumps([[type(k).__name__, str(k), type(v).__name__, str(v)] for k, v in data.items()]))\n";
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("python3 (with PyYAML: python3 -m pip install pyyaml)");
        let mut stdin = child.stdin.take().unwrap();
        let input = text.clone();
        let writer = std::thread::spawn(move || {
            use std::io::Write as _;
            stdin.write_all(input.as_bytes())
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(
            output.status.success(),
            "PyYAML could not read the rendered text: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let back: Vec<(String, String, String, String)> =
            serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(back.len(), map.len());
        for ((key_type, read, value_type, value), original) in back.iter().zip(map.keys()) {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{}:", key(original))));
            assert_eq!(
                (key_type.as_str(), read, value_type.as_str(), value),
                ("str", original, "str", original),
                "rendered as {line:?}"
            );
        }
    }
}
