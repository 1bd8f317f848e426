//! Cilium's `helm template` invocation and values, as EKS Anywhere computes them, for a few specs:
//! snapshots keep the whole command, environment, values and appended objects reviewable.

use capi_render::cilium::{HelmTemplate, helm_template, values};
use snow_api::{
    ValidSpec,
    release::ReleaseInputs,
    template::{TemplateOptions, cluster_config},
};

/// The generated spec (3 control-plane machines, one worker group of 3), edited by `edits`.
fn spec(edits: &[(&str, &str)]) -> ValidSpec {
    let mut text = cluster_config(&TemplateOptions {
        name: "edge".into(),
        devices: vec!["192.168.1.11".into()],
        endpoint: Some("192.168.1.100".into()),
        kubernetes_version: Some("1.33".into()),
        ..Default::default()
    })
    .unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "the template lacks {from:?}");
        text = text.replacen(from, to, 1);
    }
    snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

fn invocation(spec: &ValidSpec) -> HelmTemplate {
    let inputs = ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(spec, None).unwrap();
    helm_template(spec, &release).unwrap()
}

/// The whole invocation as reviewable text.
fn show(t: &HelmTemplate) -> String {
    let mut out = format!("helm {}\n", t.args().join(" "));
    if let Some(login) = t.login_args("USER") {
        out.push_str(&format!("first: helm {}\n", login.join(" ")));
    }
    for (k, v) in &t.env {
        out.push_str(&format!("env {k}={v}\n"));
    }
    out.push_str("--- values (stdin)\n");
    out.push_str(&t.values_yaml());
    if let Some(extra) = &t.append {
        out.push_str("--- appended\n");
        out.push_str(extra);
    }
    out
}

const CILIUM: &str = "      cilium: {}";

#[test]
fn default_spec() {
    let t = invocation(&spec(&[]));
    assert_eq!(
        t.args(),
        [
            "template",
            "oci://public.ecr.aws/eks/cilium/cilium",
            "--version",
            "1.19.4-1",
            "--namespace",
            "kube-system",
            "--kube-version",
            "1.33",
            "--insecure-skip-tls-verify",
            "-f",
            "-",
        ]
    );
    assert_eq!(t.login, None);
    assert_eq!(
        t.values["operator"]["image"]["repository"],
        "public.ecr.aws/eks/cilium/operator"
    );
    assert!(t.values["operator"].get("replicas").is_none());
    insta::assert_snapshot!(show(&t));
}

#[test]
fn one_control_plane_machine_with_workers_keeps_the_charts_operator_replicas() {
    // EKS Anywhere sets one operator replica only without worker groups, which Snow requires.
    let t = invocation(&spec(&[(
        "    count: 3\n    endpoint:",
        "    count: 1\n    endpoint:",
    )]));
    assert!(t.values["operator"].get("replicas").is_none());
}

#[test]
fn every_setting_with_an_authenticated_mirror_and_a_proxy() {
    let s = spec(&[
        (
            CILIUM,
            "      cilium:\n        policyEnforcementMode: always\n        egressMasqueradeInterfaces: eth0\n        routingMode: direct\n        ipv4NativeRoutingCIDR: 10.0.0.0/16\n        ipv6NativeRoutingCIDR: 'fd00::/104'\n        cniExclusive: false",
        ),
        (
            "  kubernetesVersion:",
            "  registryMirrorConfiguration:\n    endpoint: 10.1.2.3\n    port: \"5000\"\n    authenticate: true\n    ociNamespaces:\n    - {registry: public.ecr.aws, namespace: ecr-public}\n  proxyConfiguration:\n    httpProxy: http://10.1.2.4:3128\n    httpsProxy: http://10.1.2.4:3128\n    noProxy: [internal.example]\n  kubernetesVersion:",
        ),
    ]);
    let t = invocation(&s);
    assert_eq!(t.chart, "oci://10.1.2.3:5000/ecr-public/eks/cilium/cilium");
    assert_eq!(t.login.as_deref(), Some("10.1.2.3:5000"));
    // The chart read from a file (an offline archive's): no registry, so no version, no
    // registry flag and no login; the values and environment are the same.
    let file = t
        .clone()
        .with_chart_file(std::path::Path::new("/tmp/x/cilium-1.19.4-1.tgz"));
    assert_eq!(
        file.args(),
        [
            "template",
            "/tmp/x/cilium-1.19.4-1.tgz",
            "--namespace",
            "kube-system",
            "--kube-version",
            "1.33",
            "-f",
            "-",
        ]
    );
    assert_eq!(file.login, None);
    assert_eq!((&file.values, &file.env), (&t.values, &t.env));
    // Images keep their registry: the nodes' containerd mirrors the pulls.
    assert_eq!(
        t.values["image"]["repository"],
        "public.ecr.aws/eks/cilium/cilium"
    );
    assert_eq!(t.values["routingMode"], "native");
    assert_eq!(t.values["autoDirectNodeRoutes"], "true");
    assert!(t.values.get("tunnelProtocol").is_none());
    assert_eq!(t.values["cni"]["exclusive"], false);
    assert!(
        t.append
            .as_deref()
            .unwrap()
            .contains("name: allow-all-capas-system")
    );
    insta::assert_snapshot!(show(&t));
}

#[test]
fn helm_values_are_the_whole_values() {
    let s = spec(&[(
        CILIUM,
        "      cilium:\n        skipUpgrade: true\n        helmValues:\n          ipam: {mode: cluster-pool}\n          policyEnforcementMode: always\n          image: {repository: example.com/cilium, tag: v9}",
    )]);
    let inputs = ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(&s, None).unwrap();
    let v = values(&s, &release).unwrap();
    assert_eq!(
        serde_json::Value::Object(v),
        serde_json::json!({
            "ipam": {"mode": "cluster-pool"},
            "policyEnforcementMode": "always",
            "image": {"repository": "example.com/cilium", "tag": "v9"},
        })
    );
    // The policy mode comes from helmValues then; the cluster is self-managed (as generated).
    let t = invocation(&s);
    assert!(t.append.is_some());
    insta::assert_snapshot!(show(&t));
}

#[test]
fn a_bundle_without_cilium_is_an_error_naming_it() {
    let s = spec(&[]);
    let mut inputs = ReleaseInputs::embedded().unwrap();
    for vb in &mut inputs.bundles.spec.versions_bundles {
        vb.cilium = None;
    }
    let release = inputs.resolve(&s, None).unwrap();
    let err = helm_template(&s, &release).unwrap_err();
    assert_eq!(err.to_string(), "Bundles 1.33: missing the cilium section");
}
