//! Is the management cluster ready for Snow clusters: the CRDs of the chosen contract served, and
//! the CAPAS controller available.

use super::{ClusterRequest, Event, LifecycleError, Management};
use capi_render::{
    Contract,
    contract::{ETCD_API_VERSION, INFRA_API_VERSION},
};

/// The CAPAS controller Deployment's namespace (EKS Anywhere waits for it: `GetDeployments`).
pub use snow_credentials::encode::CAPAS_NAMESPACE;
/// The CAPAS controller Deployment's name.
pub const CAPAS_DEPLOYMENT: &str = "capas-controller-manager";

/// What a cluster of this shape needs served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderCheck {
    /// The contract the objects are rendered for.
    pub contract: Contract,
    /// The cluster has external etcd (etcdadm must be installed).
    pub external_etcd: bool,
}

/// `(apiVersion, resources, provider)` the objects need.
fn needed(check: ProviderCheck) -> Vec<(String, &'static [&'static str], &'static str)> {
    let c = check.contract;
    let mut needed = vec![
        (
            c.api_version("cluster.x-k8s.io"),
            &["clusters", "machinedeployments", "machinehealthchecks"][..],
            "Cluster API core",
        ),
        (
            c.api_version("controlplane.cluster.x-k8s.io"),
            &["kubeadmcontrolplanes"][..],
            "the kubeadm control-plane provider",
        ),
        (
            c.api_version("bootstrap.cluster.x-k8s.io"),
            &["kubeadmconfigtemplates"][..],
            "the kubeadm bootstrap provider",
        ),
        (
            INFRA_API_VERSION.to_owned(),
            &[
                "awssnowclusters",
                "awssnowmachinetemplates",
                "awssnowippools",
            ][..],
            "CAPAS (the Snow infrastructure provider)",
        ),
    ];
    if check.external_etcd {
        needed.push((
            ETCD_API_VERSION.to_owned(),
            &["etcdadmclusters"][..],
            "the etcdadm controller",
        ));
    }
    needed
}

/// Checks everything at once and lists every gap.
pub async fn check_providers(
    mgmt: &Management,
    check: ProviderCheck,
) -> Result<(), LifecycleError> {
    let mut missing = Vec::new();
    for (api_version, resources, provider) in needed(check) {
        match mgmt.served(&api_version).await? {
            None => missing.push(format!(
                "{api_version} is not served: {provider} is not installed{}",
                contract_note(check.contract, &api_version)
            )),
            Some(served) => {
                for resource in resources {
                    if !served.iter().any(|s| s == resource) {
                        missing.push(format!(
                            "{resource} ({api_version}) is not served: {provider} is not installed"
                        ));
                    }
                }
            }
        }
    }
    let deployment = mgmt
        .get(
            "apps/v1",
            "Deployment",
            Some(CAPAS_NAMESPACE),
            CAPAS_DEPLOYMENT,
        )
        .await?;
    match deployment {
        None => missing.push(format!(
            "Deployment {CAPAS_NAMESPACE}/{CAPAS_DEPLOYMENT} is missing: CAPAS is not installed"
        )),
        Some(d) => {
            let available = d["status"]["availableReplicas"].as_u64().unwrap_or(0);
            let condition = d["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Available" && c["status"] == "True");
            if available == 0 || !condition {
                missing.push(format!(
                    "Deployment {CAPAS_NAMESPACE}/{CAPAS_DEPLOYMENT} is not available ({available} replica(s) available)"
                ));
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(LifecycleError::ProvidersMissing { missing })
    }
}

/// A hint when the CAPI group exists under the other contract only.
fn contract_note(contract: Contract, api_version: &str) -> &'static str {
    match contract {
        Contract::V1Beta2 if api_version.ends_with("/v1beta2") => {
            " (or it is a release older than the v1beta2 contract, which needs the v1beta1 contract)"
        }
        _ => "",
    }
}

/// The contract of `req`, once the management cluster is found to serve it (and CAPAS, and
/// etcdadm for external etcd).
pub(crate) async fn check_management(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Contract, LifecycleError> {
    let contract = req.release.contract;
    let external_etcd = req.spec.cluster.spec.external_etcd_configuration.is_some();
    on_event(Event::Step(format!(
        "Checking the management cluster at {}",
        mgmt.server()
    )));
    check_providers(
        mgmt,
        ProviderCheck {
            contract,
            external_etcd,
        },
    )
    .await?;
    on_event(Event::Note(format!(
        "✅ Cluster API ({}), CAPAS{} are installed",
        contract.as_str(),
        if external_etcd { " and etcdadm" } else { "" }
    )));
    Ok(contract)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcdadm_is_needed_only_for_external_etcd() {
        let stacked = needed(ProviderCheck {
            contract: Contract::V1Beta2,
            external_etcd: false,
        });
        assert!(stacked.iter().all(|(v, _, _)| v != ETCD_API_VERSION));
        let external = needed(ProviderCheck {
            contract: Contract::V1Beta1,
            external_etcd: true,
        });
        assert!(external.iter().any(|(v, _, _)| v == ETCD_API_VERSION));
        assert!(
            external
                .iter()
                .any(|(v, _, _)| v == "cluster.x-k8s.io/v1beta1")
        );
    }
}
