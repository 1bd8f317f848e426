//! The controller's counters, served as `GET /metrics` on the health port in the Prometheus text
//! exposition format (version 0.0.4), written by hand: a few counters, one gauge and one
//! histogram need no client library.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    sync::{
        Mutex,
        atomic::{AtomicI64, AtomicU64, Ordering},
    },
    time::Duration,
};

/// The upper bounds of the reconcile duration histogram, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How a reconcile ended: the `result` label of `snowctl_controller_reconciles_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ended {
    /// The pass ran and the API answered (the object's status says whether it converged).
    Success,
    /// An API error: the reconcile is retried.
    Error,
    /// Nothing the pass reads changed since the last pass found the object Ready: no pass ran.
    Unchanged,
}

impl Ended {
    fn label(self) -> &'static str {
        match self {
            Ended::Success => "success",
            Ended::Error => "error",
            Ended::Unchanged => "unchanged",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Counts per bucket of [`BUCKETS`] (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The controller's metrics; shared by the reconcilers and the health endpoint.
#[derive(Debug, Default)]
pub struct Metrics {
    reconciles: Mutex<BTreeMap<(&'static str, Ended), u64>>,
    durations: Mutex<BTreeMap<&'static str, Histogram>>,
    writes: AtomicU64,
    queue: AtomicI64,
}

impl Metrics {
    /// Records one reconcile of `kind` that ended as `result` after `took`, having written
    /// `writes` objects.
    pub fn record(&self, kind: &'static str, result: Ended, took: Duration, writes: u32) {
        if let Ok(mut r) = self.reconciles.lock() {
            *r.entry((kind, result)).or_default() += 1;
        }
        let seconds = took.as_secs_f64();
        if let Ok(mut d) = self.durations.lock() {
            let h = d.entry(kind).or_default();
            if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
                h.buckets[i] += 1;
            }
            h.count += 1;
            h.sum += seconds;
        }
        self.writes.fetch_add(u64::from(writes), Ordering::Relaxed);
    }

    /// Reconciles of `kind` that ended as `result` so far.
    pub fn reconciles(&self, kind: &str, result: Ended) -> u64 {
        self.reconciles.lock().map_or(0, |r| {
            r.iter()
                .filter(|((k, res), _)| *k == kind && *res == result)
                .map(|(_, n)| *n)
                .sum()
        })
    }

    /// `n` more objects queued for a reconcile (negative: reconciled).
    pub fn queued(&self, n: i64) {
        self.queue.fetch_add(n, Ordering::Relaxed);
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let reconciles = self
            .reconciles
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "# HELP snowctl_controller_reconciles_total Reconciles by kind and result (success: the pass ran; error: an API error, retried; unchanged: nothing it reads changed since it found the object Ready, no pass ran).\n# TYPE snowctl_controller_reconciles_total counter"
        );
        for ((kind, result), n) in &reconciles {
            let _ = writeln!(
                out,
                "snowctl_controller_reconciles_total{{kind=\"{kind}\",result=\"{}\"}} {n}",
                result.label()
            );
        }
        let _ = writeln!(
            out,
            "# HELP snowctl_controller_reconcile_errors_total Reconciles that failed with an API error, by kind.\n# TYPE snowctl_controller_reconcile_errors_total counter"
        );
        for ((kind, result), n) in &reconciles {
            if *result == Ended::Error {
                let _ = writeln!(
                    out,
                    "snowctl_controller_reconcile_errors_total{{kind=\"{kind}\"}} {n}"
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP snowctl_controller_reconcile_duration_seconds How long reconciles took, by kind.\n# TYPE snowctl_controller_reconcile_duration_seconds histogram"
        );
        let durations = self.durations.lock().map(|d| d.clone()).unwrap_or_default();
        for (kind, h) in &durations {
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "snowctl_controller_reconcile_duration_seconds_bucket{{kind=\"{kind}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "snowctl_controller_reconcile_duration_seconds_bucket{{kind=\"{kind}\",le=\"+Inf\"}} {}\nsnowctl_controller_reconcile_duration_seconds_sum{{kind=\"{kind}\"}} {}\nsnowctl_controller_reconcile_duration_seconds_count{{kind=\"{kind}\"}} {}",
                h.count, h.sum, h.count
            );
        }
        let _ = writeln!(
            out,
            "# HELP snowctl_controller_writes_total Writes (apply, patch, delete, Event) the reconciles made to the management cluster.\n# TYPE snowctl_controller_writes_total counter\nsnowctl_controller_writes_total {}",
            self.writes.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP snowctl_controller_queue_depth Objects queued for a reconcile or being reconciled.\n# TYPE snowctl_controller_queue_depth gauge\nsnowctl_controller_queue_depth {}",
            self.queue.load(Ordering::Relaxed).max(0)
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_has_cumulative_buckets_and_every_family() {
        let m = Metrics::default();
        m.record("Cluster", Ended::Success, Duration::from_millis(20), 2);
        m.record("Cluster", Ended::Unchanged, Duration::from_micros(10), 0);
        m.record("Cluster", Ended::Error, Duration::from_secs(60), 0);
        m.queued(3);
        m.queued(-1);
        let text = m.render();
        for line in [
            "snowctl_controller_reconciles_total{kind=\"Cluster\",result=\"success\"} 1",
            "snowctl_controller_reconciles_total{kind=\"Cluster\",result=\"unchanged\"} 1",
            "snowctl_controller_reconcile_errors_total{kind=\"Cluster\"} 1",
            "snowctl_controller_reconcile_duration_seconds_bucket{kind=\"Cluster\",le=\"0.001\"} 1",
            "snowctl_controller_reconcile_duration_seconds_bucket{kind=\"Cluster\",le=\"0.025\"} 2",
            "snowctl_controller_reconcile_duration_seconds_bucket{kind=\"Cluster\",le=\"10\"} 2",
            "snowctl_controller_reconcile_duration_seconds_bucket{kind=\"Cluster\",le=\"+Inf\"} 3",
            "snowctl_controller_reconcile_duration_seconds_count{kind=\"Cluster\"} 3",
            "snowctl_controller_writes_total 2",
            "snowctl_controller_queue_depth 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
