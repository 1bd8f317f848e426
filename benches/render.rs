//! Rendering a cluster to YAML (issue: render performance).
//!
//! `cargo bench -p snowctl-benches --bench render`

use capi_render::{RenderOptions, render, to_yaml};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use snow_api::{ValidSpec, release::ReleaseInputs};
use std::hint::black_box;

/// 3 control-plane, 3 external etcd and `groups` worker groups.
fn spec(groups: usize) -> ValidSpec {
    let mut s = String::from(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: bench}\nspec:\n  clusterNetwork: {cniConfig: {cilium: {}}, pods: {cidrBlocks: [10.1.0.0/16]}, services: {cidrBlocks: [10.96.0.0/12]}}\n  controlPlaneConfiguration: {count: 3, endpoint: {host: 172.16.0.1}, machineGroupRef: {kind: SnowMachineConfig, name: cp}}\n  externalEtcdConfiguration: {count: 3, machineGroupRef: {kind: SnowMachineConfig, name: etcd}}\n  datacenterRef: {kind: SnowDatacenterConfig, name: bench}\n  kubernetesVersion: \"1.33\"\n  workerNodeGroupConfigurations:\n",
    );
    for i in 0..groups {
        s.push_str(&format!("  - {{name: md-{i}, count: 1, machineGroupRef: {{kind: SnowMachineConfig, name: md}}, labels: {{group: g{i}}}}}\n"));
    }
    s.push_str("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowDatacenterConfig\nmetadata: {name: bench}\nspec: {}\n");
    for (name, dni) in [
        ("cp", "{index: 1, primary: true, dhcp: true}"),
        ("md", "{index: 1, primary: true, dhcp: true}"),
        (
            "etcd",
            "{index: 1, primary: true, ipPoolRef: {kind: SnowIPPool, name: pool}}",
        ),
    ] {
        s.push_str(&format!("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowMachineConfig\nmetadata: {{name: {name}}}\nspec: {{devices: [172.16.1.1, 172.16.1.2, 172.16.1.3], instanceType: sbe-c.large, osFamily: ubuntu, sshKeyName: k, network: {{directNetworkInterfaces: [{dni}]}}}}\n"));
    }
    s.push_str("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowIPPool\nmetadata: {name: pool}\nspec: {pools: [{ipStart: 10.9.0.10, ipEnd: 10.9.0.50, subnet: 10.9.0.0/24, gateway: 10.9.0.1}]}\n");
    snow_api::check(&s)
        .expect("parses")
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

fn bench(c: &mut Criterion) {
    let inputs = ReleaseInputs::embedded().expect("embedded catalog");
    let mut group = c.benchmark_group("render");
    for groups in [10, 50, 100] {
        let spec = spec(groups);
        let release = inputs.resolve(&spec, None).expect("a release");
        group.throughput(criterion::Throughput::Elements(groups as u64));
        group.bench_with_input(BenchmarkId::from_parameter(groups), &spec, |b, spec| {
            b.iter(|| {
                to_yaml(
                    &render(black_box(spec), &release, &RenderOptions::default()).expect("renders"),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
