//! `snowctl upgrade plan cluster` and `upgrade plan management-components` through the binary,
//! on a management-cluster stand-in set up by `snowctl init` (so clusterctl's inventory names the
//! providers' versions) with a cluster made by `create cluster`; and the field `upgrade cluster
//! --dry-run` names.

use super::backup::{Created, created, p, site};
use super::lifecycle::{Group, spec};
use super::{SAMPLE_BUNDLES, show, text};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_plan_lists_versions_and_changed_fields_and_writes_nothing() {
    let site = site().await;
    let Created { _capi, source } = created(&site).await;

    // Kubernetes 1.33 → 1.34 and bigger workers.
    let v2 = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.xlarge")
        .replace("kubernetesVersion: \"1.33\"", "kubernetesVersion: \"1.34\"");
    let v2 = site.write("v2.yaml", &v2);
    let plan = async |format: &'static str| {
        let args = [
            "upgrade",
            "plan",
            "cluster",
            "-f",
            p(&v2),
            "--kubeconfig",
            p(&source.kubeconfig),
            "--bundles",
            SAMPLE_BUNDLES,
            "-o",
            format,
        ];
        site.snowctl(&args).await
    };
    let writes = source.api.writes();
    let out = plan("text").await;
    assert!(out.status.success(), "{}", show(&out));
    insta::assert_snapshot!("upgrade_plan_cluster_text", text(&out.stdout));
    let out = plan("json").await;
    assert!(out.status.success(), "{}", show(&out));
    insta::assert_snapshot!("upgrade_plan_cluster_json", text(&out.stdout));
    assert_eq!(source.api.writes(), writes, "a plan wrote");

    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let component = |name: &str| {
        json["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["component"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {json}"))
    };
    let kubernetes = component("Kubernetes");
    assert_eq!(kubernetes["changes"], true, "{kubernetes}");
    assert!(
        kubernetes["current"]
            .as_str()
            .unwrap()
            .starts_with("v1.33.")
    );
    assert!(kubernetes["new"].as_str().unwrap().starts_with("v1.34."));
    // The providers' current versions come from clusterctl's inventory that init wrote.
    assert_eq!(component("infrastructure-snow")["current"], "v0.3.3");
    let workers = json["rolls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["object"] == "AWSSnowMachineTemplate/edge-md-0-2")
        .cloned()
        .unwrap_or_else(|| panic!("the workers do not roll: {json}"));
    assert!(
        workers["fields"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({"path": "instanceType", "old": "sbe-c.large", "new": "sbe-c.xlarge"})),
        "{workers}"
    );

    // The management components: installed from the bundle given, so nothing to do.
    let out = site
        .snowctl(&[
            "upgrade",
            "plan",
            "management-components",
            "--kubeconfig",
            p(&source.kubeconfig),
            "--components-dir",
            p(&site.components),
            "--bundles",
            p(&site.bundles),
            "-o",
            "json",
        ])
        .await;
    assert!(out.status.success(), "{}", show(&out));
    insta::assert_snapshot!("upgrade_plan_management_components_json", text(&out.stdout));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["upToDate"], true, "{json}");
    assert_eq!(source.api.writes(), writes, "a plan wrote");
}
