//! Printing: the one place that formats reports and errors, and the writers commands print to.

use snow_api::{Finding, Severity};
use std::{fmt::Write as _, io::Write, path::Path};

/// Where a command writes. Commands never print directly, so they can be embedded and tested.
pub struct Io<'a> {
    /// Standard output: the command's result.
    pub stdout: &'a mut dyn Write,
    /// Standard error: progress, errors, diagnostics.
    pub stderr: &'a mut dyn Write,
}

impl Io<'_> {
    /// Writes to standard output.
    pub fn out(&mut self, text: &str) {
        let _ = self.stdout.write_all(text.as_bytes());
        let _ = self.stdout.flush();
    }

    /// Writes to standard error.
    pub fn err(&mut self, text: &str) {
        let _ = self.stderr.write_all(text.as_bytes());
        let _ = self.stderr.flush();
    }
}

/// How a source is named in messages: the path as given, or `<stdin>`.
pub fn source_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// The JSON report: `{"ok": bool, "findings": [...]}` plus any extra top-level keys.
pub fn findings_json(
    findings: &[Finding],
    extra: serde_json::Map<String, serde_json::Value>,
) -> String {
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

fn severity_label(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// Writes one finding: headline, position with the source line, hint.
fn write_finding(out: &mut String, f: &Finding, source_name: &str, lines: &[&str], indent: &str) {
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
    let mark = severity_label(f.severity);
    let _ = writeln!(
        out,
        "{indent}{mark}[{}]{field}{device}: {}",
        f.check, f.message
    );
    if let (Some(line), Some(column)) = (f.line, f.column) {
        let _ = writeln!(out, "{indent}  --> {source_name}:{line}:{column}");
        if let Some(text) = line.checked_sub(1).and_then(|i| lines.get(i)) {
            // A long line is shown as a window around the column, never whole.
            let (text, column) = snow_api::finding::excerpt(text, column);
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

/// One finding as a standalone diagnostic (for input errors), rendered by miette with the
/// source snippet when the position is known.
pub fn diagnostic(finding: &Finding, source_name: &str, source: Option<&str>) -> String {
    use miette::{
        GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource,
    };
    // The first line says what is wrong: `error[check]: file: message`.
    let mut diag = MietteDiagnostic::new(format!(
        "error[{}]: {}: {}",
        finding.check, source_name, finding.message
    ));
    if let Some(hint) = &finding.hint {
        diag = diag.with_help(hint.clone());
    }
    let lines: Vec<&str> = source.map(|s| s.lines().collect()).unwrap_or_default();
    let long_line = finding.location().is_some_and(|at| {
        at.line
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .is_some_and(|l| l.chars().count() > snow_api::limits::MAX_SHOWN_LINE_CHARS)
    });
    let offset = source
        .zip(finding.location())
        .and_then(|(text, at)| at.byte_offset(text));
    let mut out = String::new();
    let rendered = match (source, offset) {
        // A long line is never shown whole: the plain form shows a window around the column.
        _ if long_line => Err(std::fmt::Error),
        (Some(text), Some(offset)) => {
            diag = diag.with_label(LabeledSpan::at_offset(offset, "here"));
            let report = miette::Report::new(diag)
                .with_source_code(NamedSource::new(source_name, text.to_owned()));
            GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
                .render_report(&mut out, report.as_ref())
        }
        _ => GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &diag),
    };
    if rendered.is_err() {
        out.clear();
        write_finding(&mut out, finding, source_name, &lines, "");
    }
    out
}

/// The text report: findings grouped by object, each with its position and, when `source` is
/// given, the source line it points at; then a one-line summary.
pub fn findings_text(findings: &[Finding], source_name: &str, source: Option<&str>) -> String {
    findings_text_with(findings, source_name, source, &[])
}

/// [`findings_text`] where findings whose object is one of `other_files` (the credentials file
/// or CA bundle a report also covers) point at that file, without the source's lines.
pub fn findings_text_with(
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
                Some(file) => write_finding(&mut out, f, file, &[], "  "),
                None => write_finding(&mut out, f, source_name, &lines, "  "),
            }
        }
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if findings.is_empty() {
        let _ = writeln!(out, "✅ {source_name}: no findings");
    } else if errors == 0 {
        let _ = writeln!(out, "✅ {source_name}: valid, {warnings} warning(s)");
    } else {
        let _ = writeln!(
            out,
            "❌ {source_name}: {errors} error(s), {warnings} warning(s)"
        );
    }
    out
}
