//! The controller's steady state: 50 Snow clusters declared and reconciled to Ready against the
//! Kubernetes API stand-in (HTTPS on loopback, simulated Cluster API controllers), then one full
//! resync (every SnowMachineConfig, then every Cluster) of the unchanged clusters.
//!
//! ```text
//! cargo bench -p snowctl-benches --bench controller
//! ```
//!
//! Target: a resync makes zero writes and takes under 1 s. Every measured pass is checked for
//! writes; the run stops with an error if one writes.

#![allow(clippy::print_stdout)]

use criterion::{Criterion, criterion_group, criterion_main};
use snow_api::DeviceIp;
use snow_controller::{self as controller, CniSource, Context, DeviceSource, FIELD_MANAGER};
use snow_lifecycle::Management;
use snow_test_devices::InMemoryDevice;
use snow_test_kube::{
    CapiOptions, KubeStandIn,
    declared::{DeclaredCluster, EKSA},
};
use std::time::{Duration, Instant};

const CLUSTERS: usize = 50;
const CONCURRENCY: usize = 8;

/// Devices that have every AMI and key pair asked for.
struct Devices;

impl DeviceSource for Devices {
    type Device = InMemoryDevice;

    async fn devices(
        &self,
        _: &Management,
        ips: &[DeviceIp],
    ) -> Result<(Vec<InMemoryDevice>, Vec<DeviceIp>), String> {
        Ok((
            ips.iter()
                .map(|ip| {
                    InMemoryDevice::new(*ip)
                        .with_image("ami-good", &[])
                        .with_key_pair("edge-key")
                })
                .collect(),
            Vec::new(),
        ))
    }
}

fn ready(api: &KubeStandIn) -> usize {
    api.list(EKSA, "Cluster", Some("default"))
        .iter()
        .filter(|c| {
            c["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|x| x["type"] == "Ready" && x["status"] == "True")
            })
        })
        .count()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (api, ctx) = runtime.block_on(async {
        let api = KubeStandIn::start().await.unwrap();
        api.install_capi().unwrap();
        api.install_eksa_crds().unwrap();
        let path = api.write_kubeconfig(dir.path()).unwrap();
        let ctx = Context {
            mgmt: Management::connect_for_watches(&path, None).await.unwrap(),
            inputs: snow_api::release::ReleaseInputs::embedded().unwrap(),
            devices: Devices,
            manager: FIELD_MANAGER.to_owned(),
            namespace: None,
            // EKS Anywhere's rendered Cilium (the lifecycle tests' fixture): without a CNI no
            // Node of the strict stand-in becomes Ready.
            cni: CniSource::Manifest(
                snow_lifecycle::CniManifest::parse(include_str!(
                    "../crates/lifecycle/tests/fixtures/cilium.yaml"
                ))
                .unwrap(),
            ),
        };
        (api, ctx)
    });
    for i in 0..CLUSTERS {
        let mut cluster = DeclaredCluster::new(&format!("c{i:02}"), 1);
        cluster.endpoint = format!("192.168.2.{}", 10 + i);
        for object in cluster.objects() {
            api.put(object).unwrap();
        }
    }
    // Converge: reconcile until every cluster is Ready, with the CAPI controllers running.
    let start = Instant::now();
    runtime.block_on(async {
        let _capi = api.start_capi(CapiOptions {
            step: Duration::from_millis(10),
            ..CapiOptions::default()
        });
        while ready(&api) < CLUSTERS {
            assert!(
                start.elapsed() < Duration::from_secs(900),
                "the clusters never became Ready"
            );
            controller::resync(&ctx, CONCURRENCY).await.unwrap();
        }
    });
    let converged = start.elapsed();
    let objects = api.objects().len();
    println!("{CLUSTERS} clusters Ready in {converged:.2?} ({objects} objects on the stand-in)");

    c.bench_function(
        &format!("controller/resync {CLUSTERS} unchanged clusters"),
        |b| {
            b.iter(|| {
                let writes = api.writes();
                let pass = runtime
                    .block_on(controller::resync(&ctx, CONCURRENCY))
                    .unwrap();
                assert_eq!(pass.clusters, CLUSTERS);
                assert_eq!(pass.writes, 0, "a resync of unchanged clusters wrote");
                assert_eq!(api.writes(), writes, "a resync of unchanged clusters wrote");
            });
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(20));
    targets = bench
}
criterion_main!(benches);
