//! `snowctl devices describe|cleanup|images|import-key`: the devices of `-f SPEC`, `--devices`
//! or every profile of the credentials file; the work and the text/JSON of its results are
//! `snow-validate`'s `inventory`, `cleanup` and `chores`.

use crate::{
    args::{DevicesCleanupArgs, DevicesCommand},
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
    settings::devices::{CleanupSettings, DeviceFleetSettings, ImportKeySettings},
};
use snow_provision::{cleanup::CleanupOptions, import::Devices};
use snow_validate::{chores, cleanup, inventory};
use std::process::ExitCode;

/// Runs `snowctl devices …`.
pub fn run(cmd: DevicesCommand, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let runtime = exit::runtime(io, false)?;
    let failed = match cmd {
        DevicesCommand::Describe(args) => {
            let resolved = DeviceFleetSettings::resolve(&args.targets, environment);
            let f = exit::noted(io, resolved)?.fleet;
            let found = runtime.block_on(inventory::describe(&f.devices, &f.without_credentials));
            io.out(
                &crate::output::structured(args.output, &found)
                    .unwrap_or_else(|| found.to_string()),
            );
            found.has_errors()
        }
        DevicesCommand::Cleanup(args) => return clean(&args, &runtime, environment, io),
        DevicesCommand::Images(args) => {
            let resolved = DeviceFleetSettings::resolve(&args.targets, environment);
            let f = exit::noted(io, resolved)?.fleet;
            let (version, os) = (&args.kubernetes_version, args.os.map(Into::into));
            let (devices, missing) = (&f.devices, &f.without_credentials);
            let found = runtime.block_on(chores::usable_images(devices, missing, version, os));
            io.out(&found.to_string());
            found.has_gaps()
        }
        DevicesCommand::ImportKey(args) => {
            let ImportKeySettings { key, fleet: f } =
                exit::noted(io, ImportKeySettings::resolve(&args, environment))?;
            let (devices, missing) = (&f.devices, &f.without_credentials);
            let done = runtime.block_on(chores::import_key(
                devices,
                missing,
                &args.name,
                key.as_bytes(),
            ));
            io.out(&done.to_string());
            done.has_failures()
        }
    };
    Ok(ExitCode::from(if failed { exit::FAILURE } else { 0 }))
}

/// `devices cleanup`: the plan (`snow_provision::cleanup`, refused while a management cluster
/// still has the cluster) printed, then carried out with `--yes` or a terminal's confirmation.
fn clean(
    args: &DevicesCleanupArgs,
    runtime: &tokio::runtime::Runtime,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let CleanupSettings { management, fleet } =
        exit::noted(io, CleanupSettings::resolve(args, environment))?;
    let mgmt = match management {
        Some(source) => {
            let mgmt = runtime.block_on(snow_provision::cluster::connect(&source));
            Some(mgmt.map_err(|e| exit::provision(io, &e))?)
        }
        None => None,
    };
    // The device files, resolved with the flags, said once the management cluster answered.
    let f = exit::noted(io, fleet)?;
    let plan = runtime.block_on(snow_provision::cleanup::plan(CleanupOptions {
        cluster: &args.cluster,
        management: mgmt.as_ref(),
        devices: Devices {
            devices: &f.devices,
            without_credentials: &f.without_credentials,
        },
    }));
    let plan = plan.map_err(|e| exit::provision(io, &e))?;
    io.out(&plan.to_string());
    if plan.is_empty() {
        return Ok(ExitCode::from(if plan.has_errors() {
            exit::FAILURE
        } else {
            0
        }));
    }
    if !args.yes && !output::confirm(io, "Delete these DNIs and terminate these instances?") {
        io.err("nothing deleted: pass --yes to carry out the plan\n");
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let wait = cleanup::WaitOptions {
        poll: args.poll_interval,
        timeout: args.wait_timeout,
    };
    let report = runtime.block_on(cleanup::execute(&f.devices, &plan, wait));
    io.out(&report.to_string());
    Ok(ExitCode::from(if report.has_failures() {
        exit::FAILURE
    } else {
        0
    }))
}
