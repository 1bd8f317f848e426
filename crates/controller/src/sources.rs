//! The spec of a declared cluster, read from the EKS Anywhere objects on the management cluster
//! (EKS Anywhere's BuildSpec) and checked by the same code as `snowctl validate`: the objects are
//! written out as one multi-document stream and parsed strictly.

use serde_json::Value;
use snow_credentials::{CaBundle, CredentialsFile};
use snow_kube::Management;
use snow_lifecycle::LifecycleError;
use std::collections::BTreeSet;

/// The EKS Anywhere API version.
pub const EKSA_API_VERSION: &str = snow_api::names::EKSA_API_VERSION;

/// The objects one Cluster is made of. Its `Debug` names the identity Secret but never shows it.
#[derive(Clone, Default)]
pub struct Sources {
    /// The Cluster.
    pub cluster: Value,
    /// Every other object found, in a stable order.
    pub objects: Vec<Value>,
    /// What a reference named but the API server does not have (`Kind/name`).
    pub missing: Vec<String>,
    /// The identity Secret the datacenter names, if found.
    pub identity: Option<Value>,
    /// Its `namespace/name`.
    pub identity_name: Option<String>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("cluster", &self.cluster["metadata"]["name"])
            .field("objects", &self.objects.len())
            .field("missing", &self.missing)
            .field("identity_name", &self.identity_name)
            .field("identity", &self.identity.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Sources {
    /// Reads the Cluster's datacenter, machine configs, IP pools, identity providers, FluxConfig
    /// and identity Secret from its namespace.
    pub async fn read(mgmt: &Management, cluster: &Value) -> Result<Sources, LifecycleError> {
        let ns = cluster["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_owned();
        let refs = snow_api::walk::cluster_refs(cluster);
        let mut sources = Sources {
            cluster: cluster.clone(),
            ..Sources::default()
        };
        let get = async |kind: &str, name: &str, sources: &mut Sources| {
            let found = mgmt.get(EKSA_API_VERSION, kind, Some(&ns), name).await?;
            match &found {
                Some(o) => sources.objects.push(o.clone()),
                None => sources.missing.push(format!("{kind}/{name}")),
            }
            Ok::<_, LifecycleError>(found)
        };
        let datacenter = match &refs.datacenter {
            Some(name) => get("SnowDatacenterConfig", name, &mut sources).await?,
            None => None,
        };
        let mut pools = BTreeSet::new();
        for name in &refs.machine_configs {
            if let Some(m) = get("SnowMachineConfig", name, &mut sources).await? {
                pools.extend(snow_api::walk::ip_pools(&m).map(str::to_owned));
            }
        }
        for pool in pools {
            get("SnowIPPool", &pool, &mut sources).await?;
        }
        for (kind, name) in &refs.identity_providers {
            get(kind, name, &mut sources).await?;
        }
        // A Cluster applied by Flux names its FluxConfig: the spec is checked with it, as
        // `snowctl validate` checks the file it came from.
        if let Some(name) = &refs.flux_config {
            get("FluxConfig", name, &mut sources).await?;
        }
        if let Some(d) = &datacenter {
            let secret = snow_api::walk::identity_secret(d);
            sources.identity_name = Some(format!("{ns}/{secret}"));
            sources.identity = mgmt.get("v1", "Secret", Some(&ns), &secret).await?;
        }
        Ok(sources)
    }

    /// The declared objects as one spec stream (JSON documents are YAML).
    pub fn spec_text(&self) -> String {
        let mut text = String::new();
        for object in std::iter::once(&self.cluster).chain(&self.objects) {
            text.push_str("---\n");
            text.push_str(
                &serde_json::to_string_pretty(&snow_api::admission::declared(object))
                    .unwrap_or_default(),
            );
            text.push('\n');
        }
        text
    }

    /// The device credentials and CA bundle from the identity Secret. Its values hold base64
    /// text (EKS Anywhere's `pkg/aws` and Snow credentials Secret), so each is decoded twice:
    /// [`snow_credentials::decode_eksa_credentials_secret`].
    pub fn credentials(&self) -> Result<(CredentialsFile, CaBundle), String> {
        let name = self.identity_name.clone().unwrap_or_default();
        let secret = self
            .identity
            .as_ref()
            .ok_or_else(|| format!("the identity Secret {name} is missing"))?;
        snow_credentials::decode_eksa_credentials_secret(&name, secret).map_err(|e| e.to_string())
    }
}
