//! Parse + default + validate of cluster specs (issue: spec layer performance).
//!
//! `cargo bench -p snowctl-benches --bench spec`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use snow_api::template::{TemplateOptions, cluster_config};
use std::hint::black_box;

/// The spec `snowctl generate clusterconfig` prints, filled in.
fn generated() -> String {
    cluster_config(&TemplateOptions {
        name: "edge".into(),
        devices: vec![
            "192.168.1.11".into(),
            "192.168.1.12".into(),
            "192.168.1.13".into(),
        ],
        endpoint: Some("192.168.1.100".into()),
        ..Default::default()
    })
    .expect("valid name")
}

/// 3 control-plane machines, 3 external etcd machines and `groups` worker groups, each group
/// with its own machine config on static IPs.
fn large(groups: usize) -> String {
    let mut s = String::from(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: big\nspec:\n  clusterNetwork:\n    cniConfig: {cilium: {}}\n    pods: {cidrBlocks: [10.1.0.0/16]}\n    services: {cidrBlocks: [10.96.0.0/12]}\n  controlPlaneConfiguration:\n    count: 3\n    endpoint: {host: 172.16.0.1}\n    machineGroupRef: {kind: SnowMachineConfig, name: big-cp}\n  externalEtcdConfiguration:\n    count: 3\n    machineGroupRef: {kind: SnowMachineConfig, name: big-etcd}\n  datacenterRef: {kind: SnowDatacenterConfig, name: big}\n  kubernetesVersion: \"1.33\"\n  workerNodeGroupConfigurations:\n",
    );
    for i in 0..groups {
        s.push_str(&format!("  - name: md-{i}\n    count: 1\n    machineGroupRef: {{kind: SnowMachineConfig, name: big-md-{i}}}\n"));
    }
    s.push_str("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowDatacenterConfig\nmetadata: {name: big}\nspec: {}\n");
    let mut machine = |name: &str, pool: &str| {
        s.push_str(&format!("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowMachineConfig\nmetadata: {{name: {name}}}\nspec:\n  devices: [172.16.1.1, 172.16.1.2, 172.16.1.3]\n  instanceType: sbe-c.large\n  osFamily: ubuntu\n  sshKeyName: key\n  network:\n    directNetworkInterfaces:\n    - {{index: 1, primary: true, ipPoolRef: {{kind: SnowIPPool, name: {pool}}}}}\n"));
    };
    machine("big-cp", "pool-cp");
    machine("big-etcd", "pool-etcd");
    for i in 0..groups {
        machine(&format!("big-md-{i}"), &format!("pool-md-{i}"));
    }
    let mut pool = |name: &str, n: usize| {
        let (hi, lo) = (n / 8, (n % 8) * 30);
        s.push_str(&format!("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowIPPool\nmetadata: {{name: {name}}}\nspec:\n  pools:\n  - {{ipStart: 10.200.{hi}.{}, ipEnd: 10.200.{hi}.{}, subnet: 10.200.{hi}.0/24, gateway: 10.200.{hi}.254}}\n", lo + 1, lo + 20));
    };
    pool("pool-cp", 0);
    pool("pool-etcd", 1);
    for i in 0..groups {
        pool(&format!("pool-md-{i}"), i + 2);
    }
    s
}

fn bench(c: &mut Criterion) {
    let spec = generated();
    assert!(snow_api::check(&spec).expect("parses").is_valid());
    c.bench_function("check/generated", |b| {
        b.iter(|| snow_api::check(black_box(&spec)))
    });
    // The stages, to see where the time goes.
    c.bench_function("stage/yaml", |b| {
        b.iter(|| snow_api::yaml::parse_stream(black_box(&spec), Default::default()))
    });
    c.bench_function("stage/parse", |b| {
        b.iter(|| snow_api::ClusterSpec::parse(black_box(&spec)))
    });

    let mut group = c.benchmark_group("check/groups");
    for groups in [50, 100, 200] {
        let spec = large(groups);
        let report = snow_api::check(&spec).expect("parses");
        assert!(report.is_valid(), "{:#?}", report.findings);
        group.throughput(criterion::Throughput::Elements(groups as u64));
        group.bench_with_input(BenchmarkId::from_parameter(groups), &spec, |b, spec| {
            b.iter(|| snow_api::check(black_box(spec)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
