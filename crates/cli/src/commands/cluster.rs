//! `snowctl create|upgrade|delete|describe|move cluster`: the lifecycle on a management cluster.
//!
//! Progress lines go to stderr (milestones always, detail with `-v`); results (the upgrade plan's
//! objects with `--dry-run`, `describe`) go to stdout.

use crate::{
    args::{
        CreateClusterArgs, DeleteClusterArgs, DescribeClusterArgs, ManagementArgs, MoveClusterArgs,
        OptionalDeviceFiles, OutputFormat, RenderArgs, UpgradeClusterArgs,
    },
    exit::{self, Outcome},
    output::{self, Io},
    settings::{self, GlobalSettings, Management, RenderSettings, SpecFile},
};
use snow_api::release::ClusterRelease;
use snow_lifecycle::{
    self as lifecycle, ClusterRequest, CniManifest, CreateOptions, DeleteOptions, Event,
    LifecycleError, Timeouts, UpgradeOptions, WaitOptions,
    kubeconfig::{self, Written},
    ssh_key,
};
use snow_validate::chores::import_default_key;
use std::{path::PathBuf, process::ExitCode, time::Duration};

/// Runs `snowctl create cluster` (its `--dry-run` is `render`).
pub fn create(args: CreateClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let session = Session::open(&args.render, &args.management, "create", io)?;
    let cni = session.cni(args.cni_manifest.as_deref(), io)?;
    let files = &args.render.device_files;
    device_checks(
        &session,
        files,
        args.skip_validations,
        args.skip_ip_check,
        io,
    )?;
    let wait = settings::waits(&args.waits);
    let cluster = session.spec.spec.name().to_owned();
    let force = args.force;
    block_on(io, async move |io| {
        let mgmt = session.management.connect(io).await?;
        let release = session.release()?;
        let mut on_event = printer(io, global.verbose);
        let key = session
            .default_key(&mgmt, &args.render, &mut on_event)
            .await?;
        drop(on_event);
        let created = lifecycle::create(
            &mgmt,
            &session.request(&release, key.as_deref()),
            &CreateOptions {
                wait,
                cni: Some(cni),
            },
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
    })
}

/// Runs `snowctl upgrade cluster`.
pub fn upgrade(args: UpgradeClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let dry_run = args.dry_run;
    let session = Session::open(&args.render, &args.management, "upgrade", io)?;
    let cni = match dry_run {
        true => None,
        false => Some(session.cni(args.cni_manifest.as_deref(), io)?),
    };
    // An existing cluster's endpoint answers: the in-use probe is for create only.
    if !dry_run {
        device_checks(
            &session,
            &args.render.device_files,
            args.skip_validations,
            true,
            io,
        )?;
    }
    let wait = settings::waits(&args.waits);
    block_on(io, async move |io| {
        let mgmt = session.management.connect(io).await?;
        let release = session.release()?;
        let key = match dry_run {
            true => ssh_key::recorded_name(&mgmt, session.spec.spec.name()).await?,
            false => {
                let mut on_event = printer(io, global.verbose);
                session
                    .default_key(&mgmt, &args.render, &mut on_event)
                    .await?
            }
        };
        let outcome = lifecycle::upgrade(
            &mgmt,
            &session.request(&release, key.as_deref()),
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
    })
}

/// Runs `snowctl delete cluster`.
pub fn delete(args: DeleteClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let name = match (args.name, &args.file) {
        (Some(name), _) => name,
        (None, Some(file)) => settings::load_spec(file, io)?.spec.name().to_owned(),
        (None, None) => {
            return Err(exit::usage(
                io,
                "name the cluster, or give its spec with -f",
            ));
        }
    };
    let management = settings::management(&args.management, io)?;
    let wait = WaitOptions {
        timeouts: Timeouts {
            deletion: (!args.no_timeouts).then_some(args.delete_timeout),
            ..Timeouts::default()
        },
        poll: args.poll_interval,
    };
    block_on(io, async move |io| {
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
    })
}

/// Runs `snowctl describe cluster`.
pub fn describe(args: DescribeClusterArgs, io: &mut Io<'_>) -> Outcome {
    let management = settings::management(&args.management, io)?;
    let (name, format) = (args.name, args.output);
    block_on(io, async move |io| {
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
    })
}

/// Runs `snowctl move cluster`: to another management cluster, to a directory (a backup), or
/// from one (a restore). clap admits only those three shapes.
pub fn move_cluster(args: MoveClusterArgs, global: GlobalSettings, io: &mut Io<'_>) -> Outcome {
    let to = args.to_kubeconfig.map(|kubeconfig| Management {
        kubeconfig,
        context: args.to_context,
    });
    let source = match args.from_directory {
        Some(_) => None,
        None => Some(settings::management(&args.management, io)?),
    };
    let options = lifecycle::MoveOptions {
        namespace: args.namespace,
        ..lifecycle::MoveOptions::default()
    };
    let (name, to_dir, from_dir) = (
        args.name.unwrap_or_default(),
        args.to_directory,
        args.from_directory,
    );
    block_on(io, async move |io| {
        let target = match &to {
            Some(to) => Some(to.connect_quietly().await?),
            None => None,
        };
        let mut events = printer(io, global.verbose);
        let (moved, what) = match (source, &from_dir, &target, &to_dir) {
            (_, Some(dir), Some(target), _) => (
                lifecycle::restore(dir, target, &options, &mut events).await?,
                format!("Restored {}", dir.display()),
            ),
            (Some(source), _, target, dir) => {
                let from = source.connect_quietly().await?;
                let (to, what) = match (target, dir) {
                    (Some(target), _) => (
                        lifecycle::Destination::Cluster(target),
                        format!("Cluster {name} moved"),
                    ),
                    (None, Some(dir)) => (
                        lifecycle::Destination::Directory(dir),
                        format!("Cluster {name} written to {}", dir.display()),
                    ),
                    (None, None) => unreachable!("clap requires --to-kubeconfig or --to-directory"),
                };
                (
                    lifecycle::move_cluster(&from, &name, to, &options, &mut events).await?,
                    what,
                )
            }
            (None, None, ..) | (None, Some(_), None, _) => unreachable!("clap requires a source"),
        };
        drop(events);
        let (n, levels, matched, deleted) =
            (moved.objects, moved.levels, moved.matched, moved.deleted);
        io.err(&format!("🎉 {what}: {n} object(s) in {levels} level(s), {matched} already there, {deleted} deleted from the source\n"));
        Ok(())
    })
}

/// What create and upgrade share: the spec, the render settings and the management cluster.
struct Session {
    spec: SpecFile,
    render: RenderSettings,
    management: Management,
}

impl Session {
    /// For `verb` (create, upgrade), which read the live objects themselves.
    fn open(
        render: &RenderArgs,
        management: &ManagementArgs,
        verb: &str,
        io: &mut Io<'_>,
    ) -> Result<Session, ExitCode> {
        if render.existing.is_some() {
            let why = format!(
                "--existing is for render; {verb} reads the live objects from the management cluster"
            );
            return Err(exit::usage(io, why));
        }
        let management = settings::management(management, io)?;
        let spec = settings::load_spec(&render.file, io)?;
        if let Err(unset) = settings::registry_login(&spec.spec) {
            io.err(&snow_api::finding_text::text(
                &unset,
                "environment",
                None,
                &[],
            ));
            return Err(ExitCode::from(exit::FINDINGS));
        }
        Ok(Session {
            render: RenderSettings::resolve(render, &spec.spec, io)?,
            spec,
            management,
        })
    }

    /// EKS Anywhere's default key when a machine config has an empty `sshKeyName`: its name,
    /// after importing it on every device of those configs that lacks it.
    async fn default_key(
        &self,
        mgmt: &lifecycle::Management,
        render: &RenderArgs,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Option<String>, LifecycleError> {
        let spec = &self.spec.spec;
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let Some(key) = ssh_key::default_key(mgmt, spec, &dir, on_event).await? else {
            return Ok(None);
        };
        let rejected = |findings| LifecycleError::DefaultKey {
            name: key.name.clone(),
            findings,
        };
        let files = settings::device_files(&render.device_files, Duration::from_secs(10))
            .map_err(|f| rejected(vec![*f]))?;
        let import = import_default_key(spec, files, &key.name, key.public_key.as_deref()).await;
        let import = import.map_err(|f| rejected(vec![*f]))?;
        on_event(Event::Note(import.to_string().trim_end().to_owned()));
        match import.failures() {
            failures if failures.is_empty() => Ok(Some(key.name.clone())),
            failures => Err(rejected(failures)),
        }
    }

    /// The Cilium manifest (`--cni-manifest`, else helm), known before anything is applied.
    fn cni(
        &self,
        path: Option<&std::path::Path>,
        io: &mut Io<'_>,
    ) -> Result<CniManifest, ExitCode> {
        let release = self.release().map_err(|e| exit::lifecycle(io, &e))?;
        let login = self.render.registry.as_ref();
        settings::cni_manifest(path, &self.spec.spec, &release, login, io)
    }

    fn release(&self) -> Result<ClusterRelease<'_>, LifecycleError> {
        self.render
            .release(&self.spec.spec)
            .map_err(LifecycleError::Render)
    }

    fn request<'a>(
        &'a self,
        release: &'a ClusterRelease<'a>,
        default_ssh_key_name: Option<&'a str>,
    ) -> ClusterRequest<'a> {
        ClusterRequest {
            spec: &self.spec.spec,
            spec_text: &self.spec.text,
            release,
            secrets: self.render.secrets(),
            default_ssh_key_name,
            registry_credentials: self.render.registry.as_ref(),
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
    let timeout = Duration::from_secs(10);
    let spec = &session.spec.spec;
    let report =
        settings::preflight(spec, device_files, timeout, skip_ip_check, io).map_err(|f| {
            io.err(&output::diagnostic(&f, "preflight", None));
            ExitCode::from(exit::USAGE)
        })?;
    if snow_api::has_errors(&report.findings) {
        io.err(&snow_api::finding_text::text(
            &report.findings,
            "preflight",
            None,
            &[],
        ));
        io.err(
            "❌ Validation failed: nothing was applied (fix the findings, or --skip-validations)\n",
        );
        return Err(ExitCode::from(exit::FINDINGS));
    }
    io.err("✅ Snow provider setup is valid\n");
    Ok(())
}

/// Prints milestones, and detail with `-v` (`snow_lifecycle::Milestones`).
fn printer<'a, 'b>(io: &'a mut Io<'b>, verbose: u8) -> impl FnMut(Event) + 'a {
    let mut milestones = lifecycle::Milestones::new(verbose > 0);
    move |event| {
        if let Some(line) = milestones.line(&event) {
            io.err(&format!("{line}\n"));
        }
    }
}

/// Runs an async command body on a fresh runtime; an error is said with its hint.
fn block_on<'b>(
    io: &mut Io<'b>,
    body: impl AsyncFnOnce(&mut Io<'b>) -> Result<(), LifecycleError>,
) -> Outcome {
    let runtime = exit::runtime(io, false)?;
    match runtime.block_on(body(&mut *io)) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(err) => Err(exit::lifecycle(io, &err)),
    }
}
