//! Rules on OIDCConfig and AWSIamConfig objects.

use super::{Findings, same_namespace};
use crate::{
    crd::Kind,
    finding::Finding,
    spec::{ClusterSpec, object_id},
};

pub(super) fn validate_all(spec: &ClusterSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, oidc) in &spec.oidc_configs {
        let mut f = Findings::new(object_id(Kind::OIDCConfig.as_str(), name));
        let s = &oidc.spec;
        if s.client_id.as_deref().unwrap_or("").is_empty() {
            f.error(
                "oidc.client-id",
                "spec.clientId",
                "clientId is required",
                "set the OIDC client id tokens are issued for",
            );
        }
        match s.issuer_url.as_deref().unwrap_or("") {
            "" => f.error(
                "oidc.issuer-url",
                "spec.issuerUrl",
                "issuerUrl is required",
                "set the https URL of the OIDC issuer",
            ),
            url if !url.starts_with("https://") || url.len() <= "https://".len() => f.error(
                "oidc.issuer-url",
                "spec.issuerUrl",
                format!("issuerUrl `{url}` is not an https URL"),
                "the API server accepts only https issuers",
            ),
            _ => {}
        }
        let claims = s.required_claims.as_deref().unwrap_or_default();
        if claims.len() > 1 {
            f.error(
                "oidc.required-claims",
                "spec.requiredClaims",
                format!("{} required claims: only one is supported", claims.len()),
                "keep one required claim",
            );
        }
        for (i, c) in claims.iter().enumerate() {
            if c.claim.as_deref().unwrap_or("").is_empty() {
                f.error(
                    "oidc.required-claims",
                    &format!("spec.requiredClaims[{i}].claim"),
                    "a required claim needs a claim name",
                    "set claim",
                );
            }
        }
        same_namespace(spec, oidc.metadata.namespace.as_deref(), &mut f);
        out.extend(f.out);
    }
    for (name, iam) in &spec.aws_iam_configs {
        let mut f = Findings::new(object_id(Kind::AWSIamConfig.as_str(), name));
        let s = &iam.spec;
        if s.aws_region.as_deref().unwrap_or("").is_empty() {
            f.error(
                "aws-iam.region",
                "spec.awsRegion",
                "awsRegion is required",
                "set the AWS region of the IAM roles and users, e.g. us-west-2",
            );
        }
        if s.backend_mode.as_ref().is_none_or(Vec::is_empty) {
            f.error(
                "aws-iam.backend-mode",
                "spec.backendMode",
                "backendMode needs at least one mode",
                "e.g. [EKSConfigMap]",
            );
        }
        same_namespace(spec, iam.metadata.namespace.as_deref(), &mut f);
        out.extend(f.out);
    }
    out
}
