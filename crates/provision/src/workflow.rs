//! Create and upgrade on a management cluster: the CNI manifest, preflight, the default key,
//! then the lifecycle step and the workload kubeconfig.

use crate::gitops::{BootstrapStep, Bootstrapped, GitOpsError, GitOpsInputs, by_commit};
use crate::{Checks, CniSource, ProvisionError, Request, cni, preflight, step};
use snow_lifecycle::{
    self as lifecycle, CniManifest, Created, Event, KubeconfigSource, LifecycleError, Management,
    UpgradeOutcome, WaitOptions,
    kubeconfig::{self, Written},
    ssh_key,
};
use std::path::PathBuf;

/// How [`create`] runs.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// Preflight, or not.
    pub checks: Checks,
    /// The Cilium manifest.
    pub cni: CniSource,
    /// Per-stage timeouts and the poll interval.
    pub wait: WaitOptions,
    /// Replace a different kubeconfig file at `<dir>/<cluster>/<cluster>-eks-a-cluster.kubeconfig`.
    pub force: bool,
}

/// How [`upgrade`] runs.
#[derive(Debug, Clone)]
pub struct UpgradeOptions {
    /// Preflight, or not (never with `dry_run`; the endpoint IP is never probed: it answers).
    pub checks: Checks,
    /// The Cilium manifest (unused with `dry_run`).
    pub cni: CniSource,
    /// Per-stage timeouts and the poll interval.
    pub wait: WaitOptions,
    /// Say what would change, apply nothing.
    pub dry_run: bool,
    /// Back the cluster up first, beside its kubeconfig: a new directory
    /// `<dir>/<cluster>/<cluster>-backup-<UTC time>` ([`lifecycle::backup_before_upgrade`]).
    pub backup: bool,
}

/// A created cluster and its workload kubeconfig file.
#[derive(Debug, Clone)]
pub struct Provisioned {
    /// What the lifecycle's create did.
    pub created: Created,
    /// The workload kubeconfig file written.
    pub kubeconfig: PathBuf,
    /// What GitOps' set-up did, for a management cluster whose spec names a FluxConfig.
    pub gitops: Option<Bootstrapped>,
}

/// Creates the cluster of `req` on the management cluster of `management`: the CNI manifest, preflight (errors stop it before anything is applied), the
/// default key, [`lifecycle::create`], the workload kubeconfig under `req.dir`. A re-run
/// converges. A management cluster whose spec names a FluxConfig needs
/// [`crate::target::create_with`]'s GitOps inputs: here it is refused before anything
/// ([`crate::gitops::GitOpsError::Missing`]).
pub async fn create(
    management: &KubeconfigSource,
    req: &Request<'_>,
    opts: &CreateOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Provisioned, ProvisionError> {
    Box::pin(create_with(
        management,
        req,
        opts,
        &GitOpsInputs::default(),
        on_event,
    ))
    .await
}

/// [`create`], then, for a management cluster whose spec names a FluxConfig, GitOps set up on
/// it ([`crate::gitops::bootstrap`] with `gitops`' inputs, checked before anything is applied).
pub(crate) async fn create_with(
    management: &KubeconfigSource,
    req: &Request<'_>,
    opts: &CreateOptions,
    gitops: &GitOpsInputs,
    on_event: &mut dyn FnMut(Event),
) -> Result<Provisioned, ProvisionError> {
    let needs = crate::gitops::required(req.spec, req.release, gitops)?;
    let cni = cni::render(opts.cni.clone(), req, on_event).await?;
    preflight::checks(req.spec, req.devices, opts.checks, on_event).await?;
    let mgmt = connect(management, on_event).await?;
    // A workload cluster under a GitOps management cluster: its files committed first, so
    // that git says the cluster before it is built (a re-run commits nothing again).
    let committed = match needs {
        Some(needs) if needs.install.is_none() => {
            let message = crate::gitops::COMMIT_MESSAGE;
            by_commit::commit_workload(&mgmt, req.spec, needs.auth, message, gitops, on_event)
                .await?
        }
        _ => None,
    };
    let mut made = create_on(&mgmt, req, cni.manifest.clone(), opts, on_event).await?;
    store_cilium(&mgmt, req, &cni, on_event).await?;
    made.gitops = match committed {
        Some(committed) => Some(committed),
        None => crate::gitops::after_create(&mgmt, req.spec, req.release, gitops, on_event).await?,
    };
    Ok(made)
}

/// Stores on `mgmt` the Cilium manifests a `snowctl controller --cni-stored` there reads
/// ([`snow_lifecycle::cni::stored::store_all`]): the cluster's own (a failure is an error) and,
/// with `req.inputs`, the default settings' of every Kubernetes version of the bundle (a failure
/// is a note: the cluster does not need them).
pub(crate) async fn store_cilium(
    mgmt: &Management,
    req: &Request<'_>,
    cni: &crate::cni::Rendered,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    use snow_lifecycle::cni::stored::{Outcome, store_all};
    step(
        on_event,
        "Storing the Cilium manifests for the in-cluster controller",
    );
    let reports = store_all(
        mgmt,
        req.spec,
        req.release,
        req.inputs,
        cni.helm_output.as_deref(),
        &cni.source,
        on_event,
    )
    .await?;
    for report in reports {
        match report.outcome {
            Outcome::Failed(reason) if report.own => {
                return Err(LifecycleError::CiliumStore {
                    name: report.name,
                    reason,
                });
            }
            Outcome::Failed(reason) => on_event(Event::Note(reason)),
            _ => {}
        }
    }
    Ok(())
}

/// Upgrades the cluster of `req` on the management cluster of `management`; with `dry_run`,
/// only says what would change (the objects are in the outcome). A spec that names a FluxConfig
/// needs [`upgrade_with`]: here it is refused before anything.
pub async fn upgrade(
    management: &KubeconfigSource,
    req: &Request<'_>,
    opts: &UpgradeOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<UpgradeOutcome, ProvisionError> {
    let none = GitOpsInputs::default();
    let upgraded = Box::pin(upgrade_with(management, req, opts, &none, on_event));
    Ok(upgraded.await?.0)
}

/// [`upgrade`], keeping the repository true when the spec names a FluxConfig (`gitOpsRef`),
/// with the credentials of `gitops` ([`crate::gitops::by_commit`]): a workload cluster's new
/// spec committed first (after a dry run has found the upgrade allowed) and applied by Flux,
/// then the upgrade; a management cluster's declared objects paused for Flux, the upgrade, the
/// new spec applied and committed, Flux synced, the objects resumed (also when a step fails).
/// What was committed comes back with the outcome.
pub async fn upgrade_with(
    management: &KubeconfigSource,
    req: &Request<'_>,
    opts: &UpgradeOptions,
    gitops: &GitOpsInputs,
    on_event: &mut dyn FnMut(Event),
) -> Result<(UpgradeOutcome, Option<Bootstrapped>), ProvisionError> {
    let dry_run = opts.dry_run;
    let auth = match (req.spec.gitops(), dry_run) {
        (Some(repo), false) => Some(crate::gitops::auth_for(repo, gitops)?),
        _ => None,
    };
    let cni = match dry_run {
        true => None,
        false => Some(cni::render(opts.cni.clone(), req, on_event).await?),
    };
    if !dry_run {
        // An existing cluster's endpoint answers: the in-use probe is for create only.
        let checks = match opts.checks {
            Checks::Run {
                timeout,
                device_lines,
                ..
            } => Checks::Run {
                skip_ip_check: true,
                timeout,
                device_lines,
            },
            Checks::Skip => Checks::Skip,
        };
        preflight::checks(req.spec, req.devices, checks, on_event).await?;
    }
    let mgmt = connect(management, on_event).await?;
    let key = match dry_run {
        true => ssh_key::recorded_name(&mgmt, req.spec.name()).await?,
        false => default_key(&mgmt, req, on_event).await?,
    };
    let options = lifecycle::UpgradeOptions {
        wait: opts.wait,
        dry_run,
        cni: cni.as_ref().map(|c| c.manifest.clone()),
        backup: opts.backup.then(|| req.dir.to_owned()),
    };
    let cluster = req.cluster(key.as_deref());
    let (outcome, committed) = match auth {
        None => (
            lifecycle::upgrade(&mgmt, &cluster, &options, on_event).await?,
            None,
        ),
        Some(auth) if req.spec.is_self_managed() => {
            let repo = by_commit::management_repository(&mgmt, req.spec).await?;
            by_commit::pause(&mgmt, req.spec, on_event).await?;
            gitops.options.stop(BootstrapStep::Paused)?;
            let upgraded = async {
                let outcome = lifecycle::upgrade(&mgmt, &cluster, &options, on_event).await?;
                by_commit::apply_declared(&mgmt, req.spec).await?;
                let committed = by_commit::commit_and_sync(
                    &mgmt,
                    &repo,
                    auth,
                    by_commit::write_cluster(&repo, req.spec),
                    by_commit::UPDATE_MESSAGE,
                    &format!("cluster {}'s new spec", req.spec.name()),
                    &gitops.options,
                    on_event,
                )
                .await?;
                gitops.options.stop(BootstrapStep::Synced)?;
                Ok::<_, ProvisionError>((outcome, committed))
            }
            .await;
            // A stop stands for a kill: the annotations stay, for the re-run to remove.
            let upgraded = match upgraded {
                Err(stopped @ ProvisionError::GitOps(GitOpsError::Stopped(_))) => {
                    return Err(stopped);
                }
                other => other,
            };
            let resumed = by_commit::resume(&mgmt, req.spec, on_event).await;
            let (outcome, committed) = upgraded?;
            resumed?;
            (outcome, Some(committed))
        }
        Some(auth) => {
            // What the upgrade would refuse (an immutable change) is refused before git says it.
            let plan = lifecycle::UpgradeOptions {
                dry_run: true,
                cni: None,
                backup: None,
                ..options.clone()
            };
            lifecycle::upgrade(&mgmt, &cluster, &plan, on_event).await?;
            let message = by_commit::UPDATE_MESSAGE;
            let committed =
                by_commit::commit_workload(&mgmt, req.spec, auth, message, gitops, on_event)
                    .await?;
            let outcome = lifecycle::upgrade(&mgmt, &cluster, &options, on_event).await?;
            (outcome, committed)
        }
    };
    if let Some(cni) = &cni {
        store_cilium(&mgmt, req, cni, on_event).await?;
    }
    Ok((outcome, committed))
}

/// Connects to a management cluster and says where it is.
pub(crate) async fn connect(
    management: &KubeconfigSource,
    on_event: &mut dyn FnMut(Event),
) -> Result<Management, LifecycleError> {
    let mgmt = Management::connect(management).await?;
    on_event(Event::Note(format!(
        "Management cluster: {}",
        mgmt.server()
    )));
    Ok(mgmt)
}

/// The default key, [`lifecycle::create`] and the workload kubeconfig, on `mgmt`.
pub(crate) async fn create_on(
    mgmt: &Management,
    req: &Request<'_>,
    cni: CniManifest,
    opts: &CreateOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Provisioned, LifecycleError> {
    let key = default_key(mgmt, req, on_event).await?;
    let options = lifecycle::CreateOptions {
        wait: opts.wait,
        cni: Some(cni),
    };
    let created = lifecycle::create(mgmt, &req.cluster(key.as_deref()), &options, on_event).await?;
    let cluster = req.spec.name();
    let (path, written) = kubeconfig::write(req.dir, cluster, &created.kubeconfig, opts.force)?;
    let verb = match written {
        Written::Created => "Wrote",
        Written::Unchanged => "Kept (unchanged)",
        Written::Replaced => "Replaced",
    };
    let shown = path.strip_prefix(req.dir).unwrap_or(&path).display();
    step(
        on_event,
        format!("✅ {verb} the workload kubeconfig ./{shown}"),
    );
    Ok(Provisioned {
        created,
        kubeconfig: path,
        gitops: None,
    })
}

/// EKS Anywhere's default key when a machine config has an empty `sshKeyName`: its name (the
/// one `mgmt`'s inventory records for the cluster, else the key files', else a new one), after
/// importing it on every device of those configs that lacks it.
pub async fn default_key(
    mgmt: &Management,
    req: &Request<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Option<String>, LifecycleError> {
    let spec = req.spec;
    let Some(key) = ssh_key::default_key(mgmt, spec, req.dir, on_event).await? else {
        return Ok(None);
    };
    let rejected = |findings| LifecycleError::DefaultKey {
        name: key.name.clone(),
        findings,
    };
    let files = preflight::device_files(req.devices, snow_validate::limits::REQUEST_TIMEOUT)
        .map_err(|f| rejected(vec![*f]))?;
    let import = snow_validate::chores::import_default_key(
        spec,
        files,
        &key.name,
        key.public_key.as_deref(),
    )
    .await
    .map_err(|f| rejected(vec![*f]))?;
    on_event(Event::Note(import.to_string().trim_end().to_owned()));
    match import.failures() {
        failures if failures.is_empty() => Ok(Some(key.name.clone())),
        failures => Err(rejected(failures)),
    }
}
