//! `snowctl import cluster`, `get clusters` and the refusals for an imported cluster, through the
//! binary: two moto devices (IAM enforced once a read-only user exists), a kubeadm-style
//! workload cluster (a Kubernetes stand-in holding its Nodes and a Cilium DaemonSet), and a
//! management stand-in running the simulated Cluster API and CAPAS controllers.

use super::{show, text};
use serde_json::{Value, json};
use snow_test_devices::{TestCa, fleet};
use snow_test_kube::KubeStandIn;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn snowctl(args: &[&str]) -> Output {
    // A directory of its own: a refused command writes its support bundle under ./CLUSTER/.
    let cwd = tempfile::tempdir().expect("a working directory");
    Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .current_dir(cwd.path())
        .args(args)
        .env_remove("KUBECONFIG")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env("NO_COLOR", "1")
        .output()
        .expect("snowctl runs")
}

/// `ip → (access key id, secret)` of a credentials file snowctl wrote.
fn keys(path: &Path) -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = BTreeMap::new();
    let mut section = String::new();
    let mut id = String::new();
    for line in text.lines() {
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.to_owned();
        } else if let Some(v) = line.strip_prefix("aws_access_key_id = ") {
            id = v.to_owned();
        } else if let Some(v) = line.strip_prefix("aws_secret_access_key = ") {
            out.insert(section.clone(), (id.clone(), v.to_owned()));
        }
    }
    out
}

fn node(name: &str, role: Option<&str>, provider_id: Option<&str>, ip: &str) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": name});
    if let Some(role) = role {
        labels[format!("node-role.kubernetes.io/{role}")] = json!("");
    }
    let mut spec = json!({});
    if let Some(id) = provider_id {
        spec["providerID"] = json!(id);
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "nodeInfo": {"kubeletVersion": "v1.31.4-eks-1-31-12", "osImage": "Ubuntu 22.04.5 LTS"},
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": "True"}],
        }
    })
}

/// Every write verb a Kubernetes request line can start with.
fn writes(requests: &[String]) -> Vec<&String> {
    requests
        .iter()
        .filter(|r| {
            ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .any(|v| r.starts_with(v))
        })
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn import_observes_refreshes_refuses_and_lists_the_site_without_writing_to_devices() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("import CLI CA").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = rt.block_on(fleet::fleet(&ca, 2, &[]));
    let (root, bundle) = f.write_files(&ca, &[], dir.path());
    let (a, b) = (&f.devices[0], &f.devices[1]);
    let (ip_a, ip_b) = (f.ips[0].to_string(), f.ips[1].to_string());

    // The existing cluster: a control-plane instance on device a (found by provider ID), two
    // workers on device b (found by address: moto gives both devices the same addresses, so
    // a holds nothing else); on b an instance of managed cluster "alpha" and a stray one.
    let (cp, w1, w2, stray, alpha_1, ips) = rt.block_on(async {
        let ami_a = fleet::seed(a, true).await;
        let ami_b = fleet::seed(b, true).await;
        let (sa, sb) = (fleet::subnet(a).await, fleet::subnet(b).await);
        let cp = fleet::instance(a, &ami_a, &sa, "legacy-cp", None).await;
        let alpha_1 = fleet::instance(b, &ami_b, &sb, "alpha-cp", Some("alpha")).await;
        let w1 = fleet::instance(b, &ami_b, &sb, "legacy-w1", None).await;
        let w2 = fleet::instance(b, &ami_b, &sb, "legacy-w2", None).await;
        let stray = fleet::instance(b, &ami_b, &sb, "stray", None).await;
        fleet::dni(a, &cp).await;
        let mut ips = BTreeMap::new();
        for (d, id) in [(a, &cp), (b, &w1), (b, &w2)] {
            let out = d
                .ec2()
                .describe_instances()
                .instance_ids(id)
                .send()
                .await
                .unwrap();
            let i = &out.reservations()[0].instances()[0];
            ips.insert(id.clone(), i.private_ip_address().unwrap().to_owned());
        }
        (cp, w1, w2, stray, alpha_1, ips)
    });

    // A read-only user on both devices, made with the root file; from then on moto enforces
    // IAM and the Device API stand-in accepts the new keys.
    let ro = dir.path().join("read-only");
    let out = snowctl(&[
        "credentials",
        "create-scoped-user",
        "--read-only",
        "--user",
        "viewer",
        "--output-file",
        ro.to_str().unwrap(),
        "--iam-port",
        "8243",
        "--credentials",
        root.to_str().unwrap(),
        "--ca-bundle",
        bundle.to_str().unwrap(),
        "--timeout",
        "5s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let ro_keys = keys(&ro);
    for (i, ip) in f.ips.iter().enumerate() {
        let (id, secret) = &ro_keys[&ip.to_string()];
        f.apis[i].allow_key(id, secret);
        f.motos[i].reset_auth(ca.pem(), 0).unwrap();
    }

    // The workload cluster.
    let workload = rt.block_on(KubeStandIn::start()).unwrap();
    workload
        .put(node(
            "legacy-cp",
            Some("control-plane"),
            Some(&format!("aws-snow:////{cp}")),
            "10.9.9.9",
        ))
        .unwrap();
    workload
        .put(node("legacy-w1", None, None, &ips[&w1]))
        .unwrap();
    workload
        .put(node("legacy-w2", None, None, &ips[&w2]))
        .unwrap();
    workload
        .put(json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "cilium", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"k8s-app": "cilium"}}, "template": {"metadata": {"labels": {"k8s-app": "cilium"}}, "spec": {"containers": [{"name": "cilium-agent", "image": "public.ecr.aws/isovalent/cilium:v1.15.16"}]}}}
        }))
        .unwrap();
    let wl_dir = dir.path().join("wl");
    std::fs::create_dir(&wl_dir).unwrap();
    let wl_kubeconfig = workload.write_kubeconfig(&wl_dir).unwrap();

    // The management cluster, with Cluster API and CAPAS simulated, and managed cluster alpha.
    let kube = rt.block_on(KubeStandIn::start()).unwrap();
    kube.install_capi().unwrap();
    let _capi = {
        let _guard = rt.enter();
        kube.start_capi(snow_test_kube::capi::CapiOptions::default())
    };
    kube.put(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "alpha", "namespace": "eksa-system"}, "spec": {}
    }))
    .unwrap();
    let mgmt = kube.write_kubeconfig(dir.path()).unwrap();
    let mgmt = mgmt.to_str().unwrap();
    let devices = format!("{ip_a},{ip_b}");
    let import_args = [
        "import",
        "cluster",
        "legacy",
        "--kubeconfig",
        mgmt,
        "--workload-kubeconfig",
        wl_kubeconfig.to_str().unwrap(),
        "--devices",
        &devices,
        "--credentials",
        ro.to_str().unwrap(),
        "--ca-bundle",
        bundle.to_str().unwrap(),
        "--timeout",
        "5s",
    ];

    // The import: read-only on the devices and the workload cluster.
    let before = [f.motos[0].actions().len(), f.motos[1].actions().len()];
    let api_before = [f.apis[0].log().len(), f.apis[1].log().len()];
    let wl_before = workload.requests().len();
    let out = snowctl(&import_args);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = text(&out.stdout);
    for line in [
        format!(
            "node legacy-cp (control-plane) v1.31.4-eks-1-31-12 Ready Ubuntu 22.04.5 LTS on {ip_a} instance {cp} sbe-c.large"
        ),
        format!(
            "node legacy-w1 (worker) v1.31.4-eks-1-31-12 Ready Ubuntu 22.04.5 LTS on {ip_b} instance {w1}"
        ),
        format!("on {ip_b} instance {w2}"),
        "cni: cilium (public.ecr.aws/isovalent/cilium:v1.15.16)".to_owned(),
    ] {
        assert!(stdout.contains(&line), "{line}\n{}", show(&out));
    }
    assert!(stdout.contains("dnis 1 (by providerId)"), "{}", show(&out));
    assert!(
        stdout.contains("key - dnis 0 (by address)"),
        "{}",
        show(&out)
    );
    for (i, m) in f.motos.iter().enumerate() {
        let actions = &m.actions()[before[i]..];
        assert!(!actions.is_empty());
        assert!(
            actions.iter().all(|a| a.starts_with("Describe")),
            "a device write during an import: {actions:?}"
        );
    }
    for (i, api) in f.apis.iter().enumerate() {
        let calls = &api.log()[api_before[i]..];
        assert!(!calls.is_empty());
        assert!(calls.iter().all(|l| l.starts_with("Describe")), "{calls:?}");
    }
    let wl_requests = workload.requests();
    assert!(
        writes(&wl_requests[wl_before..]).is_empty(),
        "{wl_requests:?}"
    );

    // What was recorded, and that no provider acted on it.
    let ns = Some("eksa-system");
    let infra = kube
        .get(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "AWSSnowCluster",
            ns,
            "legacy",
        )
        .unwrap();
    assert_eq!(
        infra["metadata"]["annotations"]["cluster.x-k8s.io/managed-by"],
        "snowctl"
    );
    assert_eq!(infra["status"]["ready"], true);
    assert_eq!(infra["spec"]["controlPlaneEndpoint"]["host"], "127.0.0.1");
    wait_for(
        "Cluster API to own the AWSSnowCluster and provision the Cluster",
        || {
            let c = kube
                .get("cluster.x-k8s.io/v1beta2", "Cluster", ns, "legacy")
                .unwrap();
            c["status"]["phase"] == "Provisioned"
        },
    );
    let infra = kube
        .get(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "AWSSnowCluster",
            ns,
            "legacy",
        )
        .unwrap();
    // The simulated CAPAS marks what it reconciles with conditions: none here.
    assert!(infra["status"]["conditions"].is_null(), "{infra:#}");
    assert_eq!(infra["metadata"]["ownerReferences"][0]["name"], "legacy");
    let cluster = kube
        .get("cluster.x-k8s.io/v1beta2", "Cluster", ns, "legacy")
        .unwrap();
    assert!(cluster["spec"]["controlPlaneRef"].is_null());
    assert_eq!(
        cluster["status"]["initialization"]["controlPlaneInitialized"],
        false
    );
    for kind in ["Machine", "MachineDeployment"] {
        assert!(
            kube.list("cluster.x-k8s.io/v1beta2", kind, ns).is_empty(),
            "{kind}"
        );
    }
    assert!(
        kube.list(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            ns
        )
        .is_empty()
    );
    let secret = kube.get("v1", "Secret", ns, "legacy-kubeconfig").unwrap();
    assert_eq!(secret["type"], "cluster.x-k8s.io/secret");
    assert_eq!(
        secret["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
        "legacy"
    );
    use base64::Engine as _;
    let value = base64::engine::general_purpose::STANDARD
        .decode(secret["data"]["value"].as_str().unwrap())
        .unwrap();
    assert_eq!(value, std::fs::read(&wl_kubeconfig).unwrap());
    let observed = |kube: &KubeStandIn| -> Value {
        let cm = kube.get("v1", "ConfigMap", ns, "legacy-observed").unwrap();
        serde_json::from_str(cm["data"]["observed.json"].as_str().unwrap()).unwrap()
    };
    assert_eq!(observed(&kube)["nodes"].as_array().unwrap().len(), 3);

    // describe cluster shows the observation; kubectl finds the records by their label.
    let out = snowctl(&["describe", "cluster", "legacy", "--kubeconfig", mgmt]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stdout).contains(&format!(
            "legacy-cp control-plane v1.31.4-eks-1-31-12 Ready on {ip_a} {cp} sbe-c.large"
        )),
        "{}",
        show(&out)
    );
    let out = Command::new("kubectl")
        .args([
            "--kubeconfig",
            mgmt,
            "-n",
            "eksa-system",
            "get",
            "configmaps,secrets",
        ])
        .args([
            "-l",
            "snowctl.anywhere.eks.amazonaws.com/imported=true",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl runs");
    assert_eq!(
        text(&out.stdout),
        "configmap/legacy-observed\nsecret/legacy-kubeconfig\n",
        "{}",
        show(&out)
    );
    // An import never takes over a cluster that was not imported.
    let mut over_alpha = import_args;
    over_alpha[2] = "alpha";
    let out = snowctl(&over_alpha);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("was not imported"),
        "{}",
        show(&out)
    );

    // A re-run after a worker left: the observation follows; still no device write.
    workload.delete("v1", "Node", None, "legacy-w2").unwrap();
    let before = [f.motos[0].actions().len(), f.motos[1].actions().len()];
    let out = snowctl(&import_args);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("Cluster legacy refreshed"),
        "{}",
        show(&out)
    );
    assert!(!text(&out.stdout).contains("legacy-w2"), "{}", show(&out));
    let names: Vec<Value> = observed(&kube)["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].clone())
        .collect();
    assert_eq!(names, [json!("legacy-cp"), json!("legacy-w1")]);
    for (i, m) in f.motos.iter().enumerate() {
        assert!(
            m.actions()[before[i]..]
                .iter()
                .all(|a| a.starts_with("Describe"))
        );
    }

    // The site view: both clusters, their devices, the stray instance unaccounted (w2 too: it
    // backs no node any more).
    let site = [
        "get",
        "clusters",
        "--kubeconfig",
        mgmt,
        "-o",
        "json",
        "--devices",
        &devices,
        "--credentials",
        ro.to_str().unwrap(),
        "--ca-bundle",
        bundle.to_str().unwrap(),
    ];
    let out = snowctl(&site);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let view: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clusters = view["clusters"].as_array().unwrap();
    assert_eq!(clusters[0]["name"], "alpha");
    assert_eq!(clusters[0]["kind"], "managed");
    assert_eq!(clusters[0]["devices"], json!([ip_b]));
    assert_eq!(clusters[1]["name"], "legacy");
    assert_eq!(clusters[1]["kind"], "imported");
    assert_eq!(
        clusters[1]["kubernetesVersions"],
        json!(["v1.31.4-eks-1-31-12"])
    );
    assert_eq!(clusters[1]["controlPlaneNodes"], 1);
    assert_eq!(clusters[1]["workerNodes"], 1);
    assert_eq!(clusters[1]["ready"], true);
    let mut devs = vec![ip_a.clone(), ip_b.clone()];
    devs.sort();
    assert_eq!(clusters[1]["devices"], json!(devs));
    let mut unaccounted: Vec<&str> = view["unaccounted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_str().unwrap())
        .collect();
    unaccounted.sort();
    let mut want = vec![stray.as_str(), w2.as_str()];
    want.sort();
    assert_eq!(unaccounted, want);
    assert!(!unaccounted.contains(&alpha_1.as_str()));
    let out = snowctl(&["get", "clusters", "--kubeconfig", mgmt]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("legacy\timported\tv1.31.4-eks-1-31-12\t1\t1\t2/2\t"),
        "{}",
        show(&out)
    );

    // Hands off: delete, move and devices cleanup refuse the imported cluster.
    let refused = "was imported observe-only";
    // Upgrade (and its plan) of a spec of that name, with no helm on PATH: the cluster is said
    // to be imported before helm is looked up (issue 36), and nothing on the management
    // cluster is written or changed.
    let spec = dir.path().join("legacy.yaml");
    let yaml = snow_test_kube::edge_spec::EdgeSpec::default().yaml();
    // The Cluster renamed (its first document); its datacenter and machine configs keep theirs.
    std::fs::write(&spec, yaml.replacen("name: edge\n", "name: legacy\n", 1)).unwrap();
    let no_helm = dir.path().join("no-helm");
    std::fs::create_dir(&no_helm).unwrap();
    let versions = || {
        let mut all: Vec<(String, String)> = kube
            .objects()
            .iter()
            .map(|o| {
                let meta = &o["metadata"];
                let id = format!("{}/{}/{}", o["kind"], meta["namespace"], meta["name"]);
                (id, meta["resourceVersion"].to_string())
            })
            .collect();
        all.sort();
        all
    };
    for words in [&["upgrade", "cluster"][..], &["upgrade", "plan", "cluster"]] {
        let (writes, before) = (kube.writes(), versions());
        let cwd = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_snowctl"))
            .current_dir(cwd.path())
            .args(words)
            .args(["-f", spec.to_str().unwrap(), "--kubeconfig", mgmt])
            .args(["--bundles", super::SAMPLE_BUNDLES])
            .args(["--credentials", ro.to_str().unwrap()])
            .args(["--ca-bundle", bundle.to_str().unwrap()])
            .env_remove("KUBECONFIG")
            .env("PATH", &no_helm)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{words:?}: {}", show(&out));
        let stderr = text(&out.stderr);
        let action = format!("{} is refused", words[..2].join(" "));
        assert!(
            stderr.contains("cluster legacy was imported observe-only") && stderr.contains(&action),
            "{words:?}: {}",
            show(&out)
        );
        assert!(!stderr.contains("helm"), "{words:?}: {}", show(&out));
        assert_eq!(kube.writes(), writes, "{words:?}: {}", show(&out));
        assert_eq!(versions(), before, "{words:?}: {}", show(&out));
    }
    let out = snowctl(&["delete", "cluster", "legacy", "--kubeconfig", mgmt]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text(&out.stderr).contains(refused), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("--records-only"),
        "{}",
        show(&out)
    );
    let backup = dir.path().join("backup");
    let out = snowctl(&[
        "move",
        "cluster",
        "legacy",
        "--kubeconfig",
        mgmt,
        "--to-directory",
        backup.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text(&out.stderr).contains(refused), "{}", show(&out));
    let out = snowctl(&[
        "devices",
        "cleanup",
        "legacy",
        "--yes",
        "--kubeconfig",
        mgmt,
        "--devices",
        &devices,
        "--credentials",
        ro.to_str().unwrap(),
        "--ca-bundle",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text(&out.stderr).contains(refused), "{}", show(&out));
    assert!(
        kube.get("cluster.x-k8s.io/v1beta2", "Cluster", ns, "legacy")
            .is_some()
    );
    // --records-only refuses a cluster that was not imported.
    let out = snowctl(&[
        "delete",
        "cluster",
        "alpha",
        "--records-only",
        "--kubeconfig",
        mgmt,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("was not imported"),
        "{}",
        show(&out)
    );

    // --records-only: the records go; the instances stay (listed as unaccounted now).
    let out = snowctl(&[
        "delete",
        "cluster",
        "legacy",
        "--records-only",
        "--kubeconfig",
        mgmt,
        "--poll-interval",
        "50ms",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        kube.get("cluster.x-k8s.io/v1beta2", "Cluster", ns, "legacy")
            .is_none()
    );
    assert!(
        kube.get(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "AWSSnowCluster",
            ns,
            "legacy"
        )
        .is_none()
    );
    assert!(kube.get("v1", "Secret", ns, "legacy-kubeconfig").is_none());
    assert!(kube.get("v1", "ConfigMap", ns, "legacy-observed").is_none());
    let out = snowctl(&site);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let view: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut running: Vec<&str> = view["unaccounted"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["state"] == "running")
        .map(|u| u["id"].as_str().unwrap())
        .collect();
    running.sort();
    let mut want = vec![cp.as_str(), w1.as_str(), w2.as_str(), stray.as_str()];
    want.sort();
    assert_eq!(running, want);
    // Over the whole run with the read-only user, moto refused nothing and was asked nothing
    // but Describe calls.
    for m in &f.motos {
        let log = m.log();
        assert!(!log.contains("AccessDenied"), "{log}");
    }
}

#[test]
fn a_workload_kubeconfig_that_would_run_a_program_is_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = |server: &str, user: &str| {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user:\n{user}"
        )
    };
    let mgmt = dir.path().join("mgmt");
    std::fs::write(&mgmt, kubeconfig("https://127.0.0.1:1", "    token: t\n")).unwrap();
    let workload = dir.path().join("workload");
    let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/touch\n      args: [/tmp/snowctl-import-ran]\n";
    std::fs::write(&workload, kubeconfig("https://127.0.0.1:1", exec)).unwrap();
    let out = snowctl(&[
        "import",
        "cluster",
        "legacy",
        "--kubeconfig",
        mgmt.to_str().unwrap(),
        "--workload-kubeconfig",
        workload.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("has `exec`"), "{}", show(&out));
    assert!(stderr.contains("must stand alone"), "{}", show(&out));
}
