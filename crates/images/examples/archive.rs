//! The archive download and import without the CLI around it (and without the CLI's build
//! cost), for the benchmark, over plain HTTP, concurrency 4:
//! - `archive download IMAGES_FILE SOURCE_HOST FILE` prints `downloaded up_to_date failed blobs bytes seconds archive_bytes unique_blob_bytes`;
//! - `archive import FILE TARGET_HOST[/NS]` prints `copied up_to_date failed blobs bytes seconds`.

use snow_images::{
    Archive, CopyConfig, Credentials, DownloadConfig, NoProgress, Platforms, TargetRegistry,
    download_images, import_archive, plan_download, plan_import,
};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let line = match args.as_slice() {
        [cmd, list, source, file] if cmd == "download" => {
            let images: Vec<String> = std::fs::read_to_string(list)?
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned)
                .collect();
            let config = DownloadConfig {
                output: file.into(),
                source_registry: Some(source.clone()),
                platforms: Platforms::default(),
                concurrency: 4,
                ca_certs_pem: vec![],
                plain_http: vec![source.clone()],
                credentials: Credentials::default(),
                files: vec![],
                from_archives: vec![],
            };
            let plan = plan_download(&images, Some(source))?;
            let report = runtime.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
            if let Some(e) = &report.error {
                return Err(e.clone().into());
            }
            let archive = report.archive.clone().ok_or("no archive")?;
            let r = &report.report;
            format!(
                "{} {} {} {} {} {:.3} {} {}\n",
                r.copied(),
                r.up_to_date(),
                r.failed(),
                r.blobs_copied(),
                r.bytes(),
                r.seconds,
                archive.bytes,
                archive.blob_bytes
            )
        }
        [cmd, file, target] if cmd == "import" => {
            let target = TargetRegistry::parse(target)?;
            let config = CopyConfig {
                plain_http: vec![target.host.clone()],
                target,
                source_registry: None,
                all_platforms: false,
                concurrency: 4,
                ca_certs_pem: vec![],
                credentials: Credentials::default(),
            };
            let archive = Archive::open(file.as_ref())?;
            let plan = plan_import(&archive, &[], &config)?;
            let report = runtime.block_on(import_archive(
                &archive,
                &plan,
                &config,
                Arc::new(NoProgress),
            ));
            if report.failed() > 0 {
                return Err(format!("{report:#?}").into());
            }
            format!(
                "{} {} {} {} {} {:.3}\n",
                report.copied(),
                report.up_to_date(),
                report.failed(),
                report.blobs_copied(),
                report.bytes(),
                report.seconds
            )
        }
        _ => {
            return Err(
                "usage: archive download IMAGES_FILE SOURCE_HOST FILE | archive import FILE TARGET_HOST[/NS]"
                    .into(),
            );
        }
    };
    std::io::Write::write_all(&mut std::io::stdout(), line.as_bytes())?;
    Ok(())
}
