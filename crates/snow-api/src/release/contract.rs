//! The two Cluster API contracts a rendered cluster can follow.
//!
//! v1beta1 is what deployed EKS Anywhere uses with CAPAS 0.1/0.2: references carry `apiVersion`,
//! `extraArgs` are maps, rollouts are `spec.strategy` / `spec.rolloutStrategy`. v1beta2 comes with
//! CAPAS 0.3: references carry `apiGroup`, `extraArgs` are `{name, value}` lists, rollouts are
//! `spec.rollout.strategy`, and empty lists are left out (the schema requires at least one item).
//! The CAPAS kinds stay `infrastructure.cluster.x-k8s.io/v1beta1`, etcdadm stays
//! `etcdcluster.cluster.x-k8s.io/v1beta1`, in both.
//!
//! The contract is part of a resolved release ([`super::Release`]): it follows the CAPAS version
//! of the bundle unless a caller forces one. How each contract shapes an object is rendering's
//! business (`capi-render`).

use std::{fmt, str::FromStr};

/// A Cluster API contract version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Contract {
    /// `v1beta1`.
    V1Beta1,
    /// `v1beta2`.
    V1Beta2,
}

/// CAPAS API group and version (the same in both contracts).
pub const INFRA_API_VERSION: &str = "infrastructure.cluster.x-k8s.io/v1beta1";
/// EtcdadmCluster API version (the same in both contracts).
pub const ETCD_API_VERSION: &str = "etcdcluster.cluster.x-k8s.io/v1beta1";

impl Contract {
    /// `v1beta1` or `v1beta2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Contract::V1Beta1 => "v1beta1",
            Contract::V1Beta2 => "v1beta2",
        }
    }

    /// The contract a CAPAS version follows: 0.3 and later speak v1beta2, earlier v1beta1.
    pub fn for_capas_version(version: &str) -> Contract {
        let v = version.trim_start_matches('v');
        let mut parts = v
            .split(['.', '+', '-'])
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if major > 0 || minor >= 3 {
            Contract::V1Beta2
        } else {
            Contract::V1Beta1
        }
    }

    /// `group/version` for a CAPI group (cluster, bootstrap, controlplane).
    pub fn api_version(self, group: &str) -> String {
        format!("{group}/{}", self.as_str())
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Contract {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "v1beta1" => Ok(Contract::V1Beta1),
            "v1beta2" => Ok(Contract::V1Beta2),
            other => Err(format!(
                "unknown contract `{other}`: use v1beta1 or v1beta2"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capas_versions_pick_the_contract() {
        assert_eq!(
            Contract::for_capas_version("v0.3.3+abcdef1"),
            Contract::V1Beta2
        );
        assert_eq!(Contract::for_capas_version("v0.2.9"), Contract::V1Beta1);
        assert_eq!(Contract::for_capas_version("v0.1.30+x"), Contract::V1Beta1);
        assert_eq!(Contract::for_capas_version("v1.0.0"), Contract::V1Beta2);
    }
}
