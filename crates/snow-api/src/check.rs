//! The whole static pipeline in one call: parse, default, validate.

use crate::{
    defaults::AppliedDefault,
    finding::{Finding, cap_per_check},
    gitops::GitOps,
    limits::MAX_FINDINGS_PER_CHECK,
    spec::{ClusterSpec, InputError},
};

/// What static checking found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The defaulted spec, when the file has a Cluster.
    pub spec: Option<ClusterSpec>,
    /// The defaults that filled fields.
    pub defaults: Vec<AppliedDefault>,
    /// The findings: reading problems first, then rule violations; at most
    /// [`MAX_FINDINGS_PER_CHECK`] of each check, then one "… and N more" finding.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether the spec has no error finding.
    pub fn is_valid(&self) -> bool {
        self.spec.is_some() && !crate::has_errors(&self.findings)
    }

    /// The spec as a [`ValidSpec`] when there is one and no finding is an error; otherwise the
    /// report back, whole, so the caller can show every finding.
    pub fn into_valid(self) -> Result<ValidSpec, Box<Report>> {
        match self.spec {
            Some(spec) if !crate::has_errors(&self.findings) => Ok(ValidSpec {
                gitops: crate::validate::gitops::referenced(&spec),
                spec,
                warnings: self.findings,
            }),
            spec => Err(Box::new(Report { spec, ..self })),
        }
    }
}

/// A cluster spec that is parsed, defaulted and has no error finding: the only spec rendering
/// and the lifecycle take, so none of them checks it again.
///
/// Built by [`Report::into_valid`] (from text) or `TryFrom<ClusterSpec>` (a spec built in code,
/// which runs static validation); read through `Deref` to [`ClusterSpec`], never changed.
#[derive(Debug, Clone)]
pub struct ValidSpec {
    spec: ClusterSpec,
    warnings: Vec<Finding>,
    gitops: Option<GitOps>,
}

impl ValidSpec {
    /// The findings below error severity (warnings and infos) that came with the spec.
    pub fn warnings(&self) -> &[Finding] {
        &self.warnings
    }

    /// The Kubernetes version of the cluster (`1.NN`; validation guarantees it is there).
    pub fn kubernetes_version(&self) -> &str {
        self.spec
            .cluster
            .spec
            .kubernetes_version
            .as_deref()
            .unwrap_or_default()
    }

    /// The checked FluxConfig the Cluster's `gitOpsRef` names (`None`: no GitOps).
    pub fn gitops(&self) -> Option<&GitOps> {
        self.gitops.as_ref()
    }

    /// The spec, for code that needs to own it.
    pub fn into_inner(self) -> ClusterSpec {
        self.spec
    }
}

impl std::ops::Deref for ValidSpec {
    type Target = ClusterSpec;

    fn deref(&self) -> &ClusterSpec {
        &self.spec
    }
}

impl TryFrom<ClusterSpec> for ValidSpec {
    /// Every finding of static validation, when one is an error.
    type Error = Vec<Finding>;

    fn try_from(spec: ClusterSpec) -> Result<ValidSpec, Vec<Finding>> {
        let findings = spec.validate();
        if crate::has_errors(&findings) {
            return Err(findings);
        }
        Ok(ValidSpec {
            gitops: crate::validate::gitops::referenced(&spec),
            spec,
            warnings: findings,
        })
    }
}

/// Parses `text`, applies the defaults and runs static validation.
pub fn check(text: &str) -> Result<Report, InputError> {
    let parsed = ClusterSpec::parse(text)?;
    let mut findings = cap_per_check(parsed.findings, MAX_FINDINGS_PER_CHECK);
    let mut defaults = Vec::new();
    let spec = parsed.spec.map(|mut spec| {
        // A default never papers over a value the user wrote but mistyped.
        defaults = spec.apply_defaults();
        defaults.retain(|d| !spec.is_broken_field(&d.object, &d.field));
        findings = spec.locate(std::mem::take(&mut findings));
        findings.extend(spec.validate());
        spec
    });
    Ok(Report {
        spec,
        defaults,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_spec_without_errors_becomes_valid() {
        let broken = check("kind: Cluster\n").unwrap();
        let back = broken.clone().into_valid().unwrap_err();
        assert_eq!(back.findings.len(), broken.findings.len());
        let good = check(
            &crate::template::cluster_config(&crate::template::TemplateOptions {
                name: "edge".into(),
                devices: vec!["192.168.1.11".into()],
                endpoint: Some("192.168.1.100".into()),
                ..Default::default()
            })
            .unwrap(),
        )
        .unwrap();
        let spec = good.into_valid().expect("the generated spec is valid");
        assert_eq!(spec.name(), "edge");
        assert!(spec.warnings().iter().all(|f| !f.is_error()));
        assert!(ValidSpec::try_from(spec.into_inner()).is_ok());
    }
}
