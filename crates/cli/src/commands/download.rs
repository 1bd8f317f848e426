//! `snowctl download artifacts -o FILE` (issue 17): on a connected machine, every image of the
//! selection and the manifests the offline commands read, into one archive that
//! `snowctl import-images --from FILE` reads at the site.

use crate::{
    args::{DownloadArtifactsArgs, OutputFormat},
    exit,
    output::{self, Io},
    progress,
    settings::{self, GlobalSettings},
};
use snow_images::{ArchiveFile, DownloadConfig, Platforms};
use std::process::ExitCode;

/// The manifests stored beside the images (under `snowctl/manifests/` in the archive): the
/// Bundles manifest (the file given, else the embedded catalog's), the EKS-D Release manifests
/// given, and the image list.
fn files(
    args: &DownloadArtifactsArgs,
    images: &[snow_images::ListedImage],
    io: &mut Io<'_>,
) -> Result<Vec<ArchiveFile>, ExitCode> {
    let mut files = Vec::new();
    let bundles = match &args.release.bundles {
        Some(path) => settings::read_text(path, "the Bundles manifest", io)?,
        None => {
            let inputs = settings::release_inputs(&args.release, io)?;
            serde_saphyr::to_string(&inputs.bundles).map_err(|e| {
                io.err(&format!("error: cannot write the embedded Bundles: {e}\n"));
                ExitCode::from(exit::USAGE)
            })?
        }
    };
    files.push(ArchiveFile {
        path: "bundles.yaml".into(),
        content: bundles.into_bytes(),
    });
    for path in &args.release.eksd_releases {
        let text = settings::read_text(path, "the EKS-D release", io)?;
        let name = output::source_name(path);
        let name = name.rsplit('/').next().unwrap_or(&name).to_owned();
        files.push(ArchiveFile {
            path: format!("eksd/{name}"),
            content: text.into_bytes(),
        });
    }
    files.push(ArchiveFile {
        path: "images.json".into(),
        content: serde_json::to_vec_pretty(images).unwrap_or_default(),
    });
    Ok(files)
}

/// Runs `snowctl download artifacts`.
pub fn artifacts(args: DownloadArtifactsArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    let usage = || ExitCode::from(exit::USAGE);
    let platforms = match Platforms::parse(&args.platforms) {
        Ok(p) => p,
        Err(e) => {
            io.err(&format!("error: --platform: {e}\n"));
            return usage();
        }
    };
    let images = match settings::image_selection(
        &args.release,
        &args.kubernetes_versions,
        &args.os,
        &args.images,
        args.images_file.as_deref(),
        io,
    ) {
        Ok(images) => images,
        Err(code) => return code,
    };
    let files = match files(&args, &images, io) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let ca_certs_pem = match settings::registry_ca_certs(&args.ca_certs, io) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let credentials = match settings::registry_credentials(args.docker_config.as_deref(), io) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let uris: Vec<String> = images.into_iter().map(|i| i.uri).collect();
    let plan = match snow_images::plan_download(&uris, args.source_registry.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            io.err(&format!("error: {e}\n"));
            return usage();
        }
    };
    let config = DownloadConfig {
        output: args.output.clone(),
        source_registry: args.source_registry.clone(),
        platforms,
        concurrency: usize::from(args.concurrency),
        ca_certs_pem,
        plain_http: if args.source_insecure {
            args.source_registry.clone().into_iter().collect()
        } else {
            Vec::new()
        },
        credentials,
        files,
    };
    let total = plan.len();
    let report =
        progress::run_with_progress(total, global.verbose > 0, io, move |progress| async move {
            snow_images::download_images(&plan, &config, progress).await
        });
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            io.err(&format!("error: {e}\n"));
            return ExitCode::from(exit::FINDINGS);
        }
    };
    match args.format {
        OutputFormat::Json => io.out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_else(|_| "{}".into())
        )),
        OutputFormat::Text => io.out(&report.to_string()),
    }
    if let Some(error) = &report.error {
        io.err(&format!("error: {error}\n"));
        return ExitCode::from(exit::FINDINGS);
    }
    ExitCode::from(exit::OK)
}
