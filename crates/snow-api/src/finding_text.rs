//! Findings as a person or a tool reads them: the text report (grouped by object, each finding
//! with its position, the source line it points at and its hint, then a summary line) and the
//! JSON report (`{"ok": bool, "findings": [...]}`). The CLI prints these; a controller or
//! another tool can put the same text in an event or a status message.

use crate::finding::{Finding, Severity, excerpt, has_errors};
use std::fmt::Write as _;

/// The structured report (printed as JSON or YAML): `{"ok": bool, "findings": [...]}` plus any
/// extra top-level keys.
pub fn report(
    findings: &[Finding],
    extra: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let mut report = serde_json::Map::new();
    report.insert("ok".into(), (!has_errors(findings)).into());
    report.insert(
        "findings".into(),
        serde_json::to_value(findings).unwrap_or_else(|_| serde_json::Value::Array(vec![])),
    );
    report.extend(extra);
    serde_json::Value::Object(report)
}

/// A finding's headline as the text report words it: `error[check] field [device IP]: message`.
pub fn headline(f: &Finding) -> String {
    let field = f
        .field
        .as_deref()
        .map(|p| format!(" {p}"))
        .unwrap_or_default();
    let device = f
        .device
        .as_deref()
        .map(|d| format!(" [device {d}]"))
        .unwrap_or_default();
    format!("{}[{}]{field}{device}: {}", f.severity, f.check, f.message)
}

/// A finding on one line, for a message that has no room for a report (an admission webhook's
/// answer): its [`headline`], then `(hint: …)`.
pub fn one_line(f: &Finding) -> String {
    match &f.hint {
        Some(hint) => format!("{} (hint: {hint})", headline(f)),
        None => headline(f),
    }
}

/// Writes one finding: headline, position with the source line, hint.
pub fn write_one(out: &mut String, f: &Finding, source_name: &str, lines: &[&str], indent: &str) {
    let _ = writeln!(out, "{indent}{}", headline(f));
    if let (Some(line), Some(column)) = (f.line, f.column) {
        let _ = writeln!(out, "{indent}  --> {source_name}:{line}:{column}");
        if let Some(text) = line.checked_sub(1).and_then(|i| lines.get(i)) {
            // A long line is shown as a window around the column, never whole.
            let (text, column) = excerpt(text, column);
            let gutter = line.to_string();
            let pad = " ".repeat(gutter.len());
            let caret = " ".repeat(column.saturating_sub(1));
            let _ = writeln!(out, "{indent}  {gutter} | {text}");
            let _ = writeln!(out, "{indent}  {pad} | {caret}^");
        }
    }
    if let Some(hint) = &f.hint {
        let _ = writeln!(out, "{indent}  hint: {hint}");
    }
}

/// The text report: findings grouped by object, each with its position and, when `source` is
/// given, the source line it points at; then a one-line summary. Findings whose object is one
/// of `other_files` (a credentials file or CA bundle the report also covers) point at that
/// file, without the source's lines.
pub fn text(
    findings: &[Finding],
    source_name: &str,
    source: Option<&str>,
    other_files: &[&str],
) -> String {
    let lines: Vec<&str> = source.map(|s| s.lines().collect()).unwrap_or_default();
    let mut out = String::new();
    let mut groups: Vec<(Option<&str>, Vec<&Finding>)> = Vec::new();
    for finding in findings {
        let key = finding.object.as_deref();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(finding),
            None => groups.push((key, vec![finding])),
        }
    }
    for (object, group) in &groups {
        let _ = writeln!(out, "{}", object.unwrap_or(source_name));
        for f in group {
            match f.object.as_deref().filter(|o| other_files.contains(o)) {
                Some(file) => write_one(&mut out, f, file, &[], "  "),
                None => write_one(&mut out, f, source_name, &lines, "  "),
            }
        }
    }
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let _ = match (findings.is_empty(), errors) {
        (true, _) => writeln!(out, "✅ {source_name}: no findings"),
        (false, 0) => writeln!(out, "✅ {source_name}: valid, {warnings} warning(s)"),
        _ => writeln!(
            out,
            "❌ {source_name}: {errors} error(s), {warnings} warning(s)"
        ),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Location;

    #[test]
    fn a_finding_points_at_its_line_and_the_summary_counts() {
        let source = "a: 1\nb: 2\n";
        let findings = vec![
            Finding::error("spec.b", "b is wrong")
                .object("Cluster/x")
                .at(Location { line: 2, column: 4 })
                .hint("fix b"),
            Finding::warning("spec.c", "c is odd").object("other.ini"),
        ];
        let out = text(&findings, "spec.yaml", Some(source), &["other.ini"]);
        assert!(out.contains("  error[spec.b]: b is wrong\n    --> spec.yaml:2:4\n    2 | b: 2\n      |    ^\n    hint: fix b\n"), "{out}");
        assert!(
            out.contains("other.ini\n  warning[spec.c]: c is odd\n"),
            "{out}"
        );
        assert!(
            out.ends_with("❌ spec.yaml: 1 error(s), 1 warning(s)\n"),
            "{out}"
        );
        assert_eq!(text(&[], "s", None, &[]), "✅ s: no findings\n");
        let json = report(&findings, Default::default());
        assert_eq!(json["ok"], false);
        assert_eq!(json["findings"].as_array().map(Vec::len), Some(2));
    }
}
