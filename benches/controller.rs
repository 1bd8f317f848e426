//! The controller's steady state: N Snow clusters declared and reconciled to Ready against the
//! Kubernetes API stand-in (HTTPS on loopback, simulated Cluster API controllers), then one full
//! resync (every SnowMachineConfig, then every Cluster) of the unchanged clusters: polling (every
//! pass reads with GETs, `resync`) and through the caches (`resync_cached`).
//!
//! ```text
//! SNOWCTL_BENCH_CLUSTERS=100 cargo bench --workspace --bench controller
//! ```
//!
//! N is `SNOWCTL_BENCH_CLUSTERS` (default 50; the polling resync only up to 50). Target: a resync makes zero writes and takes
//! under 1 s; through the caches, zero requests. Every measured pass is checked for writes (and
//! the cached one for GETs and LISTs); the run stops with an error if one makes any. The
//! caches' memory is the process's resident set grown while they listed, divided by N.

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

/// The most clusters the polling resync is measured at.
const POLLED: usize = 50;
/// N when `SNOWCTL_BENCH_CLUSTERS` does not say.
const DEFAULT_CLUSTERS: usize = 50;
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

/// The process's resident set, in KiB (`VmRSS` of `/proc/self/status`).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// GET and LIST requests the stand-in has received.
fn reads(api: &KubeStandIn) -> u64 {
    let counts = api.request_counts();
    counts.get("get").copied().unwrap_or(0) + counts.get("list").copied().unwrap_or(0)
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
    #[allow(non_snake_case, reason = "N, as the docs name it")]
    let CLUSTERS: usize = std::env::var("SNOWCTL_BENCH_CLUSTERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_CLUSTERS);
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
        let mut cluster = DeclaredCluster::new(&format!("c{i:04}"), 1);
        cluster.endpoint = format!("10.{}.{}.10", i / 256, i % 256);
        for object in cluster.objects() {
            api.put(object).unwrap();
        }
    }
    // Converge: reconcile until every cluster is Ready, with the CAPI controllers running.
    let start = Instant::now();
    // The simulated controllers stay (their workload clusters answer the CNI pass), paused once
    // every cluster is Ready: nothing changes while the resyncs are measured.
    let capi = runtime.block_on(async {
        api.start_capi(CapiOptions {
            step: Duration::from_millis(10),
            ..CapiOptions::default()
        })
    });
    // Converged through the caches: a cluster once Ready is skipped, so the rounds shrink.
    let before = rss_kib();
    let caches = runtime.block_on(async {
        let caches = controller::Caches::start(ctx.mgmt.client(), None).await;
        caches.ready().await;
        caches
    });
    let metrics = controller::Metrics::default();
    runtime.block_on(async {
        while ready(&api) < CLUSTERS {
            assert!(
                start.elapsed() < Duration::from_secs(600 + 10 * CLUSTERS as u64),
                "the clusters never became Ready"
            );
            controller::resync_cached(&ctx, &caches, &metrics, CONCURRENCY).await;
        }
    });
    capi.pause();
    let converged = start.elapsed();
    let objects = api.objects().len();
    let grown = rss_kib().saturating_sub(before);
    println!(
        "{CLUSTERS} clusters Ready in {converged:.2?} ({objects} objects on the stand-in); the process grew {grown} KiB, stand-in and workload clusters included"
    );

    // Polling reads every cluster with GETs (about 0.4 s a cluster in the dev profile, its CNI
    // pass dialling each workload cluster): measured up to POLLED clusters.
    if CLUSTERS <= POLLED {
        c.bench_function(
            &format!("controller/resync {CLUSTERS} unchanged clusters"),
            |b| {
                b.iter(|| {
                    let writes = api.writes();
                    let pass = runtime
                        .block_on(controller::resync(&ctx, CONCURRENCY))
                        .unwrap();
                    assert_eq!((pass.clusters, pass.errors), (CLUSTERS, 0));
                    assert_eq!(pass.writes, 0, "a resync of unchanged clusters wrote");
                    assert_eq!(api.writes(), writes, "a resync of unchanged clusters wrote");
                });
            },
        );
    }

    // The caches' own memory: a second set listing the same objects.
    let before = rss_kib();
    let second = runtime.block_on(async {
        let caches = controller::Caches::start(ctx.mgmt.client(), None).await;
        caches.ready().await;
        caches
    });
    let grown = rss_kib().saturating_sub(before);
    let cached = second.len();
    drop(second);
    println!(
        "caches: {cached} objects, resident set +{grown} KiB ({} KiB a cluster)",
        grown / CLUSTERS as u64
    );
    // The first passes through the caches record what each settled pass read.
    for _ in 0..3 {
        runtime.block_on(controller::resync_cached(
            &ctx,
            &caches,
            &metrics,
            CONCURRENCY,
        ));
    }
    c.bench_function(
        &format!("controller/cached resync {CLUSTERS} unchanged clusters"),
        |b| {
            b.iter(|| {
                let (writes, gets) = (api.writes(), reads(&api));
                let pass = runtime.block_on(controller::resync_cached(
                    &ctx,
                    &caches,
                    &metrics,
                    CONCURRENCY,
                ));
                assert_eq!((pass.clusters, pass.errors), (CLUSTERS, 0));
                assert_eq!(pass.writes, 0, "a resync of unchanged clusters wrote");
                assert_eq!(api.writes(), writes, "a resync of unchanged clusters wrote");
                assert_eq!(reads(&api), gets, "a cached resync read with GETs or LISTs");
            });
        },
    );
    println!(
        "requests during the cached resyncs: 0 GET/LIST, 0 writes (checked on each); passes skipped: {}",
        metrics.reconciles("Cluster", controller::metrics::Ended::Unchanged)
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(20));
    targets = bench
}
criterion_main!(benches);
