//! Static validation: every rule of EKS Anywhere's Snow provider that needs no device (its
//! webhooks for Cluster, SnowMachineConfig, SnowDatacenterConfig and SnowIPPool, and its static
//! Snow config validation), plus the checks EKS Anywhere misses. Every finding is collected; nothing
//! stops at the first.

mod cluster;
pub(crate) mod gitops;
mod identity;
mod ip_pool;
mod machine;
pub mod syntax;

use crate::{
    crd::Kind,
    finding::{Finding, cap_per_check},
    limits::MAX_FINDINGS_PER_CHECK,
    spec::{ClusterSpec, DEFAULT_NAMESPACE, object_id},
};

/// Collects findings for one object.
pub(crate) struct Findings {
    object: String,
    out: Vec<Finding>,
}

impl Findings {
    fn new(object: String) -> Self {
        Findings {
            object,
            out: Vec::new(),
        }
    }

    fn error(
        &mut self,
        check: &str,
        field: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.push(Finding::error(check, message), field, hint.into());
    }

    fn warning(
        &mut self,
        check: &str,
        field: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.push(Finding::warning(check, message), field, hint.into());
    }

    fn push(&mut self, finding: Finding, field: &str, hint: String) {
        let mut finding = finding.object(&self.object);
        if !field.is_empty() {
            finding = finding.field(field);
        }
        if !hint.is_empty() {
            finding = finding.hint(hint);
        }
        self.out.push(finding);
    }
}

impl ClusterSpec {
    /// Runs every static rule and returns the findings, each with its position in the source:
    /// at most [`MAX_FINDINGS_PER_CHECK`] of each check, then one "… and N more" finding.
    pub fn validate(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        findings.extend(cluster::validate(self));
        if let Some(dc) = &self.datacenter {
            findings.extend(validate_datacenter(self, dc));
        }
        findings.extend(machine::validate_all(self));
        findings.extend(ip_pool::validate_all(self));
        findings.extend(identity::validate_all(self));
        findings.extend(gitops::validate_all(self));
        findings.extend(unreferenced(self));
        self.locate(cap_per_check(findings, MAX_FINDINGS_PER_CHECK))
    }
}

fn validate_datacenter(
    spec: &ClusterSpec,
    dc: &crate::types::snow::SnowDatacenterConfig,
) -> Vec<Finding> {
    let name = dc.metadata.name.as_deref().unwrap_or("");
    let mut f = Findings::new(object_id(Kind::SnowDatacenterConfig.as_str(), name));
    let identity = dc.spec.identity_ref.clone().unwrap_or_default();
    if identity.name().is_empty() {
        f.error(
            "datacenter.identity-ref",
            "spec.identityRef.name",
            "SnowDatacenterConfig IdentityRef name must not be empty",
            format!("name the Secret with the device credentials, e.g. {name}-snow-credentials"),
        );
    }
    if identity.kind().is_empty() {
        f.error(
            "datacenter.identity-ref",
            "spec.identityRef.kind",
            "SnowDatacenterConfig IdentityRef kind must not be empty",
            "write `kind: Secret`",
        );
    } else if identity.kind() != "Secret" {
        f.error(
            "datacenter.identity-ref",
            "spec.identityRef.kind",
            format!("SnowDatacenterConfig IdentityRef kind {} is invalid, the only supported kind is Secret", identity.kind()),
            "write `kind: Secret`",
        );
    }
    same_namespace(spec, dc.metadata.namespace.as_deref(), &mut f);
    f.out
}

/// The object must live in the Cluster's namespace.
fn same_namespace(spec: &ClusterSpec, namespace: Option<&str>, f: &mut Findings) {
    let namespace = namespace.unwrap_or(DEFAULT_NAMESPACE);
    if namespace != spec.namespace() {
        f.error(
            "namespace.mismatch",
            "metadata.namespace",
            format!(
                "namespace `{namespace}` differs from the Cluster's namespace `{}`",
                spec.namespace()
            ),
            format!(
                "put every object of the cluster in namespace `{}`",
                spec.namespace()
            ),
        );
    }
}

/// Machine configs and IP pools that nothing references.
fn unreferenced(spec: &ClusterSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    let used_machines = machine::referenced_machine_configs(spec);
    for name in spec
        .machine_configs
        .keys()
        .filter(|n| !used_machines.contains(n.as_str()))
    {
        let mut f = Findings::new(object_id(Kind::SnowMachineConfig.as_str(), name));
        f.warning(
            "document.unreferenced",
            "",
            format!("SnowMachineConfig {name} is not referenced by the Cluster"),
            "remove it, or reference it from a machineGroupRef",
        );
        out.extend(f.out);
    }
    let refs: Vec<(&str, &str)> = spec
        .cluster
        .spec
        .identity_provider_refs
        .iter()
        .flatten()
        .map(|r| (r.kind(), r.name()))
        .collect();
    let identity = spec
        .oidc_configs
        .keys()
        .map(|n| (Kind::OIDCConfig, n))
        .chain(spec.aws_iam_configs.keys().map(|n| (Kind::AWSIamConfig, n)));
    for (kind, name) in identity.filter(|(k, n)| !refs.contains(&(k.as_str(), n.as_str()))) {
        let mut f = Findings::new(object_id(kind.as_str(), name));
        f.warning(
            "document.unreferenced",
            "",
            format!("{} {name} is not referenced by the Cluster", kind.as_str()),
            "remove it, or list it in spec.identityProviderRefs",
        );
        out.extend(f.out);
    }
    let flux_ref = (spec.cluster.spec.git_ops_ref.as_ref())
        .filter(|r| r.kind() == Kind::FluxConfig.as_str())
        .map(|r| r.name());
    for name in spec
        .flux_configs
        .keys()
        .filter(|n| Some(n.as_str()) != flux_ref)
    {
        let mut f = Findings::new(object_id(Kind::FluxConfig.as_str(), name));
        f.warning(
            "document.unreferenced",
            "",
            format!("FluxConfig {name} is not referenced by the Cluster"),
            "remove it, or name it in spec.gitOpsRef",
        );
        out.extend(f.out);
    }
    let used_pools = machine::referenced_ip_pools(spec);
    for name in spec
        .ip_pools
        .keys()
        .filter(|n| !used_pools.contains(n.as_str()))
    {
        let mut f = Findings::new(object_id(Kind::SnowIPPool.as_str(), name));
        f.warning(
            "document.unreferenced",
            "",
            format!("SnowIPPool {name} is not referenced by any SnowMachineConfig"),
            "remove it, or reference it from a DNI's ipPoolRef",
        );
        out.extend(f.out);
    }
    out
}
