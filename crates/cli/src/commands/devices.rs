//! `snowctl devices describe|cleanup|images|import-key`: the devices of `-f SPEC`, `--devices`
//! or every profile of the credentials file; the work and the text/JSON of its results are
//! `snow-validate`'s `inventory`, `cleanup` and `chores`.

use crate::{
    args::{DeviceTargets, DevicesCleanupArgs, DevicesCommand, OutputFormat},
    exit::{self, Outcome},
    output::{self, Io},
    settings,
};
use snow_validate::{FilesFleet, Plan, chores, cleanup, fleet_from_files, inventory};
use std::process::ExitCode;

/// Runs `snowctl devices …`.
pub fn run(cmd: DevicesCommand, io: &mut Io<'_>) -> Outcome {
    let runtime = exit::runtime(io, false)?;
    let failed = match cmd {
        DevicesCommand::Describe(args) => {
            let f = fleet(&args.targets, io)?;
            let found = runtime.block_on(inventory::describe(&f.devices, &f.without_credentials));
            io.out(&match args.output {
                OutputFormat::Text => found.to_string(),
                OutputFormat::Json => found.to_json() + "\n",
            });
            found.has_errors()
        }
        DevicesCommand::Cleanup(args) => return clean(&args, &runtime, io),
        DevicesCommand::Images(args) => {
            let f = fleet(&args.targets, io)?;
            let (version, os) = (&args.kubernetes_version, &args.os_family);
            let (devices, missing) = (&f.devices, &f.without_credentials);
            let found = runtime.block_on(chores::usable_images(devices, missing, version, os));
            io.out(&found.to_string());
            found.has_gaps()
        }
        DevicesCommand::ImportKey(args) => {
            let bytes = settings::read_text(&args.public_key, "the public key", io)?;
            let key = chores::PublicKey::parse(bytes.as_bytes()).map_err(|e| {
                exit::usage(
                    io,
                    format!("{}: {e}", output::source_name(&args.public_key)),
                )
            })?;
            let f = fleet(&args.targets, io)?;
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
    Ok(ExitCode::from(if failed { exit::FINDINGS } else { 0 }))
}

/// `devices cleanup`: refuses while a management cluster still has the cluster, prints the plan,
/// and carries it out with `--yes` or a terminal's confirmation.
fn clean(args: &DevicesCleanupArgs, runtime: &tokio::runtime::Runtime, io: &mut Io<'_>) -> Outcome {
    if let Some(kubeconfig) = &args.kubeconfig {
        settings::check_kubeconfig(kubeconfig, None, io)?;
        let found = runtime.block_on(async {
            let mgmt = snow_lifecycle::Management::connect(kubeconfig, None).await?;
            snow_lifecycle::locate(&mgmt, &args.cluster).await
        });
        let found = found.map_err(|e| exit::lifecycle(io, &e))?;
        if found
            .cluster
            .as_ref()
            .is_some_and(snow_lifecycle::import::is_imported)
        {
            let e = snow_lifecycle::LifecycleError::Imported {
                cluster: args.cluster.clone(),
                action: "devices cleanup".into(),
            };
            return Err(exit::lifecycle(io, &e));
        }
        if found.cluster.is_some() {
            let why = format!(
                "cluster {} still exists on the management cluster, whose controllers would recreate its machines: delete it there first (snowctl delete cluster {})",
                args.cluster, args.cluster
            );
            return Err(exit::failed(io, why));
        }
    }
    let f = fleet(&args.targets, io)?;
    let plan = runtime.block_on(cleanup::plan(
        &f.devices,
        &f.without_credentials,
        &args.cluster,
    ));
    io.out(&plan.to_string());
    if plan.is_empty() {
        return Ok(ExitCode::from(if plan.has_errors() {
            exit::FINDINGS
        } else {
            0
        }));
    }
    if !args.yes && !output::confirm(io, "Delete these DNIs and terminate these instances?") {
        io.err("nothing deleted: pass --yes to carry out the plan\n");
        return Ok(ExitCode::from(exit::FINDINGS));
    }
    let wait = cleanup::WaitOptions {
        poll: args.poll_interval,
        timeout: args.wait_timeout,
    };
    let report = runtime.block_on(cleanup::execute(&f.devices, &plan, wait));
    io.out(&report.to_string());
    Ok(ExitCode::from(if report.has_failures() {
        exit::FINDINGS
    } else {
        0
    }))
}

/// The clients of the chosen devices; the files' findings on stderr.
fn fleet(targets: &DeviceTargets, io: &mut Io<'_>) -> Result<FilesFleet, ExitCode> {
    let devices = match &targets.spec {
        Some(path) => Plan::from_spec(&settings::load_spec(path, io)?.spec).devices(),
        None => targets.devices.clone(),
    };
    let paths = settings::device_paths(&targets.device_files);
    let files = snow_provision::preflight::device_files(paths, targets.timeout);
    let fleet = files.and_then(|files| fleet_from_files(files, &devices));
    let fleet = fleet.map_err(|f| {
        io.err(&output::diagnostic(&f, "devices", None));
        ExitCode::from(exit::USAGE)
    })?;
    settings::file_findings(&fleet.findings, "devices", &targets.device_files, io);
    Ok(fleet)
}
