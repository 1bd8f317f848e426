//! The counters served at `/metrics` in Prometheus' text format: requests by kind and status,
//! body bytes sent, and misses (a manifest, blob, tag list or repository the archive does not
//! hold).

use std::{
    collections::BTreeMap,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

/// What a request asked for, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// `/v2/`.
    Base,
    /// `/v2/<name>/manifests/<reference>`.
    Manifest,
    /// `/v2/<name>/blobs/<digest>`.
    Blob,
    /// `/v2/<name>/tags/list`.
    Tags,
    /// `/metrics`.
    Metrics,
    /// A push, an unknown path or method.
    Other,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Base => "base",
            Kind::Manifest => "manifest",
            Kind::Blob => "blob",
            Kind::Tags => "tags",
            Kind::Metrics => "metrics",
            Kind::Other => "other",
        }
    }
}

/// The registry's counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    requests: Mutex<BTreeMap<(Kind, u16), u64>>,
    bytes: AtomicU64,
    misses: AtomicU64,
}

impl Metrics {
    pub(crate) fn request(&self, kind: Kind, status: u16) {
        if let Ok(mut map) = self.requests.lock() {
            *map.entry((kind, status)).or_default() += 1;
        }
        if status == 404 && matches!(kind, Kind::Manifest | Kind::Blob | Kind::Tags) {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn sent(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The text exposition format (version 0.0.4).
    pub(crate) fn render(&self) -> String {
        let mut out = String::from(
            "# HELP snowctl_registry_requests_total Requests answered, by kind and status.\n# TYPE snowctl_registry_requests_total counter\n",
        );
        if let Ok(map) = self.requests.lock() {
            for ((kind, status), n) in map.iter() {
                out.push_str(&format!(
                    "snowctl_registry_requests_total{{kind=\"{}\",status=\"{status}\"}} {n}\n",
                    kind.label()
                ));
            }
        }
        let counter = |out: &mut String, name: &str, help: &str, value: u64| {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"
            ));
        };
        counter(
            &mut out,
            "snowctl_registry_sent_bytes_total",
            "Body bytes of manifests and blobs sent.",
            self.bytes.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "snowctl_registry_misses_total",
            "Manifests, blobs and tag lists asked for that the archive does not hold.",
            self.misses.load(Ordering::Relaxed),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_in_the_text_format() {
        let m = Metrics::default();
        m.request(Kind::Blob, 200);
        m.request(Kind::Blob, 200);
        m.request(Kind::Manifest, 404);
        m.request(Kind::Other, 404);
        m.sent(42);
        let text = m.render();
        assert!(text.contains("snowctl_registry_requests_total{kind=\"blob\",status=\"200\"} 2\n"));
        assert!(text.contains("snowctl_registry_misses_total 1\n"), "{text}");
        assert!(text.contains("snowctl_registry_sent_bytes_total 42\n"));
    }
}
