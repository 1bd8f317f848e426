//! `snowctl devices …` through the binary against two devices (moto for EC2 and the Device API
//! stand-in, each over TLS on its own loopback address) and a third with a profile and nothing
//! listening: inventory, usable AMIs, key import, and cleanup with a refused DNI delete, the
//! order DNIs → instances, re-runs, and the management-cluster refusal.

use super::{show, text};
use serde_json::{Value, json};
use snow_test_devices::fleet::{self, KEY, KEY_MATERIAL};
use snow_test_devices::{Faults, TestCa, loopback_ip};
use std::process::{Command, Output};

fn snowctl(args: &[&str], files: &(std::path::PathBuf, std::path::PathBuf)) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(args)
        .arg("--credentials")
        .arg(&files.0)
        .arg("--ca-bundle")
        .arg(&files.1)
        .args(["--timeout", "5s"])
        // No management cluster found: no KUBECONFIG, and a home without ~/.kube/config.
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-snowctl-test")
        .env("NO_COLOR", "1")
        .output()
        .expect("snowctl runs")
}

#[test]
fn describe_images_import_key_and_cleanup_over_two_devices_and_one_down() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("devices CLI CA").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = rt.block_on(fleet::fleet(&ca, 2, &[]));
    let (a, b) = (&f.devices[0], &f.devices[1]);
    let (a1, a2, other, b1, dni_a1, dni_other, dni_b1, refused) = rt.block_on(async {
        let (ami_a, ami_b) = (fleet::seed(a, true).await, fleet::seed(b, false).await);
        let (net_a, net_b) = (fleet::subnet(a).await, fleet::subnet(b).await);
        let a1 = fleet::instance(a, &ami_a, &net_a, "alpha-cp-1", Some("alpha")).await;
        let a2 = fleet::instance(a, &ami_a, &net_a, "alpha-md-1", Some("alpha")).await;
        let other = fleet::instance(a, &ami_a, &net_a, "beta-cp-1", Some("beta")).await;
        let b1 = fleet::instance(b, &ami_b, &net_b, "alpha-cp-2", Some("alpha")).await;
        let dni_a1 = fleet::dni(a, &a1).await;
        let dni_other = fleet::dni(a, &other).await;
        let dni_b1 = fleet::dni(b, &b1).await;
        let refused = fleet::dni(b, &b1).await;
        (a1, a2, other, b1, dni_a1, dni_other, dni_b1, refused)
    });
    f.apis[1].set_faults(Faults {
        refuse_dni_delete: vec![refused.clone()],
        ..Faults::default()
    });
    let down = loopback_ip();
    let files = f.write_files(&ca, &[down], dir.path());
    let (ip_a, ip_b) = (f.ips[0].to_string(), f.ips[1].to_string());
    let all = format!("{ip_a},{ip_b},{down}");
    let both = format!("{ip_a},{ip_b}");

    // Describe: the down device is listed with its reason (exit 1), the others in full.
    let out = snowctl(&["devices", "describe", "--devices", &all], &files);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("cluster alpha:"), "{}", show(&out));
    assert!(
        stdout.contains(&format!("device {down}: unreachable")),
        "{}",
        show(&out)
    );
    for id in [&a1, &a2, &other, &b1] {
        assert!(stdout.contains(id.as_str()), "{id}: {}", show(&out));
    }
    let out = snowctl(
        &["devices", "describe", "--devices", &both, "-o", "json"],
        &files,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["devices"][0]["clusters"]["alpha"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        json["devices"][1]["clusters"]["alpha"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(json["devices"][0]["keyPairs"], json!([KEY]));
    super::assert_camel_case(&json, &["clusters", "tags"]);

    // The devices of a spec: its machine configs' devices, not the down one.
    let spec = Command::new(env!("CARGO_BIN_EXE_snowctl"))
        .args(["generate", "clusterconfig", "alpha", "--provider", "snow"])
        .arg(format!("--devices={both}"))
        .args(["--endpoint", "192.0.2.10", "--ssh-key-name", KEY])
        .output()
        .unwrap();
    assert!(spec.status.success(), "{}", show(&spec));
    let spec_path = dir.path().join("alpha.yaml");
    std::fs::write(&spec_path, &spec.stdout).unwrap();
    let out = snowctl(
        &[
            "devices",
            "describe",
            "-f",
            spec_path.to_str().unwrap(),
            "-o",
            "json",
        ],
        &files,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed: Vec<&str> = (json["devices"].as_array().unwrap().iter())
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ip_a.as_str(), ip_b.as_str()]);

    // Usable AMIs as preflight picks them; none for another version is exit 1.
    let images = ["devices", "images", "--devices", &both, "--os", "ubuntu"];
    let out = snowctl(
        &[&images[..], &["--kubernetes-version", "1.31"]].concat(),
        &files,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("(preflight uses this one)"),
        "{}",
        show(&out)
    );
    let out = snowctl(
        &[&images[..], &["--kubernetes-version", "1.30"]].concat(),
        &files,
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));

    // Key import: device b lacks the key and gets it; a re-run changes nothing; a file that is
    // not a public key is exit 2.
    let key = dir.path().join("key.pub");
    std::fs::write(&key, KEY_MATERIAL).unwrap();
    let import = [
        "devices",
        "import-key",
        KEY,
        "--public-key",
        key.to_str().unwrap(),
    ];
    let has_key = |device| {
        rt.block_on(fleet::key_pairs(device))
            .contains(&KEY.to_owned())
    };
    assert!(!has_key(b));
    let out = snowctl(&[&import[..], &["--devices", &both]].concat(), &files);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(has_key(b));
    let out = snowctl(&[&import[..], &["--devices", &both]].concat(), &files);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    std::fs::write(&key, "not a key").unwrap();
    let out = snowctl(&[&import[..], &["--devices", &both]].concat(), &files);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));

    // Cleanup without --yes and without a terminal: the plan only.
    let state = |device, id: &str| rt.block_on(fleet::state(device, id));
    let cleanup = |devices: &str, extra: &[&str]| -> Output {
        let base = [
            "devices",
            "cleanup",
            "alpha",
            "--poll-interval",
            "100ms",
            "--devices",
        ];
        snowctl(&[&base[..], &[devices], extra].concat(), &files)
    };
    let out = cleanup(&all, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("nothing deleted: pass --yes"),
        "{}",
        show(&out)
    );
    assert!(text(&out.stdout).contains(&dni_a1), "{}", show(&out));
    assert_eq!(state(a, &a1), "running");
    assert!(
        f.apis[0]
            .log()
            .iter()
            .all(|l| !l.starts_with("DeleteDirectNetworkInterface"))
    );

    // While a management cluster still has the cluster: refused before any device call.
    let kube = rt.block_on(snow_test_kube::KubeStandIn::start()).unwrap();
    kube.install_capi().unwrap();
    kube.put(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "alpha", "namespace": "eksa-system"}, "spec": {}
    }))
    .unwrap();
    let kubeconfig = kube.write_kubeconfig(dir.path()).unwrap();
    let mgmt = ["--yes", "--kubeconfig", kubeconfig.to_str().unwrap()];
    let out = cleanup(&all, &mgmt);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("cluster alpha still exists on the management cluster")
            && text(&out.stderr)
                .contains("hint: delete it there first (snowctl delete cluster alpha)"),
        "{}",
        show(&out)
    );
    assert_eq!(state(a, &a1), "running");

    // Once it is gone there: the DNIs, then the instances; device b keeps the instance whose
    // DNI could not be deleted, and the down device is reported.
    kube.delete(
        "cluster.x-k8s.io/v1beta2",
        "Cluster",
        Some("eksa-system"),
        "alpha",
    )
    .unwrap();
    let out = cleanup(&all, &mgmt);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&refused) && stdout.contains(&format!("{down}: not cleaned")),
        "{}",
        show(&out)
    );
    assert_eq!(state(a, &a1), "terminated");
    assert_eq!(state(a, &a2), "terminated");
    assert_eq!(state(a, &other), "running");
    assert_eq!(state(b, &b1), "running");
    let left = |i: usize| -> Vec<String> { f.apis[i].dnis().into_iter().map(|d| d.arn).collect() };
    assert_eq!(left(0), std::slice::from_ref(&dni_other));
    assert_eq!(left(1), std::slice::from_ref(&refused));
    assert!(
        f.apis[1]
            .log()
            .contains(&format!("DeleteDirectNetworkInterface {dni_b1}"))
    );

    // Re-run once the refusal is lifted: only what is left is done; then there is nothing.
    f.apis[1].set_faults(Faults::default());
    let out = cleanup(&both, &["--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(state(b, &b1), "terminated");
    assert!(left(1).is_empty());
    let out = cleanup(&both, &["--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(left(0), [dni_other]);
}
