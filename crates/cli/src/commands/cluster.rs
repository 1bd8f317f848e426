//! `snowctl create|upgrade|delete|describe cluster`: the lifecycle on a management cluster.
//!
//! Progress lines go to stderr (milestones always, detail with `-v`); results (the upgrade plan's
//! objects with `--dry-run`, `describe`) go to stdout.

use crate::{
    args::{
        CreateClusterArgs, DeleteClusterArgs, DescribeClusterArgs, ManagementArgs,
        OptionalDeviceFiles, OutputFormat, RenderArgs, UpgradeClusterArgs,
    },
    exit,
    output::{self, Io},
    settings::{self, GlobalSettings, Management, RenderSettings, SpecFile},
};
use snow_api::{Finding, release::ClusterRelease};
use snow_lifecycle::{
    self as lifecycle, ClusterRequest, CreateOptions, DeleteOptions, Event, LifecycleError,
    Timeouts, UpgradeOptions, WaitOptions,
    kubeconfig::{self, Written},
};
use snow_validate::{DeviceFiles, PreflightOptions, preflight_from_files};
use std::{future::Future, path::PathBuf, process::ExitCode, time::Duration};

/// Runs `snowctl create cluster` (its `--dry-run` is `render`).
pub fn create(args: CreateClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    if args.render.existing.is_some() {
        io.err("error: --existing is for render; create reads the live objects from the management cluster\n");
        return ExitCode::from(exit::USAGE);
    }
    let session = match Session::open(&args.render, &args.management, io) {
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
    let wait = settings::waits(&args.waits);
    let cni = match settings::cni_manifest(args.cni_manifest.as_deref(), io) {
        Ok(cni) => cni,
        Err(code) => return code,
    };
    let cluster = session.spec.spec.name().to_owned();
    let force = args.force;
    let outcome = block_on(io, |io| async move {
        let mgmt = session.management.connect(io).await?;
        let release = session.release()?;
        let created = lifecycle::create(
            &mgmt,
            &session.request(&release),
            &CreateOptions { wait, cni },
            &mut printer(io, global.verbose),
        )
        .await?;
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
        let shown = path.strip_prefix(&dir).unwrap_or(&path).display();
        io.err(&format!("✅ {verb} the workload kubeconfig ./{shown}\n"));
        let done = if created.existed {
            "is up to date"
        } else {
            "created!"
        };
        io.err(&format!("🎉 Cluster {cluster} {done}\n"));
        Ok(())
    });
    finish(outcome, io)
}

/// Runs `snowctl upgrade cluster`.
pub fn upgrade(args: UpgradeClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    let dry_run = args.dry_run;
    if args.render.existing.is_some() {
        io.err("error: --existing is for render; upgrade reads the live objects from the management cluster\n");
        return ExitCode::from(exit::USAGE);
    }
    let session = match Session::open(&args.render, &args.management, io) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // An existing cluster's endpoint answers: the in-use probe is for create only.
    if !dry_run
        && let Err(code) = device_checks(
            &session,
            &args.render.device_files,
            args.skip_validations,
            true,
            io,
        )
    {
        return code;
    }
    let wait = settings::waits(&args.waits);
    let cni = match settings::cni_manifest(args.cni_manifest.as_deref(), io) {
        Ok(cni) => cni,
        Err(code) => return code,
    };
    let outcome = block_on(io, |io| async move {
        let mgmt = session.management.connect(io).await?;
        let release = session.release()?;
        let outcome = lifecycle::upgrade(
            &mgmt,
            &session.request(&release),
            &UpgradeOptions { wait, dry_run, cni },
            &mut printer(io, global.verbose),
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

/// Runs `snowctl delete cluster`.
pub fn delete(args: DeleteClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> ExitCode {
    let name = match (args.name, &args.file) {
        (Some(name), _) => name,
        (None, Some(file)) => match settings::load_spec(file, io) {
            Ok(loaded) => loaded.spec.name().to_owned(),
            Err(code) => return code,
        },
        (None, None) => {
            io.err("error: name the cluster, or give its spec with -f\n");
            return ExitCode::from(exit::USAGE);
        }
    };
    let management = match settings::management(&args.management, io) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let wait = WaitOptions {
        timeouts: Timeouts {
            deletion: (!args.no_timeouts).then_some(args.delete_timeout),
            ..Timeouts::default()
        },
        poll: args.poll_interval,
    };
    let outcome = block_on(io, |io| async move {
        let mgmt = management.connect_quietly().await?;
        let options = DeleteOptions { wait };
        let deleted =
            lifecycle::delete(&mgmt, &name, &options, &mut printer(io, global.verbose)).await?;
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

/// Runs `snowctl describe cluster`.
pub fn describe(args: DescribeClusterArgs, io: &mut Io<'_>) -> ExitCode {
    let management = match settings::management(&args.management, io) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let (name, format) = (args.name, args.output);
    let outcome = block_on(io, |io| async move {
        let mgmt = management.connect_quietly().await?;
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

/// What create and upgrade share: the spec, the render settings and the management cluster.
struct Session {
    spec: SpecFile,
    render: RenderSettings,
    management: Management,
}

impl Session {
    fn open(
        render: &RenderArgs,
        management: &ManagementArgs,
        io: &mut Io<'_>,
    ) -> Result<Session, ExitCode> {
        let management = settings::management(management, io)?;
        Ok(Session {
            spec: settings::load_spec(&render.file, io)?,
            render: RenderSettings::resolve(render, io)?,
            management,
        })
    }

    fn release(&self) -> Result<ClusterRelease<'_>, LifecycleError> {
        self.render
            .release(&self.spec.spec)
            .map_err(LifecycleError::Render)
    }

    fn request<'a>(&'a self, release: &'a ClusterRelease<'a>) -> ClusterRequest<'a> {
        ClusterRequest {
            spec: &self.spec.spec,
            spec_text: &self.spec.text,
            release,
            secrets: self.render.secrets(),
        }
    }
}

/// Preflight against the devices, unless skipped (then a warning says so).
fn device_checks(
    session: &Session,
    device_files: &OptionalDeviceFiles,
    skip: bool,
    skip_ip_check: bool,
    io: &mut Io<'_>,
) -> Result<(), ExitCode> {
    if skip {
        io.err("warning: --skip-validations: the devices were not checked (AMIs, key pairs, capacity, reachability)\n");
        return Ok(());
    }
    io.err("Performing setup and validations\n");
    let unusable = |io: &mut Io<'_>, finding: Box<Finding>| {
        io.err(&output::diagnostic(&finding, "preflight", None));
        ExitCode::from(exit::USAGE)
    };
    let (credentials, ca_bundle) =
        settings::device_files(device_files).map_err(|f| unusable(io, f))?;
    let files = DeviceFiles {
        credentials: &credentials,
        ca_bundle: &ca_bundle,
        request_timeout: Duration::from_secs(10),
    };
    let options = PreflightOptions {
        skip_ip_check,
        ..PreflightOptions::default()
    };
    let runtime =
        runtime().map_err(|e| unusable(io, Box::new(Finding::error("preflight.runtime", e))))?;
    let report = runtime
        .block_on(preflight_from_files(
            &session.spec.spec,
            files,
            &options,
            &mut |_| {},
        ))
        .map_err(|f| unusable(io, f))?;
    if snow_api::has_errors(&report.findings) {
        io.err(&output::findings_text(&report.findings, "preflight", None));
        io.err(
            "❌ Validation failed: nothing was applied (fix the findings, or --skip-validations)\n",
        );
        return Err(ExitCode::from(exit::FINDINGS));
    }
    io.err("✅ Snow provider setup is valid\n");
    Ok(())
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

/// A current-thread runtime for one command.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Runs an async command body on a fresh runtime.
fn block_on<'a, 'b, F, Fut>(io: &'a mut Io<'b>, body: F) -> Result<(), LifecycleError>
where
    F: FnOnce(&'a mut Io<'b>) -> Fut,
    Fut: Future<Output = Result<(), LifecycleError>>,
{
    match runtime() {
        Ok(runtime) => runtime.block_on(body(io)),
        Err(reason) => Err(LifecycleError::Write {
            path: PathBuf::from("<runtime>"),
            reason,
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
