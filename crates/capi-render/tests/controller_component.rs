//! The snowctl controller's component objects, as YAML: the snapshot keeps every object, rule
//! and setting reviewable.

use capi_render::controller::{ControllerComponent, Proxy, ReleaseFiles, objects};
use snow_api::template::{TemplateOptions, cluster_config};

#[test]
fn the_component_with_the_specs_proxy() {
    let text = cluster_config(&TemplateOptions {
        name: "edge".into(),
        devices: vec!["192.168.1.11".into()],
        endpoint: Some("192.168.1.100".into()),
        kubernetes_version: Some("1.33".into()),
        ..Default::default()
    })
    .unwrap()
    .replacen(
        "  kubernetesVersion:",
        "  proxyConfiguration:\n    httpProxy: http://10.1.2.4:3128\n    httpsProxy: http://10.1.2.4:3128\n    noProxy: [internal.example]\n  kubernetesVersion:",
        1,
    );
    let spec = snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings));
    let component = ControllerComponent {
        image: snow_api::release::controller_image("10.1.2.3:5000"),
        proxy: Proxy::of(&spec),
        release: ReleaseFiles {
            bundles: "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Bundles\n".into(),
            eksd: vec!["apiVersion: distro.eks.amazonaws.com/v1alpha1\nkind: Release\n".into()],
        },
    };
    let objects = objects(&component);
    let yaml: String = objects
        .iter()
        .map(|o| format!("---\n{}", serde_saphyr::to_string(o).unwrap()))
        .collect();
    insta::with_settings!({filters => vec![(r"controller:v[0-9][^\s]*", "controller:v[VERSION]")]}, {
        insta::assert_snapshot!(yaml);
    });
}
