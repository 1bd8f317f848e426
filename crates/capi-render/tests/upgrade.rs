//! Upgrades: template names bump exactly when the template's content changes (EKS Anywhere's template-name bumping).

mod common;

use capi_render::{RenderOptions, RenderedObject, render, to_yaml, upgrade};
use snow_api::{ValidSpec, release::ReleaseInputs};

const SPEC: &str = "apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {name: snow-test}
spec:
  clusterNetwork: {cniConfig: {cilium: {}}, pods: {cidrBlocks: [10.1.0.0/16]}, services: {cidrBlocks: [10.96.0.0/12]}}
  controlPlaneConfiguration: {count: 3, endpoint: {host: 1.2.3.4}, machineGroupRef: {kind: SnowMachineConfig, name: test-cp}}
  datacenterRef: {kind: SnowDatacenterConfig, name: test}
  kubernetesVersion: \"1.33\"
  workerNodeGroupConfigurations:
  - {name: md-0, count: 3, machineGroupRef: {kind: SnowMachineConfig, name: test-md}, labels: {role: app}}
  - {name: md-1, count: 1, machineGroupRef: {kind: SnowMachineConfig, name: test-md1}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowDatacenterConfig
metadata: {name: test}
spec: {}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata: {name: test-cp}
spec: {devices: [1.2.3.4, 1.2.3.5], instanceType: sbe-c.large, osFamily: ubuntu, sshKeyName: k, network: {directNetworkInterfaces: [{index: 1, primary: true, dhcp: true}]}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata: {name: test-md}
spec: {devices: [1.2.3.4, 1.2.3.5], instanceType: sbe-c.large, osFamily: ubuntu, sshKeyName: k, network: {directNetworkInterfaces: [{index: 1, primary: true, dhcp: true}]}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata: {name: test-md1}
spec: {devices: [1.2.3.4, 1.2.3.5], instanceType: sbe-c.large, osFamily: ubuntu, sshKeyName: k, network: {directNetworkInterfaces: [{index: 1, primary: true, dhcp: true}]}}
";

fn spec(text: &str) -> ValidSpec {
    snow_api::check(text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

/// Renders a spec with the embedded release.
fn render_text(text: &str) -> Vec<RenderedObject> {
    let spec = spec(text);
    let inputs = ReleaseInputs::embedded().unwrap();
    render(
        &spec,
        &inputs.resolve(&spec, None).unwrap(),
        &RenderOptions::default(),
    )
    .unwrap()
}

/// Plans an upgrade to `text` against `existing`, with the embedded release.
fn plan_against(text: &str, existing: &upgrade::Existing) -> upgrade::UpgradePlan {
    let spec = spec(text);
    let inputs = ReleaseInputs::embedded().unwrap();
    upgrade::plan(
        &spec,
        &inputs.resolve(&spec, None).unwrap(),
        &RenderOptions::default(),
        existing,
    )
    .unwrap()
}

/// What the management cluster holds after the first apply, as JSON objects (with a status, as a
/// live object would have).
fn live(text: &str) -> upgrade::Existing {
    let objects = render_text(text);
    let mut existing = upgrade::Existing::default();
    for o in objects {
        let mut v: serde_json::Value = serde_saphyr::from_str(&o.yaml).unwrap();
        v["status"] = serde_json::json!({"observedGeneration": 1});
        existing.insert(v);
    }
    existing
}

fn plan(before: &str, after: &str) -> upgrade::UpgradePlan {
    plan_against(after, &live(before))
}

#[test]
fn nothing_changes_nothing_rolls() {
    let p = plan(SPEC, SPEC);
    assert!(p.changes.is_empty(), "{:#?}", p.changes);
    let fresh = render_text(SPEC);
    assert_eq!(to_yaml(&p.objects), to_yaml(&fresh));
}

#[test]
fn counts_rename_nothing() {
    let after = SPEC
        .replace("name: md-0, count: 3", "name: md-0, count: 5")
        .replace("{count: 3, endpoint", "{count: 5, endpoint");
    let p = plan(SPEC, &after);
    assert!(p.changes.is_empty(), "{:#?}", p.changes);
    assert_eq!(p.names.control_plane_template, "snow-test-control-plane-1");
}

#[test]
fn an_instance_type_change_bumps_only_that_machine_template() {
    let after = SPEC.replacen(
        "metadata: {name: test-md}\nspec: {devices: [1.2.3.4, 1.2.3.5], instanceType: sbe-c.large",
        "metadata: {name: test-md}\nspec: {devices: [1.2.3.4, 1.2.3.5], instanceType: sbe-c.xlarge",
        1,
    );
    let p = plan(SPEC, &after);
    let changed: Vec<&str> = p.changes.iter().map(|c| c.object.as_str()).collect();
    assert_eq!(changed, ["AWSSnowMachineTemplate/snow-test-md-0-2"]);
    assert!(
        p.changes[0].reason.contains("instanceType"),
        "{}",
        p.changes[0].reason
    );
    assert!(p.changes[0].reason.contains("worker group md-0"));
    let md = p
        .objects
        .iter()
        .find(|o| o.name == "snow-test-md-0" && o.kind == "MachineDeployment")
        .unwrap();
    assert!(md.yaml.contains("snow-test-md-0-2"));
    assert!(
        p.objects
            .iter()
            .any(|o| o.kind == "AWSSnowMachineTemplate" && o.name == "snow-test-md-0-2")
    );
    assert_eq!(p.names.workers["md-1"].machine_template, "snow-test-md-1-1");
}

#[test]
fn labels_bump_the_config_template_and_devices_bump_the_control_plane() {
    let after = SPEC
        .replace("labels: {role: app}", "labels: {role: db}")
        .replacen(
            "metadata: {name: test-cp}\nspec: {devices: [1.2.3.4, 1.2.3.5]",
            "metadata: {name: test-cp}\nspec: {devices: [1.2.3.4]",
            1,
        );
    let p = plan(SPEC, &after);
    let mut changed: Vec<&str> = p.changes.iter().map(|c| c.object.as_str()).collect();
    changed.sort_unstable();
    assert_eq!(
        changed,
        [
            "AWSSnowMachineTemplate/snow-test-control-plane-2",
            "KubeadmConfigTemplate/snow-test-md-0-2"
        ]
    );
    let kcp = p
        .objects
        .iter()
        .find(|o| o.kind == "KubeadmControlPlane")
        .unwrap();
    assert!(kcp.yaml.contains("snow-test-control-plane-2"));
}

#[test]
fn bumps_continue_from_the_live_name() {
    // A cluster already at -4 goes to -5.
    let mut existing = live(SPEC);
    let text = to_yaml(&render_text(SPEC)).replace("snow-test-md-1-1", "snow-test-md-1-4");
    for doc in serde_saphyr::from_multiple::<serde_json::Value>(&text).unwrap() {
        existing.insert(doc);
    }
    let after = SPEC.replace("name: md-1, count: 1, machineGroupRef: {kind: SnowMachineConfig, name: test-md1}}", "name: md-1, count: 1, machineGroupRef: {kind: SnowMachineConfig, name: test-md1}, taints: [{key: a, effect: NoSchedule}]}");
    let p = plan_against(&after, &existing);
    let changed: Vec<&str> = p.changes.iter().map(|c| c.object.as_str()).collect();
    assert_eq!(changed, ["KubeadmConfigTemplate/snow-test-md-1-5"]);
    assert_eq!(p.names.workers["md-1"].machine_template, "snow-test-md-1-4");
}
