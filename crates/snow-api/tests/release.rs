//! The real release-manifest samples in ../shared/data parse, and what rendering needs comes out
//! of them (or an error names what is missing).

use snow_api::release::{Bundles, Release, ReleaseError};
use std::path::PathBuf;

fn shared(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

#[test]
fn the_sample_bundle_parses_with_its_snow_sections() {
    let bundles = Bundles::from_yaml(&shared("bundles/eksa-bundle-release-sample.yaml")).unwrap();
    assert_eq!(
        bundles.kube_versions(),
        ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]
    );
    let vb = bundles.versions_bundle("1.30").unwrap();
    let snow = vb.snow().unwrap();
    assert_eq!(snow.version, "v0.3.3+abcdef1");
    assert_eq!(
        snow.kube_vip.repository(),
        "public.ecr.aws/release-container-registry/kube-vip/kube-vip"
    );
    assert_eq!(snow.kube_vip.tag(), Some("v1.2.0-eks-a-v0.0.0-dev-build.1"));
    assert!(
        snow.components
            .uri
            .ends_with("infrastructure-components.yaml")
    );
    assert_eq!(vb.eks_d.name, "kubernetes-1-30-eks-58");
    assert_eq!(vb.eks_d.channel, "1-30");
    let br = vb.bottlerocket_host_containers.as_ref().unwrap();
    assert_eq!(
        br.admin.uri,
        "public.ecr.aws/bottlerocket/bottlerocket-admin:v0.21.1"
    );
    assert_eq!(
        vb.etcdadm_bootstrap.as_ref().unwrap().version,
        "v1.0.22+abcdef1"
    );
    assert_eq!(
        vb.etcdadm_controller.as_ref().unwrap().version,
        "v1.0.28+abcdef1"
    );
}

#[test]
fn a_missing_version_lists_the_available_ones() {
    let bundles = Bundles::from_yaml(&shared("bundles/eksa-bundle-release-sample.yaml")).unwrap();
    let err = bundles.versions_bundle("1.29").unwrap_err();
    assert!(matches!(&err, ReleaseError::NoSuchVersion { available, .. } if available.len() == 7));
    assert!(err.to_string().contains("1.30, 1.31"), "{err}");
}

#[test]
fn a_bundle_without_snow_or_with_an_untagged_image_is_an_error_naming_it() {
    let text = shared("bundles/eksa-bundle-release-sample.yaml");
    let no_snow = text.replacen("    snow:\n", "    notSnow:\n", 1);
    let bundles = Bundles::from_yaml(&no_snow).unwrap();
    let err = bundles.versions_bundle("1.30").unwrap().snow().unwrap_err();
    assert_eq!(err.to_string(), "Bundles 1.30: missing the snow section");
    // Untag the kube-vip image of the first snow section (other providers list kube-vip too).
    let at = text.find("    snow:\n").unwrap();
    let untagged = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen(
            "kube-vip/kube-vip:v1.2.0-eks-a-v0.0.0-dev-build.1",
            "kube-vip/kube-vip",
            1
        )
    );
    let err = Bundles::from_yaml(&untagged)
        .unwrap()
        .versions_bundle("1.30")
        .unwrap()
        .snow()
        .unwrap_err();
    assert!(matches!(err, ReleaseError::Untagged { .. }), "{err}");
}

#[test]
fn the_eksd_release_gives_the_kube_distro() {
    let release = Release::from_yaml(&shared("eksd/kubernetes-1-21-eks-4.yaml")).unwrap();
    let distro = release.kube_distro().unwrap();
    assert_eq!(
        distro.kubernetes.repository,
        "public.ecr.aws/eks-distro/kubernetes"
    );
    assert_eq!(distro.kubernetes.tag, "v1.21.2-eks-1-21-4");
    assert_eq!(distro.etcd_version, "3.4.16");
    assert!(
        distro.etcd_url.ends_with("etcd-linux-amd64-v3.4.16.tar.gz"),
        "{}",
        distro.etcd_url
    );
    assert_eq!(
        distro.etcd_image,
        "public.ecr.aws/eks-distro/etcd-io/etcd:v3.4.16-eks-1-21-4"
    );
    assert_eq!(
        distro.core_dns.repository,
        "public.ecr.aws/eks-distro/coredns"
    );
    assert_eq!(
        distro.pause.repository,
        "public.ecr.aws/eks-distro/kubernetes/pause"
    );
}

#[test]
fn an_eksd_release_missing_an_asset_names_it() {
    let text = shared("eksd/kubernetes-1-21-eks-4.yaml")
        .replace("name: coredns-image", "name: coredns-img");
    let err = Release::from_yaml(&text)
        .unwrap()
        .kube_distro()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "EKS-D kubernetes-1-21-eks-4: missing asset coredns-image"
    );
}

#[test]
fn wrong_documents_are_refused() {
    assert!(matches!(
        Bundles::from_yaml("apiVersion: v1\nkind: ConfigMap\n"),
        Err(ReleaseError::WrongKind { .. })
    ));
    assert!(matches!(
        Release::from_yaml("kind: [\n"),
        Err(ReleaseError::Parse { .. })
    ));
}

#[test]
fn the_kind_node_image_is_read_from_the_sample_and_the_embedded_catalog_or_named_when_missing() {
    let bundles = Bundles::from_yaml(&shared("bundles/eksa-bundle-release-sample.yaml")).unwrap();
    let sample = bundles
        .versions_bundle("1.31")
        .unwrap()
        .kind_node()
        .unwrap();
    assert_eq!(
        sample.uri,
        "public.ecr.aws/release-container-registry/kubernetes-sigs/kind/node:v1.31.14-eks-d-1-31-47-eks-a-v0.0.0-dev-build.1"
    );
    let embedded = snow_api::release::ReleaseInputs::embedded().unwrap();
    for version in embedded.bundles.kube_versions() {
        let vb = embedded.bundles.versions_bundle(&version).unwrap();
        let from_sample = bundles
            .versions_bundle(&version)
            .unwrap()
            .kind_node()
            .unwrap();
        assert_eq!(vb.kind_node().unwrap().uri, from_sample.uri, "{version}");
    }

    let mut vb = bundles.versions_bundle("1.30").unwrap().clone();
    vb.eks_d.kind_node = None;
    assert_eq!(
        vb.kind_node().unwrap_err().to_string(),
        "Bundles 1.30: missing eksD.kindNode"
    );
    vb.eks_d.kind_node = Some(snow_api::release::Image {
        uri: "public.ecr.aws/kind/node".into(),
        ..Default::default()
    });
    assert!(matches!(
        vb.kind_node().unwrap_err(),
        ReleaseError::Untagged { .. }
    ));
}

#[test]
fn the_cilium_section_is_read_and_checked_in_the_sample_and_the_embedded_catalog() {
    let text = shared("bundles/eksa-bundle-release-sample.yaml");
    let bundles = Bundles::from_yaml(&text).unwrap();
    let cilium = bundles.versions_bundle("1.30").unwrap().cilium().unwrap();
    assert_eq!(
        cilium.cilium.uri,
        "public.ecr.aws/eks/cilium/cilium:v1.19.4-1"
    );
    assert_eq!(
        cilium.operator.uri,
        "public.ecr.aws/eks/cilium/operator-generic:v1.19.4-1"
    );
    assert_eq!(cilium.helm_chart.tag(), Some("1.19.4-1"));
    assert_eq!(cilium.version, "v1.19.4-1");
    let embedded = snow_api::release::ReleaseInputs::embedded().unwrap();
    for version in embedded.bundles.kube_versions() {
        let vb = embedded.bundles.versions_bundle(&version).unwrap();
        assert_eq!(
            vb.cilium().unwrap(),
            bundles.versions_bundle(&version).unwrap().cilium().unwrap(),
            "{version}"
        );
    }
    let no_cilium = text.replacen(
        "    cilium:\n      cilium:",
        "    notCilium:\n      cilium:",
        1,
    );
    let err = Bundles::from_yaml(&no_cilium)
        .unwrap()
        .versions_bundle("1.30")
        .unwrap()
        .cilium()
        .unwrap_err();
    assert_eq!(err.to_string(), "Bundles 1.30: missing the cilium section");
    let untagged = text.replacen(
        "uri: public.ecr.aws/eks/cilium/cilium:1.19.4-1",
        "uri: public.ecr.aws/eks/cilium/cilium",
        1,
    );
    let err = Bundles::from_yaml(&untagged)
        .unwrap()
        .versions_bundle("1.30")
        .unwrap()
        .cilium()
        .unwrap_err();
    assert!(matches!(err, ReleaseError::Untagged { .. }), "{err}");
}

#[test]
fn the_sample_bundle_has_fluxs_four_controller_images() {
    let bundles = Bundles::from_yaml(&shared("bundles/eksa-bundle-release-sample.yaml")).unwrap();
    for version in bundles.kube_versions() {
        let flux = bundles.versions_bundle(&version).unwrap().flux().unwrap();
        let names: Vec<(&str, &str)> = flux
            .controller_images()
            .iter()
            .map(|(controller, image)| (*controller, image.repository()))
            .collect();
        assert_eq!(
            names,
            [
                (
                    "source-controller",
                    "public.ecr.aws/release-container-registry/fluxcd/source-controller"
                ),
                (
                    "kustomize-controller",
                    "public.ecr.aws/release-container-registry/fluxcd/kustomize-controller"
                ),
                (
                    "helm-controller",
                    "public.ecr.aws/release-container-registry/fluxcd/helm-controller"
                ),
                (
                    "notification-controller",
                    "public.ecr.aws/release-container-registry/fluxcd/notification-controller"
                ),
            ]
        );
        assert!(!flux.version.is_empty());
    }
    // A bundle without the section says so.
    let text = shared("bundles/eksa-bundle-release-sample.yaml")
        .replace("    flux:\n", "    fluxRemoved:\n");
    let err = Bundles::from_yaml(&text)
        .unwrap()
        .versions_bundle("1.30")
        .unwrap()
        .flux()
        .unwrap_err();
    assert_eq!(err.to_string(), "Bundles 1.30: missing the flux section");
}
