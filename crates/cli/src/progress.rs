//! Progress of an image transfer (copy, download, import) on stderr: bars on a terminal, lines
//! otherwise. Shared by `import-images` and `download artifacts`.

use snow_images::{ImageCopy, ImageResult, ImageStatus, Progress};
use std::sync::mpsc;

/// Progress on a terminal: one bar per image (bytes streamed) and one for all bytes.
/// (Bars draw to the terminal themselves; without a terminal, [`Lines`] go through `Io`.)
pub struct Bars {
    multi: indicatif::MultiProgress,
    bytes: indicatif::ProgressBar,
    images: std::sync::Mutex<std::collections::HashMap<usize, indicatif::ProgressBar>>,
    total: usize,
}

impl Bars {
    /// Bars for `total` images drawn to `target`.
    pub fn new(total: usize, target: indicatif::ProgressDrawTarget) -> Bars {
        let multi = indicatif::MultiProgress::with_draw_target(target);
        let bytes = multi.add(indicatif::ProgressBar::new(0));
        bytes.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix:>12} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bytes.set_prefix("all images");
        Bars {
            multi,
            bytes,
            images: std::sync::Mutex::new(std::collections::HashMap::new()),
            total,
        }
    }

    fn bar(&self, index: usize) -> Option<indicatif::ProgressBar> {
        self.images
            .lock()
            .ok()
            .and_then(|bars| bars.get(&index).cloned())
    }
}

impl Progress for Bars {
    fn image_started(&self, index: usize, copy: &ImageCopy) {
        let bar = self
            .multi
            .insert_before(&self.bytes, indicatif::ProgressBar::new(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template("{prefix:>12} {bytes:>10} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_prefix(format!("[{}/{}]", index + 1, self.total));
        bar.set_message(copy.target.clone());
        if let Ok(mut bars) = self.images.lock() {
            bars.insert(index, bar);
        }
    }

    fn blob_started(&self, index: usize, _digest: &str, size: u64) {
        self.bytes.inc_length(size);
        if let Some(bar) = self.bar(index) {
            bar.inc_length(size);
        }
    }

    fn bytes(&self, index: usize, n: u64) {
        self.bytes.inc(n);
        if let Some(bar) = self.bar(index) {
            bar.inc(n);
        }
    }

    fn image_finished(&self, index: usize, result: &ImageResult) {
        let Some(bar) = self.bar(index) else { return };
        let status = match &result.status {
            ImageStatus::Copied { .. } => "copied",
            ImageStatus::UpToDate => "up to date",
            ImageStatus::Failed { .. } => "FAILED",
        };
        bar.finish_with_message(format!("{status} {}", result.copy.target));
    }
}

/// Progress as lines sent to the command's thread, which writes them through `Io`.
pub struct Lines {
    /// Where lines go.
    pub tx: std::sync::Mutex<mpsc::Sender<String>>,
    /// The number of images.
    pub total: usize,
    /// Also a line as each image starts.
    pub verbose: bool,
}

impl Lines {
    fn send(&self, line: String) {
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send(line);
        }
    }
}

impl Progress for Lines {
    fn image_started(&self, index: usize, copy: &ImageCopy) {
        if self.verbose {
            self.send(format!(
                "[{}/{}] {} -> {}\n",
                index + 1,
                self.total,
                copy.source,
                copy.target
            ));
        }
    }

    fn image_finished(&self, index: usize, result: &ImageResult) {
        self.send(format!("[{}/{}] {result}\n", index + 1, self.total));
    }
}

/// Runs `work` on its own thread and async runtime, giving it the progress sink (bars on a
/// terminal, else lines written through `io` by this thread as they come); returns what it
/// returns, or an error when the runtime cannot start or the work panics.
pub fn run_with_progress<T, F, Fut>(
    total: usize,
    verbose: bool,
    io: &mut crate::output::Io<'_>,
    work: F,
) -> Result<T, String>
where
    F: FnOnce(std::sync::Arc<dyn Progress>) -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let progress: std::sync::Arc<dyn Progress> = if io.style.quiet {
        drop(tx);
        std::sync::Arc::new(Bars::new(total, indicatif::ProgressDrawTarget::hidden()))
    } else if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        drop(tx);
        std::sync::Arc::new(Bars::new(total, indicatif::ProgressDrawTarget::stderr()))
    } else {
        std::sync::Arc::new(Lines {
            tx: std::sync::Mutex::new(tx),
            total,
            verbose,
        })
    };
    // The work owns the progress sender: this thread writes the lines until it is dropped.
    let worker = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        Ok(runtime.block_on(work(progress)))
    });
    for line in rx {
        io.progress(&crate::output::printable_lines(&line));
    }
    worker
        .join()
        .map_err(|_| "the transfer stopped unexpectedly".to_owned())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use snow_images::ImageCopy;

    #[test]
    fn bars_count_the_bytes_of_every_image() {
        let bars = Bars::new(2, indicatif::ProgressDrawTarget::hidden());
        let copy = |n: &str| ImageCopy {
            image: format!("src/{n}:v1"),
            source: format!("src/{n}:v1"),
            target: format!("dst/{n}:v1"),
        };
        for (i, name) in ["a", "b"].iter().enumerate() {
            bars.image_started(i, &copy(name));
            bars.blob_started(i, "sha256:x", 100);
            bars.bytes(i, 60);
            bars.bytes(i, 40);
        }
        assert_eq!(bars.bytes.length(), Some(200));
        assert_eq!(bars.bytes.position(), 200);
        assert_eq!(bars.bar(1).map(|b| b.position()), Some(100));
    }
}
