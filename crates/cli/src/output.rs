//! Printing: the one place that formats reports and errors, and the writers commands print to.

use snow_api::Finding;
use std::{io::Write, path::Path};

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

/// Text that holds what an archive or a registry said (image names, a registry's error body),
/// each line through [`snow_images::printable`]: control characters escaped, line ends kept.
pub fn printable_lines(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| match line.strip_suffix('\n') {
            Some(body) => format!("{}\n", snow_images::printable(body)),
            None => snow_images::printable(line).into_owned(),
        })
        .collect()
}

/// JSON text with the control characters serde_json leaves as they are (DEL and C1, such as
/// the one-byte CSI U+009B) written as `\u00XX` escapes: they can only be inside strings (C0 ones
/// are escaped already, the line feeds left are the layout's), so the JSON means the same.
pub fn printable_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c != '\n' && c.is_control() {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// How a source is named in messages: the path as given, or `<stdin>`.
pub fn source_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// One finding as a standalone diagnostic (for input errors), rendered by miette with the
/// source snippet when the position is known.
pub fn diagnostic(finding: &Finding, source_name: &str, source: Option<&str>) -> String {
    use miette::{
        GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource,
    };
    let finding = &crate::exit::with_hint(finding);
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
        snow_api::finding_text::write_one(&mut out, finding, source_name, &lines, "");
    }
    out
}

/// Asks `question` when stdin and stderr are a terminal; only `y` or `yes` is yes. Without a
/// terminal the answer is no (scripts pass a flag instead).
pub fn confirm(io: &mut Io<'_>, question: &str) -> bool {
    use std::io::{BufRead, IsTerminal, Read};
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return false;
    }
    io.err(&format!("{question} [y/N] "));
    let mut line = String::new();
    let read = std::io::stdin().lock().take(64).read_line(&mut line);
    read.is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::{printable_json, printable_lines};

    #[test]
    fn control_characters_are_escaped_and_line_ends_kept() {
        assert_eq!(
            printable_lines("a\u{1b}[2J\nb\u{9b}1m\n"),
            "a\\u{1b}[2J\nb\\u{9b}1m\n"
        );
        let json =
            serde_json::to_string_pretty(&serde_json::json!({"n": "a\u{1b}\u{9b}\u{7f}"})).unwrap();
        let shown = printable_json(&json);
        assert_eq!(shown, "{\n  \"n\": \"a\\u001b\\u009b\\u007f\"\n}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["n"], "a\u{1b}\u{9b}\u{7f}");
    }
}
