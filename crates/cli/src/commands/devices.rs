//! `snowctl devices describe|images|import-key`: the devices from `--devices` (or every profile
//! of the credentials file); the work and the text/JSON of the results in `snow-validate`'s
//! `inventory` and `chores`.

use crate::args::{DeviceTargets, DevicesCommand, OutputFormat};
use crate::{exit, output::Io, settings};
use snow_validate::{DeviceFiles, FilesFleet, chores, fleet_from_files, inventory};
use std::{process::ExitCode, time::Duration};

/// Runs `snowctl devices …`.
pub fn run(cmd: DevicesCommand, io: &mut Io<'_>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            io.err(&format!("error: cannot start the async runtime: {e}\n"));
            return ExitCode::from(exit::FINDINGS);
        }
    };
    runtime.block_on(run_async(cmd, io))
}

fn code(failed: bool) -> ExitCode {
    ExitCode::from(if failed { exit::FINDINGS } else { exit::OK })
}

async fn run_async(cmd: DevicesCommand, io: &mut Io<'_>) -> ExitCode {
    match cmd {
        DevicesCommand::Describe(args) => {
            let Ok(f) = fleet(&args.targets, io) else {
                return ExitCode::from(exit::USAGE);
            };
            let inv = inventory::describe(&f.devices, &f.without_credentials).await;
            io.out(&match args.output {
                OutputFormat::Text => inv.to_string(),
                OutputFormat::Json => inv.to_json() + "\n",
            });
            code(inv.has_errors())
        }
        DevicesCommand::Images(args) => {
            let Ok(f) = fleet(&args.targets, io) else {
                return ExitCode::from(exit::USAGE);
            };
            let (version, os) = (&args.kubernetes_version, &args.os_family);
            let found =
                chores::usable_images(&f.devices, &f.without_credentials, version, os).await;
            io.out(&found.to_string());
            code(found.has_gaps())
        }
        DevicesCommand::ImportKey(args) => {
            let key = settings::read_bytes(&args.public_key)
                .map_err(|e| e.to_string())
                .and_then(|bytes| chores::PublicKey::parse(&bytes));
            let key = match key {
                Ok(key) => key,
                Err(e) => {
                    io.err(&format!("error: {}: {e}\n", args.public_key.display()));
                    return ExitCode::from(exit::USAGE);
                }
            };
            let Ok(f) = fleet(&args.targets, io) else {
                return ExitCode::from(exit::USAGE);
            };
            let (devices, missing) = (&f.devices, &f.without_credentials);
            let done = chores::import_key(devices, missing, &args.name, key.as_bytes()).await;
            io.out(&done.to_string());
            code(done.has_failures())
        }
    }
}

/// The clients of the chosen devices; the files' findings on stderr. `Err` after saying why.
fn fleet(targets: &DeviceTargets, io: &mut Io<'_>) -> Result<FilesFleet, ()> {
    let say = |io: &mut Io<'_>, f: &snow_api::Finding| io.err(&format!("error: {}\n", f.message));
    let (credentials, ca_bundle) =
        settings::device_files(&targets.device_files).map_err(|f| say(io, &f))?;
    let files = DeviceFiles {
        credentials: &credentials,
        ca_bundle: &ca_bundle,
        request_timeout: Duration::from_secs(targets.timeout),
    };
    let fleet = fleet_from_files(files, &targets.devices).map_err(|f| say(io, &f))?;
    for f in &fleet.findings {
        io.err(&format!("{f}\n"));
    }
    Ok(fleet)
}
