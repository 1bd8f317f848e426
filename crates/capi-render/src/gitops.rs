//! GitOps with Flux, the EKS Anywhere way (`pkg/gitops/flux`): the files a cluster's spec and
//! Flux's own configuration are in the repository, Flux's install manifest with the bundle's
//! controller images, and the objects that point Flux at the repository. Pure: text in, bytes
//! out, the same bytes for the same inputs.
//!
//! The repository layout (`P` is the FluxConfig's `clusterConfigPath`, `clusters/<management
//! cluster>` by default; Flux's Kustomization builds `./P`):
//!
//! ```text
//! P/<systemNamespace>/kustomization.yaml   namespace, resources gotk-components.yaml and
//!                                          gotk-sync.yaml, one image patch per controller
//! P/<systemNamespace>/gotk-components.yaml Flux's install manifest (what `flux bootstrap` writes)
//! P/<systemNamespace>/gotk-sync.yaml       the GitRepository and Kustomization ([`sync_objects`])
//! P/<cluster>/eksa-system/eksa-cluster.yaml   the cluster's spec, one document per object
//! P/<cluster>/eksa-system/kustomization.yaml  resources: eksa-cluster.yaml
//! ```
//!
//! The `<systemNamespace>` folder is written for the management cluster only (Flux runs there
//! alone); each workload cluster gets its own `P/<workload>/eksa-system` folder beside the
//! management cluster's. EKS Anywhere leaves `gotk-components.yaml` and `gotk-sync.yaml` to
//! `flux bootstrap` (an empty `gotk-sync.yaml` first); snowctl writes both itself.

use crate::yaml::emit;
use serde_json::{Value, json};
use snow_api::{
    ValidSpec,
    admission::declared,
    gitops::GitOps,
    release::{FluxBundle, Image},
    spec::DEFAULT_NAMESPACE,
};

/// The name `flux bootstrap` gives the source Secret (`--secret-name`'s default).
pub use snow_credentials::encode::git::FLUX_SOURCE_SECRET;

/// The GitRepository's poll interval (`flux bootstrap`'s default).
pub const SOURCE_INTERVAL: &str = "1m0s";
/// The Kustomization's reconcile interval (`flux bootstrap`'s default).
pub const SYNC_INTERVAL: &str = "10m0s";
/// The folder of a cluster's spec under its own folder.
pub const EKSA_SYSTEM_DIR: &str = "eksa-system";
/// The spec's file name.
pub const CLUSTER_CONFIG_FILE: &str = "eksa-cluster.yaml";
/// Kustomize's file name.
pub const KUSTOMIZATION_FILE: &str = "kustomization.yaml";
/// Flux's install manifest's file name in the repository.
pub const COMPONENTS_FILE: &str = "gotk-components.yaml";
/// Flux's sync manifest's file name in the repository.
pub const SYNC_FILE: &str = "gotk-sync.yaml";

/// The four controllers whose images the bundle gives (the Deployments of `flux install`'s
/// default components, each with one container `manager`).
pub const CONTROLLERS: [&str; 4] = [
    "source-controller",
    "kustomize-controller",
    "helm-controller",
    "notification-controller",
];

/// One file of the repository: its path from the repository's root and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFile {
    /// `/`-separated, relative to the repository's root.
    pub path: String,
    /// The content.
    pub content: String,
}

/// Why Flux's manifests could not be made.
#[derive(Debug, thiserror::Error)]
pub enum GitOpsError {
    /// The install manifest is not YAML Kubernetes objects.
    #[error("Flux's install manifest could not be read: {0}")]
    Manifest(String),
    /// The install manifest has none of the four controllers' containers.
    #[error(
        "Flux's install manifest has no container of source-controller, kustomize-controller, helm-controller or notification-controller"
    )]
    NoControllers,
}

fn file(path: String, content: String) -> RepoFile {
    RepoFile { path, content }
}

/// Joins YAML documents into one stream, each after `---`.
fn documents(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| format!("---\n{}", emit(v, 0)))
        .collect()
}

/// The objects of `spec` as EKS Anywhere's `eksa-cluster.yaml` holds them: the Cluster, the
/// SnowDatacenterConfig, the SnowMachineConfigs, the FluxConfig, the OIDCConfigs, the
/// AWSIamConfigs and the SnowIPPools (each kind by name), defaults filled, each with a
/// namespace (`default` when the spec names none), only what a user declares of them.
pub fn cluster_config(spec: &ValidSpec) -> String {
    let mut objects: Vec<Value> = Vec::new();
    let mut push = |object: Value| {
        let mut object = declared(&object);
        if object["metadata"]["namespace"].is_null() {
            object["metadata"]["namespace"] = DEFAULT_NAMESPACE.into();
        }
        objects.push(object);
    };
    let json = |v: Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
    push(json(serde_json::to_value(&spec.cluster)));
    if let Some(dc) = &spec.datacenter {
        push(json(serde_json::to_value(dc)));
    }
    spec.machine_configs
        .values()
        .for_each(|m| push(json(serde_json::to_value(m))));
    spec.flux_configs
        .values()
        .for_each(|f| push(json(serde_json::to_value(f))));
    spec.oidc_configs
        .values()
        .for_each(|o| push(json(serde_json::to_value(o))));
    spec.aws_iam_configs
        .values()
        .for_each(|a| push(json(serde_json::to_value(a))));
    spec.ip_pools
        .values()
        .for_each(|p| push(json(serde_json::to_value(p))));
    // The emitter sorts keys: apiVersion, kind, metadata, spec, as people write them.
    documents(&objects)
}

/// `P/<cluster>/eksa-system/`: the cluster's folder (of the management cluster or a workload
/// cluster), under the management cluster's FluxConfig path.
pub fn cluster_dir(gitops: &GitOps, cluster: &str) -> String {
    // A named argument, not `{EKSA_SYSTEM_DIR}` inline: the library-words test reads an
    // `EKSA_` name in a literal as an environment variable.
    format!(
        "{}/{cluster}/{}",
        gitops.cluster_config_path().as_str(),
        EKSA_SYSTEM_DIR
    )
}

/// `P/<systemNamespace>/`: Flux's own folder.
pub fn flux_system_dir(gitops: &GitOps) -> String {
    format!(
        "{}/{}",
        gitops.cluster_config_path().as_str(),
        gitops.system_namespace()
    )
}

/// The cluster's two files (EKS Anywhere's `WriteEksaFiles`): `eksa-cluster.yaml` with
/// [`cluster_config`] and the `kustomization.yaml` that lists it. For the management cluster
/// and for each workload cluster; `gitops` is the management cluster's FluxConfig (a
/// workload's says the same, EKS Anywhere's rule).
pub fn cluster_files(gitops: &GitOps, spec: &ValidSpec) -> [RepoFile; 2] {
    let dir = cluster_dir(gitops, spec.name());
    let kustomization = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [CLUSTER_CONFIG_FILE],
    });
    [
        file(format!("{dir}/{CLUSTER_CONFIG_FILE}"), cluster_config(spec)),
        file(
            format!("{dir}/{KUSTOMIZATION_FILE}"),
            emit(&kustomization, 0),
        ),
    ]
}

/// `repository:tag` of an image, as the bundle names it (EKS Anywhere's `VersionedImage`: the
/// plain URI; a registry mirror redirects pulls on the nodes).
fn versioned(image: &Image) -> &str {
    &image.uri
}

/// Flux's `kustomization.yaml` (EKS Anywhere's `manifests/flux-system/kustomization.yaml`):
/// the namespace, the two manifests, and for each controller a strategic-merge patch that sets
/// its `manager` container's image to the bundle's.
pub fn flux_kustomization(gitops: &GitOps, flux: &FluxBundle) -> String {
    let namespace = gitops.system_namespace();
    let patches: Vec<Value> = flux
        .controller_images()
        .iter()
        .map(|(controller, image)| {
            let patch = json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": controller, "namespace": namespace},
                "spec": {"template": {"spec": {"containers": [
                    {"image": versioned(image), "name": "manager"}
                ]}}},
            });
            json!({"patch": emit(&patch, 0)})
        })
        .collect();
    emit(
        &json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "namespace": namespace,
            "resources": [COMPONENTS_FILE, SYNC_FILE],
            "patches": patches,
        }),
        0,
    )
}

/// The GitRepository and the Kustomization that make Flux apply `P` (what `flux bootstrap`
/// writes in `gotk-sync.yaml`): both named after Flux's namespace and in it; the repository
/// polled every minute on the FluxConfig's branch, with the source Secret
/// ([`FLUX_SOURCE_SECRET`]); `./P` built every ten minutes, pruned.
pub fn sync_objects(gitops: &GitOps) -> [Value; 2] {
    let namespace = gitops.system_namespace();
    let metadata = json!({"name": namespace, "namespace": namespace});
    [
        json!({
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": metadata,
            "spec": {
                "interval": SOURCE_INTERVAL,
                "ref": {"branch": gitops.branch().as_str()},
                "secretRef": {"name": FLUX_SOURCE_SECRET},
                "url": gitops.repository_url(),
            },
        }),
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": metadata,
            "spec": {
                "interval": SYNC_INTERVAL,
                "path": format!("./{}", gitops.cluster_config_path().as_str()),
                "prune": true,
                "sourceRef": {"kind": "GitRepository", "name": namespace},
            },
        }),
    ]
}

/// Flux's three files of a management cluster: `kustomization.yaml`
/// ([`flux_kustomization`]), `gotk-components.yaml` (`install` as given: Flux's install
/// manifest, the upstream images the kustomization's patches replace) and `gotk-sync.yaml`
/// ([`sync_objects`]).
pub fn flux_system_files(gitops: &GitOps, flux: &FluxBundle, install: &str) -> [RepoFile; 3] {
    let dir = flux_system_dir(gitops);
    [
        file(format!("{dir}/{COMPONENTS_FILE}"), install.to_owned()),
        file(
            format!("{dir}/{SYNC_FILE}"),
            documents(&sync_objects(gitops)),
        ),
        file(
            format!("{dir}/{KUSTOMIZATION_FILE}"),
            flux_kustomization(gitops, flux),
        ),
    ]
}

/// Which controller an image is of, by its name: the last path element of its repository
/// (`ghcr.io/fluxcd/source-controller:v1.9.0` is source-controller's).
fn controller_of(image: &str) -> Option<&'static str> {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    let name = last.split(':').next().unwrap_or(last);
    CONTROLLERS.into_iter().find(|c| *c == name)
}

/// Flux's install manifest (`install.yaml`, the objects of `flux install`) with every container
/// and init container image of the four controllers replaced by the bundle's, found by image
/// name as EKS Anywhere's patches do by Deployment; other images stay. The objects in order,
/// for applying, and as YAML. An error when the text is not Kubernetes objects, or holds no
/// container of any of the four.
pub fn flux_install(install: &str, flux: &FluxBundle) -> Result<(Vec<Value>, String), GitOpsError> {
    let mut objects: Vec<Value> =
        serde_saphyr::from_multiple(install).map_err(|e| GitOpsError::Manifest(e.to_string()))?;
    objects.retain(|o| !o.is_null());
    if let Some(bad) = objects
        .iter()
        .position(|o| !o["kind"].is_string() || !o["apiVersion"].is_string())
    {
        return Err(GitOpsError::Manifest(format!(
            "document {} is not a Kubernetes object (no apiVersion and kind)",
            bad + 1
        )));
    }
    let images = flux.controller_images();
    let mut replaced = 0;
    for object in &mut objects {
        // `get_mut`, not indexing: indexing a JSON object inserts the keys it does not find.
        let Some(pod) = ["spec", "template", "spec"]
            .into_iter()
            .try_fold(&mut *object, |v, key| v.get_mut(key))
        else {
            continue;
        };
        for list in ["containers", "initContainers"] {
            let Some(containers) = pod.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for container in containers {
                let Some(controller) = container["image"].as_str().and_then(controller_of) else {
                    continue;
                };
                if let Some((_, image)) = images.iter().find(|(c, _)| *c == controller) {
                    container["image"] = versioned(image).into();
                    replaced += 1;
                }
            }
        }
    }
    if replaced == 0 {
        return Err(GitOpsError::NoControllers);
    }
    let text = documents(&objects);
    Ok((objects, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_known_by_name() {
        assert_eq!(
            controller_of("ghcr.io/fluxcd/source-controller:v1.9.0"),
            Some("source-controller")
        );
        assert_eq!(
            controller_of("registry:5000/fluxcd/helm-controller@sha256:00"),
            Some("helm-controller")
        );
        assert_eq!(controller_of("ghcr.io/fluxcd/source-watcher:v2"), None);
        assert_eq!(controller_of("source-controller-extra:v1"), None);
    }

    #[test]
    fn not_objects_are_errors() {
        let flux = FluxBundle::default();
        assert!(matches!(
            flux_install("a: [", &flux),
            Err(GitOpsError::Manifest(_))
        ));
        assert!(matches!(
            flux_install("- 1\n", &flux),
            Err(GitOpsError::Manifest(_))
        ));
        assert!(matches!(
            flux_install(
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
                &flux
            ),
            Err(GitOpsError::NoControllers)
        ));
    }
}
