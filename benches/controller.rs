//! The controller's steady state: N Snow clusters declared and reconciled to Ready against the
//! Kubernetes API stand-in (HTTPS on loopback, simulated Cluster API controllers), then one full
//! resync (every SnowMachineConfig, then every Cluster) of the unchanged clusters: polling (every
//! pass reads with GETs, `resync`) and through the caches (`resync_cached`).
//!
//! ```text
//! SNOWCTL_BENCH_CLUSTERS=100 cargo bench --workspace --bench controller
//! ```
//!
//! N is `SNOWCTL_BENCH_CLUSTERS` (default 50; the polling resync only up to 50). The first 20
//! clusters are reconciled from nothing; the others are copies of the first one's converged
//! objects (names, endpoint and uids their own), stored as a storage restore would. Target: a resync makes zero writes and takes
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

/// Clusters reconciled from nothing at most (the rest are copies).
const CONVERGED: usize = 20;

fn name(i: usize) -> String {
    format!("c{i:04}")
}

fn endpoint(i: usize) -> String {
    format!("10.{}.{}.10", i / 256, i % 256)
}

/// EKS Anywhere Clusters the caches hold.
fn caches_len(caches: &controller::Caches) -> usize {
    caches.eksa("Cluster").len()
}

/// `text` with every `from` not followed by a digit replaced by `to` (an address is not a
/// prefix of a longer one).
fn replace_address(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let after = &rest[at + from.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Copies of the first cluster's objects, as converged (status, managedFields), for each
/// cluster index in `indices`: names, endpoint and uids made its own, stored as they are.
fn copy_converged(api: &KubeStandIn, indices: std::ops::Range<usize>) {
    let first = name(0);
    let objects: Vec<serde_json::Value> = (api.objects().into_iter())
        .filter(|o| {
            o["kind"] != "Event"
                && (o["metadata"]["name"].as_str().unwrap_or_default()).contains(&first)
        })
        .collect();
    let uids: Vec<String> = (objects.iter())
        .filter_map(|o| o["metadata"]["uid"].as_str().map(str::to_owned))
        .collect();
    for i in indices {
        for object in &objects {
            let mut text = serde_json::to_string(object).unwrap();
            text = text.replace(&first, &name(i));
            text = replace_address(&text, &endpoint(0), &endpoint(i));
            for uid in &uids {
                text = text.replace(uid, &format!("{uid}-{i:05}"));
            }
            let mut copy: serde_json::Value = serde_json::from_str(&text).unwrap();
            if let Some(m) = copy["metadata"].as_object_mut() {
                m.remove("resourceVersion");
            }
            api.restore(copy).unwrap();
        }
    }
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
            mgmt: Management::connect_for_watches(&snow_lifecycle::KubeconfigSource::file(&path))
                .await
                .unwrap(),
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
    // Reconciling from nothing costs the simulated Cluster API controllers time that grows
    // faster than N (each step scans every object): the first CONVERGED clusters are made that
    // way, the rest are copies of the first one's converged objects.
    let converged_count = CLUSTERS.min(CONVERGED);
    for i in 0..converged_count {
        let mut cluster = DeclaredCluster::new(&name(i), 1);
        cluster.endpoint = endpoint(i);
        for object in cluster.objects() {
            api.put(object).unwrap();
        }
    }
    // Converge: reconcile until every cluster is Ready, with the CAPI controllers running.
    let start = Instant::now();
    // The simulated controllers stay (their workload clusters answer the CNI pass), paused once
    // every cluster is Ready: nothing changes while the resyncs are measured.
    let capi = runtime.block_on(async {
        // The simulated kubelets and deployment controllers of every workload API server share
        // this process and its cores with the controller measured: they step every 50 ms.
        api.start_capi(CapiOptions {
            step: Duration::from_millis(50),
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
        while ready(&api) < converged_count {
            assert!(
                start.elapsed() < Duration::from_secs(600 + 10 * CLUSTERS as u64),
                "the clusters never became Ready"
            );
            controller::resync_cached(&ctx, &caches, &metrics, CONCURRENCY).await;
        }
    });
    capi.pause();
    let converged = start.elapsed();
    if CLUSTERS > converged_count {
        let copied = Instant::now();
        copy_converged(&api, converged_count..CLUSTERS);
        // The copies reach the caches through their watches.
        runtime.block_on(async {
            let mut seen = 0;
            // Every Cluster, then every object: nothing more arrives for a second.
            while caches_len(&caches) < CLUSTERS || caches.len() != seen {
                assert!(
                    copied.elapsed() < Duration::from_secs(300),
                    "the caches never saw the copies"
                );
                seen = caches.len();
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        println!(
            "{} clusters copied from {} in {:.2?}",
            CLUSTERS - converged_count,
            name(0),
            copied.elapsed()
        );
    }
    let objects = api.objects().len();
    let grown = rss_kib().saturating_sub(before);
    println!(
        "{converged_count} clusters Ready in {converged:.2?}; {CLUSTERS} clusters, {objects} objects on the stand-in; the process grew {grown} KiB, stand-in and workload clusters included"
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
