//! The admission webhooks for the EKS Anywhere Snow kinds, served over HTTPS by the same process
//! as the controller, at EKS Anywhere's paths ([`Hook::path`]).
//!
//! - [`review`]: one AdmissionReview in, one out (pure; the rules are `snow_api::admission`).
//! - [`serve`]: the HTTPS server (rustls on aws-lc-rs, hyper 1), its certificate read from a
//!   directory's `tls.crt` and `tls.key` (as cert-manager mounts a Secret) and read again when
//!   they change, every request bounded in size and time.

mod certificate;
mod review;
mod server;

pub use review::{MAX_LISTED, review};
pub use server::{
    BODY_TIMEOUT, MAX_BODY_BYTES, MAX_CONNECTIONS, WebhookError, WebhookOptions, serve,
};

use snow_api::Kind;

/// One webhook: what it reviews and at which path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// Validates Clusters (`snow_api::admission`, with the Cluster update rules).
    Cluster,
    /// Validates SnowMachineConfigs.
    MachineConfig,
    /// Defaults SnowMachineConfigs (instance type, network connector), as EKS Anywhere's
    /// mutating webhook does.
    MachineConfigDefaults,
    /// Validates SnowDatacenterConfigs.
    Datacenter,
    /// Validates SnowIPPools (their pools may not change).
    IpPool,
    /// Validates FluxConfigs (EKS Anywhere's FluxConfig webhook: the rules of a FluxConfig,
    /// and on update no field of its spec may change).
    FluxConfig,
}

impl Hook {
    /// Every webhook served.
    pub const ALL: [Hook; 6] = [
        Hook::Cluster,
        Hook::MachineConfig,
        Hook::MachineConfigDefaults,
        Hook::Datacenter,
        Hook::IpPool,
        Hook::FluxConfig,
    ];

    /// The path, as EKS Anywhere's (kubebuilder's) `/validate-<group>-<version>-<kind>` and
    /// `/mutate-…`.
    pub fn path(self) -> &'static str {
        match self {
            Hook::Cluster => "/validate-anywhere-eks-amazonaws-com-v1alpha1-cluster",
            Hook::MachineConfig => {
                "/validate-anywhere-eks-amazonaws-com-v1alpha1-snowmachineconfig"
            }
            Hook::MachineConfigDefaults => {
                "/mutate-anywhere-eks-amazonaws-com-v1alpha1-snowmachineconfig"
            }
            Hook::Datacenter => {
                "/validate-anywhere-eks-amazonaws-com-v1alpha1-snowdatacenterconfig"
            }
            Hook::IpPool => "/validate-anywhere-eks-amazonaws-com-v1alpha1-snowippool",
            Hook::FluxConfig => "/validate-anywhere-eks-amazonaws-com-v1alpha1-fluxconfig",
        }
    }

    /// The webhook served at `path`.
    pub fn from_path(path: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.path() == path)
    }

    /// The kind it reviews.
    pub fn kind(self) -> Kind {
        match self {
            Hook::Cluster => Kind::Cluster,
            Hook::MachineConfig | Hook::MachineConfigDefaults => Kind::SnowMachineConfig,
            Hook::Datacenter => Kind::SnowDatacenterConfig,
            Hook::IpPool => Kind::SnowIPPool,
            Hook::FluxConfig => Kind::FluxConfig,
        }
    }

    /// Whether it answers with a patch (a MutatingWebhookConfiguration calls it).
    pub fn is_mutating(self) -> bool {
        self == Hook::MachineConfigDefaults
    }
}

#[cfg(test)]
mod tests {
    use super::Hook;

    #[test]
    fn the_installed_webhook_configurations_name_every_hook_at_its_path() {
        let installed: Vec<(&str, bool)> = capi_render::controller::WEBHOOKS
            .iter()
            .map(|(_, path, _, mutating)| (*path, *mutating))
            .collect();
        let served: Vec<(&str, bool)> = Hook::ALL
            .iter()
            .map(|h| (h.path(), h.is_mutating()))
            .collect();
        assert_eq!(installed, served);
        for (_, path, plural, _) in capi_render::controller::WEBHOOKS {
            let hook = Hook::from_path(path).unwrap();
            assert_eq!(snow_kube::plural(hook.kind().as_str()), plural);
        }
    }
}
