//! `snowctl import-images`: list the images a Snow cluster needs, or copy them to a registry on
//! the site (issue 7), from their registries or from an archive (`--from`, issue 17).

use crate::{
    args::{ImportImagesArgs, OutputFormat},
    exit,
    output::Io,
    progress,
    settings::{self, GlobalSettings},
};
use snow_images::{Archive, CopyConfig, CopyReport, TargetRegistry};
use std::{fmt::Write as _, process::ExitCode};

/// The image URIs: `--image`/`--images-file` when given, else the bundle's list.
fn image_uris(
    args: &ImportImagesArgs,
    io: &mut Io<'_>,
) -> Result<Vec<snow_images::ListedImage>, ExitCode> {
    settings::image_selection(
        &args.release,
        &args.kubernetes_versions,
        &args.os,
        &args.images,
        args.images_file.as_deref(),
        io,
    )
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
    let ca_certs_pem = settings::registry_ca_certs(&args.ca_certs, io)?;
    let mut credentials = settings::registry_credentials(args.docker_config.as_deref(), io)?;
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

/// Runs `snowctl import-images`.
pub fn run(args: ImportImagesArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    let usage = || ExitCode::from(exit::USAGE);
    if let Some(path) = args.from.clone() {
        return run_from_archive(&args, &path, &global, io);
    }
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
    let total = plan.len();
    let report =
        progress::run_with_progress(total, global.verbose > 0, io, move |progress| async move {
            snow_images::copy_images(&plan, &config, progress).await
        });
    finish(report, &args, io)
}

/// `import-images --from FILE`: the archive's images pushed to `--registry`, or listed.
fn run_from_archive(
    args: &ImportImagesArgs,
    path: &std::path::Path,
    global: &GlobalSettings,
    io: &mut Io<'_>,
) -> ExitCode {
    let usage = || ExitCode::from(exit::USAGE);
    let archive = match Archive::open(path) {
        Ok(a) => a,
        Err(e) => {
            io.err(&format!("error: {e}\n"));
            return usage();
        }
    };
    if args.list {
        match args.output {
            OutputFormat::Json => {
                let json = serde_json::json!({
                    "format": archive.format(),
                    "images": archive.images(),
                    "files": archive.files(),
                });
                io.out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&json).unwrap_or_else(|_| "{}".into())
                ));
            }
            OutputFormat::Text => io.out(&archive.listing()),
        }
        return ExitCode::from(exit::OK);
    }
    let Some(registry) = args.registry.clone() else {
        io.err("error: --registry HOST:PORT[/NAMESPACE] is required to import (or --list)\n");
        return usage();
    };
    let config = match config(args, &registry, io) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let plan = match snow_images::plan_import(&archive, &args.images, &config) {
        Ok(p) => p,
        Err(e) => {
            io.err(&format!("error: {e}\n"));
            return usage();
        }
    };
    let total = plan.len();
    let report =
        progress::run_with_progress(total, global.verbose > 0, io, move |progress| async move {
            snow_images::import_archive(&archive, &plan, &config, progress).await
        });
    finish(report, args, io)
}

/// Prints the summary of a copy or an import; exit 1 when an image failed.
fn finish(
    report: Result<CopyReport, String>,
    args: &ImportImagesArgs,
    io: &mut Io<'_>,
) -> ExitCode {
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            io.err(&format!("error: {e}\n"));
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
