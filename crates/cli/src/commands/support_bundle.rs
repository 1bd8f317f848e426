//! `snowctl support-bundle CLUSTER --output-file FILE.tar.gz`: the work is
//! `snow_provision::support_bundle::write`; this prints where it went and what it found.

use crate::{
    args::SupportBundleArgs,
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::SupportBundleSettings,
};
use snow_images::support_archive::SupportArchiveError;
use snow_provision::BundleOptions;
use snow_provision::support_bundle::{self as bundle, BundleError, BundleRequest};
use std::process::ExitCode;

/// Runs `snowctl support-bundle`.
pub fn run(args: SupportBundleArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let SupportBundleSettings {
        management,
        devices,
    } = exit::noted(io, SupportBundleSettings::resolve(&args, environment))?;
    let request = BundleRequest {
        cluster: &args.name,
        output: &args.output_file,
        replace: args.force,
        devices: devices.paths(),
        device_timeout: args.timeout,
        options: BundleOptions::default(),
    };
    let runtime = exit::runtime(io, false)?;
    let written = runtime.block_on(async {
        let mgmt = management.connect_quietly().await?;
        bundle::write(&mgmt, &request).await
    });
    match written {
        Ok(written) => {
            io.out(&written.summary.to_text());
            io.progress(&format!(
                "📦 Support bundle written to {} ({} bytes)\n",
                written.path.display(),
                written.bytes
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(BundleError::Lifecycle(e)) => Err(exit::lifecycle(io, &e)),
        Err(e @ BundleError::Archive(SupportArchiveError::Exists { .. })) => {
            let code = exit::usage(io, e);
            io.err("  hint: choose another file, or pass --force to replace it\n");
            Err(code)
        }
        Err(e) if e.is_input() => Err(exit::usage(io, e)),
        Err(e) => Err(exit::failed(io, e)),
    }
}
