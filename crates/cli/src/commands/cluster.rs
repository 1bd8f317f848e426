//! `snowctl create|upgrade|delete|describe cluster`: the lifecycle on a management cluster.
//!
//! Progress lines go to stderr (milestones always, detail with `-v`); results (the upgrade plan's
//! objects with `--dry-run`, `describe`) go to stdout.

use crate::{
    args::{
        CreateCommand, DeleteClusterArgs, DeleteCommand, DescribeClusterArgs, DescribeCommand,
        ManagementArgs, OutputFormat, UpgradeClusterArgs, UpgradeCommand, WaitArgs,
    },
    commands::{
        render::{self, RenderInputs},
        validate::{preflight_files, run_preflight},
    },
    exit,
    lifecycle::{
        self, ClusterRequest, Event, LifecycleError, Management, Timeouts, WaitOptions,
        kubeconfig::{self, Written},
    },
    output::{self, Io},
};
use std::{future::Future, path::PathBuf, process::ExitCode};

/// Runs `snowctl create …`.
pub fn create(cmd: CreateCommand, verbose: u8, io: &mut Io<'_>) -> ExitCode {
    let CreateCommand::Cluster(args) = cmd;
    if args.dry_run {
        return render::run(args.render, io);
    }
    if args.render.existing.is_some() {
        io.err("error: --existing is for render; create reads the live objects from the management cluster\n");
        return ExitCode::from(exit::USAGE);
    }
    let Some(session) = Session::open(&args.render, &args.management, io) else {
        return ExitCode::from(exit::USAGE);
    };
    let session = match session {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Err(code) = device_checks(
        &session,
        &args.render.device_files,
        args.skip_validations,
        args.skip_ip_check,
        io,
    ) {
        return code;
    }
    let waits = wait_options(&args.waits);
    let cluster = session.spec.name().to_owned();
    let force = args.force;
    let outcome = block_on(io, |io| async move {
        let mgmt = session.connect(io).await?;
        let created =
            lifecycle::create(&mgmt, &session.request(), &waits, &mut printer(io, verbose)).await?;
        let dir = std::env::current_dir().map_err(|e| LifecycleError::Write {
            path: PathBuf::from("."),
            reason: e.to_string(),
        })?;
        let (path, written) = kubeconfig::write(&dir, &cluster, &created.kubeconfig, force)?;
        let verb = match written {
            Written::Created => "Wrote",
            Written::Unchanged => "Kept (unchanged)",
            Written::Replaced => "Replaced",
        };
        let shown = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        io.err(&format!("✅ {verb} the workload kubeconfig ./{shown}\n"));
        io.err(&format!(
            "🎉 Cluster {cluster} {}\n",
            if created.existed {
                "is up to date"
            } else {
                "created!"
            }
        ));
        Ok(())
    });
    finish(outcome, io)
}

/// Runs `snowctl upgrade …`.
pub fn upgrade(cmd: UpgradeCommand, verbose: u8, io: &mut Io<'_>) -> ExitCode {
    let UpgradeCommand::Cluster(args) = cmd;
    let UpgradeClusterArgs {
        dry_run,
        skip_validations,
        render: render_args,
        management,
        waits,
    } = args;
    if render_args.existing.is_some() {
        io.err("error: --existing is for render; upgrade reads the live objects from the management cluster\n");
        return ExitCode::from(exit::USAGE);
    }
    let session = match Session::open(&render_args, &management, io) {
        None => return ExitCode::from(exit::USAGE),
        Some(Err(code)) => return code,
        Some(Ok(s)) => s,
    };
    if !dry_run
        && let Err(code) = device_checks(
            &session,
            &render_args.device_files,
            skip_validations,
            // An existing cluster's endpoint answers: the in-use probe is for create only.
            true,
            io,
        )
    {
        return code;
    }
    let waits = wait_options(&waits);
    let outcome = block_on(io, |io| async move {
        let mgmt = session.connect(io).await?;
        let outcome = lifecycle::upgrade(
            &mgmt,
            &session.request(),
            &waits,
            dry_run,
            &mut printer(io, verbose),
        )
        .await?;
        if dry_run {
            io.out(&capi_render::to_yaml(&outcome.objects));
        } else {
            io.err(&format!("🎉 Cluster {} upgraded!\n", outcome.cluster));
        }
        Ok(())
    });
    finish(outcome, io)
}

/// Runs `snowctl delete …`.
pub fn delete(cmd: DeleteCommand, verbose: u8, io: &mut Io<'_>) -> ExitCode {
    let DeleteCommand::Cluster(args) = cmd;
    let DeleteClusterArgs {
        name,
        file,
        management,
        delete_timeout,
        no_timeouts,
        poll_interval,
    } = args;
    let name = match (name, file) {
        (Some(name), _) => name,
        (None, Some(file)) => match render::load_spec(&file, io) {
            Ok((_, spec)) => spec.name().to_owned(),
            Err(code) => return code,
        },
        (None, None) => {
            io.err("error: name the cluster, or give its spec with -f\n");
            return ExitCode::from(exit::USAGE);
        }
    };
    let Some(kubeconfig) = management.kubeconfig.clone() else {
        return missing_kubeconfig(io);
    };
    let waits = WaitOptions {
        timeouts: Timeouts {
            deletion: (!no_timeouts).then_some(delete_timeout),
            ..Timeouts::default()
        },
        poll: poll_interval,
    };
    let context = management.context.clone();
    let outcome = block_on(io, |io| async move {
        let mgmt = Management::connect(&kubeconfig, context.as_deref()).await?;
        let deleted = lifecycle::delete(&mgmt, &name, &waits, &mut printer(io, verbose)).await?;
        if !deleted.found {
            io.err(&format!(
                "cluster {name} is not on the management cluster; nothing to delete\n"
            ));
            return Ok(());
        }
        for kept in &deleted.kept {
            io.err(&format!(
                "kept {kept}: another cluster managed by snowctl uses it\n"
            ));
        }
        for leftover in &deleted.leftovers {
            io.err(&format!(
                "warning: {leftover} is still labelled with cluster {name}\n"
            ));
        }
        io.err(&format!("🎉 Cluster {name} deleted!\n"));
        Ok(())
    });
    finish(outcome, io)
}

/// Runs `snowctl describe …`.
pub fn describe(cmd: DescribeCommand, io: &mut Io<'_>) -> ExitCode {
    let DescribeCommand::Cluster(DescribeClusterArgs {
        name,
        management,
        output: format,
    }) = cmd;
    let Some(kubeconfig) = management.kubeconfig.clone() else {
        return missing_kubeconfig(io);
    };
    let context = management.context.clone();
    let outcome = block_on(io, |io| async move {
        let mgmt = Management::connect(&kubeconfig, context.as_deref()).await?;
        let described = lifecycle::describe(&mgmt, &name).await?;
        if described.root.is_none() {
            return Err(LifecycleError::NotFound {
                what: format!("cluster {name}"),
            });
        }
        match format {
            OutputFormat::Json => {
                let mut text = serde_json::to_string_pretty(&described).unwrap_or_default();
                text.push('\n');
                io.out(&text);
            }
            OutputFormat::Text => io.out(&described.to_text()),
        }
        Ok(())
    });
    finish(outcome, io)
}

/// What create and upgrade share: the spec, the render inputs and the management cluster.
struct Session {
    text: String,
    spec: snow_api::ClusterSpec,
    inputs: RenderInputs,
    kubeconfig: PathBuf,
    context: Option<String>,
}

impl Session {
    /// `None` when no kubeconfig was given (said through `io`).
    fn open(
        render_args: &crate::args::RenderArgs,
        management: &ManagementArgs,
        io: &mut Io<'_>,
    ) -> Option<Result<Session, ExitCode>> {
        let Some(kubeconfig) = management.kubeconfig.clone() else {
            missing_kubeconfig(io);
            return None;
        };
        Some((|| {
            let (text, spec) = render::load_spec(&render_args.file, io)?;
            let inputs = RenderInputs::load(render_args, io)?;
            Ok(Session {
                text,
                spec,
                inputs,
                kubeconfig,
                context: management.context.clone(),
            })
        })())
    }

    fn request(&self) -> ClusterRequest<'_> {
        ClusterRequest {
            spec: &self.spec,
            spec_text: &self.text,
            inputs: &self.inputs.inputs,
            options: self.inputs.options(),
        }
    }

    async fn connect(&self, io: &mut Io<'_>) -> Result<Management, LifecycleError> {
        let mgmt = Management::connect(&self.kubeconfig, self.context.as_deref()).await?;
        io.err(&format!("Management cluster: {}\n", mgmt.server()));
        Ok(mgmt)
    }
}

fn missing_kubeconfig(io: &mut Io<'_>) -> ExitCode {
    io.err("error: this command works on a management cluster: pass --kubeconfig FILE (or set KUBECONFIG)\n");
    ExitCode::from(exit::USAGE)
}

/// Preflight against the devices, unless skipped (then a warning says so).
fn device_checks(
    session: &Session,
    device_files: &crate::args::OptionalDeviceFiles,
    skip: bool,
    skip_ip_check: bool,
    io: &mut Io<'_>,
) -> Result<(), ExitCode> {
    if skip {
        io.err("warning: --skip-validations: the devices were not checked (AMIs, key pairs, capacity, reachability)\n");
        return Ok(());
    }
    io.err("Performing setup and validations\n");
    let files = preflight_files(device_files).map_err(|finding| {
        io.err(&output::diagnostic(&finding, "preflight", None));
        ExitCode::from(exit::USAGE)
    })?;
    let (findings, _) =
        run_preflight(&session.spec, &files, 10, skip_ip_check, io).map_err(|finding| {
            io.err(&output::diagnostic(&finding, "preflight", None));
            ExitCode::from(exit::USAGE)
        })?;
    if snow_api::has_errors(&findings) {
        io.err(&output::findings_text(&findings, "preflight", None));
        io.err(
            "❌ Validation failed: nothing was applied (fix the findings, or --skip-validations)\n",
        );
        return Err(ExitCode::from(exit::FINDINGS));
    }
    io.err("✅ Snow provider setup is valid\n");
    Ok(())
}

fn wait_options(args: &WaitArgs) -> WaitOptions {
    let limit = |d| (!args.no_timeouts).then_some(d);
    WaitOptions {
        timeouts: Timeouts {
            control_plane: limit(args.control_plane_wait_timeout),
            external_etcd: limit(args.external_etcd_wait_timeout),
            per_machine: limit(args.per_machine_wait_timeout),
            deletion: Timeouts::default().deletion,
        },
        poll: args.poll_interval,
    }
}

/// Prints milestones, and detail with `-v`. Without `-v` a wait still says when its count
/// moves (`⏳ Control plane: 2/3 ready`), so a long wait is visibly alive.
fn printer<'a, 'b>(io: &'a mut Io<'b>, verbose: u8) -> impl FnMut(Event) + 'a {
    let mut last: Option<(lifecycle::Stage, u32)> = None;
    move |event| match &event {
        Event::Waiting {
            stage,
            ready,
            total,
            ..
        } if verbose == 0 => {
            let now = Some((stage.clone(), *ready));
            if now != last {
                if *stage == lifecycle::Stage::Deletion {
                    io.err(&format!("⏳ Cluster deletion: {ready} object(s) left\n"));
                } else {
                    io.err(&format!("⏳ {stage}: {ready}/{total} ready\n"));
                }
                last = now;
            }
        }
        _ if verbose > 0 || !event.is_detail() => io.err(&format!("{event}\n")),
        _ => {}
    }
}

/// Runs an async command body on a fresh runtime.
fn block_on<'a, 'b, F, Fut>(io: &'a mut Io<'b>, body: F) -> Result<(), LifecycleError>
where
    F: FnOnce(&'a mut Io<'b>) -> Fut,
    Fut: Future<Output = Result<(), LifecycleError>>,
{
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(body(io)),
        Err(e) => Err(LifecycleError::Write {
            path: PathBuf::from("<runtime>"),
            reason: format!("cannot start the async runtime: {e}"),
        }),
    }
}

/// The exit code of an outcome, after saying what went wrong and what to do.
fn finish(outcome: Result<(), LifecycleError>, io: &mut Io<'_>) -> ExitCode {
    let err = match outcome {
        Ok(()) => return ExitCode::SUCCESS,
        Err(err) => err,
    };
    if let LifecycleError::Rejected { findings, .. } = &err {
        io.err(&output::findings_text(findings, "spec", None));
    }
    io.err(&format!("❌ error: {err}\n"));
    if let Some(hint) = err.hint() {
        io.err(&format!("  hint: {hint}\n"));
    }
    match err {
        LifecycleError::Kubeconfig { .. } => ExitCode::from(exit::USAGE),
        _ => ExitCode::from(exit::FINDINGS),
    }
}
