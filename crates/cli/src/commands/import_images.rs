//! `snowctl import-images`: list the images a Snow cluster needs, or copy them to a registry on
//! the site, from their registries or from an archive (`--from`).

use crate::{
    args::ImportImagesArgs,
    env::Environment,
    exit::{self, Outcome},
    output::{Io, printable_lines},
    progress,
    settings::{GlobalSettings, images::ImportImagesSettings},
};
use snow_images::{Archive, CopyConfig, CopyReport};
use std::process::ExitCode;

/// Runs `snowctl import-images`.
pub fn run(
    args: ImportImagesArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let (images, config) = match exit::noted(io, ImportImagesSettings::resolve(&args, environment))?
    {
        ImportImagesSettings::FromArchive { archive, config } => {
            return from_archive(&args, *archive, config, &global, io);
        }
        ImportImagesSettings::Images { images, config } => (images, config),
    };
    let Some(config) = config else {
        io.out(
            &crate::output::structured(args.output, &images)
                .unwrap_or_else(|| images.iter().map(|i| format!("{}\n", i.uri)).collect()),
        );
        return Ok(ExitCode::SUCCESS);
    };
    let uris: Vec<String> = images.into_iter().map(|i| i.uri).collect();
    let plan = snow_images::plan(&uris, &config)
        .map_err(|e| exit::usage(io, printable_lines(&e.to_string())))?;
    let report =
        progress::run_with_progress(plan.len(), global.verbose > 0, io, move |p| async move {
            snow_images::copy_images(&plan, &config, p).await
        });
    finish(report, &args, io)
}

/// `import-images --from FILE`: the archive's images pushed to `--registry`, or listed (no
/// `config`).
fn from_archive(
    args: &ImportImagesArgs,
    archive: Archive,
    config: Option<CopyConfig>,
    global: &GlobalSettings,
    io: &mut Io<'_>,
) -> Outcome {
    let Some(config) = config else {
        let listing = serde_json::json!({
            "format": archive.format(),
            "images": archive.images(),
            "files": archive.files(),
        });
        io.out(
            &crate::output::structured(args.output, &listing).unwrap_or_else(|| archive.listing()),
        );
        return Ok(ExitCode::SUCCESS);
    };
    let picked = &args.selection.images;
    let plan = snow_images::plan_import(&archive, picked, &config)
        .map_err(|e| exit::usage(io, printable_lines(&e.to_string())))?;
    let report =
        progress::run_with_progress(plan.len(), global.verbose > 0, io, move |p| async move {
            snow_images::import_archive(&archive, &plan, &config, p).await
        });
    finish(report, args, io)
}

/// Prints the summary of a copy or an import; exit 1 when an image failed.
fn finish(report: Result<CopyReport, String>, args: &ImportImagesArgs, io: &mut Io<'_>) -> Outcome {
    let report = report.map_err(|e| exit::failed(io, e))?;
    io.out(
        &crate::output::structured(args.output, &report.to_json())
            .unwrap_or_else(|| printable_lines(&report.summary_text())),
    );
    match report.failed() {
        0 => Ok(ExitCode::SUCCESS),
        _ => Err(ExitCode::from(exit::FAILURE)),
    }
}
