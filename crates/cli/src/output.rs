//! Printing findings as text or JSON: the one place that formats reports.

use snow_api::{Finding, Severity};
use std::fmt::Write as _;

/// The JSON report: `{"ok": bool, "findings": [...]}` plus any extra top-level keys.
pub fn findings_json(findings: &[Finding], extra: serde_json::Map<String, serde_json::Value>) -> String {
    let mut report = serde_json::Map::new();
    report.insert("ok".into(), (!snow_api::has_errors(findings)).into());
    report.insert(
        "findings".into(),
        serde_json::to_value(findings).unwrap_or_else(|_| serde_json::Value::Array(vec![])),
    );
    report.extend(extra);
    let mut out = serde_json::to_string_pretty(&serde_json::Value::Object(report))
        .unwrap_or_else(|_| "{}".into());
    out.push('\n');
    out
}

/// The text report: findings grouped by object, each with its position and, when `source` is
/// given, the source line it points at; then a one-line summary.
pub fn findings_text(findings: &[Finding], source_name: &str, source: Option<&str>) -> String {
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
        let _ = writeln!(out, "{}", object.unwrap_or("(file)"));
        for f in group {
            let mark = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            let field = f.field.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
            let device = f.device.as_deref().map(|d| format!(" [device {d}]")).unwrap_or_default();
            let _ = writeln!(out, "  {mark}[{}]{field}{device}: {}", f.check, f.message);
            if let (Some(line), Some(column)) = (f.line, f.column) {
                let _ = writeln!(out, "    --> {source_name}:{line}:{column}");
                if let Some(text) = line.checked_sub(1).and_then(|i| lines.get(i)) {
                    let _ = writeln!(out, "     | {text}");
                    let pad = " ".repeat(column.saturating_sub(1));
                    let _ = writeln!(out, "     | {pad}^");
                }
            }
            if let Some(hint) = &f.hint {
                let _ = writeln!(out, "    hint: {hint}");
            }
        }
    }
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings.iter().filter(|f| f.severity == Severity::Warning).count();
    if findings.is_empty() {
        let _ = writeln!(out, "✅ {source_name}: no findings");
    } else if errors == 0 {
        let _ = writeln!(out, "✅ {source_name}: valid, {warnings} warning(s)");
    } else {
        let _ = writeln!(out, "❌ {source_name}: {errors} error(s), {warnings} warning(s)");
    }
    out
}
