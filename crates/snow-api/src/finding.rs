//! Findings: the one shape in which static validation, credential checks and preflight report
//! what is wrong.

use serde::Serialize;
use std::{borrow::Cow, collections::HashMap, fmt};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something worth knowing; never blocks.
    Info,
    /// Likely a mistake, or a risk; does not block.
    Warning,
    /// Blocks the operation: the spec or environment must be fixed.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Where in a source file a finding points. Lines and columns are 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Location {
    /// The byte offset of this 1-based line and (character) column in `text`, for tools that
    /// point at a span; `None` when the line is not there.
    pub fn byte_offset(self, text: &str) -> Option<usize> {
        let line_start: usize = text
            .split_inclusive('\n')
            .take(self.line.checked_sub(1)?)
            .map(str::len)
            .sum();
        let line = text.get(line_start..)?.lines().next().unwrap_or("");
        let col = line
            .char_indices()
            .nth(self.column.saturating_sub(1))
            .map_or(line.len(), |(i, _)| i);
        Some(line_start + col)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One thing that is wrong (or worth a warning), with what to do about it.
///
/// Serialises as `{check, severity, object, field, device, message, hint, line, column}` with
/// absent values as `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// A stable identifier of the rule, e.g. `machine-config.instance-type`.
    pub check: String,
    /// How serious it is.
    pub severity: Severity,
    /// The object it concerns, as `Kind/name` (or a file for input files).
    pub object: Option<String>,
    /// The field path inside the object, e.g. `spec.network.directNetworkInterfaces[1].index`.
    pub field: Option<String>,
    /// The device IP it concerns, for device-specific findings.
    pub device: Option<String>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The 1-based line in the source, when known.
    pub line: Option<usize>,
    /// The 1-based column in the source, when known.
    pub column: Option<usize>,
}

impl Finding {
    /// A new finding of the given severity.
    pub fn new(severity: Severity, check: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            check: check.into(),
            severity,
            object: None,
            field: None,
            device: None,
            message: message.into(),
            hint: None,
            line: None,
            column: None,
        }
    }

    /// A new error finding.
    pub fn error(check: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, check, message)
    }

    /// A new warning finding.
    pub fn warning(check: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, check, message)
    }

    /// A new informational finding.
    pub fn info(check: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(Severity::Info, check, message)
    }

    /// Sets the object (`Kind/name`).
    #[must_use]
    pub fn object(mut self, object: impl Into<String>) -> Self {
        self.object = Some(object.into());
        self
    }

    /// Sets the field path.
    #[must_use]
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Sets the device IP.
    #[must_use]
    pub fn device(mut self, device: impl Into<String>) -> Self {
        self.device = Some(device.into());
        self
    }

    /// Sets the hint: what the user should do.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the source location.
    #[must_use]
    pub fn at(mut self, location: Location) -> Self {
        self.line = Some(location.line);
        self.column = Some(location.column);
        self
    }

    /// The source location, when both line and column are known.
    pub fn location(&self) -> Option<Location> {
        Some(Location {
            line: self.line?,
            column: self.column?,
        })
    }

    /// Whether this finding blocks the operation.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.severity)?;
        if let Some(object) = &self.object {
            write!(f, " {object}")?;
        }
        if let Some(field) = &self.field {
            write!(f, " {field}")?;
        }
        if let Some(device) = &self.device {
            write!(f, " [device {device}]")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

/// Whether any finding in the list is an error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(Finding::is_error)
}

/// `text` as a message may repeat it: whole when it has at most
/// [`crate::limits::MAX_SHOWN_CHARS`] characters, else its start, an ellipsis and its length
/// (`abc… (1048576 bytes)`).
pub fn shorten(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(crate::limits::MAX_SHOWN_CHARS) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes)", &text[..cut], text.len())),
    }
}

/// A source line as a report may show it next to a finding at 1-based `column`: whole when it
/// has at most [`crate::limits::MAX_SHOWN_LINE_CHARS`] characters, else a window of that many
/// characters around the column with `…` where it is cut. Returns the text and the column of the
/// finding inside it (where a caret goes).
pub fn excerpt(line: &str, column: usize) -> (Cow<'_, str>, usize) {
    let max = crate::limits::MAX_SHOWN_LINE_CHARS;
    let total = line.chars().count();
    if total <= max {
        return (Cow::Borrowed(line), column);
    }
    let column = column.clamp(1, total + 1);
    let start = column
        .saturating_sub(1 + max / 2)
        .min(total.saturating_sub(max));
    let end = (start + max).min(total);
    let mut text: String = line.chars().skip(start).take(end - start).collect();
    let mut caret = column - start;
    if start > 0 {
        text.insert(0, '…');
        caret += 1;
    }
    if end < total {
        text.push('…');
    }
    (Cow::Owned(text), caret)
}

/// Keeps at most `max` findings of each check, in order, and ends the list with one finding per
/// check that had more: "… and N more" (of the most serious severity among those left out, so an
/// error is never hidden behind a warning). A check already cut this way is not cut again.
///
/// [`crate::limits::MAX_FINDINGS_PER_CHECK`] is the bound the library uses.
pub fn cap_per_check(findings: Vec<Finding>, max: usize) -> Vec<Finding> {
    let mut kept: HashMap<String, usize> = HashMap::new();
    // Per check cut: (first position, findings left out, most serious severity left out).
    let mut cut: Vec<(String, usize, Severity)> = Vec::new();
    let mut out = Vec::with_capacity(findings.len().min(max.saturating_mul(8)));
    for finding in findings {
        let count = kept.entry(finding.check.clone()).or_insert(0);
        if *count < max {
            *count += 1;
            out.push(finding);
            continue;
        }
        match cut.iter_mut().find(|(check, ..)| *check == finding.check) {
            Some((_, n, severity)) => {
                *n += 1;
                *severity = (*severity).max(finding.severity);
            }
            None => cut.push((finding.check, 1, finding.severity)),
        }
    }
    out.extend(cut.into_iter().map(|(check, n, severity)| {
        let message = format!("… and {n} more `{check}` finding(s) not shown");
        Finding::new(severity, check, message).hint(format!(
            "the first {max} are shown: fix those and check again"
        ))
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_shortened_with_its_length() {
        assert_eq!(shorten("short"), "short");
        let exact = "é".repeat(crate::limits::MAX_SHOWN_CHARS);
        assert_eq!(shorten(&exact), exact.as_str());
        let long = "é".repeat(1 << 20);
        let shown = shorten(&long);
        assert_eq!(
            shown,
            format!(
                "{}… (2097152 bytes)",
                "é".repeat(crate::limits::MAX_SHOWN_CHARS)
            )
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let max = crate::limits::MAX_SHOWN_LINE_CHARS;
        assert_eq!(excerpt("a = b", 5), (Cow::Borrowed("a = b"), 5));
        let line = format!("{}X{}", "a".repeat(100_000), "b".repeat(100_000));
        let (text, caret) = excerpt(&line, 100_001);
        assert_eq!(text.chars().nth(caret - 1), Some('X'), "{text}");
        assert!(text.starts_with('…') && text.ends_with('…'));
        assert_eq!(text.chars().count(), max + 2);
        let (text, caret) = excerpt(&line, 1);
        assert_eq!((caret, text.chars().count()), (1, max + 1));
        let (text, caret) = excerpt(&line, 200_001);
        assert_eq!((caret, text.chars().count()), (max + 1, max + 1));
        assert!(text.starts_with('…') && text.ends_with('b'));
    }

    #[test]
    fn findings_are_capped_per_check_with_a_count_of_the_rest() {
        let mut findings: Vec<Finding> = (0..1_000)
            .map(|i| Finding::warning("a", format!("a{i}")))
            .collect();
        findings.push(Finding::error("a", "the one error"));
        findings.push(Finding::warning("b", "b0"));
        let capped = cap_per_check(findings, 3);
        let messages: Vec<&str> = capped.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "a0",
                "a1",
                "a2",
                "b0",
                "… and 998 more `a` finding(s) not shown"
            ]
        );
        assert_eq!(capped[4].check, "a");
        assert_eq!(capped[4].severity, Severity::Error);
        assert!(has_errors(&capped));
    }
}
