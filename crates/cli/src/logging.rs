//! The libraries' tracing log on stderr (the controller's log; any command's with `-vv`), every
//! line with the user information of its URLs redacted: kube's request spans carry the server
//! URL, which a kubeconfig may give with a user name and password (`https://admin:PW@host`).

use std::io::Write;
use tracing_subscriber::fmt::MakeWriter;

/// Stderr, each log line passed through [`snow_api::redact::redact_userinfo`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactedStderr;

/// One event's text, kept until the event is written whole (tracing's formatter writes an event
/// and then drops its writer), so a URL split over two writes is still seen whole.
#[derive(Debug, Default)]
pub struct EventWriter(Vec<u8>);

impl<'a> MakeWriter<'a> for RedactedStderr {
    type Writer = EventWriter;

    fn make_writer(&'a self) -> EventWriter {
        EventWriter::default()
    }
}

impl Write for EventWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventWriter {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let _ = std::io::stderr().write_all(redacted(&text).as_bytes());
    }
}

/// A log line as it is written.
fn redacted(line: &str) -> std::borrow::Cow<'_, str> {
    snow_api::redact::redact_userinfo(line)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_url_password_in_a_log_line_is_redacted() {
        let line =
            "DEBUG HTTP{http.url=https://admin:hunter2@127.0.0.1:6443/version}: requesting\n";
        let shown = super::redacted(line);
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("https://<redacted>@127.0.0.1:6443/version"),
            "{shown}"
        );
    }
}
