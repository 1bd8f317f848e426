//! Renders the Cluster API and CAPAS objects for a Snow cluster (facts §4).
//!
//! Pure and deterministic: the same spec and release inputs give the same bytes. The object list,
//! names and every value come from Rust code; handlebars templates (embedded, registered once)
//! only shape the YAML, and one helper quotes every value.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let report = snow_api::check(&std::fs::read_to_string("cluster.yaml")?)?;
//! let spec = report.spec.expect("a cluster");
//! let inputs = capi_render::ReleaseInputs::embedded()?;
//! let objects = capi_render::render(&spec, &inputs, &capi_render::RenderOptions::default())?;
//! print!("{}", capi_render::to_yaml(&objects));
//! # Ok(()) }
//! ```

pub mod contract;
mod engine;
pub mod inputs;
pub mod names;
mod objects;
pub mod upgrade;
pub mod yaml;

pub use contract::Contract;
pub use inputs::ReleaseInputs;
pub use names::Names;
pub use objects::NAMESPACE;

use objects::{Ctx, Planned, WorkerNames};
use snow_api::{ClusterSpec, Finding, release::ReleaseError, validate::syntax::KubeVersion};
use snow_credentials::{CaBundle, CredentialsFile};

/// Why a cluster could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The spec has error findings; it is never rendered.
    #[error("the cluster spec has {} error(s); fix them first", .0.iter().filter(|f| f.is_error()).count())]
    Invalid(Vec<Finding>),
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

/// Rendering choices.
#[derive(Clone, Copy, Default)]
pub struct RenderOptions<'a> {
    /// Force a contract; by default it follows the CAPAS version of the release inputs.
    pub contract: Option<Contract>,
    /// Render the CAPAS identity Secret from these files; `None` leaves it out.
    pub secrets: Option<SecretInputs<'a>>,
    /// Names of templates already on the management cluster (upgrades); `None` for a new cluster.
    pub names: Option<&'a Names>,
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

/// The contract the inputs call for (CAPAS 0.3+ is v1beta2), unless forced.
pub fn contract_for(
    spec: &ClusterSpec,
    inputs: &ReleaseInputs,
    forced: Option<Contract>,
) -> Result<Contract, RenderError> {
    if let Some(c) = forced {
        return Ok(c);
    }
    let version = spec
        .cluster
        .spec
        .kubernetes_version
        .as_deref()
        .unwrap_or("");
    let (vb, _) = inputs.for_version(version)?;
    Ok(Contract::for_capas_version(&vb.snow()?.version))
}

/// Renders every object of a cluster, in a stable order: Cluster, KubeadmControlPlane,
/// AWSSnowCluster, control-plane AWSSnowMachineTemplate, [EtcdadmCluster, etcd
/// AWSSnowMachineTemplate], the identity Secret, the control-plane and etcd AWSSnowIPPools, then
/// per worker group KubeadmConfigTemplate, MachineDeployment, AWSSnowMachineTemplate, then the
/// worker AWSSnowIPPools, then the MachineHealthChecks.
pub fn render(
    spec: &ClusterSpec,
    inputs: &ReleaseInputs,
    opts: &RenderOptions<'_>,
) -> Result<Vec<RenderedObject>, RenderError> {
    let findings = spec.validate();
    if snow_api::has_errors(&findings) {
        return Err(RenderError::Invalid(findings));
    }
    let s = &spec.cluster.spec;
    let version_text = s.kubernetes_version.clone().unwrap_or_default();
    let version = KubeVersion::parse(&version_text)
        .ok_or_else(|| RenderError::Spec("kubernetesVersion".into()))?;
    let (bundle, distro) = inputs.for_version(&version_text)?;
    bundle.snow()?;
    let contract = contract_for(spec, inputs, opts.contract)?;
    let name = spec.name();
    if !snow_api::validate::syntax::is_dns_subdomain(name) {
        return Err(RenderError::Spec(format!(
            "cluster name `{name}` has capital letters; Kubernetes object names derived from it must be lowercase"
        )));
    }
    let groups = s
        .worker_node_group_configurations
        .clone()
        .unwrap_or_default();
    let group_names: Vec<String> = groups
        .iter()
        .map(|g| g.name.clone().unwrap_or_default())
        .collect();
    let initial = Names::initial(name, &group_names);
    let names = opts.names.unwrap_or(&initial);
    let ctx = Ctx {
        spec,
        contract,
        bundle,
        distro,
        names,
        version,
    };

    let mut planned: Vec<Planned> = Vec::new();
    planned.push(objects::cluster(&ctx));
    planned.push(objects::kubeadm_control_plane(&ctx)?);
    planned.push(objects::snow_cluster(&ctx));
    let cp = s
        .control_plane_configuration
        .as_ref()
        .and_then(|c| c.machine_group_ref.as_ref())
        .map(|r| r.name())
        .unwrap_or("");
    let cp_machine = spec
        .machine_configs
        .get(cp)
        .ok_or_else(|| RenderError::Spec(format!("SnowMachineConfig {cp}")))?;
    planned.push(objects::machine_template(
        &names.control_plane_template,
        cp_machine,
    ));
    let mut cp_machines = vec![cp_machine];
    if let Some(etcd) = &s.external_etcd_configuration {
        let en = etcd
            .machine_group_ref
            .as_ref()
            .map(|r| r.name())
            .unwrap_or("");
        let etcd_machine = spec
            .machine_configs
            .get(en)
            .ok_or_else(|| RenderError::Spec(format!("SnowMachineConfig {en}")))?;
        planned.push(objects::etcdadm_cluster(
            &ctx,
            etcd_machine,
            etcd.count.unwrap_or(1),
        )?);
        planned.push(objects::machine_template(
            &names.etcd_template,
            etcd_machine,
        ));
        cp_machines.push(etcd_machine);
    }
    let mut rendered: Vec<RenderedObject> = Vec::new();
    let emit = |p: Planned, out: &mut Vec<RenderedObject>| -> Result<(), RenderError> {
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
    };
    for p in planned.drain(..) {
        emit(p, &mut rendered)?;
    }
    if let Some(secrets) = opts.secrets {
        let secret = snow_credentials::encode::capas_cluster_secret(
            name,
            secrets.credentials,
            secrets.ca_bundle,
        );
        let json = secret.to_json();
        let yaml = engine::render("secret", &json).map_err(RenderError::Template)?;
        rendered.push(RenderedObject {
            api_version: "v1".into(),
            kind: "Secret".into(),
            name: snow_credentials::encode::capas_cluster_secret_name(name),
            yaml,
        });
    }
    for pool in objects::referenced_pools(cp_machines.iter().copied()) {
        if let Some(p) = objects::ip_pool(&pool, spec) {
            emit(p, &mut rendered)?;
        }
    }
    let mut worker_machines = Vec::new();
    for group in &groups {
        let gname = group.name.clone().unwrap_or_default();
        let mname = group
            .machine_group_ref
            .as_ref()
            .map(|r| r.name())
            .unwrap_or("");
        let machine = spec
            .machine_configs
            .get(mname)
            .ok_or_else(|| RenderError::Spec(format!("SnowMachineConfig {mname}")))?;
        worker_machines.push(machine);
        let templates = names.workers.get(&gname).cloned().unwrap_or_else(|| {
            let base = format!("{name}-{gname}-1");
            names::WorkerTemplateNames {
                machine_template: base.clone(),
                config_template: base,
            }
        });
        let wn = WorkerNames {
            group: &gname,
            deployment: format!("{name}-{gname}"),
            config_template: templates.config_template,
            machine_template: templates.machine_template,
        };
        // The MachineDeployment runs the group's own Kubernetes version; the KCT uses the
        // cluster's bundle (facts §4.7).
        let group_version = group
            .kubernetes_version
            .clone()
            .unwrap_or_else(|| version_text.clone());
        let (_, group_distro) = inputs.for_version(&group_version)?;
        emit(
            objects::kubeadm_config_template(&ctx, group, machine, &wn)?,
            &mut rendered,
        )?;
        emit(
            objects::machine_deployment(&ctx, group, &group_distro.kubernetes.tag, &wn),
            &mut rendered,
        )?;
        emit(
            objects::machine_template(&wn.machine_template, machine),
            &mut rendered,
        )?;
        let _ = wn.group;
    }
    let cp_pools = objects::referenced_pools(cp_machines.iter().copied());
    for pool in objects::referenced_pools(worker_machines.iter().copied()) {
        if cp_pools.contains(&pool) {
            continue;
        }
        if let Some(p) = objects::ip_pool(&pool, spec) {
            emit(p, &mut rendered)?;
        }
    }
    let cp_mhc = s
        .control_plane_configuration
        .as_ref()
        .and_then(|c| c.machine_health_check.as_ref());
    emit(
        objects::machine_health_check(
            &ctx,
            format!("{name}-kcp-unhealthy"),
            serde_json::json!({"cluster.x-k8s.io/control-plane": ""}),
            cp_mhc,
            "100%",
        ),
        &mut rendered,
    )?;
    for group in &groups {
        let gname = group.name.clone().unwrap_or_default();
        emit(
            objects::machine_health_check(
                &ctx,
                format!("{name}-{gname}-worker-unhealthy"),
                serde_json::json!({"cluster.x-k8s.io/deployment-name": format!("{name}-{gname}")}),
                group.machine_health_check.as_ref(),
                "40%",
            ),
            &mut rendered,
        )?;
    }
    Ok(rendered)
}
