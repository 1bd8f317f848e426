//! `snowctl create|upgrade|delete|describe|move cluster`: the lifecycle on a management cluster.
//!
//! Progress lines go to stderr (milestones always, detail with `-v`); results (the upgrade plan's
//! objects with `--dry-run`, `describe`) go to stdout.

use crate::{
    args::{
        CreateClusterArgs, DeleteClusterArgs, DescribeClusterArgs, MoveClusterArgs,
        RenewCertificatesArgs, UpgradeClusterArgs, UpgradePlanClusterArgs,
    },
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::{
        self, BootstrapFrom, ComponentsFrom, CreateSettings, DeleteSettings, DescribeSettings,
        GlobalSettings, Management, MoveSettings, RenderInputs, RenewSettings, SettingsError,
        SpecFile, UpgradePlanSettings, UpgradeSettings, cluster::FromNothing,
    },
};
use snow_api::release::ClusterRelease;
use snow_provision::cluster::{self as operations, MoveTarget};
use snow_provision::target::{self, Create, CreateTarget, Delete, DeleteTarget};
use snow_provision::{
    self as provision, Action, CniSource, ComponentObjects, DeleteOptions, Deleted, Event,
    InitOptions, LifecycleError, Milestones, MoveOptions, ProvisionError,
    bootstrap::{Bootstrap, Existing, Kind, KindOptions},
    components::ComponentsOptions,
    gitops::{Auth, BootstrapOptions, Bootstrapped, GitOpsInputs},
    management::controller_component,
    self_managed,
};
use std::process::ExitCode;

/// Runs `snowctl create cluster` (its `--dry-run` is `render`): on the management cluster found
/// (`settings::find_kubeconfig`), or, with none or `--self-managed`, from nothing through a
/// bootstrap cluster (the cluster then manages itself): `snow_provision::target`.
pub fn create(
    args: CreateClusterArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let settings = exit::noted(io, CreateSettings::resolve(&args, environment))?;
    let spec = &settings.spec;
    let name = spec.spec.name();
    let management = match &settings.target {
        CreateTarget::Management(source) => {
            let management = Management {
                source: source.clone(),
            };
            io.progress(&format!(
                "Creating cluster {name} on the management cluster of kubeconfig {}\n",
                management.shown()
            ));
            Some(management)
        }
        CreateTarget::FromNothing { asked } => {
            let why = match asked {
                true => "--self-managed",
                false => "no kubeconfig found: no --kubeconfig, KUBECONFIG or ~/.kube/config",
            };
            io.progress(&format!(
                "Creating cluster {name} from nothing ({why}): it will manage itself\n"
            ));
            None
        }
    };
    if let Some(management) = &management {
        refuse(io, management, name, Action::Create)?;
    }
    let CreateSettings {
        spec,
        catalog,
        render,
        cni_manifest,
        checks,
        wait,
        force,
        dir,
        gitops,
        from_nothing,
        ..
    } = settings;
    let render = release_settings(render, catalog, io)?;
    let (cni, _chart) = cni(cni_manifest, &spec, &render, io)?;
    let options = provision::CreateOptions {
        checks,
        cni,
        wait,
        force,
    };
    let release = render.release(&spec.spec);
    let release = release.map_err(|e| exit::lifecycle(io, &LifecycleError::Release(e)))?;
    let req = request(&spec, &render, &release, &dir);
    let gitops = gitops_inputs(gitops, &args, &render, &release, io)?;
    let Some(management) = management else {
        let Some(from_nothing) = from_nothing else {
            unreachable!("a create from nothing resolves what it needs")
        };
        return create_self_managed(
            &args,
            from_nothing,
            &req,
            &render,
            options,
            &gitops,
            global,
            environment,
            io,
        );
    };
    let outcome = run(io, async |io| {
        let how = Create::<Bootstrap>::OnManagement(&management.source, &options);
        let mut events = printer(io, global.verbose);
        let made = target::create_with(how, &req, &gitops, &mut events).await?;
        drop(events);
        let target::Created::OnManagement(done) = made else {
            unreachable!("a create on a management cluster makes its cluster there")
        };
        let said = match done.created.existed {
            true => "is up to date",
            false => "created!",
        };
        io.progress(&format!("🎉 Cluster {} {said}\n", spec.spec.name()));
        gitops_said(io, done.gitops.as_ref());
        Ok(())
    });
    let skip = args.no_support_bundle;
    bundle_on_failure(outcome, io, &management, spec.spec.name(), &dir, skip)
}

/// GitOps' inputs of a create (none without a FluxConfig to set up): the credentials resolved,
/// and Flux's install manifest read now, before anything is made; where it came from said.
fn gitops_inputs(
    gitops: Option<settings::gitops::GitOpsSettings>,
    args: &CreateClusterArgs,
    render: &RenderInputs,
    release: &ClusterRelease<'_>,
    io: &mut Io<'_>,
) -> Result<GitOpsInputs, ExitCode> {
    let Some(gitops) = gitops else {
        return Ok(GitOpsInputs::default());
    };
    // A workload cluster's files go to its management cluster's repository: no Flux to install.
    let install = match gitops.install {
        true => {
            let source = exit::settled(io, gitops.flux_source(render.archive.as_deref()))?;
            let install = exit::runtime(io, false)?.block_on(source.resolve(release.bundle));
            let install = exit::settled(io, install.map_err(SettingsError::from))?;
            let said = match install.fetched {
                Some((fetched, _)) if fetched > 0 => "fetched",
                Some(_) => "from the cache",
                None => "read",
            };
            io.progress(&format!(
                "Flux's install manifest: {} ({said})\n",
                install.origin
            ));
            Some(install.text)
        }
        false => None,
    };
    Ok(with_auth(gitops.auth, args.waits.poll_interval, install))
}

/// GitOps' inputs with the repository's credentials, looking at Flux every `poll`.
fn with_auth(auth: Auth, poll: std::time::Duration, install: Option<String>) -> GitOpsInputs {
    GitOpsInputs {
        install,
        auth: Some(auth),
        options: BootstrapOptions {
            poll,
            ..BootstrapOptions::default()
        },
    }
}

/// What GitOps' set-up or a commit did, when it ran.
fn gitops_said(io: &mut Io<'_>, done: Option<&Bootstrapped>) {
    if let Some(done) = done {
        let how = match done.committed {
            true => "committed by this run",
            false => "already in the repository",
        };
        io.progress(&format!("GitOps: Flux applied {} ({how})\n", done.revision));
    }
}

/// What a delete's commit did, when the cluster's files were in a repository.
fn gitops_removed(io: &mut Io<'_>, done: Option<&Bootstrapped>) {
    if let Some(done) = done {
        let how = match done.committed {
            true => "removed by this run",
            false => "already gone",
        };
        io.progress(&format!(
            "GitOps: the cluster's files are not in {} ({how})\n",
            done.revision
        ));
    }
}

/// `create cluster` without a management cluster: the bootstrap cluster (given or kind), the
/// providers from the release, then `snow_provision::self_managed::create`.
#[allow(clippy::too_many_arguments)]
fn create_self_managed(
    args: &CreateClusterArgs,
    from_nothing: FromNothing,
    req: &provision::Request<'_>,
    render: &RenderInputs,
    create: provision::CreateOptions,
    gitops: &GitOpsInputs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let login = req.registry_credentials;
    let bootstrap = bootstrap(
        from_nothing.bootstrap,
        Some((req.spec, req.release)),
        login,
        io,
    )?;
    let secrets = req.secrets.map(|s| (s.credentials, s.ca_bundle));
    let version = req.spec.kubernetes_version();
    let components = &from_nothing.components;
    let components = ComponentsOptions {
        inputs: &render.inputs,
        kubernetes_version: Some(version),
        secrets,
        environment: environment.vars().clone(),
        source: components.source(render.archive.as_deref()),
    };
    let components = providers(&from_nothing.components, components, io)?;
    let controller = controller_component(
        args.controller_image.as_deref(),
        Some(req.spec),
        &render.release_files,
    );
    let controller = controller.map_err(|e| exit::provision(io, &e))?;
    if controller.is_none() {
        io.err(settings::NO_CONTROLLER_NOTE);
    }
    let opts = self_managed::Options {
        create,
        components,
        controller,
        init: InitOptions {
            poll: args.waits.poll_interval,
            ..InitOptions::default()
        },
        moving: MoveOptions::default(),
        keep_bootstrap: args.bootstrap.keep_bootstrap,
    };
    run(io, async move |io| {
        let mut events = printer(io, global.verbose);
        let how = Create::FromNothing(&bootstrap, &opts);
        let made = target::create_with(how, req, gitops, &mut events).await?;
        drop(events);
        let target::Created::SelfManaged(made) = made else {
            unreachable!("a create from nothing makes a self-managed cluster")
        };
        let shown = made
            .kubeconfig
            .strip_prefix(req.dir)
            .unwrap_or(&made.kubeconfig);
        io.progress(&format!(
            "🎉 Cluster created! It manages itself: snowctl … --kubeconfig ./{}\n",
            shown.display()
        ));
        gitops_said(io, made.gitops.as_ref());
        Ok(())
    })
}

/// Runs `snowctl upgrade cluster`.
pub fn upgrade(
    args: UpgradeClusterArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let UpgradeSettings {
        management,
        spec,
        catalog,
        render,
        cni_manifest,
        checks,
        wait,
        dir,
        gitops_auth,
    } = exit::noted(io, UpgradeSettings::resolve(&args, environment))?;
    refuse(io, &management, spec.spec.name(), Action::Upgrade)?;
    let render = release_settings(render, catalog, io)?;
    let (cni, _chart) = match args.dry_run {
        true => (CniSource::Helm(Default::default()), None),
        false => cni(cni_manifest, &spec, &render, io)?,
    };
    let options = provision::UpgradeOptions {
        checks,
        cni,
        wait,
        dry_run: args.dry_run,
        backup: !args.no_backup,
    };
    // A spec naming a FluxConfig: the new spec is committed to its repository (not by a dry run).
    let gitops = match gitops_auth {
        Some(auth) => with_auth(auth, wait.poll, None),
        None => GitOpsInputs::default(),
    };
    let outcome = run(io, async |io| {
        let release = render
            .release(&spec.spec)
            .map_err(LifecycleError::Release)?;
        let req = request(&spec, &render, &release, &dir);
        let mut events = printer(io, global.verbose);
        let upgraded =
            provision::upgrade_with(&management.source, &req, &options, &gitops, &mut events);
        let (outcome, committed) = upgraded.await?;
        drop(events);
        gitops_said(io, committed.as_ref());
        match options.dry_run {
            true => io.out(&capi_render::to_yaml(&outcome.objects)),
            false => {
                if let Some(backup) = &outcome.backup {
                    io.err(&format!(
                        "Backup before the upgrade: {} (restore: snowctl move cluster --from-directory {} --to-kubeconfig MGMT)\n",
                        backup.dir.display(),
                        backup.dir.display()
                    ));
                }
                io.progress(&format!("🎉 Cluster {} upgraded!\n", outcome.cluster));
            }
        }
        Ok(())
    });
    let skip = args.no_support_bundle || args.dry_run;
    bundle_on_failure(outcome, io, &management, spec.spec.name(), &dir, skip)
}

/// Runs `snowctl upgrade plan cluster`: `snow_provision::cluster::upgrade_plan`, as a table or
/// JSON.
pub fn upgrade_plan(
    args: UpgradePlanClusterArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let UpgradePlanSettings {
        management,
        spec,
        catalog,
        render,
        dir,
        format,
    } = exit::noted(io, UpgradePlanSettings::resolve(&args, environment))?;
    refuse(io, &management, spec.spec.name(), Action::UpgradePlan)?;
    let render = release_settings(render, catalog, io)?;
    run(io, async move |io| {
        let release = render
            .release(&spec.spec)
            .map_err(LifecycleError::Release)?;
        let req = request(&spec, &render, &release, &dir);
        let mut events = printer(io, global.verbose);
        let plan = operations::upgrade_plan(&management.source, &req, &mut events).await?;
        drop(events);
        io.out(&crate::output::structured(format, &plan).unwrap_or_else(|| plan.to_text()));
        Ok(())
    })
}

/// Runs `snowctl delete cluster`: on its management cluster, or, when that is the cluster
/// itself, through a bootstrap cluster (`snow_provision::target`).
pub fn delete(
    args: DeleteClusterArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let settings = exit::noted(io, DeleteSettings::resolve(&args, environment))?;
    let (name, management, wait) = (&settings.name, &settings.management, settings.wait);
    if args.records_only {
        return run(io, async move |io| {
            let removed =
                operations::remove_import_records(&management.source, name, &wait).await?;
            for object in &removed {
                io.progress(&format!("removed {object}\n"));
            }
            io.progress(&format!(
                "🎉 Records of imported cluster {name} removed; nothing on its devices or nodes was touched\n"
            ));
            Ok(())
        });
    }
    io.progress(&format!(
        "Deleting cluster {name} from the management cluster of kubeconfig {}\n",
        management.shown()
    ));
    // One runtime: the client connected to decide is the one the delete uses.
    let runtime = exit::runtime(io, false)?;
    // What the delete will not do, before the bootstrap cluster or the release it may need.
    let refused = runtime.block_on(provision::refusal(&management.source, name, Action::Delete));
    refused.map_err(|err| exit::provision(io, &err))?;
    // The GitOps repository holding the cluster, when one does: its credentials, before
    // anything is changed.
    let repository = runtime.block_on(target::repository(&management.source, name));
    let gitops = match repository.map_err(|err| exit::provision(io, &err))? {
        Some(repo) => {
            let auth = settings.git_credentials.auth(&repo);
            with_auth(auth.map_err(|e| exit::settings(io, &e))?, wait.poll, None)
        }
        None => GitOpsInputs::default(),
    };
    let decided = runtime.block_on(target::delete_target(&management.source, name));
    let mgmt = match decided.map_err(|err| exit::lifecycle(io, &err))? {
        DeleteTarget::SelfManaged => {
            drop(runtime);
            return delete_self_managed(&args, &settings, &gitops, global, environment, io);
        }
        DeleteTarget::Management(mgmt) => mgmt,
    };
    let options = DeleteOptions { wait };
    let how = Delete::<Bootstrap>::OnManagement(&mgmt, &options);
    let deleted = runtime.block_on(async {
        target::delete_with(how, name, &gitops, &mut printer(io, global.verbose)).await
    });
    drop(runtime);
    let outcome = match deleted {
        Ok((deleted, committed)) => {
            gitops_removed(io, committed.as_ref());
            say_deleted(io, name, &deleted);
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => Err(exit::provision(io, &err)),
    };
    let skip = args.no_support_bundle;
    bundle_on_failure(outcome, io, management, name, &settings.dir, skip)
}

/// After a create, upgrade or delete on a management cluster that failed (exit 1), unless `skip`: the support
/// bundle beside the cluster's files (`./<cluster>/support-bundle-<time>.tar.gz`), its path
/// said. No device is called (a failure may be a device that does not answer; `snowctl
/// support-bundle --credentials` describes them). The failure's exit code stands, whether the
/// bundle was written or not.
fn bundle_on_failure(
    outcome: Outcome,
    io: &mut Io<'_>,
    management: &Management,
    cluster: &str,
    dir: &std::path::Path,
    skip: bool,
) -> Outcome {
    // Input snowctl could not use (exit 2) touched no cluster: nothing to collect.
    if skip || outcome.is_ok() || outcome == Err(ExitCode::from(exit::USAGE)) {
        return outcome;
    }
    let Ok(runtime) = exit::runtime(io, false) else {
        return outcome;
    };
    let written = runtime.block_on(provision::support_bundle::after_failure(
        &management.source,
        dir,
        cluster,
    ));
    match written {
        Ok(written) => {
            let shown = written.path.strip_prefix(dir).unwrap_or(&written.path);
            io.err(&format!(
                "📦 Support bundle written to ./{} (--no-support-bundle skips it)\n",
                shown.display()
            ));
        }
        Err(e) => io.err(&format!("no support bundle written: {e}\n")),
    }
    outcome
}

/// `delete cluster` of a self-managed cluster: the bootstrap cluster (given, or kind from the
/// spec), the providers of the spec's Kubernetes version (else the newest bundle's), then
/// `snow_provision::target::delete` through it.
fn delete_self_managed(
    args: &DeleteClusterArgs,
    settings: &DeleteSettings,
    gitops: &GitOpsInputs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let (name, spec) = (settings.name.as_str(), settings.spec.as_ref());
    let needs = settings.self_managed.as_ref();
    let needs = needs.map_err(|e| exit::settings(io, e))?;
    // The one call into settings after the resolver: the release is read once the management
    // cluster has said the delete may go on (`provision::refusal`), so nothing is downloaded
    // for a delete it refuses.
    let catalog = exit::noted(io, settings::fetch_catalog(needs.catalog.clone()))?;
    let inputs = &catalog.inputs;
    let release = match spec {
        Some(spec) => Some(
            inputs
                .resolve(&spec.spec, None)
                .map_err(|e| exit::usage(io, e))?,
        ),
        None => None,
    };
    let cluster = spec.zip(release.as_ref()).map(|(s, r)| (&s.spec, r));
    // kind pulls through the spec's mirror, with its login when it authenticates.
    let bootstrap = bootstrap(needs.bootstrap.clone(), cluster, needs.login.as_ref(), io)?;
    let components = ComponentsOptions {
        inputs,
        kubernetes_version: spec.map(|s| s.spec.kubernetes_version()),
        secrets: needs.secrets.as_ref().map(|(c, b)| (c, b)),
        environment: environment.vars().clone(),
        source: needs.components.source(catalog.archive.as_deref()),
    };
    let components = providers(&needs.components, components, io)?;
    let opts = self_managed::DeleteOptions {
        components,
        init: InitOptions {
            poll: args.poll_interval,
            ..InitOptions::default()
        },
        moving: MoveOptions::default(),
        delete: DeleteOptions {
            wait: settings.wait,
        },
        keep_bootstrap: args.bootstrap.keep_bootstrap,
    };
    let management = &settings.management;
    run(io, async move |io| {
        io.progress(&format!(
            "Cluster {name} manages itself: deleting it through a bootstrap cluster\n"
        ));
        let mut events = printer(io, global.verbose);
        let how = Delete::SelfManaged(&bootstrap, &management.source, &opts);
        let (deleted, committed) = target::delete_with(how, name, gitops, &mut events).await?;
        drop(events);
        gitops_removed(io, committed.as_ref());
        say_deleted(io, name, &deleted);
        Ok(())
    })
}

/// The bootstrap cluster the settings chose: `--bootstrap-kubeconfig`'s (its warnings said now),
/// else a kind cluster for `spec` and its release (`snow_provision::bootstrap::Kind`), pulling
/// through an authenticated mirror with `login`.
fn bootstrap(
    from: BootstrapFrom,
    spec: Option<(&snow_api::ValidSpec, &ClusterRelease<'_>)>,
    login: Option<&snow_credentials::RegistryCredentials>,
    io: &mut Io<'_>,
) -> Result<Bootstrap, ExitCode> {
    match (from, spec) {
        (
            BootstrapFrom::Existing {
                kubeconfig,
                notices,
            },
            _,
        ) => {
            exit::notices(io, &notices);
            Ok(Bootstrap::Existing(Existing::new(&kubeconfig, None)))
        }
        (BootstrapFrom::Kind, Some((spec, release))) => {
            let kind = Kind::new(spec, release, KindOptions::default());
            let kind = kind.map_err(|e| exit::lifecycle(io, &e))?;
            Ok(Bootstrap::Kind(Box::new(
                kind.with_registry_login(login.cloned()),
            )))
        }
        (BootstrapFrom::Kind, None) => unreachable!("the settings choose kind for a spec only"),
    }
}

/// The providers' components (`snow_provision::components`), how many files were fetched said.
fn providers(
    from: &ComponentsFrom,
    options: ComponentsOptions<'_>,
    io: &mut Io<'_>,
) -> Result<Vec<ComponentObjects>, ExitCode> {
    let made = exit::runtime(io, false)?.block_on(snow_provision::components::components(options));
    let made = exit::settled(io, made.map_err(SettingsError::from))?;
    exit::notices(io, from.fetched(made.fetched).as_slice());
    Ok(made.objects)
}

/// What a delete did, said.
fn say_deleted(io: &mut Io<'_>, name: &str, deleted: &Deleted) {
    if !deleted.found {
        io.err(&format!(
            "cluster {name} is not on the management cluster; nothing to delete\n"
        ));
        return;
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
    io.progress(&format!("🎉 Cluster {name} deleted!\n"));
}

/// Runs `snowctl describe cluster`.
pub fn describe(args: DescribeClusterArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let DescribeSettings { management } =
        exit::noted(io, DescribeSettings::resolve(&args, environment))?;
    let (name, format) = (args.name, args.output);
    run(io, async move |io| {
        let described = operations::describe(&management.source, &name).await?;
        let text = || {
            let mut text = described.to_text();
            match &described.registry_mirror {
                Some(mirror) => text.push_str(&crate::output::registry_mirror(mirror)),
                // An imported cluster's spec is not known: nothing to say of its mirror.
                None if described.observed.is_none() => {
                    text.push_str(
                        "Registry mirror: none (its spec has no registryMirrorConfiguration)\n",
                    );
                }
                None => {}
            }
            text
        };
        io.out(&crate::output::structured(format, &described).unwrap_or_else(text));
        Ok(())
    })
}

/// Runs `snowctl renew certificates`: the control plane rolled
/// (`snow_provision::cluster::renew_certificates`).
pub fn renew_certificates(
    args: RenewCertificatesArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let RenewSettings {
        management,
        options,
    } = exit::noted(io, RenewSettings::resolve(&args, environment))?;
    refuse(io, &management, &args.name, Action::RenewCertificates)?;
    let name = args.name;
    run(io, async move |io| {
        let mut events = printer(io, global.verbose);
        let renewed =
            operations::renew_certificates(&management.source, &name, &options, &mut events)
                .await?;
        drop(events);
        io.progress(&format!(
            "✅ Control-plane machines replaced: {} → {}\n",
            renewed.replaced.join(", "),
            renewed.machines.join(", ")
        ));
        if renewed.external_etcd {
            io.err("⚠️  External etcd was not rolled: the EtcdadmCluster has no rollout field, so its machines' certificates are renewed only when a template change replaces them (upgrade cluster)\n");
        }
        io.progress(&format!(
            "🎉 Control-plane certificates of cluster {name} renewed\n"
        ));
        Ok(())
    })
}

/// Runs `snowctl move cluster`: to another management cluster, to a directory (a backup), or
/// from one (a restore). clap admits only those three shapes.
pub fn move_cluster(
    args: MoveClusterArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let MoveSettings {
        from: source,
        to,
        options,
    } = exit::noted(io, MoveSettings::resolve(&args, environment))?;
    let (name, to_dir, from_dir) = (
        args.name.unwrap_or_default(),
        args.to_directory,
        args.from_directory,
    );
    if let Some(source) = &source {
        let action = match &to {
            Some(_) => Action::Move,
            None => Action::Backup,
        };
        refuse(io, source, &name, action)?;
    }
    run(io, async move |io| {
        let mut events = printer(io, global.verbose);
        let (moved, what) = match (source, &from_dir, &to, &to_dir) {
            (_, Some(dir), Some(to), _) => (
                operations::restore(dir, &to.source, &options, &mut events).await?,
                format!("Restored {}", dir.display()),
            ),
            (Some(source), _, to, dir) => {
                let (target, what) = match (to, dir) {
                    (Some(to), _) => (
                        MoveTarget::Cluster(&to.source),
                        format!("Cluster {name} moved"),
                    ),
                    (None, Some(dir)) => (
                        MoveTarget::Directory(dir),
                        format!("Cluster {name} written to {}", dir.display()),
                    ),
                    (None, None) => unreachable!("clap requires --to-kubeconfig or --to-directory"),
                };
                let from = &source.source;
                let moved =
                    operations::move_cluster(from, &name, target, &options, &mut events).await?;
                (moved, what)
            }
            (None, None, ..) | (None, Some(_), None, _) => unreachable!("clap requires a source"),
        };
        drop(events);
        let (n, levels, matched, deleted) =
            (moved.objects, moved.levels, moved.matched, moved.deleted);
        io.progress(&format!("🎉 {what}: {n} object(s) in {levels} level(s), {matched} already there, {deleted} deleted from the source\n"));
        Ok(())
    })
}

/// The render settings: the flags resolved before and the release catalog of `source`, read now
/// (after [`refuse`]; the command reads the live objects itself), its notices said.
fn release_settings(
    flags: settings::RenderFlags,
    source: snow_provision::catalog::CatalogSource,
    io: &mut Io<'_>,
) -> Result<RenderInputs, ExitCode> {
    // The one call into settings after the resolver: the release is read after [`refuse`], so
    // nothing is downloaded for an action the management cluster refuses.
    let catalog = exit::settled(io, settings::fetch_catalog(source))?;
    let settings = flags.with_catalog(catalog);
    exit::notices(io, &settings.notices);
    Ok(settings)
}

/// What `action` will not do to cluster `name` ([`snow_provision::refusal`]: not there, imported,
/// managed by another system, paused by someone else), said right after connecting and before
/// anything the command needs to do it (helm, kind, the devices, a release download): exit 1,
/// nothing changed, no support bundle.
fn refuse(
    io: &mut Io<'_>,
    management: &Management,
    name: &str,
    action: Action,
) -> Result<(), ExitCode> {
    let runtime = exit::runtime(io, false)?;
    let refused = runtime.block_on(provision::refusal(&management.source, name, action));
    refused.map_err(|err| exit::provision(io, &err))
}

/// The workflow's request from the settings.
fn request<'a>(
    spec: &'a SpecFile,
    render: &'a RenderInputs,
    release: &'a ClusterRelease<'a>,
    dir: &'a std::path::Path,
) -> provision::Request<'a> {
    provision::Request {
        spec: &spec.spec,
        spec_text: &spec.text,
        release,
        secrets: render.secrets(),
        registry_credentials: render.registry.as_ref(),
        devices: render.devices.paths(),
        inputs: Some(&render.inputs),
        dir,
    }
}

/// `--cni-manifest FILE`, read by the settings; else with `--artifacts` the bundle's Cilium chart taken
/// from the archive (the catalog's, opened once) into a temporary file (removed with the
/// returned [`snow_images::charts::ChartFiles`]) for helm, so no registry is asked for it; else
/// helm pulls the chart.
fn cni(
    manifest: Option<snow_provision::CniManifest>,
    spec: &SpecFile,
    render: &RenderInputs,
    io: &mut Io<'_>,
) -> Result<(CniSource, Option<snow_images::charts::ChartFiles>), ExitCode> {
    if let Some(manifest) = manifest {
        return Ok((CniSource::Manifest(manifest), None));
    }
    let Some(archive) = &render.archive else {
        return Ok((CniSource::Helm(Default::default()), None));
    };
    let release = render.release(&spec.spec).map_err(|e| exit::usage(io, e))?;
    let chart = release.bundle.cilium().map_err(|e| exit::usage(io, e))?;
    let charts = snow_images::charts::chart_files(archive, &[&chart.helm_chart]);
    let charts = charts.map_err(|e| exit::charts(io, &e))?;
    io.progress(&format!(
        "Cilium chart {} taken from {}\n",
        chart.helm_chart.uri,
        archive.path().display()
    ));
    let source = CniSource::HelmChartFiles {
        charts: charts.files.clone(),
        from: archive.path().display().to_string(),
        options: Default::default(),
    };
    Ok((source, Some(charts)))
}

/// Prints milestones, and detail with `-v` (`snow_provision::Milestones`).
fn printer<'a, 'b>(io: &'a mut Io<'b>, verbose: u8) -> impl FnMut(Event) + 'a {
    let mut milestones = Milestones::new(verbose > 0);
    move |event| {
        if let Some(line) = milestones.line(&event) {
            io.progress(&format!("{line}\n"));
        }
    }
}

/// Runs a workflow on a fresh runtime; an error is said with its findings.
fn run<'b>(
    io: &mut Io<'b>,
    body: impl AsyncFnOnce(&mut Io<'b>) -> Result<(), ProvisionError>,
) -> Outcome {
    let runtime = exit::runtime(io, false)?;
    match runtime.block_on(body(&mut *io)) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(err) => Err(exit::provision(io, &err)),
    }
}
