//! `snowctl devices describe|cleanup|images|import-key`: the devices of `-f SPEC`, `--devices`
//! or every profile of the credentials file; the work and the text/JSON of its results are
//! `snow-validate`'s `inventory`, `cleanup` and `chores`.

use crate::{
    args::{DeviceTargets, DevicesCleanupArgs, DevicesCommand},
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
    settings,
};
use snow_provision::{cleanup::CleanupOptions, import::Devices};
use snow_validate::{FilesFleet, Plan, chores, cleanup, fleet_from_files, inventory};
use std::process::ExitCode;

/// Runs `snowctl devices …`.
pub fn run(cmd: DevicesCommand, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let runtime = exit::runtime(io, false)?;
    let failed = match cmd {
        DevicesCommand::Describe(args) => {
            let f = fleet(&args.targets, environment, io)?;
            let found = runtime.block_on(inventory::describe(&f.devices, &f.without_credentials));
            io.out(
                &crate::output::structured(args.output, &found)
                    .unwrap_or_else(|| found.to_string()),
            );
            found.has_errors()
        }
        DevicesCommand::Cleanup(args) => return clean(&args, &runtime, environment, io),
        DevicesCommand::Images(args) => {
            let f = fleet(&args.targets, environment, io)?;
            let (version, os) = (&args.kubernetes_version, args.os.map(Into::into));
            let (devices, missing) = (&f.devices, &f.without_credentials);
            let found = runtime.block_on(chores::usable_images(devices, missing, version, os));
            io.out(&found.to_string());
            found.has_gaps()
        }
        DevicesCommand::ImportKey(args) => {
            let bytes = exit::settled(io, settings::read_text(&args.public_key, "the public key"))?;
            let key = chores::PublicKey::parse(bytes.as_bytes()).map_err(|e| {
                exit::usage(
                    io,
                    format!("{}: {e}", output::source_name(&args.public_key)),
                )
            })?;
            let f = fleet(&args.targets, environment, io)?;
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
    let management = crate::args::ManagementArgs {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
    };
    let mgmt = match settings::find_kubeconfig(&management, environment) {
        Some(source) => {
            exit::noted(io, settings::check_kubeconfig(&source))?;
            let mgmt = runtime.block_on(snow_provision::cluster::connect(&source));
            Some(mgmt.map_err(|e| exit::provision(io, &e))?)
        }
        None => None,
    };
    let f = fleet(&args.targets, environment, io)?;
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

/// The clients of the chosen devices; the files' findings on stderr.
fn fleet(
    targets: &DeviceTargets,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Result<FilesFleet, ExitCode> {
    let devices = match &targets.spec {
        Some(path) => {
            Plan::from_spec(&exit::settled(io, settings::load_spec(path, environment))?.spec)
                .devices()
        }
        None => targets.devices.clone(),
    };
    let paths = settings::device_paths(&targets.device_files);
    let files = snow_provision::preflight::device_files(paths, targets.timeout);
    let fleet = files.and_then(|files| fleet_from_files(files, &devices));
    let fleet = fleet.map_err(|f| {
        io.err(&output::diagnostic(&exit::with_hint(&f), "devices", None));
        ExitCode::from(exit::USAGE)
    })?;
    exit::notices(
        io,
        settings::file_findings(&fleet.findings, "devices", &targets.device_files).as_slice(),
    );
    Ok(fleet)
}
