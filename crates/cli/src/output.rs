//! Printing: the one place that formats reports and errors, and the writers commands print to.

use crate::args::OutputFormat;
use snow_api::Finding;
use std::{io::Write, path::Path};

/// Where a command writes. Commands never print directly, so they can be embedded and tested.
pub struct Io<'a> {
    /// Standard output: the command's result.
    pub stdout: &'a mut dyn Write,
    /// Standard error: progress, errors, diagnostics.
    pub stderr: &'a mut dyn Write,
    /// How the text is dressed, and how much progress is shown.
    pub style: Style,
}

/// How output is dressed: decorated (emoji marks) on a terminal, plain otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// Standard output without decoration ([`plain`]).
    pub plain_out: bool,
    /// Standard error without decoration.
    pub plain_err: bool,
    /// `-q`: no progress on standard error, only errors and warnings.
    pub quiet: bool,
}

impl Style {
    /// Plain where `NO_COLOR` is set to anything but an empty string (no-color.org) or the
    /// stream is not a terminal (a log, a pipe, a CI job), decorated otherwise.
    pub fn detect(no_color: Option<&std::ffi::OsStr>, quiet: bool) -> Style {
        use std::io::IsTerminal;
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        Style {
            plain_out: no_color || !std::io::stdout().is_terminal(),
            plain_err: no_color || !std::io::stderr().is_terminal(),
            quiet,
        }
    }
}

impl Io<'_> {
    /// Writes the command's result to standard output.
    pub fn out(&mut self, text: &str) {
        let text = if self.style.plain_out {
            plain(text)
        } else {
            text.into()
        };
        let _ = self.stdout.write_all(text.as_bytes());
        let _ = self.stdout.flush();
    }

    /// Writes an error, a warning or a question to standard error (shown even with `-q`). Every
    /// line a command writes there (errors, hints, progress, events) passes here, so the user
    /// name and password a URL in it may carry (a kubeconfig's server, a release manifest's URL)
    /// are hidden here once for all (`snow_api::redact`).
    pub fn err(&mut self, text: &str) {
        let text = snow_api::redact::redact_userinfo(text);
        let text = if self.style.plain_err {
            plain(&text)
        } else {
            text
        };
        let _ = self.stderr.write_all(text.as_bytes());
        let _ = self.stderr.flush();
    }

    /// Writes progress or a success line to standard error, unless `-q`.
    pub fn progress(&mut self, text: &str) {
        if !self.style.quiet {
            self.err(text);
        }
    }
}

/// The marks a decorated line may start with (after its indent), and their plain form: an
/// error or warning keeps its word, the others go (the words after them say it).
const MARKS: [(&str, &str); 10] = [
    ("❌ error: ", "error: "),
    ("❌ ", "error: "),
    ("⚠️  warning: ", "warning: "),
    ("⚠️  ", "warning: "),
    ("✅ ", ""),
    ("🎉 ", ""),
    ("📦 ", ""),
    ("⏳ ", ""),
    ("🔎 ", ""),
    ("ℹ️ ", "note: "),
];

/// Text without its decoration: each line's leading mark (see [`MARKS`]) replaced by its plain
/// form, everything else as it is.
pub fn plain(text: &str) -> std::borrow::Cow<'_, str> {
    if !MARKS.iter().any(|(mark, _)| text.contains(mark)) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches(' ');
        let indent = &line[..line.len() - body.len()];
        match MARKS.iter().find(|(mark, _)| body.starts_with(mark)) {
            Some((mark, word)) => {
                out.push_str(indent);
                out.push_str(word);
                out.push_str(&body[mark.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out.into()
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

/// A report as `-o json` or `-o yaml` prints it, or `None` for `-o text` (each command words
/// its own text). JSON is pretty-printed with every control character escaped
/// ([`printable_json`]); YAML quotes and escapes such strings itself. The keys are the report's
/// own, in its order (camelCase, as Kubernetes objects).
pub fn structured(format: OutputFormat, report: &impl serde::Serialize) -> Option<String> {
    match format {
        OutputFormat::Text => None,
        OutputFormat::Json => Some(
            printable_json(&serde_json::to_string_pretty(report).unwrap_or_else(|_| "{}".into()))
                + "\n",
        ),
        // serde-saphyr escapes every control character in a double-quoted scalar (`\e`,
        // `\x9B`, `\x7F`), so a registry's or archive's text cannot reach the terminal raw.
        OutputFormat::Yaml => Some(serde_saphyr::to_string(report).unwrap_or_default()),
    }
}

/// The registry mirror a cluster uses, as `describe cluster` says it: where it is, where that
/// was read, its namespaces, and whether it answers and why not.
pub fn registry_mirror(mirror: &snow_provision::RegistryMirror) -> String {
    let mut out = format!(
        "Registry mirror: {}:{} (from {})\n",
        mirror.endpoint, mirror.port, mirror.source
    );
    for ns in &mirror.oci_namespaces {
        out.push_str(&format!(
            "    ociNamespace: {} under /v2/{}\n",
            ns.registry, ns.namespace
        ));
    }
    let answer = match &mirror.answer {
        Some(answer) => mirror_answer(mirror, answer, false),
        None => "not asked".to_owned(),
    };
    out.push_str(&format!("    {answer}\n"));
    out
}

/// Whether `mirror` answers, in words; `short` for a table's cell.
pub fn mirror_answer(
    mirror: &snow_provision::RegistryMirror,
    answer: &snow_api::mirror::MirrorAnswer,
    short: bool,
) -> String {
    use snow_api::mirror::{MirrorAnswer, Silence, TlsProblem, Trust};
    let url = format!("https://{}:{}/v2/", mirror.endpoint, mirror.port);
    let reason = match answer {
        MirrorAnswer::Answering { status, trust } => {
            if short {
                return "answering".to_owned();
            }
            let trust = match trust {
                Trust::CaCertContent => "its certificate checked against caCertContent",
                Trust::InsecureSkipVerify => {
                    "its certificate not checked (insecureSkipVerify, as the nodes)"
                }
                Trust::NoCaCertContent => {
                    "its certificate not checked (no caCertContent: the nodes check it against their own CAs)"
                }
            };
            return format!("answering: GET {url} gave {status}, {trust}");
        }
        MirrorAnswer::NotAnswering { reason } => reason,
    };
    let (brief, full) = match reason {
        Silence::Refused => (
            "refused".to_owned(),
            format!(
                "connection refused: nothing listens at {}:{}",
                mirror.endpoint, mirror.port
            ),
        ),
        Silence::Timeout { milliseconds } => {
            let limit = match milliseconds % 1000 {
                0 => format!("{}s", milliseconds / 1000),
                _ => format!("{milliseconds}ms"),
            };
            (
                "timeout".to_owned(),
                format!("no answer from {url} within {limit}"),
            )
        }
        Silence::Unreachable { error } => {
            ("unreachable".to_owned(), format!("unreachable: {error}"))
        }
        Silence::Tls { problem } => {
            let words = match problem {
                TlsProblem::UnknownIssuer => {
                    "the certificate is not signed by the CA in caCertContent (unknown issuer): give caCertContent the CA that signed the mirror's certificate (`registry serve --state-dir` prints it)".to_owned()
                }
                TlsProblem::NotValidForName { expected, presented } if presented.is_empty() => {
                    format!("the certificate does not name {expected}")
                }
                TlsProblem::NotValidForName { expected, presented } => format!(
                    "the certificate does not name {expected} (it names {})",
                    presented.join(", ")
                ),
                TlsProblem::Expired => "the certificate has expired".to_owned(),
                TlsProblem::NotValidYet => {
                    "the certificate is not valid yet (is this machine's clock behind?)".to_owned()
                }
                TlsProblem::NotTls => "the port does not speak TLS (a plain-HTTP server?)".to_owned(),
                TlsProblem::Other { error } => error.clone(),
            };
            ("TLS failure".to_owned(), format!("TLS failure: {words}"))
        }
        Silence::NotARegistry { status } => (
            format!("not a registry: {status}"),
            format!("GET {url} gave {status}, which a registry does not (200, or 401)"),
        ),
        Silence::Http { error } => ("HTTP failure".to_owned(), format!("HTTP failure: {error}")),
        Silence::BadCaCertContent { problem } => (
            "bad caCertContent".to_owned(),
            format!("not asked: caCertContent {problem}"),
        ),
    };
    if short {
        format!("not answering ({brief})")
    } else {
        format!("not answering: {full}")
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

/// The one form of an error: `❌ error: {what}` (`error: {what}` in plain output), then
/// `  hint: {hint}`.
pub fn error_text(what: &dyn std::fmt::Display, hint: Option<&str>) -> String {
    let mut out = format!("❌ error: {what}\n");
    if let Some(hint) = hint {
        out.push_str(&format!("  hint: {hint}\n"));
    }
    out
}

/// One finding as a standalone error: at a position in the source, in the form of the findings
/// report ([`snow_api::finding_text::write_one`]: `error[check] field: message`, `-->
/// file:line:col`, the source line (a window of a long one) with a caret, the hint); without a
/// position (a file that cannot be read), in [`error_text`]'s form, naming the input.
pub fn diagnostic(finding: &Finding, source_name: &str, source: Option<&str>) -> String {
    if finding.location().is_none() {
        let what = format!("{source_name}: {}", finding.message);
        return error_text(&what, finding.hint.as_deref());
    }
    let lines: Vec<&str> = source.map(|s| s.lines().collect()).unwrap_or_default();
    let mut out = String::new();
    snow_api::finding_text::write_one(&mut out, finding, source_name, &lines, "");
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
    use super::{plain, printable_json, printable_lines, structured};
    use crate::args::OutputFormat;

    #[test]
    fn plain_text_keeps_the_words_and_drops_the_marks() {
        let decorated = "❌ error: no\n  hint: x\n🎉 Cluster edge created!\n  ✅ Control plane initialized\n⚠️  warning: insecure\n⚠️  External etcd was not rolled\n❌ edge.yaml: 1 error(s)\nkeep ✅ inside\n";
        assert_eq!(
            plain(decorated),
            "error: no\n  hint: x\nCluster edge created!\n  Control plane initialized\nwarning: insecure\nwarning: External etcd was not rolled\nerror: edge.yaml: 1 error(s)\nkeep ✅ inside\n"
        );
        assert!(matches!(plain("no marks\n"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn yaml_reports_escape_control_characters_and_read_back() {
        let report = serde_json::json!({
            "images": [{"uri": "a\u{1b}[2J\u{9b}1m\u{7f}", "usedBy": ["x"]}],
            "ok": true, "count": 2, "none": null, "empty": [], "map": {}
        });
        let text = structured(OutputFormat::Yaml, &report).unwrap();
        assert!(!text.chars().any(|c| c != '\n' && c.is_control()), "{text}");
        let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, report, "{text}");
        assert_eq!(structured(OutputFormat::Text, &report), None);
    }

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
