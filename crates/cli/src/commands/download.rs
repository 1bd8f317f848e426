//! `snowctl download artifacts --output-file FILE`: on a connected machine, every image of the selection
//! and the manifests the offline commands read, into one archive that
//! `snowctl import-images --from FILE` reads at the site.

use crate::{
    args::DownloadArtifactsArgs,
    env::Environment,
    exit::{self, Outcome},
    output::{Io, printable_lines},
    progress,
    settings::{self, Catalog, GlobalSettings},
};
use snow_api::release::ReleaseInputs;
use snow_images::{
    Archive, ArchiveFile, DownloadConfig, FromArchive, Platforms,
    controller_image::controller_image_name,
};
use std::{process::ExitCode, sync::Arc};

/// The manifests stored beside the images (under `snowctl/manifests/` in the archive): the
/// Bundles manifest (the file given, else the published release's), its EKS-D Release
/// manifests, the image list, and (without `--no-components`) the management components and
/// Flux's install manifest.
fn files(
    args: &DownloadArtifactsArgs,
    catalog: &Catalog,
    images: &[snow_images::ListedImage],
    environment: &Environment,
    io: &mut Io<'_>,
) -> Result<Vec<ArchiveFile>, ExitCode> {
    let mut files = snow_images::archive::release_files(&catalog.bundles, &catalog.eksd, images);
    if !args.no_components {
        files.extend(components(args, &catalog.inputs, environment, io)?);
    }
    Ok(files)
}

/// The management components and Flux's install manifest (Flux's release file, the bundle
/// naming only Flux's version) of every selected Kubernetes version's bundle, fetched (or taken
/// from the cache), for `snowctl init --artifacts` and GitOps offline.
fn components(
    args: &DownloadArtifactsArgs,
    inputs: &ReleaseInputs,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Result<Vec<ArchiveFile>, ExitCode> {
    let versions = match args.selection.kubernetes_versions.as_slice() {
        [] => inputs.bundles.kube_versions(),
        some => some.to_vec(),
    };
    let mut wanted = Vec::new();
    for version in versions {
        let bundle = inputs
            .bundles
            .versions_bundle(&version)
            .map_err(|e| exit::usage(io, e))?;
        let assets = snow_api::release::management_components(bundle);
        wanted.extend(assets.map_err(|e| exit::usage(io, e))?);
        let flux = snow_api::release::flux_install_asset(bundle, snow_api::release::FLUX_RELEASES);
        wanted.extend(flux.map_err(|e| exit::usage(io, e))?);
    }
    let mut seen = std::collections::HashSet::new();
    wanted.retain(|a| seen.insert(a.clone()));
    let pems = exit::settled(io, settings::ca_certs(&args.source.ca_certs))?;
    let files = exit::noted(
        io,
        settings::fetch_components(&wanted, args.cache_dir.as_deref(), pems, environment),
    )?;
    Ok(snow_images::assets::archive_files(&wanted, &files))
}

/// The controller image of `--controller-image-archive FILE`, which must hold this snowctl's
/// `snowctl/controller:v<version>`.
fn controller_image(
    args: &DownloadArtifactsArgs,
    io: &mut Io<'_>,
) -> Result<Vec<FromArchive>, ExitCode> {
    let Some(path) = &args.controller_image_archive else {
        return Ok(Vec::new());
    };
    let archive = Archive::open(path).map_err(|e| {
        exit::usage(
            io,
            printable_lines(&format!("--controller-image-archive: {e}")),
        )
    })?;
    let name = controller_image_name();
    let held: Vec<String> = (archive.images().iter())
        .map(|i| i.name.clone().unwrap_or_else(|| "(no name)".into()))
        .collect();
    FromArchive::new(Arc::new(archive), &name)
        .map(|from| vec![from])
        .map_err(|_| {
            let why = format!(
                "--controller-image-archive: {} holds {}, not {name} (this snowctl's): build it from this snowctl with scripts/build-controller-image",
                path.display(),
                if held.is_empty() { "no image".to_owned() } else { held.join(", ") },
            );
            exit::usage(io, printable_lines(&why))
        })
}

/// Runs `snowctl download artifacts`.
pub fn artifacts(
    args: DownloadArtifactsArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let platforms = Platforms::parse(&args.platforms)
        .map_err(|e| exit::usage(io, format!("--platform: {e}")))?;
    let catalog = exit::noted(
        io,
        settings::selection_catalog(
            &args.selection,
            args.cache_dir.as_deref(),
            &args.source.ca_certs,
            environment,
        ),
    )?;
    let images = match exit::settled(io, settings::user_images(&args.selection))? {
        Some(images) => images,
        None => exit::settled(io, settings::image_selection(&args.selection, &catalog))?,
    };
    let from_archives = controller_image(&args, io)?;
    let files = files(&args, &catalog, &images, environment, io)?;
    let (ca_certs_pem, credentials) =
        exit::settled(io, settings::registry_access(&args.source, environment))?;
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
