//! Create and upgrade on a management cluster: the CNI manifest, preflight, the default key,
//! then the lifecycle step and the workload kubeconfig.

use crate::gitops::{Bootstrapped, GitOpsInputs};
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
    crate::gitops::required(req.spec, req.release, gitops)?;
    let cni = cni::render(opts.cni.clone(), req, on_event).await?;
    preflight::checks(req.spec, req.devices, opts.checks, on_event).await?;
    let mgmt = connect(management, on_event).await?;
    let mut made = create_on(&mgmt, req, cni.manifest.clone(), opts, on_event).await?;
    store_cilium(&mgmt, req, &cni, on_event).await?;
    made.gitops =
        crate::gitops::after_create(&mgmt, req.spec, req.release, gitops, on_event).await?;
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
/// only says what would change (the objects are in the outcome).
pub async fn upgrade(
    management: &KubeconfigSource,
    req: &Request<'_>,
    opts: &UpgradeOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<UpgradeOutcome, ProvisionError> {
    let dry_run = opts.dry_run;
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
    let outcome =
        lifecycle::upgrade(&mgmt, &req.cluster(key.as_deref()), &options, on_event).await?;
    if let Some(cni) = &cni {
        store_cilium(&mgmt, req, cni, on_event).await?;
    }
    Ok(outcome)
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
