//! The management cluster: a kube client, and objects by `apiVersion`, kind and name as JSON.

use crate::{FIELD_MANAGER, KubeError, KubeconfigSource, ObjectRef, error::chain};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PropagationPolicy},
    config::KubeConfigOptions,
    core::{ApiResource, GroupVersionKind},
};
use serde_json::Value;
use snow_api::redact::redact_userinfo;
use std::time::Duration;

/// How long one request may take before the management cluster counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to a workload cluster: the client of [`Management`], made from the kubeconfig
/// Cluster API publishes for it (so its calls, bounds and errors are the same).
pub type WorkloadCluster = Management;

/// A connection to a management cluster. A workload cluster is reached with the same client
/// ([`WorkloadCluster`], made from the kubeconfig Cluster API publishes).
#[derive(Clone)]
pub struct Management {
    client: Client,
    server: String,
    /// Clients of the workload clusters reached through this one, by cluster name, with the
    /// kubeconfig each was made from: a controller pass over many clusters reuses their
    /// connections instead of a new client, TLS handshake and probe per cluster per pass.
    workloads: Workloads,
}

type Workloads =
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, (String, Management)>>>;

impl std::fmt::Debug for Management {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Management")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// The resource (plural) name of a kind, as the API server serves it: kube's own rule
/// ([`ApiResource::from_gvk`]: `-es` after s, x, z, ch, sh; `-ies` after a consonant and y;
/// `Endpoints` unchanged).
pub fn plural(kind: &str) -> String {
    ApiResource::from_gvk(&GroupVersionKind::gvk("", "", kind)).plural
}

/// Kinds that live outside namespaces, as clusterctl treats them (every other kind gets a
/// namespace: the provider's, or the one asked).
pub fn cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "Namespace"
            | "Node"
            | "PersistentVolume"
            | "PodSecurityPolicy"
            | "CertificateSigningRequest"
            | "ClusterRoleBinding"
            | "ClusterRole"
            | "VolumeAttachment"
            | "StorageClass"
            | "CSIDriver"
            | "CSINode"
            | "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "CustomResourceDefinition"
            | "PriorityClass"
            | "RuntimeClass"
    )
}

impl Management {
    /// Connects with the kubeconfig of `source` (its files merged, its context) and checks
    /// that the API server answers.
    pub async fn connect(source: &KubeconfigSource) -> Result<Management, KubeError> {
        Management::connect_with(source, Some(READ_TIMEOUT)).await
    }

    /// As [`Management::connect`], for long-lived watches: no read timeout (the server ends a
    /// watch itself after a few minutes, and the watcher starts a new one).
    pub async fn connect_for_watches(source: &KubeconfigSource) -> Result<Management, KubeError> {
        Management::connect_with(source, None).await
    }

    async fn connect_with(
        source: &KubeconfigSource,
        read_timeout: Option<Duration>,
    ) -> Result<Management, KubeError> {
        let shown = source.shown().to_string();
        let file = source.read()?.into_config();
        let options = KubeConfigOptions {
            context: source.context.clone(),
            ..KubeConfigOptions::default()
        };
        let config = Config::from_custom_kubeconfig(file, &options).await;
        Management::from_config(config, read_timeout, shown).await
    }

    /// Connects with a kubeconfig read out of a Secret (a workload cluster's: inline
    /// credentials only) and checks that the API server answers.
    pub async fn from_published(
        kubeconfig: &crate::kubeconfig::Published,
    ) -> Result<Management, KubeError> {
        let file = kubeconfig.file().clone();
        let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default()).await;
        Management::from_config(
            config,
            Some(READ_TIMEOUT),
            "<kubeconfig from a Secret>".into(),
        )
        .await
    }

    /// Connects with the in-cluster service account (a controller running in a pod; kube-rs
    /// reads `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` and the account's files).
    /// No read timeout: the controller's watches run on this client.
    pub async fn in_cluster() -> Result<Management, KubeError> {
        let config = Config::incluster();
        Management::from_config(config, None, "<in-cluster service account>".into()).await
    }

    /// The one way a client is made from a kube-rs config: the timeouts set, the server's URL
    /// kept without credentials, and the API server asked once. `shown` names where the config
    /// came from in errors.
    async fn from_config<E: std::error::Error + 'static>(
        config: Result<Config, E>,
        read_timeout: Option<Duration>,
        shown: String,
    ) -> Result<Management, KubeError> {
        let bad = |reason: String| KubeError::Kubeconfig {
            path: shown.clone().into(),
            reason,
        };
        let mut config = config.map_err(|e| bad(chain(&e)))?;
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        config.read_timeout = read_timeout;
        let server = redact_userinfo(&config.cluster_url.to_string()).into_owned();
        let client = Client::try_from(config).map_err(|e| bad(chain(&e)))?;
        let management = Management {
            client,
            server,
            workloads: Workloads::default(),
        };
        management.ping().await?;
        Ok(management)
    }

    /// Wraps a client built elsewhere (a controller's, or a test's).
    pub fn from_client(client: Client, server: impl Into<String>) -> Management {
        Management {
            client,
            server: redact_userinfo(&server.into()).into_owned(),
            workloads: Workloads::default(),
        }
    }

    /// The client of workload cluster `cluster` made from `kubeconfig`: the one made before
    /// from the same kubeconfig, else a new one (connected and probed), kept for next time.
    pub async fn workload(
        &self,
        cluster: &str,
        kubeconfig: &crate::kubeconfig::Published,
    ) -> Result<WorkloadCluster, KubeError> {
        let cached = self.workloads.lock().ok().and_then(|map| {
            map.get(cluster)
                .filter(|(text, _)| text == kubeconfig.text())
                .map(|(_, wl)| wl.clone())
        });
        if let Some(wl) = cached {
            return Ok(wl);
        }
        let wl = Management::from_published(kubeconfig).await?;
        if let Ok(mut map) = self.workloads.lock() {
            map.insert(
                cluster.to_owned(),
                (kubeconfig.text().to_owned(), wl.clone()),
            );
        }
        Ok(wl)
    }

    /// The kube client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The API server URL, a user name and password in it replaced by `<redacted>`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Asks the API server for its version: the first contact, with a clear error when it fails.
    pub async fn ping(&self) -> Result<String, KubeError> {
        match self.client.apiserver_version().await {
            Ok(info) => Ok(info.git_version),
            Err(err) => Err(self.error("get", "/version".into(), err)),
        }
    }

    fn api(&self, api_version: &str, kind: &str, namespace: Option<&str>) -> Api<DynamicObject> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, version, kind),
            &plural(kind),
        );
        match namespace {
            Some(ns) if !cluster_scoped(kind) => {
                Api::namespaced_with(self.client.clone(), ns, &resource)
            }
            _ => Api::all_with(self.client.clone(), &resource),
        }
    }

    /// Turns a kube error into a [`KubeError`]: API answers keep their code and message;
    /// anything else means the server could not be reached. For callers that use
    /// [`Management::client`] directly.
    pub fn error(&self, action: &'static str, object: String, err: kube::Error) -> KubeError {
        match err {
            kube::Error::Api(status) => KubeError::Api {
                action,
                object,
                code: status.code,
                message: status.message,
            },
            other => KubeError::Unreachable {
                server: self.server.clone(),
                reason: chain(&other),
            },
        }
    }

    /// One object, or `None` when it does not exist (or its kind is not served).
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, KubeError> {
        match self.api(api_version, kind, namespace).get_opt(name).await {
            Ok(found) => Ok(found.map(to_json)),
            // A kind the server does not serve has no objects.
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(err) => Err(self.error("get", format!("{kind}/{name}"), err)),
        }
    }

    /// Objects of a kind, optionally by label selector; empty when the kind is not served.
    pub async fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<Value>, KubeError> {
        let mut params = ListParams::default();
        if let Some(selector) = selector {
            params = params.labels(selector);
        }
        match self.api(api_version, kind, namespace).list(&params).await {
            Ok(list) => Ok(list.items.into_iter().map(to_json).collect()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
            Err(err) => Err(self.error("list", plural(kind), err)),
        }
    }

    /// Server-side apply of one object as [`FIELD_MANAGER`], taking ownership of its fields.
    pub async fn apply(&self, object: &Value) -> Result<Value, KubeError> {
        self.apply_as(object, FIELD_MANAGER).await
    }

    /// Server-side apply as another field manager (a controller's).
    pub async fn apply_as(&self, object: &Value, manager: &str) -> Result<Value, KubeError> {
        let (api_version, kind, namespace, name) = identity(object);
        let params = PatchParams::apply(manager).force();
        self.api(&api_version, &kind, namespace.as_deref())
            .patch(&name, &params, &Patch::Apply(object))
            .await
            .map(to_json)
            .map_err(|e| self.error("apply", format!("{kind}/{name}"), e))
    }

    /// A merge patch of an object's status subresource (controllers report through it).
    pub async fn patch_status(
        &self,
        object: &Value,
        status: &Value,
        manager: &str,
    ) -> Result<Value, KubeError> {
        let body = serde_json::json!({ "status": status });
        self.merge_patch(object, &body, manager, true).await
    }

    /// A merge patch of the main resource (metadata such as finalizers and annotations).
    pub async fn patch_merge(
        &self,
        object: &Value,
        patch: &Value,
        manager: &str,
    ) -> Result<Value, KubeError> {
        self.merge_patch(object, patch, manager, false).await
    }

    async fn merge_patch(
        &self,
        object: &Value,
        body: &Value,
        manager: &str,
        status: bool,
    ) -> Result<Value, KubeError> {
        let (api_version, kind, namespace, name) = identity(object);
        let params = PatchParams {
            field_manager: Some(manager.to_owned()),
            ..PatchParams::default()
        };
        let api = self.api(&api_version, &kind, namespace.as_deref());
        let patch = Patch::Merge(body);
        let (action, result) = if status {
            (
                "patch status of",
                api.patch_status(&name, &params, &patch).await,
            )
        } else {
            ("patch", api.patch(&name, &params, &patch).await)
        };
        result
            .map(to_json)
            .map_err(|e| self.error(action, format!("{kind}/{name}"), e))
    }

    /// Deletes an object (dependents in the background); `false` when it was not there.
    pub async fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<bool, KubeError> {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match self
            .api(api_version, kind, namespace)
            .delete(name, &params)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
            Err(err) => Err(self.error("delete", format!("{kind}/{name}"), err)),
        }
    }

    /// Deletes an object of namespace `eksa-system`; `false` when it was not there.
    pub async fn delete_object(&self, object: &ObjectRef) -> Result<bool, KubeError> {
        self.delete(
            &object.api_version,
            &object.kind,
            Some(capi_render::NAMESPACE),
            &object.name,
        )
        .await
    }

    /// The resources served for `group/version`, or `None` when the group version is not served.
    pub async fn served(&self, api_version: &str) -> Result<Option<Vec<String>>, KubeError> {
        let list = if api_version.contains('/') {
            self.client.list_api_group_resources(api_version).await
        } else {
            self.client.list_core_api_resources(api_version).await
        };
        match list {
            Ok(list) => Ok(Some(list.resources.into_iter().map(|r| r.name).collect())),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(err) => Err(self.error("discover", api_version.to_owned(), err)),
        }
    }
}

fn to_json(object: DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

/// `(apiVersion, kind, namespace, name)` of a JSON object.
pub fn identity(object: &Value) -> (String, String, Option<String>, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&object["apiVersion"]),
        text(&object["kind"]),
        object["metadata"]["namespace"].as_str().map(str::to_owned),
        text(&object["metadata"]["name"]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_the_api_server() {
        assert_eq!(plural("AWSSnowMachineTemplate"), "awssnowmachinetemplates");
        // kube's rule (the hand-written one said `networkpolicys`).
        assert_eq!(plural("NetworkPolicy"), "networkpolicies");
        assert_eq!(plural("ClusterClass"), "clusterclasses");
        assert_eq!(plural("AWSSnowIPPool"), "awssnowippools");
        assert_eq!(plural("KubeadmControlPlane"), "kubeadmcontrolplanes");
        assert_eq!(plural("Secret"), "secrets");
        assert_eq!(plural("Namespace"), "namespaces");
        assert_eq!(plural("Ingress"), "ingresses");
    }
}

#[cfg(test)]
mod redacted_server {
    /// The "Management cluster: …" line and every message show `Management::server`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connected_management_cluster_shows_its_url_without_the_password() {
        let api = snow_test_kube::KubeStandIn::start().await.unwrap();
        let url = api.url();
        let with_login = url.replacen("https://", "https://admin:Sup3rSecretPW@", 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, api.kubeconfig().replace(&url, &with_login)).unwrap();
        let mgmt = crate::Management::connect(&crate::KubeconfigSource::file(&path))
            .await
            .unwrap();
        assert_eq!(
            mgmt.server().trim_end_matches('/'),
            url.replacen("https://", "https://<redacted>@", 1)
        );
        assert!(!format!("{mgmt:?}").contains("Sup3rSecretPW"));
    }
}
