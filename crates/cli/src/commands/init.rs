//! `snowctl init` and `upgrade management-components` (the work is `snow_provision::management`).

use crate::{
    args::{InitArgs, OutputFormat, UpgradePlanManagementArgs},
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::{GlobalSettings, InitSettings, Management},
};
use snow_provision::{
    ComponentObjects, Event, InitOptions, Milestones, ProvisionError, components_yaml,
    management as stack,
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
pub fn run(
    args: InitArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
    mode: Mode,
) -> Outcome {
    let (upgrade, backup) = match mode {
        Mode::Init => (false, false),
        Mode::Upgrade { backup } => (true, backup),
    };
    // All but `init --dry-run` work on the management cluster.
    let on_management = !args.dry_run || upgrade;
    let (prepared, management) = prepare(&args, on_management, environment, io)?;
    let Some(management) = management else {
        io.out(&components_yaml(&prepared, args.show_secrets));
        return Ok(ExitCode::SUCCESS);
    };
    let options = InitOptions {
        deployment_timeout: Some(args.wait_timeout),
        poll: args.poll_interval,
        ..InitOptions::default()
    };
    let outcome = exit::runtime(io, false)?.block_on(async {
        let mgmt = management.connect_quietly().await?;
        io.progress(&format!("Management cluster: {}\n", mgmt.server()));
        if upgrade {
            io.out(&format!(
                "{}\n",
                stack::upgrade_plan(&mgmt, &prepared).await?
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
        Ok::<_, ProvisionError>(Some(if upgrade {
            let backup = backup.then_some(environment.cwd());
            let say = |backup: &snow_provision::Backup| {
                format!(
                    "Backup of cluster {}: {} (restore: snowctl move cluster --from-directory {} --to-kubeconfig MGMT)",
                    backup.cluster,
                    backup.dir.display(),
                    backup.dir.display()
                )
            };
            let done =
                stack::upgrade(&mgmt, &prepared, &options, backup, &mut print, &say).await?;
            (done.to_string(), done.unchanged())
        } else {
            let done = stack::init(&mgmt, &prepared, &options, &mut print).await?;
            (done.to_string(), done.unchanged())
        }))
    });
    let Some((done, unchanged)) = outcome.map_err(|err| exit::provision(io, &err))? else {
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

/// The stack's components from the release, the controller last (`snow_provision::management`),
/// and the management cluster when `on_management`.
fn prepare(
    args: &InitArgs,
    on_management: bool,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Result<(Vec<ComponentObjects>, Option<Management>), ExitCode> {
    let resolved = exit::settled(io, InitSettings::resolve(args, on_management, environment))?;
    exit::notices(io, &resolved.notices);
    let stack = stack::stack(resolved.providers, resolved.controller);
    Ok((stack, resolved.management))
}

/// Runs `snowctl upgrade plan management-components`: the plan of `upgrade
/// management-components --dry-run`, as its table or as JSON or YAML.
pub fn plan(
    args: UpgradePlanManagementArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let mut init = args.init;
    init.dry_run = true;
    if args.output == OutputFormat::Text {
        return run(
            init,
            global,
            environment,
            io,
            Mode::Upgrade { backup: false },
        );
    }
    let (prepared, management) = prepare(&init, true, environment, io)?;
    let Some(management) = management else {
        unreachable!("prepared on the management cluster")
    };
    let outcome = exit::runtime(io, false)?.block_on(async {
        let mgmt = management.connect_quietly().await?;
        stack::upgrade_plan(&mgmt, &prepared).await
    });
    let plan = outcome.map_err(|err| exit::provision(io, &err))?;
    io.out(&crate::output::structured(args.output, &plan.to_json()).unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}
