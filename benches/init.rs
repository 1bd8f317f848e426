//! `snow_lifecycle::init` of the full provider stack (the real manifests of the reference data:
//! cert-manager v1.20.2, Cluster API v1.13.5 core, kubeadm bootstrap and control plane, etcdadm
//! bootstrap and controller, CAPAS; 148 objects, the inventory CRD and 6 inventory entries) on
//! the Kubernetes API stand-in (HTTPS on loopback), side by side with the real `kubectl apply
//! --server-side` of the same substituted objects (what `snowctl init --dry-run --show-secrets`
//! prints, plus the inventory CRD) in the same run.
//!
//! ```text
//! cargo bench -p snowctl-benches --bench init
//! ```
//!
//! - `first install/snowctl`: a fresh stand-in per iteration, `init::init` in process
//!   (connection and preparation excluded, as kubectl's file is written beforehand).
//! - `first install/kubectl`: a fresh stand-in per iteration, two `kubectl apply --server-side`
//!   processes: the Namespaces and CRDs first, then the rest (one file fails on a fresh cluster:
//!   kubectl cannot map the kinds of CRDs it is creating in the same call), each with an empty
//!   discovery cache (a new server).
//! - `rerun/snowctl`: `init::init` on a stack it installed (changes nothing).
//!
//! Waits: the stand-in's simulated deployment controller passes every 1 ms and init looks every
//! 1 ms, so each Deployment's wait costs at most a few ms (9 Deployments); the stand-in's CRDs are
//! Established when created. kubectl does not wait. Targets: snowctl no slower than kubectl; a
//! re-run under 20% of a first install.

#![allow(clippy::print_stdout)]

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::Value;
use snow_lifecycle::{
    Management,
    init::{
        self, InitOptions,
        components::{ComponentObjects, ComponentSource, STACK},
        envsubst::Values,
        inventory,
    },
};
use snow_test_kube::components::{SHIPPED, TEST_VALUES};
use snow_test_kube::{KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

fn prepared() -> Vec<ComponentObjects> {
    let sources: Vec<ComponentSource> = STACK
        .iter()
        .zip(&SHIPPED)
        .map(|(component, shipped)| ComponentSource {
            component: *component,
            version: shipped.version.into(),
            origin: shipped.file.into(),
            components: shipped.text().expect("reference data"),
        })
        .collect();
    let mut values = Values::default();
    for (name, value) in TEST_VALUES {
        values.set(name, value);
    }
    init::prepare(&sources, &values).expect("prepare")
}

/// kubectl's two files: Namespaces and CRDs (the inventory CRD too), then everything else.
fn kubectl_files(prepared: &[ComponentObjects], dir: &Path) -> (PathBuf, PathBuf) {
    let all: Vec<Value> = serde_saphyr::from_multiple(&init::to_yaml(prepared, true)).unwrap();
    let first_kind =
        |o: &Value| o["kind"] == "Namespace" || o["kind"] == "CustomResourceDefinition";
    let yaml = |objects: Vec<&Value>| {
        objects
            .into_iter()
            .map(|o| format!("---\n{}", serde_saphyr::to_string(o).unwrap()))
            .collect::<String>()
    };
    let crd = inventory::crd();
    let mut first: Vec<&Value> = all.iter().filter(|o| first_kind(o)).collect();
    first.push(&crd);
    let rest: Vec<&Value> = all.iter().filter(|o| !first_kind(o)).collect();
    println!(
        "kubectl applies {} objects ({} first), snowctl the same",
        first.len() + rest.len(),
        first.len()
    );
    let (a, b) = (dir.join("first.yaml"), dir.join("rest.yaml"));
    std::fs::write(&a, yaml(first)).unwrap();
    std::fs::write(&b, yaml(rest)).unwrap();
    (a, b)
}

struct Cluster {
    api: KubeStandIn,
    _workloads: WorkloadHandle,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

async fn cluster() -> Cluster {
    let api = KubeStandIn::start().await.expect("stand-in");
    let workloads = api.start_workloads(WorkloadOptions {
        step: Duration::from_millis(1),
        stall: Vec::new(),
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    Cluster {
        api,
        _workloads: workloads,
        kubeconfig,
        dir,
    }
}

fn options() -> InitOptions {
    InitOptions {
        crd_timeout: Duration::from_secs(60),
        deployment_timeout: Some(Duration::from_secs(60)),
        poll: Duration::from_millis(1),
    }
}

async fn install(mgmt: &Management, prepared: &[ComponentObjects]) -> init::Initialized {
    init::init(mgmt, prepared, &options(), &mut |_| {})
        .await
        .expect("init")
}

fn kubectl(c: &Cluster, file: &Path) {
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&c.kubeconfig)
        .arg("--cache-dir")
        .arg(c.dir.path().join("kube-cache"))
        .args([
            "apply",
            "--server-side",
            "--validate=false",
            "--field-manager",
            "kubectl",
            "-f",
        ])
        .arg(file)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Prints the requests of one run by method, once per side.
fn report(side: &str, requests: &[String]) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut seen) = SEEN.lock() else { return };
    if seen.iter().any(|s| s == side) {
        return;
    }
    seen.push(side.to_owned());
    let mut by_method = std::collections::BTreeMap::<&str, usize>::new();
    for r in requests {
        *by_method
            .entry(r.split(' ').next().unwrap_or(""))
            .or_default() += 1;
    }
    println!("{side}: {} requests {by_method:?}", requests.len());
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let prepared = prepared();
    let dir = tempfile::tempdir().unwrap();
    let (first, rest) = kubectl_files(&prepared, dir.path());

    let mut group = c.benchmark_group("init/first install");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("snowctl", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += rt.block_on(async {
                    let c = cluster().await;
                    let mgmt =
                        Management::connect(&snow_lifecycle::KubeconfigSource::file(&c.kubeconfig))
                            .await
                            .unwrap();
                    let start = Instant::now();
                    let done = install(&mgmt, &prepared).await;
                    let took = start.elapsed();
                    report("snowctl", &c.api.requests());
                    assert!(!done.unchanged());
                    assert_eq!(
                        c.api
                            .list("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", None)
                            .len(),
                        6
                    );
                    took
                });
            }
            total
        })
    });
    group.bench_function("kubectl", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let c = rt.block_on(cluster());
                let start = Instant::now();
                kubectl(&c, &first);
                kubectl(&c, &rest);
                total += start.elapsed();
                report("kubectl", &c.api.requests());
                assert_eq!(
                    c.api
                        .list("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", None)
                        .len(),
                    6
                );
                rt.block_on(async move { drop(c) });
            }
            total
        })
    });
    group.finish();

    let mut group = c.benchmark_group("init/rerun");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    let (installed, mgmt) = rt.block_on(async {
        let c = cluster().await;
        let mgmt = Management::connect(&snow_lifecycle::KubeconfigSource::file(&c.kubeconfig))
            .await
            .unwrap();
        install(&mgmt, &prepared).await;
        (c, mgmt)
    });
    group.bench_function("snowctl", |b| {
        b.iter(|| {
            let done = rt.block_on(install(&mgmt, &prepared));
            assert!(done.unchanged());
        })
    });
    group.finish();
    rt.block_on(async move { drop((installed, mgmt)) });
}

criterion_group!(benches, bench);
criterion_main!(benches);
