//! `snowctl download artifacts --output-file FILE`: on a connected machine, every image of the selection
//! and the manifests the offline commands read, into one archive that
//! `snowctl import-images --from FILE` reads at the site.

use crate::{
    args::DownloadArtifactsArgs,
    env::Environment,
    exit::{self, Outcome},
    output::{Io, printable_lines},
    progress,
    settings::{GlobalSettings, images::DownloadArtifactsSettings},
};
use snow_images::DownloadConfig;
use std::process::ExitCode;

/// Runs `snowctl download artifacts`.
pub fn artifacts(
    args: DownloadArtifactsArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let DownloadArtifactsSettings {
        platforms,
        images,
        from_archives,
        files,
        ca_certs_pem,
        credentials,
    } = exit::noted(io, DownloadArtifactsSettings::resolve(&args, environment))?;
    let uris: Vec<String> = images.into_iter().map(|i| i.uri).collect();
    let source = &args.source.source_registry;
    let plan = snow_images::plan_download(&uris, source.as_deref())
        .map_err(|e| exit::usage(io, printable_lines(&e.to_string())))?;
    let config = DownloadConfig {
        output: args.output_file.clone(),
        source_registry: source.clone(),
        platforms,
        concurrency: usize::from(args.source.concurrency),
        ca_certs_pem,
        plain_http: source
            .iter()
            .filter(|_| args.source.source_insecure)
            .cloned()
            .collect(),
        credentials,
        files,
        from_archives,
    };
    let count = plan.len() + config.from_archives.len();
    let report = progress::run_with_progress(count, global.verbose > 0, io, move |p| async move {
        snow_images::download_images(&plan, &config, p).await
    });
    let report = report.map_err(|e| exit::failed(io, e))?;
    io.out(
        &crate::output::structured(args.output, &report)
            .unwrap_or_else(|| printable_lines(&report.to_string())),
    );
    match &report.error {
        Some(error) => Err(exit::failed(io, printable_lines(&error.to_string()))),
        None => Ok(ExitCode::SUCCESS),
    }
}
