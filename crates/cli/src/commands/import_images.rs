//! `snowctl import-images`: list the images a Snow cluster needs, or copy them to a registry on
//! the site (issue 7).

use crate::{
    args::{ImportImagesArgs, OsArg, OutputFormat},
    exit,
    output::Io,
    settings::{self, GlobalSettings},
};
use snow_images::{
    BundleData, CopyConfig, Credentials, ImageCopy, ImageResult, ImageStatus, OsFamily, Progress,
    Selection, TargetRegistry,
};
use std::{
    fmt::Write as _,
    path::PathBuf,
    process::ExitCode,
    sync::{Arc, mpsc},
};

/// The image URIs: `--image`/`--images-file` when given, else the bundle's list.
fn image_uris(
    args: &ImportImagesArgs,
    io: &mut Io<'_>,
) -> Result<Vec<snow_images::ListedImage>, ExitCode> {
    if !args.images.is_empty() || args.images_file.is_some() {
        let list = match &args.images_file {
            Some(path) => Some(settings::read_text(path, "the image list", io)?),
            None => None,
        };
        return Ok(snow_images::ListedImage::from_user(
            &args.images,
            list.as_deref(),
        ));
    }
    let fail = |io: &mut Io<'_>, e: &dyn std::fmt::Display| {
        io.err(&format!("error: {e}\n"));
        ExitCode::from(exit::USAGE)
    };
    let inputs = settings::release_inputs(&args.release, io)?;
    // The Bundles manifest holds sections the release catalog does not keep (the management
    // components' images): they are read from the file itself.
    let bundle = match &args.release.bundles {
        Some(path) => {
            BundleData::from_yaml(&settings::read_text(path, "the Bundles manifest", io)?)
        }
        None => BundleData::from_inputs(&inputs),
    }
    .map_err(|e| fail(io, &e))?;
    let selection = Selection {
        kube_versions: args.kubernetes_versions.clone(),
        os_families: args
            .os
            .iter()
            .map(|os| match os {
                OsArg::Ubuntu => OsFamily::Ubuntu,
                OsArg::Bottlerocket => OsFamily::Bottlerocket,
            })
            .collect(),
    };
    snow_images::image_list(&bundle, &inputs.distros, &selection).map_err(|e| fail(io, &e))
}

fn docker_config_path(args: &ImportImagesArgs) -> Option<PathBuf> {
    if let Some(path) = &args.docker_config {
        return Some(path.clone());
    }
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")))?;
    let path = dir.join("config.json");
    path.exists().then_some(path)
}

fn config(
    args: &ImportImagesArgs,
    registry: &str,
    io: &mut Io<'_>,
) -> Result<CopyConfig, ExitCode> {
    let usage = || ExitCode::from(exit::USAGE);
    let target = TargetRegistry::parse(registry).map_err(|e| {
        io.err(&format!("error: --registry: {e}\n"));
        usage()
    })?;
    let mut ca_certs_pem = Vec::new();
    for path in &args.ca_certs {
        let pem = settings::read_text(path, "the CA certificate", io)?;
        if !pem.contains("-----BEGIN CERTIFICATE-----") {
            io.err(&format!(
                "error: {} holds no PEM certificate\n",
                path.display()
            ));
            return Err(usage());
        }
        ca_certs_pem.push(pem.into_bytes());
    }
    let mut credentials = match docker_config_path(args) {
        Some(path) => {
            let text = settings::read_text(&path, "the Docker config", io)?;
            Credentials::from_docker_config(&text).map_err(|e| {
                io.err(&format!("error: {}: {e}\n", path.display()));
                usage()
            })?
        }
        None => Credentials::default(),
    };
    if let (Some(user), true) = (&args.username, args.password_stdin) {
        let mut password = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut password) {
            io.err(&format!(
                "error: cannot read the password from stdin: {e}\n"
            ));
            return Err(usage());
        }
        credentials.insert(
            &target.host,
            user.clone(),
            password.trim_end_matches(['\r', '\n']).to_owned(),
        );
    }
    let mut plain_http = Vec::new();
    if args.insecure {
        plain_http.push(target.host.clone());
    }
    if args.source_insecure {
        plain_http.extend(args.source_registry.clone());
    }
    Ok(CopyConfig {
        target,
        source_registry: args.source_registry.clone(),
        all_platforms: args.all_platforms,
        concurrency: usize::from(args.concurrency),
        ca_certs_pem,
        plain_http,
        credentials,
    })
}

/// Progress on a terminal: one bar per image (bytes streamed) and one for all bytes.
/// (Bars draw to the terminal themselves; without a terminal, [`Lines`] go through `Io`.)
struct Bars {
    multi: indicatif::MultiProgress,
    bytes: indicatif::ProgressBar,
    images: std::sync::Mutex<std::collections::HashMap<usize, indicatif::ProgressBar>>,
    total: usize,
}

impl Bars {
    fn new(total: usize, target: indicatif::ProgressDrawTarget) -> Bars {
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
struct Lines {
    tx: std::sync::Mutex<mpsc::Sender<String>>,
    total: usize,
    verbose: bool,
}

impl Lines {
    fn send(&self, line: String) {
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send(line);
        }
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
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
        let n = format!("[{}/{}]", index + 1, self.total);
        let line = match &result.status {
            ImageStatus::Copied {
                blobs_copied,
                blobs_mounted,
                blobs_skipped,
                bytes,
            } => format!(
                "{n} copied {} ({blobs_copied} blobs, {}; {blobs_mounted} mounted, {blobs_skipped} already there)\n",
                result.copy.target,
                mb(*bytes)
            ),
            ImageStatus::UpToDate => format!("{n} up to date {}\n", result.copy.target),
            ImageStatus::Failed { error } => {
                format!("{n} FAILED {}: {error}\n", result.copy.image)
            }
        };
        self.send(line);
    }
}

/// Runs `snowctl import-images`.
pub fn run(args: ImportImagesArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    let usage = || ExitCode::from(exit::USAGE);
    let images = match image_uris(&args, io) {
        Ok(images) => images,
        Err(code) => return code,
    };
    if args.list {
        match args.output {
            OutputFormat::Json => {
                let json = serde_json::to_string_pretty(&images).unwrap_or_else(|_| "[]".into());
                io.out(&format!("{json}\n"));
            }
            OutputFormat::Text => {
                let mut out = String::new();
                for image in &images {
                    let _ = writeln!(out, "{}", image.uri);
                }
                io.out(&out);
            }
        }
        return ExitCode::from(exit::OK);
    }
    let Some(registry) = args.registry.clone() else {
        io.err("error: --registry HOST:PORT[/NAMESPACE] is required to copy (or --list)\n");
        return usage();
    };
    let config = match config(&args, &registry, io) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let uris: Vec<String> = images.into_iter().map(|i| i.uri).collect();
    let plan = match snow_images::plan(&uris, &config) {
        Ok(p) => p,
        Err(e) => {
            io.err(&format!("error: {e}\n"));
            return usage();
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            io.err(&format!("error: cannot start the async runtime: {e}\n"));
            return usage();
        }
    };
    let (tx, rx) = mpsc::channel();
    let progress: Arc<dyn Progress> = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        drop(tx);
        Arc::new(Bars::new(
            plan.len(),
            indicatif::ProgressDrawTarget::stderr(),
        ))
    } else {
        Arc::new(Lines {
            tx: std::sync::Mutex::new(tx),
            total: plan.len(),
            verbose: global.verbose > 0,
        })
    };
    // The copy runs on its own thread; this one writes its progress lines through `Io` until
    // the progress sender (owned by that thread) is dropped.
    let worker = std::thread::spawn(move || {
        runtime.block_on(snow_images::copy_images(&plan, &config, progress))
    });
    for line in rx {
        io.err(&line);
    }
    let report = match worker.join() {
        Ok(report) => report,
        Err(_) => {
            io.err("error: the copy stopped unexpectedly\n");
            return ExitCode::from(exit::FINDINGS);
        }
    };
    match args.output {
        OutputFormat::Json => io.out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_else(|_| "{}".into())
        )),
        OutputFormat::Text => io.out(&report.summary_text()),
    }
    if report.failed() > 0 {
        ExitCode::from(exit::FINDINGS)
    } else {
        ExitCode::from(exit::OK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
