//! `snowctl import-images`: list the images a Snow cluster needs, or copy them to a registry on
//! the site, from their registries or from an archive (`--from`).

use crate::{
    args::ImportImagesArgs,
    env::Environment,
    exit::{self, Outcome},
    output::{Io, printable_lines},
    progress,
    settings::{self, GlobalSettings},
};
use snow_images::{Archive, CopyConfig, CopyReport, TargetRegistry};
use std::process::ExitCode;

/// How to reach the target registry `--registry` and the sources.
fn config(
    args: &ImportImagesArgs,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Result<CopyConfig, ExitCode> {
    let verb = if args.from.is_some() {
        "import"
    } else {
        "copy"
    };
    let Some(registry) = &args.registry else {
        let why = format!("--registry HOST:PORT[/NAMESPACE] is required to {verb} (or --list)");
        return Err(exit::usage(io, why));
    };
    let target = TargetRegistry::parse(registry).map_err(|e| {
        let hint = matches!(e, snow_images::ImagesError::RegistryLogin { .. })
            .then_some("give the login with --username USER --password-stdin");
        exit::say(io, format_args!("--registry: {e}"), hint);
        ExitCode::from(exit::USAGE)
    })?;
    let (ca_certs_pem, mut credentials) =
        exit::settled(io, settings::registry_access(&args.source, environment))?;
    if let (Some(user), true) = (&args.username, args.password_stdin) {
        // Bounded like every input (settings::read_bytes): stdin may be endless.
        let password = exit::settled(
            io,
            settings::read_text(std::path::Path::new("-"), "the password from"),
        )?;
        let password = password.trim_end_matches(['\r', '\n']).to_owned();
        credentials.insert(&target.host, user.clone(), password);
    }
    let source = &args.source.source_registry;
    let mut plain_http: Vec<String> = source
        .iter()
        .filter(|_| args.source.source_insecure)
        .cloned()
        .collect();
    if args.insecure {
        plain_http.push(target.host.clone());
    }
    Ok(CopyConfig {
        target,
        source_registry: source.clone(),
        all_platforms: args.all_platforms,
        concurrency: usize::from(args.source.concurrency),
        ca_certs_pem,
        plain_http,
        credentials,
    })
}

/// Runs `snowctl import-images`.
pub fn run(
    args: ImportImagesArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    if let Some(path) = args.from.clone() {
        return from_archive(&args, &path, &global, environment, io);
    }
    // A usage error before any fetch: a copy needs its target registry.
    let config = match args.list {
        true => None,
        false => Some(config(&args, environment, io)?),
    };
    let images = match exit::settled(io, settings::user_images(&args.selection))? {
        Some(images) => images,
        None => {
            let catalog = exit::noted(
                io,
                settings::selection_catalog(
                    &args.selection,
                    None,
                    &args.source.ca_certs,
                    environment,
                ),
            )?;
            exit::settled(io, settings::image_selection(&args.selection, &catalog))?
        }
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

/// `import-images --from FILE`: the archive's images pushed to `--registry`, or listed.
fn from_archive(
    args: &ImportImagesArgs,
    path: &std::path::Path,
    global: &GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let archive =
        Archive::open(path).map_err(|e| exit::archive(io, printable_lines(&e.to_string())))?;
    if args.list {
        let listing = serde_json::json!({
            "format": archive.format(),
            "images": archive.images(),
            "files": archive.files(),
        });
        io.out(
            &crate::output::structured(args.output, &listing).unwrap_or_else(|| archive.listing()),
        );
        return Ok(ExitCode::SUCCESS);
    }
    let config = config(args, environment, io)?;
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
