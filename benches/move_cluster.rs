//! `snow_lifecycle::move_cluster` of one large cluster between two Kubernetes API stand-ins
//! (HTTPS on loopback): 3 control-plane and 3 etcd machines and 10 worker groups of 10 machines,
//! with every Cluster API, bootstrap and infrastructure object such a cluster has (per machine a
//! Machine, its KubeadmConfig or EtcdadmConfig, its AWSSnowMachine and its bootstrap-data
//! Secret; per group a MachineDeployment, MachineSet, KubeadmConfigTemplate,
//! AWSSnowMachineTemplate and MachineHealthCheck; the Cluster's Secrets, identity Secret and
//! snowctl inventory), seeded directly into the source stand-in's store. The CRDs are the real
//! ones of the reference components manifests, labelled as `clusterctl init` labels them.
//!
//! ```text
//! cargo bench --workspace --bench move_cluster --profile dev
//! ```
//!
//! Each iteration moves the cluster to the other stand-in (back and forth), once level by level
//! with 16 objects at a time, once one object at a time (concurrency 1). No controllers run, so
//! the pause settles at once; the settle interval is 10 ms. Both pairs run twice: with the
//! stand-ins answering as fast as they can (all in this process, so CPU-bound), and with every
//! request delayed by [`LATENCY`] as a real API server's round trip and etcd commit delay it.
//! Target: at least 5× faster level by level than one at a time.

#![allow(clippy::print_stdout)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use snow_lifecycle::{Destination, Management, MoveOptions, move_cluster};
use snow_test_kube::KubeStandIn;
use std::{cell::Cell, path::PathBuf, time::Duration};

const NS: &str = "eksa-system";
const CLUSTER: &str = "big";
const GROUPS: usize = 10;
const PER_GROUP: usize = 10;
const CORE: &str = "cluster.x-k8s.io/v1beta2";
const BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io/v1beta2";
const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io/v1beta2";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";
const ETCD: &str = capi_render::contract::ETCD_API_VERSION;
const ETCD_BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io/v1beta1";
/// What each request costs on a real API server, for the second pair of measurements: a
/// network round trip to the server plus, for a write, its etcd commit (a raft round trip
/// between the members and the leader's fsync; etcd asks for disks whose fsync p99 is under
/// 10 ms). Applied to reads as well, which a real server answers faster from its cache.
const LATENCY: Duration = Duration::from_millis(5);

fn components() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/components")
}

/// The real CRDs of Cluster API, kubeadm, etcdadm and CAPAS, labelled as clusterctl does.
fn install_crds(api: &KubeStandIn) {
    for file in [
        "core-components.yaml",
        "bootstrap-kubeadm-components.yaml",
        "control-plane-kubeadm-components.yaml",
        "bootstrap-etcdadm-bootstrap-components.yaml",
        "bootstrap-etcdadm-controller-components.yaml",
    ] {
        let text = std::fs::read_to_string(components().join(file)).expect(file);
        api.install_crds(&text).expect(file);
    }
    let capas = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/crds/capas-infrastructure-components.yaml");
    api.install_crds(&std::fs::read_to_string(capas).unwrap())
        .unwrap();
    for mut crd in api
        .objects()
        .into_iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
    {
        crd["metadata"]["labels"]["clusterctl.cluster.x-k8s.io"] = json!("");
        if let Some(m) = crd["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        api.put(crd).unwrap();
    }
}

/// Seeds the source store: puts objects owners first, returning each one's UID.
struct Seed<'a> {
    api: &'a KubeStandIn,
    count: Cell<usize>,
}

impl Seed<'_> {
    fn put(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        owners: &[(&Value, bool)],
        extra: Value,
    ) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|(o, controller)| {
                json!({"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"], "uid": o["metadata"]["uid"], "controller": controller, "blockOwnerDeletion": true})
            })
            .collect();
        let mut object = json!({
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {
                "name": name,
                "namespace": NS,
                "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER},
                "annotations": {"bench/seeded": "true"},
            },
        });
        if !refs.is_empty() {
            object["metadata"]["ownerReferences"] = Value::Array(refs);
        }
        if let (Some(o), Some(e)) = (object.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                if k == "labels" {
                    for (lk, lv) in v.as_object().into_iter().flatten() {
                        o["metadata"]["labels"][lk] = lv.clone();
                    }
                } else {
                    o.insert(k.clone(), v.clone());
                }
            }
        }
        self.count.set(self.count.get() + 1);
        self.api.put(object).expect(name)
    }

    /// A Machine with its bootstrap config, infrastructure machine and bootstrap-data Secret.
    fn machine(&self, owner: &Value, name: &str, config: (&str, &str), template: &str) {
        let machine = self.put(
            CORE,
            "Machine",
            name,
            &[(owner, true)],
            json!({
                "spec": {"clusterName": CLUSTER, "version": "v1.33.1",
                    "bootstrap": {"configRef": {"apiGroup": config.0.split('/').next(), "kind": config.1, "name": name}, "dataSecretName": name},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowMachine", "name": name}},
                "status": {"phase": "Running", "nodeRef": {"name": name}, "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
            }),
        );
        let cfg = self.put(
            config.0,
            config.1,
            name,
            &[(&machine, true)],
            json!({"spec": {}, "status": {"ready": true, "dataSecretName": name}}),
        );
        self.put(
            INFRA,
            "AWSSnowMachine",
            name,
            &[(&machine, true)],
            json!({"spec": {"instanceType": "sbe-c.large", "providerID": format!("aws-snow:///192.168.1.11/{name}"), "cloudInit": {"insecureSkipSecretsManager": true}, "imageLookupFormat": template},
                   "status": {"ready": true, "instanceState": "running"}}),
        );
        self.put(
            "v1",
            "Secret",
            name,
            &[(&cfg, true)],
            json!({"type": "cluster.x-k8s.io/secret", "data": {"value": "Ym9vdHN0cmFwIGRhdGE=", "format": "Y2xvdWQtY29uZmln"}}),
        );
    }
}

fn seed(api: &KubeStandIn) -> usize {
    let s = Seed {
        api,
        count: Cell::new(0),
    };
    let cluster = s.put(
        CORE,
        "Cluster",
        CLUSTER,
        &[],
        json!({
            "spec": {"controlPlaneEndpoint": {"host": "192.168.1.100", "port": 6443},
                "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": CLUSTER},
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowCluster", "name": CLUSTER}},
            "status": {"phase": "Provisioned", "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
                "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
        }),
    );
    let c = (&cluster, false);
    s.put(
        INFRA,
        "AWSSnowCluster",
        CLUSTER,
        &[(&cluster, true)],
        json!({"spec": {"region": "snow"}, "status": {"ready": true}}),
    );
    for secret in ["kubeconfig", "ca", "etcd", "sa", "proxy"] {
        s.put("v1", "Secret", &format!("{CLUSTER}-{secret}"), &[c], json!({"type": "cluster.x-k8s.io/secret", "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}}));
    }
    s.put("v1", "Secret", &format!("{CLUSTER}-snow-credentials"), &[], json!({"labels": {"clusterctl.cluster.x-k8s.io/move": "true"}, "type": "Opaque", "data": {"credentials": "W2RldmljZV0K", "ca-bundle": "LS0tLS1CRUdJTgo="}}));
    s.put(
        "v1",
        "ConfigMap",
        &format!("{CLUSTER}-snowctl"),
        &[],
        json!({"data": {"cluster": CLUSTER}}),
    );

    let cp_template = format!("{CLUSTER}-control-plane-1");
    s.put(
        INFRA,
        "AWSSnowMachineTemplate",
        &cp_template,
        &[c],
        json!({"spec": {"template": {"spec": {"instanceType": "sbe-c.large"}}}}),
    );
    let kcp = s.put(
        CONTROL_PLANE,
        "KubeadmControlPlane",
        CLUSTER,
        &[(&cluster, true)],
        json!({"spec": {"replicas": 3, "version": "v1.33.1", "machineTemplate": {"spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowMachineTemplate", "name": cp_template}}}},
               "status": {"replicas": 3, "readyReplicas": 3, "initialization": {"controlPlaneInitialized": true}}}),
    );
    for i in 0..3 {
        s.machine(
            &kcp,
            &format!("{CLUSTER}-cp-{i}"),
            (BOOTSTRAP, "KubeadmConfig"),
            &cp_template,
        );
    }
    s.put(CORE, "MachineHealthCheck", &format!("{CLUSTER}-kcp-unhealthy"), &[c], json!({"spec": {"clusterName": CLUSTER, "selector": {"matchLabels": {"cluster.x-k8s.io/control-plane": ""}}}}));

    let etcd_template = format!("{CLUSTER}-etcd-1");
    s.put(
        INFRA,
        "AWSSnowMachineTemplate",
        &etcd_template,
        &[c],
        json!({"spec": {"template": {"spec": {"instanceType": "sbe-c.large"}}}}),
    );
    let etcd = s.put(
        ETCD,
        "EtcdadmCluster",
        &format!("{CLUSTER}-etcd"),
        &[(&cluster, true)],
        json!({"spec": {"replicas": 3, "infrastructureTemplate": {"apiVersion": INFRA, "kind": "AWSSnowMachineTemplate", "name": etcd_template}}, "status": {"ready": true}}),
    );
    for i in 0..3 {
        s.machine(
            &etcd,
            &format!("{CLUSTER}-etcd-{i}"),
            (ETCD_BOOTSTRAP, "EtcdadmConfig"),
            &etcd_template,
        );
    }

    for g in 0..GROUPS {
        let group = format!("{CLUSTER}-md-{g}");
        let template = format!("{group}-1");
        s.put(
            INFRA,
            "AWSSnowMachineTemplate",
            &template,
            &[c],
            json!({"spec": {"template": {"spec": {"instanceType": "sbe-c.xlarge"}}}}),
        );
        s.put(
            BOOTSTRAP,
            "KubeadmConfigTemplate",
            &template,
            &[c],
            json!({"spec": {"template": {"spec": {}}}}),
        );
        let md = s.put(
            CORE,
            "MachineDeployment",
            &group,
            &[c],
            json!({"spec": {"clusterName": CLUSTER, "replicas": PER_GROUP, "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": group}},
                "template": {"spec": {"clusterName": CLUSTER, "version": "v1.33.1",
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": template}},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowMachineTemplate", "name": template}}}},
                "status": {"replicas": PER_GROUP, "readyReplicas": PER_GROUP}}),
        );
        let ms = s.put(CORE, "MachineSet", &format!("{group}-abcde"), &[(&md, true)], json!({"spec": {"clusterName": CLUSTER, "replicas": PER_GROUP}, "status": {"replicas": PER_GROUP}}));
        s.put(CORE, "MachineHealthCheck", &format!("{group}-worker-unhealthy"), &[c], json!({"spec": {"clusterName": CLUSTER, "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": group}}}}));
        for m in 0..PER_GROUP {
            s.machine(
                &ms,
                &format!("{group}-abcde-{m}"),
                (BOOTSTRAP, "KubeadmConfig"),
                &template,
            );
        }
    }
    s.count.get()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (apis, mgmts) = runtime.block_on(async {
        let mut apis = Vec::new();
        let mut mgmts = Vec::new();
        for i in 0..2 {
            let api = KubeStandIn::start().await.unwrap();
            install_crds(&api);
            let sub = dir.path().join(i.to_string());
            std::fs::create_dir(&sub).unwrap();
            let path = api.write_kubeconfig(&sub).unwrap();
            mgmts.push(
                Management::connect(&snow_lifecycle::KubeconfigSource::file(&path))
                    .await
                    .unwrap(),
            );
            apis.push(api);
        }
        (apis, mgmts)
    });
    let objects = seed(&apis[0]);
    println!("{objects} objects seeded");
    // Which stand-in holds the cluster now.
    let at = Cell::new(0usize);
    let run = |concurrency: usize| {
        let from = at.get();
        let options = MoveOptions {
            concurrency,
            settle: Duration::from_millis(10),
            ..MoveOptions::default()
        };
        let moved = runtime
            .block_on(move_cluster(
                &mgmts[from],
                CLUSTER,
                Destination::Cluster(&mgmts[1 - from]),
                &options,
                &mut |_| {},
            ))
            .unwrap();
        assert_eq!(moved.objects, objects, "every object moved");
        assert_eq!(
            moved.deleted, objects,
            "every object deleted from the source"
        );
        at.set(1 - from);
        moved.levels
    };
    let mut group = c.benchmark_group("move_cluster");
    for latency in [Duration::ZERO, LATENCY] {
        for api in &apis {
            api.set_latency(latency);
        }
        let with = if latency.is_zero() {
            "no latency".to_owned()
        } else {
            format!("{latency:?} a request")
        };
        // One move of each kind outside the measurements, with the time of each step printed.
        for concurrency in [16, 1] {
            let from = at.get();
            let before: Vec<usize> = apis.iter().map(|a| a.requests().len()).collect();
            let start = std::time::Instant::now();
            let options = MoveOptions {
                concurrency,
                settle: Duration::from_millis(10),
                ..MoveOptions::default()
            };
            println!("{with}, concurrency {concurrency}:");
            let moved = runtime
                .block_on(move_cluster(
                    &mgmts[from],
                    CLUSTER,
                    Destination::Cluster(&mgmts[1 - from]),
                    &options,
                    &mut |e| {
                        if let snow_lifecycle::Event::Step(step) = e {
                            println!("  {:>8.2?} {step}", start.elapsed());
                        }
                    },
                ))
                .unwrap();
            println!(
                "  {:>8.2?} done: {} ownership levels, {} requests to the source, {} to the target",
                start.elapsed(),
                moved.levels,
                apis[from].requests().len() - before[from],
                apis[1 - from].requests().len() - before[1 - from],
            );
            at.set(1 - from);
        }
        group.bench_function(
            format!("{objects} objects, {with}, level by level, 16 at a time"),
            |b| b.iter(|| run(16)),
        );
        group.bench_function(format!("{objects} objects, {with}, one at a time"), |b| {
            b.iter(|| run(1))
        });
    }
    group.finish();
    drop(apis);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
