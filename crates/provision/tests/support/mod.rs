//! What the provision tests share: a management cluster on the Kubernetes API stand-in with its
//! simulated Cluster API, kubeadm and CAPAS controllers, two devices (moto over TLS and the
//! Device API stand-in) and their files, the spec `edge` on them, and a workflow's request made
//! from it. (Each test crate uses some of these.)
#![allow(dead_code)]
// Progress goes to stderr: the test harness shows it when a test fails.
#![allow(clippy::print_stderr)]

#[path = "../../../lifecycle/tests/common/mod.rs"]
pub(crate) mod common;

use snow_lifecycle::{
    Event, Timeouts, WaitOptions,
    init::{
        self,
        components::{ComponentObjects, ComponentSource, STACK},
        envsubst::Values,
    },
};
use snow_provision::{
    Checks, CniSource, CreateOptions, DevicePaths, ProvisionError, Provisioned, Request,
};
use snow_test_devices::{TestCa, fleet};
use snow_test_kube::components::{SHIPPED, TEST_VALUES};
use snow_test_kube::{CapiHandle, KubeStandIn};
use std::{path::PathBuf, time::Duration};

/// The Cilium manifest the workflows are given (no helm here).
pub(crate) const CILIUM: &str = include_str!("../../../lifecycle/tests/fixtures/cilium.yaml");

/// The management cluster, the two devices and the files of a run (`dir` is the cluster's
/// local directory: `dir/edge/` gets the default key and the kubeconfig).
pub(crate) struct Site {
    pub(crate) api: KubeStandIn,
    pub(crate) _capi: CapiHandle,
    pub(crate) kubeconfig: PathBuf,
    pub(crate) fleet: fleet::Fleet,
    pub(crate) credentials_path: PathBuf,
    pub(crate) ca_bundle_path: PathBuf,
    pub(crate) credentials: snow_credentials::CredentialsFile,
    pub(crate) ca_bundle: snow_credentials::CaBundle,
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) async fn site() -> Site {
    let (api, capi) = common::with_capi().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let ca = TestCa::new("devices").unwrap();
    let fleet = fleet::fleet(&ca, 2, &[]).await;
    let (credentials_path, ca_bundle_path) = fleet.write_files(&ca, &[], dir.path());
    let (credentials, _) = snow_credentials::load_credentials(&credentials_path).unwrap();
    let (ca_bundle, _) = snow_credentials::load_ca_bundle(&ca_bundle_path).unwrap();
    Site {
        api,
        _capi: capi,
        kubeconfig,
        fleet,
        credentials_path,
        ca_bundle_path,
        credentials,
        ca_bundle,
        dir,
    }
}

impl Site {
    /// The spec of `edge` on the two devices, with one control-plane machine and `workers`.
    pub(crate) fn spec(&self, workers: u32) -> String {
        let ips = &self.fleet.ips;
        (common::edge_spec(1, workers))
            .replace("192.168.1.11", &ips[0].to_string())
            .replace("192.168.1.12", &ips[1].to_string())
    }
}

/// Waits bounded at a minute, looking every 20 ms.
pub(crate) fn wait() -> WaitOptions {
    WaitOptions {
        poll: Duration::from_millis(20),
        timeouts: Timeouts {
            control_plane: Some(Duration::from_secs(60)),
            external_etcd: Some(Duration::from_secs(60)),
            per_machine: Some(Duration::from_secs(60)),
            deletion: Some(Duration::from_secs(60)),
        },
    }
}

/// The Cilium manifest given, parsed.
pub(crate) fn cni() -> CniSource {
    CniSource::Manifest(snow_lifecycle::CniManifest::parse(CILIUM).expect("fixture"))
}

/// Runs `work` with the request of `text` (the device files given, the cluster's files in the
/// site's directory), its events recorded (and shown when a test fails).
pub(crate) async fn with_request<T>(
    site: &Site,
    text: &str,
    work: impl AsyncFnOnce(&Request<'_>, &mut dyn FnMut(Event)) -> T,
) -> (T, Vec<Event>) {
    let spec = snow_api::check(text)
        .expect("spec reads")
        .into_valid()
        .unwrap_or_else(|r| panic!("spec findings: {:?}", r.findings));
    let inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
    let release = inputs.resolve(&spec, None).expect("release");
    let request = Request {
        spec: &spec,
        spec_text: text,
        release: &release,
        secrets: Some(capi_render::SecretInputs {
            credentials: &site.credentials,
            ca_bundle: &site.ca_bundle,
        }),
        registry_credentials: None,
        devices: DevicePaths {
            credentials: Some(&site.credentials_path),
            ca_bundle: Some(&site.ca_bundle_path),
        },
        inputs: None,
        dir: site.dir.path(),
    };
    let mut events = Vec::new();
    let done = work(&request, &mut |e| {
        eprintln!("{e}");
        events.push(e);
    })
    .await;
    (done, events)
}

/// Creates the cluster of `text` on the site's management cluster through `snow_provision::create`.
pub(crate) async fn create(
    site: &Site,
    text: &str,
    checks: Checks,
    force: bool,
) -> (Result<Provisioned, ProvisionError>, Vec<Event>) {
    let options = CreateOptions {
        checks,
        cni: cni(),
        wait: wait(),
        force,
    };
    with_request(site, text, async |req, on_event| {
        snow_provision::create(
            &snow_lifecycle::KubeconfigSource::file(&site.kubeconfig),
            req,
            &options,
            on_event,
        )
        .await
    })
    .await
}

/// The shipped components manifests, in install order.
pub(crate) fn sources() -> Vec<ComponentSource> {
    STACK
        .iter()
        .zip(&SHIPPED)
        .map(|(component, shipped)| ComponentSource {
            component: *component,
            version: shipped.version.into(),
            origin: shipped.path().display().to_string(),
            components: shipped.text().expect("reference data"),
        })
        .collect()
}

/// The provider stack of the shipped components, made with the test values.
pub(crate) fn providers() -> Vec<ComponentObjects> {
    let mut values = Values::default();
    for (name, value) in TEST_VALUES {
        values.set(name, value);
    }
    init::prepare(&sources(), &values).expect("prepare")
}

/// Labels every CRD of `api` as `clusterctl init` does (`clusterctl.cluster.x-k8s.io`), by which
/// a move or a backup finds the kinds to carry: `install_capi` installs them unlabelled.
pub(crate) fn label_crds_as_clusterctl(api: &KubeStandIn) {
    for mut crd in api.list("apiextensions.k8s.io/v1", "CustomResourceDefinition", None) {
        crd["metadata"]["labels"][snow_api::names::CLUSTERCTL_LABEL] = "".into();
        api.put(crd).expect("label the CRD");
    }
}
