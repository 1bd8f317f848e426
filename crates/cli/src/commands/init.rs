//! `snowctl init` and `upgrade management-components` (the work is `snow_lifecycle::init`).

use crate::{
    args::{InitArgs, OutputFormat, UpgradePlanManagementArgs},
    exit::{self, Outcome},
    output::Io,
    settings::{self, GlobalSettings},
};
use snow_lifecycle::{
    Event, Milestones,
    init::{self, InitOptions},
};
use std::process::ExitCode;

/// Which of the two commands runs.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// `snowctl init`.
    Init,
    /// `snowctl upgrade management-components`, backing the clusters up first or not.
    Upgrade {
        /// Back up every cluster snowctl manages there first.
        backup: bool,
    },
}

/// Runs `snowctl init`, or `snowctl upgrade management-components`: the plan, then (without
/// --dry-run) the backups and the upgrade.
pub fn run(args: InitArgs, global: GlobalSettings, io: &mut Io<'_>, mode: Mode) -> Outcome {
    let (upgrade, backup) = match mode {
        Mode::Init => (false, false),
        Mode::Upgrade { backup } => (true, backup),
    };
    let prepared = prepare(&args, io)?;
    if args.dry_run && !upgrade {
        io.out(&init::to_yaml(&prepared, args.show_secrets));
        return Ok(ExitCode::SUCCESS);
    }
    let management = settings::management(&args.management, io)?;
    let options = InitOptions {
        deployment_timeout: Some(args.wait_timeout),
        poll: args.poll_interval,
        ..InitOptions::default()
    };
    let outcome = exit::runtime(io, false)?.block_on(async {
        let mgmt = management.connect(io).await?;
        if upgrade {
            io.out(&format!(
                "{}\n",
                init::upgrade::plan(&mgmt, &prepared).await?
            ));
            if args.dry_run {
                return Ok(None);
            }
        }
        let mut milestones = Milestones::new(global.verbose > 0);
        let mut print = |event: Event| {
            if let Some(line) = milestones.line(&event) {
                io.progress(&format!("{line}\n"));
            }
        };
        if backup {
            let dir = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
            let moving = snow_lifecycle::MoveOptions::default();
            let written =
                snow_lifecycle::backup_all_before_upgrade(&mgmt, &dir, &moving, &mut print).await?;
            for backup in &written {
                print(Event::Note(format!(
                    "Backup of cluster {}: {} (restore: snowctl move cluster --from-directory {} --to-kubeconfig MGMT)",
                    backup.cluster,
                    backup.dir.display(),
                    backup.dir.display()
                )));
            }
        }
        Ok(Some(if upgrade {
            let done = init::upgrade::apply(&mgmt, &prepared, &options, &mut print).await?;
            (done.to_string(), done.unchanged())
        } else {
            let done = init::init(&mgmt, &prepared, &options, &mut print).await?;
            (done.to_string(), done.unchanged())
        }))
    });
    let Some((done, unchanged)) = outcome.map_err(|err| exit::lifecycle(io, &err))? else {
        return Ok(ExitCode::SUCCESS);
    };
    io.out(&done);
    let message = match (unchanged, upgrade) {
        (true, false) => "✅ Every component was installed already: nothing changed",
        (true, true) => "✅ Every component is up to date: nothing changed",
        (false, false) => "🎉 The Snow provider stack is installed",
        (false, true) => "🎉 The Snow provider stack is upgraded",
    };
    io.progress(&format!("{message}\n"));
    Ok(ExitCode::SUCCESS)
}

/// The stack's components from the release, the controller last.
fn prepare(
    args: &InitArgs,
    io: &mut Io<'_>,
) -> Result<Vec<init::components::ComponentObjects>, ExitCode> {
    let default = settings::ReleaseDefault::Published {
        kube_version: args.kubernetes_version.as_deref(),
        cache_dir: args.components.cache_dir.as_deref(),
        ca_certs: &args.components.ca_certs,
    };
    let catalog = settings::catalog(&args.release, default, io)?;
    let release_files = catalog.release_files();
    let secrets = settings::optional_secrets(&args.device_files, io)?;
    let mut prepared = settings::components(
        &args.components,
        catalog.archive.as_deref(),
        &catalog.inputs,
        args.kubernetes_version.as_deref(),
        secrets.as_ref().map(|(c, b)| (c, b)),
        io,
    )?;
    // The controller goes last: its webhooks and roles concern the providers' kinds.
    prepared.extend(settings::controller(
        args.controller_image.as_deref(),
        None,
        &release_files,
        io,
    )?);
    Ok(prepared)
}

/// Runs `snowctl upgrade plan management-components`: the plan of `upgrade
/// management-components --dry-run`, as its table or as JSON or YAML.
pub fn plan(args: UpgradePlanManagementArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let mut init = args.init;
    init.dry_run = true;
    if args.output == OutputFormat::Text {
        return run(init, global, io, Mode::Upgrade { backup: false });
    }
    let prepared = prepare(&init, io)?;
    let management = settings::management(&init.management, io)?;
    let outcome = exit::runtime(io, false)?.block_on(async {
        let mgmt = management.connect_quietly().await?;
        init::upgrade::plan(&mgmt, &prepared).await
    });
    let plan = outcome.map_err(|err| exit::lifecycle(io, &err))?;
    io.out(&crate::output::structured(args.output, &plan.to_json()).unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}
