//! Rules on FluxConfig objects and the Cluster's `gitOpsRef` (EKS Anywhere's `validateGitOps`,
//! `fluxconfig.go` and `pkg/cluster/flux.go`); the rules themselves are in [`crate::gitops`].

use super::{Findings, same_namespace};
use crate::{
    crd::Kind,
    finding::Finding,
    gitops::{GitOps, LEGACY_KIND},
    spec::{ClusterSpec, object_id},
};

pub(super) fn validate_all(spec: &ClusterSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    let management = spec.management_cluster_name();
    for (name, flux) in &spec.flux_configs {
        if let Err(findings) = GitOps::check(flux, &management) {
            out.extend(findings);
        }
        let mut f = Findings::new(object_id(Kind::FluxConfig.as_str(), name));
        same_namespace(spec, flux.metadata.namespace.as_deref(), &mut f);
        out.extend(f.out);
    }
    out
}

/// `spec.gitOpsRef` names a FluxConfig of the file.
pub(super) fn gitops_ref(spec: &ClusterSpec, f: &mut Findings) {
    let Some(r) = &spec.cluster.spec.git_ops_ref else {
        return;
    };
    match r.kind() {
        "FluxConfig" => {}
        LEGACY_KIND => {
            f.error(
                "cluster.gitops-ref",
                "spec.gitOpsRef.kind",
                "GitOpsConfig is EKS Anywhere's legacy GitOps kind, which snowctl does not support",
                "write `kind: FluxConfig` and a FluxConfig with spec.github (owner, repository, personal) or spec.git (repositoryUrl) in place of the GitOpsConfig",
            );
            return;
        }
        "" => {
            f.error(
                "cluster.gitops-ref",
                "spec.gitOpsRef.kind",
                "gitOpsRef has no kind",
                "write `kind: FluxConfig`",
            );
            return;
        }
        other => {
            f.error(
                "cluster.gitops-ref",
                "spec.gitOpsRef.kind",
                format!(
                    "gitOpsRef kind `{}` is not supported",
                    crate::finding::shorten(other)
                ),
                "write `kind: FluxConfig`",
            );
            return;
        }
    }
    if r.name().is_empty() {
        f.error(
            "cluster.gitops-ref",
            "spec.gitOpsRef.name",
            "gitOpsRef has no name",
            "name the FluxConfig of this file",
        );
    } else if !spec.flux_configs.contains_key(r.name()) {
        let names: Vec<&str> = spec.flux_configs.keys().map(String::as_str).collect();
        f.error(
            "cluster.gitops-ref",
            "spec.gitOpsRef.name",
            format!("unable to find FluxConfig {}", r.name()),
            if names.is_empty() {
                format!("add a FluxConfig named {} to the file", r.name())
            } else {
                format!(
                    "the file has FluxConfig {}; name it here, or add one named {}",
                    names.join(", "),
                    r.name()
                )
            },
        );
    }
}

/// The checked FluxConfig the Cluster's `gitOpsRef` names, when it has one and it passes.
pub(crate) fn referenced(spec: &ClusterSpec) -> Option<GitOps> {
    let r = spec.cluster.spec.git_ops_ref.as_ref()?;
    let flux = (r.kind() == Kind::FluxConfig.as_str())
        .then(|| spec.flux_configs.get(r.name()))
        .flatten()?;
    GitOps::check(flux, &spec.management_cluster_name()).ok()
}
