//! The image list of the sample EKS Anywhere bundle and of the embedded catalog.

use snow_api::OsFamily;
use snow_api::release::ReleaseInputs;
use snow_images::{BundleData, ImagesError, Selection, image_list};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/bundles/eksa-bundle-release-sample.yaml"
);

fn sample() -> BundleData {
    BundleData::from_yaml(&std::fs::read_to_string(SAMPLE).unwrap()).unwrap()
}

#[test]
fn the_sample_bundle_lists_snow_images_and_no_other_provider() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let selection = Selection {
        kube_versions: vec!["1.30".into()],
        os_families: vec![],
    };
    let images = image_list(&sample(), &inputs.distros, &selection).unwrap();
    let uris: Vec<&str> = images.iter().map(|i| i.uri.as_str()).collect();
    for needle in [
        "kube-vip/kube-vip:",
        "cluster-api-provider-aws-snow/manager:",
        "cluster-api/kubeadm-bootstrap-controller:",
        "cluster-api/kubeadm-control-plane-controller:",
        "cluster-api/cluster-api-controller:",
        "cilium/cilium:",
        "cert-manager-controller:",
        "brancz/kube-rbac-proxy:",
        "etcdadm-controller:",
        "bottlerocket-admin:",
        "bottlerocket-bootstrap-snow:",
        "eks-distro/kubernetes/kube-apiserver:v1.30",
        "eks-distro/kubernetes/kube-scheduler:v1.30",
        "eks-distro/kubernetes/pause:v1.30",
        "eks-distro/etcd-io/etcd:",
        "eks-distro/coredns/coredns:",
        // The kind bootstrap cluster's node image.
        "kind/node:v1.30",
        // Flux's controllers (GitOps).
        "fluxcd/source-controller:",
        "fluxcd/kustomize-controller:",
        "fluxcd/helm-controller:",
        "fluxcd/notification-controller:",
    ] {
        assert!(
            uris.iter().any(|u| u.contains(needle)),
            "{needle} missing: {uris:#?}"
        );
    }
    for absent in [
        "vsphere",
        "cloudstack",
        "tinkerbell",
        "nutanix",
        "eks-anywhere-cluster-controller",
    ] {
        assert!(
            !uris.iter().any(|u| u.contains(absent)),
            "{absent} listed: {uris:#?}"
        );
    }
    assert!(
        !uris.iter().any(|u| u.contains("://")),
        "archives listed: {uris:#?}"
    );
    // Deduplicated: kube-rbac-proxy is in several sections.
    let mut sorted = uris.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), uris.len());
    let proxy = images
        .iter()
        .find(|i| i.uri.contains("kube-rbac-proxy"))
        .unwrap();
    assert!(proxy.used_by.len() > 1, "{proxy:?}");
}

#[test]
fn ubuntu_leaves_out_bottlerocket_containers() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let selection = Selection {
        kube_versions: vec![],
        os_families: vec![OsFamily::Ubuntu],
    };
    let images = image_list(&sample(), &inputs.distros, &selection).unwrap();
    assert!(!images.iter().any(|i| i.uri.contains("bottlerocket")));
    assert!(images.iter().any(|i| i.uri.contains("kube-vip")));
}

#[test]
fn the_embedded_catalog_lists_its_images_and_unknown_versions_are_errors() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let bundle = BundleData::embedded().unwrap();
    let images = image_list(
        &bundle,
        &inputs.distros,
        &Selection {
            kube_versions: vec!["1.35".into()],
            os_families: vec![],
        },
    )
    .unwrap();
    assert!(images.iter().any(|i| i.uri.contains("kube-vip")));
    assert!(
        images
            .iter()
            .any(|i| i.uri.contains("kube-controller-manager:v1.35"))
    );
    let err = image_list(
        &bundle,
        &inputs.distros,
        &Selection {
            kube_versions: vec!["1.99".into()],
            os_families: vec![],
        },
    )
    .unwrap_err();
    assert!(matches!(err, ImagesError::NoSuchVersion { .. }));
}

/// Offline, the list must not be silently shorter than the Bundles manifest the catalog came
/// from: for every version and OS the embedded catalog lists exactly what the sample lists,
/// management components (cert-manager, Cluster API, kubeadm, etcdadm, CAPAS), Cilium and the
/// kind node image included.
#[test]
fn the_embedded_catalog_lists_what_its_bundles_manifest_lists() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let (embedded, sample) = (BundleData::embedded().unwrap(), sample());
    for os in [OsFamily::Ubuntu, OsFamily::Bottlerocket] {
        let selection = Selection {
            kube_versions: vec![],
            os_families: vec![os],
        };
        let uris = |bundle: &BundleData| -> Vec<String> {
            let list = image_list(bundle, &inputs.distros, &selection).unwrap();
            list.into_iter().map(|i| i.uri).collect()
        };
        let listed = uris(&embedded);
        assert_eq!(listed, uris(&sample), "{os:?}");
        for needle in [
            "cert-manager-webhook:",
            "cilium/operator-generic:",
            "cilium/cilium:",
            "kind/node:",
        ] {
            assert!(
                listed.iter().any(|u| u.contains(needle)),
                "{needle} in {listed:?}"
            );
        }
    }
}
