//! The Snow provider stack's real components manifests, as `clusterctl init` applies them, in
//! the reference data beside the workspace (`../shared/data`), in install order: what the tests
//! of `init`, `move` and the first cluster's create install on a stand-in.

use std::path::PathBuf;

/// One shipped provider's files.
#[derive(Debug, Clone, Copy)]
pub struct Shipped {
    /// clusterctl's provider label (the directory of `--components-dir`).
    pub label: &'static str,
    /// The version of the shipped file.
    pub version: &'static str,
    /// The file name at the end of the provider's release URI.
    pub asset: &'static str,
    /// The components file, relative to [`data_dir`].
    pub file: &'static str,
    /// Its clusterctl `metadata.yaml`, relative to [`data_dir`] (cert-manager has none; CAPAS
    /// ships none in the reference data).
    pub metadata: Option<&'static str>,
}

/// cert-manager, Cluster API core, kubeadm bootstrap and control plane, etcdadm bootstrap and
/// controller, CAPAS: the order of `snow_lifecycle::init::components::STACK`.
pub const SHIPPED: [Shipped; 7] = [
    Shipped {
        label: "cert-manager",
        version: "v1.20.2",
        asset: "cert-manager.yaml",
        file: "components/cert-manager.yaml",
        metadata: None,
    },
    Shipped {
        label: "cluster-api",
        version: "v1.13.5",
        asset: "core-components.yaml",
        file: "components/core-components.yaml",
        metadata: Some("components/core-components.metadata.yaml"),
    },
    Shipped {
        label: "bootstrap-kubeadm",
        version: "v1.13.5",
        asset: "bootstrap-components.yaml",
        file: "components/bootstrap-kubeadm-components.yaml",
        metadata: Some("components/bootstrap-kubeadm-components.metadata.yaml"),
    },
    Shipped {
        label: "control-plane-kubeadm",
        version: "v1.13.5",
        asset: "control-plane-components.yaml",
        file: "components/control-plane-kubeadm-components.yaml",
        metadata: Some("components/control-plane-kubeadm-components.metadata.yaml"),
    },
    Shipped {
        label: "bootstrap-etcdadm-bootstrap",
        version: "v1.0.19",
        asset: "bootstrap-components.yaml",
        file: "components/bootstrap-etcdadm-bootstrap-components.yaml",
        metadata: Some("components/bootstrap-etcdadm-bootstrap-components.metadata.yaml"),
    },
    Shipped {
        label: "bootstrap-etcdadm-controller",
        version: "v1.0.28",
        asset: "bootstrap-components.yaml",
        file: "components/bootstrap-etcdadm-controller-components.yaml",
        metadata: Some("components/bootstrap-etcdadm-controller-components.metadata.yaml"),
    },
    Shipped {
        label: "infrastructure-snow",
        version: "v0.3.3",
        asset: "infrastructure-components.yaml",
        file: "crds/capas-infrastructure-components.yaml",
        metadata: None,
    },
];

/// The variables the shipped manifests need that a test does not take from a bundle: stand-in
/// device encodings and the etcdadm images.
pub const TEST_VALUES: [(&str, &str); 4] = [
    ("AWS_B64ENCODED_CREDENTIALS", "W2RldmljZV0K"),
    ("AWS_B64ENCODED_CA_BUNDLES", "LS0tLS1CRUdJTgo="),
    (
        "ETCDADM_BOOTSTRAP_IMAGE",
        "registry.local/etcdadm-bootstrap:v1.0.19",
    ),
    (
        "ETCDADM_CONTROLLER_IMAGE",
        "registry.local/etcdadm-controller:v1.0.28",
    ),
];

/// `../shared/data` beside the workspace.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

impl Shipped {
    /// The components file.
    pub fn path(&self) -> PathBuf {
        data_dir().join(self.file)
    }

    /// The components file's text.
    pub fn text(&self) -> std::io::Result<String> {
        std::fs::read_to_string(self.path())
    }

    /// The `metadata.yaml` bytes: the shipped one, else one naming the version's release series
    /// as contract v1beta1 (cert-manager's is never read).
    pub fn metadata_bytes(&self) -> std::io::Result<Vec<u8>> {
        if let Some(file) = self.metadata {
            return std::fs::read(data_dir().join(file));
        }
        let mut parts = self.version.trim_start_matches('v').split('.');
        let (major, minor) = (parts.next().unwrap_or("0"), parts.next().unwrap_or("0"));
        Ok(format!("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {{major: {major}, minor: {minor}, contract: v1beta1}}\n").into_bytes())
    }
}
