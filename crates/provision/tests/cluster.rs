//! A workload cluster's create and upgrade workflows (`snow_provision::create`, `upgrade`) and
//! its delete (`snow_lifecycle::delete`, then `cleanup` for what is left on the devices) on a
//! management cluster: the Kubernetes API stand-in with its simulated Cluster API, kubeadm and
//! CAPAS controllers, and two devices, each moto over TLS (EC2) with the Device API stand-in.
//! The Cilium manifest is given (no helm). One control-plane machine and one or two workers.
//! What only the binary does (exit codes, the lines it prints, flags) is tested in
//! `crates/cli/tests/it/lifecycle.rs`.

// Progress goes to stderr: the test harness shows it when a test fails.
#![allow(clippy::print_stderr)]

mod support;

use support::{Site, cni, create, site, wait, with_request};

use serde_json::Value;
use snow_lifecycle::{DeleteOptions, Event, LifecycleError, Management};
use snow_provision::{
    Checks, ProvisionError, UpgradeOptions,
    cleanup::{self, CleanupOptions},
    import::Devices,
};
use snow_test_devices::fleet;
use snow_validate::aws_sdk_ec2::types::Tag;
use std::time::Duration;

const NS: &str = "eksa-system";
const CORE: &str = "cluster.x-k8s.io/v1beta2";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// Registers on every device the AMI preflight looks for when `amiID` is empty: tagged with the
/// cluster's Kubernetes version (1.33) and OS family.
async fn register_amis(site: &Site) {
    for device in &site.fleet.devices {
        let ec2 = device.ec2();
        let image =
            (ec2.register_image().name("eks-d-1-33-ubuntu").send().await).expect("RegisterImage");
        let id = image.image_id().unwrap();
        let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build();
        (ec2.create_tags().resources(id))
            .tags(tag("eksa.aws.com/k8s-version", "1.33"))
            .tags(tag("eksa.aws.com/os-family", "ubuntu"))
            .send()
            .await
            .expect("CreateTags");
    }
}

/// Preflight against the devices; the endpoint is not probed (192.168.1.100 is nobody's here).
fn run_checks() -> Checks {
    Checks::Run {
        skip_ip_check: true,
        timeout: Duration::from_secs(10),
        device_lines: false,
    }
}

fn get(site: &Site, api_version: &str, kind: &str, name: &str) -> Option<Value> {
    site.api.get(api_version, kind, Some(NS), name)
}

/// The key pairs of each device, with their fingerprints.
async fn key_pairs(site: &Site) -> Vec<Vec<(String, String)>> {
    let mut all = Vec::new();
    for device in &site.fleet.devices {
        let out = (device.ec2().describe_key_pairs().send().await).expect("DescribeKeyPairs");
        let mut keys: Vec<(String, String)> = (out.key_pairs().iter())
            .map(|k| {
                let name = k.key_name().unwrap_or_default().to_owned();
                (name, k.key_fingerprint().unwrap_or_default().to_owned())
            })
            .collect();
        keys.sort();
        all.push(keys);
    }
    all
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    (base64::engine::general_purpose::STANDARD.decode(text)).expect("base64")
}

/// Catches: a create that applies anything after preflight found an error; preflight not run;
/// the default key not generated, not imported on each device, or not the name the templates and
/// inventory say; the workload kubeconfig not written, not the published one, or readable by
/// others; the cluster's Cilium manifest not stored for the in-cluster controller; on the re-run,
/// a new key (name, files or fingerprint), a kubeconfig replaced, the cluster not recognised;
/// a different kubeconfig file overwritten without `force`, or kept with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_checks_the_devices_imports_one_default_key_writes_the_kubeconfig_and_converges() {
    let site = site().await;
    let text = site.spec(1);
    let (private, public) = snow_lifecycle::ssh_key::paths(site.dir.path(), "edge");
    let kubeconfig = site.dir.path().join("edge/edge-eks-a-cluster.kubeconfig");

    // No AMI for 1.33 on the devices yet: preflight says so and nothing is applied or written.
    let writes = site.api.writes();
    let (refused, _) = create(&site, &text, run_checks(), false).await;
    let Err(ProvisionError::Preflight { findings }) = refused else {
        panic!("preflight passed without an AMI: {refused:?}")
    };
    assert!(
        (findings.iter()).any(|f| f.check == "preflight.ami" && f.device.is_some()),
        "{findings:?}"
    );
    assert_eq!(
        site.api.writes(),
        writes,
        "written after a failed preflight"
    );
    assert!(!private.exists() && !kubeconfig.exists());
    assert!(key_pairs(&site).await.iter().all(Vec::is_empty));

    register_amis(&site).await;
    let (made, events) = create(&site, &text, run_checks(), false).await;
    let made = made.expect("created");
    assert!(!made.created.existed);
    let steps: Vec<&str> = (events.iter())
        .filter_map(|e| match e {
            Event::Step(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        steps.contains(&"✅ Snow provider setup is valid"),
        "{steps:?}"
    );

    // One default key: its files (owner-only), its name in the inventory and every template,
    // imported on both devices with one fingerprint.
    let inventory = get(&site, "v1", "ConfigMap", "edge-snowctl").expect("inventory");
    let name = inventory["data"]["sshKeyName"].as_str().unwrap().to_owned();
    assert!(name.starts_with("eksa-default-edge-"), "{name}");
    for template in ["edge-control-plane-1", "edge-md-0-1"] {
        let t = get(&site, INFRA, "AWSSnowMachineTemplate", template).unwrap();
        assert_eq!(t["spec"]["template"]["spec"]["sshKeyName"], name.as_str());
    }
    let keys = key_pairs(&site).await;
    assert_eq!(keys[0].len(), 1, "{keys:?}");
    assert_eq!((keys[0][0].0.as_str(), &keys[0]), (name.as_str(), &keys[1]));
    let (private_pem, public_line) = (
        std::fs::read(&private).unwrap(),
        std::fs::read_to_string(&public).unwrap(),
    );
    assert!(public_line.starts_with("ssh-rsa AAAA"), "{public_line}");

    // The kubeconfig Cluster API published, written owner-only.
    assert_eq!(made.kubeconfig, kubeconfig);
    let secret = get(&site, "v1", "Secret", "edge-kubeconfig").unwrap();
    let published = decode(secret["data"]["value"].as_str().unwrap());
    assert_eq!(std::fs::read(&kubeconfig).unwrap(), published);
    #[cfg(unix)]
    for file in [&private, &public, &kubeconfig] {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    // The cluster's Cilium manifest, for a `--cni-stored` controller.
    let label = "snowctl.anywhere.eks.amazonaws.com/cilium-manifest";
    let stored: Vec<Value> = (site.api.list("v1", "ConfigMap", Some(NS)).into_iter())
        .filter(|c| c["metadata"]["labels"][label] == "true")
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let manifest = stored[0]["data"]["manifest.yaml"]
        .as_str()
        .unwrap_or_default();
    assert!(
        manifest.contains("image: public.ecr.aws/eks/cilium/cilium:v1.17.8-0"),
        "the given manifest is stored: {manifest}"
    );

    // Again: the same cluster, key and kubeconfig.
    let (again, _) = create(&site, &text, run_checks(), false).await;
    assert!(again.expect("converges").created.existed);
    assert_eq!(key_pairs(&site).await, keys);
    assert_eq!(std::fs::read(&private).unwrap(), private_pem);
    assert_eq!(std::fs::read_to_string(&public).unwrap(), public_line);
    assert_eq!(std::fs::read(&kubeconfig).unwrap(), published);

    // Someone else's file at the kubeconfig's path is kept, unless forced.
    std::fs::write(&kubeconfig, "someone else's kubeconfig\n").unwrap();
    let (blocked, _) = create(&site, &text, Checks::Skip, false).await;
    assert!(
        matches!(
            &blocked,
            Err(ProvisionError::Lifecycle(LifecycleError::Kube(snow_lifecycle::KubeError::KubeconfigFileExists { path }))) if *path == kubeconfig
        ),
        "{blocked:?}"
    );
    let kept = std::fs::read_to_string(&kubeconfig).unwrap();
    assert_eq!(kept, "someone else's kubeconfig\n");
    let (forced, _) = create(&site, &text, Checks::Skip, true).await;
    forced.expect("replaced with force");
    assert_eq!(std::fs::read(&kubeconfig).unwrap(), published);
}

/// Catches: an upgrade that does not apply a new count, makes a second default key, or renders
/// machine templates without the recorded one (they would roll); cleanup allowed while the
/// management cluster still has the cluster; a delete that leaves its objects; the cluster's
/// instances on the devices not planned or not terminated by the cleanup that follows, or
/// another cluster's instance touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_keeps_the_default_key_and_after_delete_cleanup_terminates_what_is_left() {
    let site = site().await;
    register_amis(&site).await;
    (create(&site, &site.spec(1), Checks::Skip, false).await.0).expect("created");
    let keys = key_pairs(&site).await;
    let templates = |site: &Site| {
        let mut names: Vec<String> = (site.api.list(INFRA, "AWSSnowMachineTemplate", Some(NS)))
            .iter()
            .map(|t| t["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let before = templates(&site);

    // A second worker, preflight included.
    let options = UpgradeOptions {
        checks: run_checks(),
        cni: cni(),
        wait: wait(),
        dry_run: false,
        backup: false,
    };
    let (upgraded, _) = with_request(&site, &site.spec(2), async |req, on_event| {
        snow_provision::upgrade(
            &snow_lifecycle::KubeconfigSource::file(&site.kubeconfig),
            req,
            &options,
            on_event,
        )
        .await
    })
    .await;
    let upgraded = upgraded.expect("upgraded");
    assert!(upgraded.applied);
    let md = get(&site, CORE, "MachineDeployment", "edge-md-0").unwrap();
    assert_eq!(md["spec"]["replicas"], 2);
    let workers = (site.api.list(CORE, "Machine", Some(NS)).iter())
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == "edge-md-0")
        .count();
    assert_eq!(workers, 2);
    assert_eq!(key_pairs(&site).await, keys, "another key was made");
    assert_eq!(
        templates(&site),
        before,
        "a template was renamed: machines rolled"
    );

    // What CAPAS launched for the cluster, as it tags it, and an instance of another cluster.
    let subnet = fleet::subnet(&site.fleet.devices[0]).await;
    let ami = {
        let out = site.fleet.devices[0].ec2().describe_images().send().await;
        out.unwrap().images()[0].image_id().unwrap().to_owned()
    };
    let ours = fleet::instance(
        &site.fleet.devices[0],
        &ami,
        &subnet,
        "edge-md-0-x",
        Some("edge"),
    )
    .await;
    let other = fleet::instance(
        &site.fleet.devices[0],
        &ami,
        &subnet,
        "shop-1",
        Some("shop"),
    )
    .await;
    let mgmt = Management::connect(&snow_lifecycle::KubeconfigSource::file(&site.kubeconfig))
        .await
        .unwrap();
    let devices = Devices {
        devices: &site.fleet.devices,
        without_credentials: &[],
    };
    let options = CleanupOptions {
        cluster: "edge",
        management: Some(&mgmt),
        devices,
    };
    let refused = cleanup::plan(options).await;
    assert!(
        matches!(&refused, Err(ProvisionError::ClusterExists { cluster }) if cluster == "edge"),
        "{refused:?}"
    );

    let delete = DeleteOptions { wait: wait() };
    let deleted = snow_lifecycle::delete(&mgmt, "edge", &delete, &mut |_| {}).await;
    assert!(deleted.expect("deleted").found);
    assert!(get(&site, CORE, "Cluster", "edge").is_none());
    assert!(site.api.list(CORE, "Machine", Some(NS)).is_empty());

    let plan = cleanup::plan(options)
        .await
        .expect("planned once the cluster is gone");
    let planned: Vec<&str> = (plan.devices.iter())
        .flat_map(|d| d.instances.iter().map(|i| i.id.as_str()))
        .collect();
    assert_eq!(planned, [ours.as_str()], "{plan:?}");
    let wait = snow_validate::cleanup::WaitOptions {
        poll: Duration::from_millis(100),
        timeout: Duration::from_secs(30),
    };
    let report = snow_validate::cleanup::execute(&site.fleet.devices, &plan, wait).await;
    assert!(!report.has_failures(), "{report:?}");
    let device = &site.fleet.devices[0];
    assert_eq!(fleet::state(device, &ours).await, "terminated");
    assert_eq!(fleet::state(device, &other).await, "running");
}
