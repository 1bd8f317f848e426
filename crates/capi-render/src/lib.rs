//! Renders the Cluster API and CAPAS objects for a Snow cluster (EKS Anywhere's Snow builders, `pkg/providers/snow`).
//!
//! Pure and deterministic: the same spec and release inputs give the same bytes. The object list,
//! names and every value come from Rust code; handlebars templates (embedded, registered once)
//! only shape the YAML, and one helper quotes every value.
//!
//! It takes a [`ValidSpec`] (a spec without error findings) and a [`ClusterRelease`] resolved
//! once from the release catalog, so it never re-checks either.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let report = snow_api::check(&std::fs::read_to_string("cluster.yaml")?)?;
//! let spec = report.into_valid().map_err(|r| format!("{} finding(s)", r.findings.len()))?;
//! let inputs = snow_api::release::ReleaseInputs::embedded()?;
//! let release = inputs.resolve(&spec, None)?;
//! let objects = capi_render::render(&spec, &release, &capi_render::RenderOptions::default())?;
//! print!("{}", capi_render::to_yaml(&objects));
//! # Ok(()) }
//! ```

pub mod cilium;
pub mod contract;
pub mod controller;
pub mod diff;
mod engine;
pub mod gitops;
pub mod names;
mod objects;
pub mod stored_cilium;
pub mod upgrade;
pub mod versions;
pub mod yaml;

pub use contract::Contract;
pub use names::Names;
pub use objects::{CERTIFICATES_EXPIRY_DAYS, Mirror as RegistryMirror, NAMESPACE};

use objects::{Ctx, Planned, WorkerNames};
use snow_api::{
    ValidSpec,
    release::{ClusterRelease, ReleaseError},
    types::snow::SnowMachineConfig,
    validate::syntax::KubeVersion,
};
use snow_credentials::{CaBundle, CredentialsFile, RegistryCredentials};

/// Why a cluster could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The release inputs lack something.
    #[error(transparent)]
    Release(#[from] ReleaseError),
    /// The spec lacks something rendering needs (only possible for specs built by hand).
    #[error("cannot render: {0}")]
    Spec(String),
    /// A template failed (a bug).
    #[error("template error: {0}")]
    Template(String),
}

/// The identity Secret's inputs: the credentials file and CA bundle.
#[derive(Clone, Copy)]
pub struct SecretInputs<'a> {
    /// The device credentials.
    pub credentials: &'a CredentialsFile,
    /// The device CA bundle.
    pub ca_bundle: &'a CaBundle,
}

/// Rendering choices (the contract is the release's: [`ClusterRelease::contract`]).
#[derive(Clone, Copy, Default)]
pub struct RenderOptions<'a> {
    /// Render the CAPAS identity Secret from these files; `None` leaves it out.
    pub secrets: Option<SecretInputs<'a>>,
    /// Names of templates already on the management cluster (upgrades); `None` for a new cluster.
    pub names: Option<&'a Names>,
    /// The key pair name for machine configs whose `sshKeyName` is empty: EKS Anywhere's
    /// generated `eksa-default-<cluster>-<uuid4>`. `None` renders their `sshKeyName` empty.
    pub default_ssh_key_name: Option<&'a str>,
    /// Render `eksa-system/registry-credentials` (the mirror's login, as EKS Anywhere creates it
    /// for `authenticate: true`) from this; `None` leaves it out.
    pub registry_credentials: Option<&'a RegistryCredentials>,
}

/// One rendered object. Its `Debug` leaves out the YAML of Secrets (the identity Secret holds
/// the device credentials).
#[derive(Clone, PartialEq, Eq)]
pub struct RenderedObject {
    /// `group/version`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Name (namespace is always `eksa-system`).
    pub name: String,
    /// The YAML document, without `---`.
    pub yaml: String,
}

impl std::fmt::Debug for RenderedObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = format!("<redacted: {} bytes>", self.yaml.len());
        f.debug_struct("RenderedObject")
            .field("api_version", &self.api_version)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field(
                "yaml",
                if self.kind == "Secret" {
                    &redacted
                } else {
                    &self.yaml
                },
            )
            .finish()
    }
}

/// All objects as one multi-document YAML stream.
pub fn to_yaml(objects: &[RenderedObject]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        out.push_str(&o.yaml);
    }
    out
}

/// Renders every object of a cluster, in a stable order: Cluster, KubeadmControlPlane,
/// AWSSnowCluster, control-plane AWSSnowMachineTemplate, [EtcdadmCluster, etcd
/// AWSSnowMachineTemplate], the identity Secret, the registry-credentials Secret, the control-plane and etcd AWSSnowIPPools, then
/// per worker group KubeadmConfigTemplate, MachineDeployment, AWSSnowMachineTemplate, then the
/// worker AWSSnowIPPools, then the MachineHealthChecks.
pub fn render(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    opts: &RenderOptions<'_>,
) -> Result<Vec<RenderedObject>, RenderError> {
    let name = spec.name();
    if !snow_api::validate::syntax::is_dns_subdomain(name) {
        return Err(RenderError::Spec(format!(
            "cluster name `{name}` has capital letters; Kubernetes object names derived from it must be lowercase"
        )));
    }
    let version = KubeVersion::parse(spec.kubernetes_version())
        .ok_or_else(|| RenderError::Spec("kubernetesVersion".into()))?;
    let group_names: Vec<String> = worker_groups(spec)
        .map(|g| g.name.clone().unwrap_or_default())
        .collect();
    let initial = Names::initial(name, &group_names);
    let ctx = Ctx {
        spec,
        contract: release.contract,
        bundle: release.bundle,
        distro: release.distro,
        names: opts.names.unwrap_or(&initial),
        version,
        default_ssh_key_name: opts.default_ssh_key_name,
    };
    let mut out = Vec::new();
    let cp_machines = control_plane(&ctx, &mut out)?;
    if let Some(secrets) = opts.secrets {
        out.push(identity_secret(name, secrets)?);
    }
    if let Some(login) = opts.registry_credentials {
        out.push(secret(&snow_credentials::registry_credentials_secret(
            login,
        ))?);
    }
    for pool in objects::referenced_pools(cp_machines.iter().copied()) {
        if let Some(p) = objects::ip_pool(&pool, spec) {
            emit(p, &mut out)?;
        }
    }
    let worker_machines = workers(&ctx, release, &mut out)?;
    let cp_pools = objects::referenced_pools(cp_machines.iter().copied());
    for pool in objects::referenced_pools(worker_machines.iter().copied()) {
        if cp_pools.contains(&pool) {
            continue;
        }
        if let Some(p) = objects::ip_pool(&pool, spec) {
            emit(p, &mut out)?;
        }
    }
    health_checks(&ctx, &mut out)?;
    Ok(out)
}

/// The worker node groups of a spec, in order.
fn worker_groups(
    spec: &ValidSpec,
) -> impl Iterator<Item = &snow_api::types::cluster::WorkerNodeGroupConfiguration> {
    spec.cluster
        .spec
        .worker_node_group_configurations
        .iter()
        .flatten()
}

/// The name a machine group reference holds (`""` when absent; validation rules that out).
fn group_ref(r: Option<&snow_api::types::NamedRef>) -> &str {
    r.map(|r| r.name()).unwrap_or("")
}

/// The machine config a group references (validation guarantees it exists).
fn machine_of<'a>(spec: &'a ValidSpec, name: &str) -> Result<&'a SnowMachineConfig, RenderError> {
    spec.machine_configs
        .get(name)
        .ok_or_else(|| RenderError::Spec(format!("SnowMachineConfig {name}")))
}

/// Renders one planned object into `out`.
fn emit(p: Planned, out: &mut Vec<RenderedObject>) -> Result<(), RenderError> {
    let mut context = p.context;
    if let Some(map) = context.as_object_mut() {
        map.insert("apiVersion".into(), serde_json::json!(p.api_version));
    }
    let yaml = engine::render(p.template, &context).map_err(RenderError::Template)?;
    out.push(RenderedObject {
        api_version: p.api_version,
        kind: p.kind.to_owned(),
        name: p.name,
        yaml,
    });
    Ok(())
}

/// Cluster, KubeadmControlPlane, AWSSnowCluster, the control-plane machine template and, with
/// external etcd, the EtcdadmCluster and its template. Returns the machine configs they use.
fn control_plane<'a>(
    ctx: &Ctx<'a>,
    out: &mut Vec<RenderedObject>,
) -> Result<Vec<&'a SnowMachineConfig>, RenderError> {
    let s = &ctx.spec.cluster.spec;
    emit(objects::cluster(ctx), out)?;
    emit(objects::kubeadm_control_plane(ctx)?, out)?;
    emit(objects::snow_cluster(ctx), out)?;
    let cp_machine = machine_of(
        ctx.spec,
        group_ref(
            s.control_plane_configuration
                .as_ref()
                .and_then(|c| c.machine_group_ref.as_ref()),
        ),
    )?;
    emit(
        objects::machine_template(ctx, &ctx.names.control_plane_template, cp_machine),
        out,
    )?;
    let mut machines = vec![cp_machine];
    if let Some(etcd) = &s.external_etcd_configuration {
        let etcd_machine = machine_of(ctx.spec, group_ref(etcd.machine_group_ref.as_ref()))?;
        emit(
            objects::etcdadm_cluster(ctx, etcd_machine, etcd.count.unwrap_or(1))?,
            out,
        )?;
        emit(
            objects::machine_template(ctx, &ctx.names.etcd_template, etcd_machine),
            out,
        )?;
        machines.push(etcd_machine);
    }
    Ok(machines)
}

/// The CAPAS identity Secret of the cluster.
fn identity_secret(
    cluster: &str,
    secrets: SecretInputs<'_>,
) -> Result<RenderedObject, RenderError> {
    secret(&snow_credentials::encode::capas_cluster_secret(
        cluster,
        secrets.credentials,
        secrets.ca_bundle,
    ))
}

/// A Secret as a rendered object.
fn secret(secret: &snow_credentials::KubeSecret) -> Result<RenderedObject, RenderError> {
    let yaml = engine::render("secret", &secret.to_json()).map_err(RenderError::Template)?;
    Ok(RenderedObject {
        api_version: "v1".into(),
        kind: "Secret".into(),
        name: secret.metadata().name.clone(),
        yaml,
    })
}

/// Per worker group: KubeadmConfigTemplate, MachineDeployment, AWSSnowMachineTemplate. Returns
/// the machine configs they use.
fn workers<'a>(
    ctx: &Ctx<'a>,
    release: &ClusterRelease<'_>,
    out: &mut Vec<RenderedObject>,
) -> Result<Vec<&'a SnowMachineConfig>, RenderError> {
    let name = ctx.spec.name();
    let mut machines = Vec::new();
    for group in worker_groups(ctx.spec) {
        let gname = group.name.clone().unwrap_or_default();
        let machine = machine_of(ctx.spec, group_ref(group.machine_group_ref.as_ref()))?;
        machines.push(machine);
        let templates = ctx.names.workers.get(&gname).cloned().unwrap_or_else(|| {
            let base = format!("{name}-{gname}-1");
            names::WorkerTemplateNames {
                machine_template: base.clone(),
                config_template: base,
            }
        });
        let wn = WorkerNames {
            deployment: format!("{name}-{gname}"),
            config_template: templates.config_template,
            machine_template: templates.machine_template,
        };
        // The MachineDeployment runs the group's own Kubernetes version; the KCT uses the
        // cluster's bundle (EKS Anywhere renders it so).
        let group_distro = release
            .groups
            .get(&gname)
            .copied()
            .unwrap_or(release.distro);
        emit(
            objects::kubeadm_config_template(ctx, group, machine, &wn)?,
            out,
        )?;
        emit(
            objects::machine_deployment(ctx, group, &group_distro.kubernetes.tag, &wn),
            out,
        )?;
        emit(
            objects::machine_template(ctx, &wn.machine_template, machine),
            out,
        )?;
    }
    Ok(machines)
}

/// The MachineHealthChecks: the control plane's, then one per worker group.
fn health_checks(ctx: &Ctx<'_>, out: &mut Vec<RenderedObject>) -> Result<(), RenderError> {
    let name = ctx.spec.name();
    let cp_mhc = ctx
        .spec
        .cluster
        .spec
        .control_plane_configuration
        .as_ref()
        .and_then(|c| c.machine_health_check.as_ref());
    emit(
        objects::machine_health_check(
            ctx,
            format!("{name}-kcp-unhealthy"),
            serde_json::json!({"cluster.x-k8s.io/control-plane": ""}),
            cp_mhc,
            "100%",
        )?,
        out,
    )?;
    for group in worker_groups(ctx.spec) {
        let gname = group.name.clone().unwrap_or_default();
        emit(
            objects::machine_health_check(
                ctx,
                format!("{name}-{gname}-worker-unhealthy"),
                serde_json::json!({"cluster.x-k8s.io/deployment-name": format!("{name}-{gname}")}),
                group.machine_health_check.as_ref(),
                "40%",
            )?,
            out,
        )?;
    }
    Ok(())
}
