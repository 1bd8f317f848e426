//! The copy without the CLI around it (and without the CLI's build cost), for the benchmark:
//! `import IMAGES_FILE SOURCE_HOST TARGET_HOST[/NS]` over plain HTTP, default concurrency 4.
//! Prints `copied up_to_date failed blobs bytes seconds`.

use snow_images::{CopyConfig, Credentials, NoProgress, TargetRegistry, copy_images, plan};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [list, source, target] = args.as_slice() else {
        return Err("usage: import IMAGES_FILE SOURCE_HOST TARGET_HOST[/NS]".into());
    };
    let images: Vec<String> = std::fs::read_to_string(list)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let target = TargetRegistry::parse(target)?;
    let config = CopyConfig {
        plain_http: vec![target.host.clone(), source.clone()],
        target,
        source_registry: Some(source.clone()),
        all_platforms: false,
        concurrency: 4,
        ca_certs_pem: vec![],
        credentials: Credentials::default(),
    };
    let copies = plan(&images, &config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = runtime.block_on(copy_images(&copies, &config, Arc::new(NoProgress)));
    let line = format!(
        "{} {} {} {} {} {:.3}\n",
        report.copied(),
        report.up_to_date(),
        report.failed(),
        report.blobs_copied(),
        report.bytes(),
        report.seconds
    );
    std::io::Write::write_all(&mut std::io::stdout(), line.as_bytes())?;
    if report.failed() > 0 {
        return Err("some images failed".into());
    }
    Ok(())
}
