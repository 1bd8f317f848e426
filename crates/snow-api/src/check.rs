//! The whole static pipeline in one call: parse, default, validate.

use crate::{
    defaults::AppliedDefault,
    finding::{Finding, cap_per_check},
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
