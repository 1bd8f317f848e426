//! The device chores against moto (EC2, one server per device over TLS) and the Device API
//! stand-in (DNIs attached to moto's instance ids): inventory, key import, usable AMIs, cleanup
//! with a device down and a refused DNI delete.

use snow_api::{DeviceIp, OsFamily};
use snow_test_devices::{Faults, TestCa, loopback_ip};
use snow_validate::chores::{self, KeyOutcome};
use snow_validate::cleanup::{self, Outcome, WaitOptions};
use snow_validate::inventory;
use snow_validate::{ClientConfig, RetryPolicy, SnowDevice};
use std::net::IpAddr;
use std::time::Duration;

mod common;
use common::*;

/// A device with credentials and nothing listening: refused at once.
fn down_device() -> (IpAddr, SnowDevice) {
    let ip = loopback_ip();
    let creds = credentials(&[ip], SECRET);
    let config = ClientConfig {
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        ..config()
    };
    let ca = TestCa::new("unused CA").unwrap();
    let device = SnowDevice::new(
        creds.provider(DeviceIp::from(ip)).unwrap(),
        &trust(&ca),
        config,
    );
    (ip, device)
}

#[test]
fn describe_import_key_and_images_over_two_devices_and_one_down() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let mut f = fleet(&ca, 2, &[]).await;
        let ami0 = seed(&f.devices[0], true).await;
        let ami1 = seed(&f.devices[1], false).await;
        let net = subnet(&f.devices[0]).await;
        let cp = instance(&f.devices[0], &ami0, &net, "alpha-cp-1", Some("alpha")).await;
        let md = instance(&f.devices[0], &ami0, &net, "alpha-md-1", Some("alpha")).await;
        let admin = instance(&f.devices[0], &ami0, &net, "admin", None).await;
        let cp_dni = dni(&f.devices[0], &cp).await;
        let (down_ip, down) = down_device();
        f.devices.push(down);

        let inv = tokio::time::timeout(
            Duration::from_secs(60),
            inventory::describe(&f.devices, &[]),
        )
        .await
        .unwrap();
        let d0 = &inv.devices[0];
        assert!(d0.reachable && d0.errors.is_empty(), "{:?}", d0.errors);
        assert_eq!(d0.unlock_state.as_deref(), Some("UNLOCKED"));
        assert_eq!(d0.software_version.as_deref(), Some("102"));
        assert_eq!(d0.vcpu.as_ref().map(|c| c.total), Some(104));
        let alpha: Vec<(&str, Option<&str>, &str)> = d0.clusters["alpha"]
            .iter()
            .map(|i| (i.id.as_str(), i.name.as_deref(), i.instance_type.as_str()))
            .collect();
        assert_eq!(alpha.len(), 2);
        assert!(alpha.contains(&(cp.as_str(), Some("alpha-cp-1"), "sbe-c.large")));
        assert!(alpha.contains(&(md.as_str(), Some("alpha-md-1"), "sbe-c.large")));
        assert_eq!(d0.other_instances.len(), 1);
        assert_eq!(d0.other_instances[0].id, admin);
        assert_eq!(d0.direct_network_interfaces.len(), 1);
        assert_eq!(d0.direct_network_interfaces[0].arn, cp_dni);
        assert_eq!(
            d0.direct_network_interfaces[0].instance_id.as_deref(),
            Some(cp.as_str())
        );
        assert_eq!(d0.images.len(), 1);
        assert_eq!(d0.images[0].id, ami0);
        assert_eq!(d0.images[0].kubernetes_version.as_deref(), Some("1.31"));
        assert_eq!(d0.images[0].os_family.as_deref(), Some("ubuntu"));
        assert_eq!(d0.key_pairs, vec![KEY.to_owned()]);
        let d1 = &inv.devices[1];
        assert!(d1.reachable && d1.clusters.is_empty() && d1.key_pairs.is_empty());
        let d2 = &inv.devices[2];
        assert_eq!(d2.device, down_ip.to_string());
        assert!(!d2.reachable);
        assert!(!d2.errors.is_empty());
        assert!(inv.has_errors());
        let text = inv.to_string();
        assert!(text.contains("cluster alpha:"), "{text}");
        assert!(
            text.contains(&format!("device {down_ip}: unreachable")),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&inv.to_json()).unwrap();
        assert_eq!(
            json["devices"][0]["clusters"]["alpha"]
                .as_array()
                .unwrap()
                .len(),
            2
        );

        // Key import: present on device 0, imported on device 1, failed on the down device.
        let import = chores::import_key(&f.devices, &[], KEY, KEY_MATERIAL.as_bytes()).await;
        let outcomes: Vec<&KeyOutcome> = import.devices.iter().map(|(_, o)| o).collect();
        assert_eq!(outcomes[0], &KeyOutcome::AlreadyPresent);
        assert_eq!(outcomes[1], &KeyOutcome::Imported);
        assert!(matches!(outcomes[2], KeyOutcome::Failed(e) if e.starts_with("DescribeKeyPairs")));
        assert!(import.has_failures());
        let again = chores::import_key(&f.devices[..2], &[], KEY, KEY_MATERIAL.as_bytes()).await;
        assert!(
            again
                .devices
                .iter()
                .all(|(_, o)| o == &KeyOutcome::AlreadyPresent)
        );

        // Usable AMIs, as preflight's auto-pick sees them.
        let images =
            chores::usable_images(&f.devices[..2], &[], "1.31", Some(OsFamily::Ubuntu)).await;
        assert_eq!(images.devices[0].images[0].id, ami0);
        assert_eq!(images.devices[1].images[0].id, ami1);
        assert!(!images.has_gaps());
        assert!(images.to_string().contains("(preflight uses this one)"));
        let none =
            chores::usable_images(&f.devices[..2], &[], "1.30", Some(OsFamily::Ubuntu)).await;
        assert!(none.has_gaps());
        assert!(none.devices.iter().all(|d| d.images.is_empty()));
    });
}

#[test]
fn cleanup_deletes_dnis_then_terminates_and_reports_what_it_could_not_do() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let mut f = fleet(&ca, 2, &[]).await;
        let (a, b) = (&f.devices[0], &f.devices[1]);
        let ami_a = seed(a, true).await;
        let ami_b = seed(b, true).await;
        let (net_a, net_b) = (subnet(a).await, subnet(b).await);
        let a1 = instance(a, &ami_a, &net_a, "alpha-cp-1", Some("alpha")).await;
        let a2 = instance(a, &ami_a, &net_a, "alpha-md-1", Some("alpha")).await;
        let other = instance(a, &ami_a, &net_a, "beta-cp-1", Some("beta")).await;
        let b1 = instance(b, &ami_b, &net_b, "alpha-cp-2", Some("alpha")).await;
        let dni_a1 = dni(a, &a1).await;
        let dni_a2 = dni(a, &a2).await;
        let dni_other = dni(a, &other).await;
        let dni_b1 = dni(b, &b1).await;
        let refused = dni(b, &b1).await;
        f.apis[1].set_faults(Faults {
            refuse_dni_delete: vec![refused.clone()],
            ..Faults::default()
        });
        let (down_ip, down) = down_device();
        f.devices.push(down);
        let wait = WaitOptions {
            poll: Duration::from_millis(100),
            timeout: Duration::from_secs(30),
        };

        let plan = cleanup::plan(&f.devices, &[], "alpha").await;
        assert_eq!(plan.devices[0].instances.len(), 2);
        assert_eq!(plan.devices[0].direct_network_interfaces.len(), 2);
        assert_eq!(plan.devices[1].instances.len(), 1);
        assert_eq!(plan.devices[1].direct_network_interfaces.len(), 2);
        assert!(plan.devices[2].error.is_some());
        assert!(
            plan.to_string()
                .contains(&format!("{down_ip}: cannot be read"))
        );

        let report = tokio::time::timeout(
            Duration::from_secs(90),
            cleanup::execute(&f.devices, &plan, wait),
        )
        .await
        .unwrap();
        assert!(report.has_failures());
        let (a, b) = (&f.devices[0], &f.devices[1]);

        // Device A: both DNIs deleted before any terminate, then both instances terminated.
        let actions: Vec<(&str, &str, &Outcome)> = report.devices[0]
            .actions
            .iter()
            .map(|x| (x.action.as_str(), x.resource.as_str(), &x.outcome))
            .collect();
        let first_terminate = actions.iter().position(|x| x.0 == "terminate").unwrap();
        let last_dni = actions.iter().rposition(|x| x.0 == "delete DNI").unwrap();
        assert!(last_dni < first_terminate, "{actions:?}");
        assert!(actions.iter().all(|x| x.2 == &Outcome::Done), "{actions:?}");
        let log = f.apis[0].log();
        assert!(log.contains(&format!("DeleteDirectNetworkInterface {dni_a1}")));
        assert!(log.contains(&format!("DeleteDirectNetworkInterface {dni_a2}")));
        assert!(!log.iter().any(|l| l.ends_with(&dni_other)), "{log:?}");
        let left: Vec<String> = f.apis[0].dnis().into_iter().map(|d| d.arn).collect();
        assert_eq!(left, vec![dni_other.clone()]);
        assert_eq!(state(a, &a1).await, "terminated");
        assert_eq!(state(a, &a2).await, "terminated");
        assert_eq!(state(a, &other).await, "running");

        // Device B: one DNI deleted, the refused one named, the instance left running and tagged.
        let b_actions = &report.devices[1].actions;
        assert!(
            b_actions
                .iter()
                .any(|x| x.resource == dni_b1 && x.outcome == Outcome::Done)
        );
        assert!(b_actions.iter().any(|x| x.resource == refused
            && matches!(&x.outcome, Outcome::Failed(e) if e.contains("AccessDenied"))));
        assert!(
            b_actions
                .iter()
                .any(|x| x.resource == b1 && matches!(x.outcome, Outcome::Skipped(_)))
        );
        assert_eq!(state(b, &b1).await, "running");
        let text = report.to_string();
        assert!(
            text.contains(&refused) && text.contains(&format!("{down_ip}: not cleaned")),
            "{text}"
        );

        // Re-run once the refusal is lifted: what is gone is not planned again, the rest goes.
        f.apis[1].set_faults(Faults::default());
        let plan = cleanup::plan(&f.devices[..2], &[], "alpha").await;
        assert!(plan.devices[0].instances.is_empty());
        assert_eq!(plan.devices[1].instances.len(), 1);
        assert_eq!(plan.devices[1].direct_network_interfaces.len(), 1);
        let report = cleanup::execute(&f.devices[..2], &plan, wait).await;
        assert!(!report.has_failures(), "{report}");
        assert_eq!(state(&f.devices[1], &b1).await, "terminated");
        assert!(f.apis[1].dnis().is_empty());
        assert!(
            cleanup::plan(&f.devices[..2], &[], "alpha")
                .await
                .is_empty()
        );
    });
}

/// A spec whose control plane (config `a`, on `d0`) has an empty `sshKeyName` and whose workers
/// (config `b`, on `d1`) name their own key.
fn default_key_spec(d0: IpAddr, d1: IpAddr) -> snow_api::ClusterSpec {
    let text = format!(
        r#"apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {{name: edge}}
spec:
  controlPlaneConfiguration:
    count: 1
    endpoint: {{host: 192.0.2.10}}
    machineGroupRef: {{kind: SnowMachineConfig, name: a}}
  workerNodeGroupConfigurations:
  - {{name: md-0, count: 1, machineGroupRef: {{kind: SnowMachineConfig, name: b}}}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata: {{name: a}}
spec: {{devices: ["{d0}"], sshKeyName: ""}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata: {{name: b}}
spec: {{devices: ["{d1}"], sshKeyName: own}}
"#
    );
    snow_api::check(&text).unwrap().spec.unwrap()
}

#[test]
fn the_default_key_goes_only_where_sshkeyname_is_empty_and_is_never_made_up() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let f = fleet(&ca, 2, &[]).await;
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        let ca_bundle = dir.path().join("ca.pem");
        let ini: String = f
            .ips
            .iter()
            .map(|ip| format!("[{ip}]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET}\nregion = snow\n\n"))
            .collect();
        std::fs::write(&credentials, ini).unwrap();
        std::fs::write(&ca_bundle, ca.pem()).unwrap();
        let files = || snow_validate::DeviceFiles {
            credentials: &credentials,
            ca_bundle: &ca_bundle,
            request_timeout: Duration::from_secs(5),
        };
        let spec = default_key_spec(f.ips[0], f.ips[1]);
        let (d0, name) = (f.ips[0].to_string(), "eksa-default-edge-test");
        let line = KEY_MATERIAL;

        let import = chores::import_default_key(&spec, files(), name, Some(line))
            .await
            .unwrap();
        assert_eq!(import.devices, vec![(d0.clone(), KeyOutcome::Imported)]);
        let keys = |i: usize| {
            let device = &f.devices[i];
            async move {
                let out = device.ec2().describe_key_pairs().send().await.unwrap();
                out.key_pairs()
                    .iter()
                    .filter_map(|k| k.key_name().map(str::to_owned))
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(keys(0).await, [name]);
        assert!(keys(1).await.is_empty(), "the workers name their own key");

        // Present: nothing imported. Without the public key, a device that lacks it fails.
        let again = chores::import_default_key(&spec, files(), name, None)
            .await
            .unwrap();
        assert_eq!(again.devices, vec![(d0.clone(), KeyOutcome::AlreadyPresent)]);
        f.devices[0]
            .ec2()
            .delete_key_pair()
            .key_name(name)
            .send()
            .await
            .unwrap();
        let lost = chores::import_default_key(&spec, files(), name, None)
            .await
            .unwrap();
        let failures = lost.failures();
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].device.as_deref(), Some(d0.as_str()));
        assert!(failures[0].message.contains("public key file is not at hand"));
        assert!(keys(0).await.is_empty(), "nothing was imported without the key");
    });
}
