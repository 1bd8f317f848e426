//! `create_scoped_users` against moto, one server per device over TLS: moto serves IAM on the
//! same port as EC2 (it routes by the SigV4 scope's service name), so the IAM port is pointed at
//! moto's 8243. The Device API stand-in is told the new keys (it verifies signatures only).

use snow_api::{DeviceIp, Finding, Severity};
use snow_credentials::{CredentialsFile, CredentialsWriter, load_credentials};
use snow_test_devices::{TestCa, loopback_ip};
use snow_validate::iam::IamClient;
use snow_validate::preflight::{self, PreflightOptions};
use snow_validate::scoped_user::{
    DeviceDone, KeyStep, POLICY, POLICY_NAME, PolicyStep, ScopedUserError, ScopedUserOptions,
    ScopedUserReport, UserName, UserStep, create_scoped_users, same_policy,
};
use snow_validate::{ClientConfig, ErrorKind, MachinePlan, Plan, Role, SnowDevice, Trust};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

mod common;
use common::*;

const USER: &str = "eksa-snow";

/// The test client settings, with IAM on moto's port.
fn moto_config() -> ClientConfig {
    ClientConfig {
        iam_port: 8243,
        ..config()
    }
}

fn options(rotate: bool) -> ScopedUserOptions {
    ScopedUserOptions {
        user: UserName::parse(USER).unwrap(),
        rotate,
        policy: Default::default(),
        config: moto_config(),
    }
}

fn ips(ips: &[IpAddr]) -> Vec<DeviceIp> {
    ips.iter().map(|i| DeviceIp::from(*i)).collect()
}

/// The IAM client of `ip` signed with the file's profile.
fn iam(file: &CredentialsFile, trust: &Trust, ip: IpAddr) -> IamClient {
    IamClient::new(
        file.provider(DeviceIp::from(ip)).unwrap(),
        trust,
        moto_config(),
    )
}

async fn run(
    root: &CredentialsFile,
    trust: &Trust,
    devices: &[DeviceIp],
    out: &Path,
    rotate: bool,
) -> ScopedUserReport {
    let mut writer = CredentialsWriter::open(out, false).unwrap();
    tokio::time::timeout(
        Duration::from_secs(90),
        create_scoped_users(root, trust, devices, &mut writer, &options(rotate)),
    )
    .await
    .expect("create_scoped_users finishes")
}

fn done(report: &ScopedUserReport, i: usize) -> &DeviceDone {
    match &report.devices[i].result {
        Ok(done) => done,
        Err(e) => panic!("device {} failed: {e}", report.devices[i].device),
    }
}

/// (access key id, secret) of every profile, read from the file as text.
fn file_keys(path: &Path) -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut keys = BTreeMap::new();
    let mut section = String::new();
    let mut id = String::new();
    for line in text.lines() {
        if let Some(s) = line.strip_prefix('[') {
            section = s.trim_end_matches(']').to_owned();
        } else if let Some(v) = line.strip_prefix("aws_access_key_id = ") {
            id = v.to_owned();
        } else if let Some(v) = line.strip_prefix("aws_secret_access_key = ") {
            keys.insert(section.clone(), (id.clone(), v.to_owned()));
        }
    }
    keys
}

/// The ids of the user's keys on the device.
async fn key_ids(iam: &IamClient) -> Vec<String> {
    iam.list_access_keys(USER)
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn users_keys_and_the_file_are_made_once_rotated_on_demand_and_a_down_device_is_reported() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let f = fleet(&ca, 2, &[]).await;
        // A third device has a root profile and nothing listening.
        let down = loopback_ip();
        let all: Vec<IpAddr> = f.ips.iter().copied().chain([down]).collect();
        let root = credentials(&all, SECRET);
        let trust = trust(&ca);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("scoped-credentials");
        let root_iam: Vec<IamClient> = f.ips.iter().map(|ip| iam(&root, &trust, *ip)).collect();

        // An earlier run on device 0 was killed after CreateAccessKey: the user exists, has no
        // policy yet, and holds a key whose secret nobody can read any more.
        root_iam[0].create_user(USER).await.unwrap();
        drop(root_iam[0].create_access_key(USER).await.unwrap());
        assert_eq!(key_ids(&root_iam[0]).await.len(), 1);

        // First run.
        let report = run(&root, &trust, &ips(&all), &out, false).await;
        assert!(report.has_failures());
        let d0 = done(&report, 0);
        assert_eq!(
            (d0.user, d0.policy, d0.key, d0.deleted_other_keys),
            (UserStep::Existed, PolicyStep::Fixed, KeyStep::Created, 1),
            "{d0}"
        );
        let d1 = done(&report, 1);
        assert_eq!(
            (d1.user, d1.policy, d1.key, d1.deleted_other_keys),
            (UserStep::Created, PolicyStep::Set, KeyStep::Created, 0),
            "{d1}"
        );
        // The down device: its IP, IAM's port and the reason.
        let err = report.devices[2].result.as_ref().unwrap_err();
        match err {
            ScopedUserError::Call { step, source } => {
                assert_eq!(*step, "GetUser");
                assert_eq!(source.kind, ErrorKind::Refused, "{err}");
                assert_eq!(source.device, DeviceIp::from(down));
            }
            other => panic!("{other}"),
        }
        let message = err.to_string();
        assert!(
            message.contains(&format!("{down}:8243")) && message.contains("refused"),
            "{message}"
        );

        // The file: one profile per working device, 0600, a valid credentials file.
        #[cfg(unix)]
        assert_eq!(mode(&out), 0o600);
        let (file, findings) = load_credentials(&out).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(file.devices().len(), 2);
        let first = file_keys(&out);
        for (i, ip) in f.ips.iter().enumerate() {
            let (id, _) = &first[&ip.to_string()];
            // Exactly the file's key on the device (the orphan of device 0 is gone).
            assert_eq!(key_ids(&root_iam[i]).await, vec![id.clone()]);
            let policy = root_iam[i]
                .get_user_policy(USER, POLICY_NAME)
                .await
                .unwrap()
                .unwrap();
            assert!(same_policy(&policy, POLICY), "{policy}");
        }

        // A re-run (the down device left out) changes nothing: no new key, same file.
        let bytes = std::fs::read(&out).unwrap();
        let report = run(&root, &trust, &ips(&f.ips), &out, false).await;
        assert!(!report.has_failures());
        for i in 0..2 {
            let d = done(&report, i);
            assert_eq!(
                (d.user, d.policy, d.key),
                (UserStep::Existed, PolicyStep::Unchanged, KeyStep::Kept),
                "{d}"
            );
        }
        assert_eq!(std::fs::read(&out).unwrap(), bytes);
        for (i, ip) in f.ips.iter().enumerate() {
            assert_eq!(
                key_ids(&root_iam[i]).await,
                vec![first[&ip.to_string()].0.clone()]
            );
        }

        // A drifted policy (wider, and an extra inline policy) is fixed on the next run.
        let wider = POLICY.replace("ec2:DeleteTags", "ec2:*");
        root_iam[1]
            .put_user_policy(USER, POLICY_NAME, &wider)
            .await
            .unwrap();
        root_iam[1]
            .put_user_policy(USER, "extra", POLICY)
            .await
            .unwrap();
        let report = run(&root, &trust, &ips(&f.ips), &out, false).await;
        assert_eq!(done(&report, 0).policy, PolicyStep::Unchanged);
        let d1 = done(&report, 1);
        assert_eq!((d1.policy, d1.key), (PolicyStep::Fixed, KeyStep::Kept));
        assert_eq!(d1.other_policies, vec!["extra".to_owned()]);
        assert!(
            d1.to_string().contains("policy differed and was fixed"),
            "{d1}"
        );
        let policy = root_iam[1]
            .get_user_policy(USER, POLICY_NAME)
            .await
            .unwrap()
            .unwrap();
        assert!(same_policy(&policy, POLICY), "{policy}");

        // --rotate: a new key in the file, the old one deleted from the device.
        let report = run(&root, &trust, &ips(&f.ips), &out, true).await;
        let rotated = file_keys(&out);
        for (i, ip) in f.ips.iter().enumerate() {
            assert_eq!(done(&report, i).key, KeyStep::Rotated { old_deleted: true });
            let (new_id, _) = &rotated[&ip.to_string()];
            assert_ne!(new_id, &first[&ip.to_string()].0);
            assert_eq!(key_ids(&root_iam[i]).await, vec![new_id.clone()]);
        }
        #[cfg(unix)]
        assert_eq!(mode(&out), 0o600);

        // No secret in anything the report can print.
        let shown = format!("{report:?}");
        for (id, secret) in rotated.values() {
            assert!(!shown.contains(secret.as_str()) && !shown.contains(id.as_str()));
        }
    });
}

#[test]
fn the_root_credentials_file_is_never_the_output() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let ip = loopback_ip();
        let dir = tempfile::tempdir().unwrap();
        // A root credentials file in the writer's own format: the writer would take it over.
        let out = dir.path().join("root");
        let root = credentials(&[ip], SECRET);
        let mut writer = CredentialsWriter::open(&out, false).unwrap();
        writer
            .set(
                DeviceIp::from(ip),
                snow_credentials::AccessKey::new(
                    ACCESS_KEY.to_owned().into(),
                    SECRET.to_owned().into(),
                ),
            )
            .unwrap();
        let report = run(&root, &trust(&ca), &ips(&[ip]), &out, true).await;
        assert!(matches!(
            report.devices[0].result,
            Err(ScopedUserError::OutputHoldsRootKey(_))
        ));
    });
}

fn plan(devices: &[IpAddr]) -> Plan {
    let m = MachinePlan {
        name: "snow-cp".into(),
        object: "SnowMachineConfig/snow-cp".into(),
        devices: ips(devices),
        ami_id: None,
        ssh_key_name: Some(KEY.into()),
        instance_type: Some("sbe-c.large".into()),
        os_family: Some("ubuntu".into()),
        machines: BTreeMap::from([(Role::ControlPlane, 2)]),
    };
    Plan {
        cluster: "snow".into(),
        kubernetes_version: Some("1.31".into()),
        endpoint: None,
        skip_ip_check_annotation: false,
        machines: BTreeMap::from([("snow-cp".into(), m)]),
    }
}

fn errors(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

#[test]
fn the_scoped_file_passes_preflight_and_moto_refuses_what_the_policy_does_not_grant() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let f = fleet(&ca, 2, &[]).await;
        for d in &f.devices {
            seed(d, true).await;
        }
        let root = credentials(&f.ips, SECRET);
        let trust = trust(&ca);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("scoped");
        let report = run(&root, &trust, &ips(&f.ips), &out, false).await;
        assert!(!report.has_failures(), "{report:?}");

        // From here on moto checks every request against its IAM: signature and policy. The
        // Device API stand-in learns the new keys (it checks signatures, not policies).
        let keys = file_keys(&out);
        for (i, ip) in f.ips.iter().enumerate() {
            let (id, secret) = &keys[&ip.to_string()];
            f.apis[i].allow_key(id, secret);
            f.motos[i].reset_auth(ca.pem(), 0).unwrap();
        }

        // Preflight with the scoped file only.
        let (scoped, findings) = load_credentials(&out).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        let (devices, missing) = SnowDevice::fleet(&scoped, &trust, moto_config(), ips(&f.ips));
        assert!(missing.is_empty());
        let options = PreflightOptions {
            imds: None,
            ..PreflightOptions::default()
        };
        let report = tokio::time::timeout(
            Duration::from_secs(60),
            preflight::run(&plan(&f.ips), &devices, &[], &options, &mut |_| {}),
        )
        .await
        .unwrap();
        assert!(
            errors(&report.findings).is_empty(),
            "{:#?}",
            report.findings
        );

        // Outside the policy: EC2 CreateVpc and IAM CreateUser are refused with the scoped key.
        let vpc = devices[0]
            .ec2()
            .create_vpc()
            .cidr_block("10.1.0.0/16")
            .send()
            .await;
        let code = vpc
            .as_ref()
            .err()
            .and_then(|e| e.as_service_error())
            .and_then(|e| snow_validate::aws_sdk_ec2::error::ProvideErrorMetadata::code(e))
            .map(str::to_owned);
        assert_eq!(code.as_deref(), Some("AccessDenied"), "{vpc:?}");
        let scoped_iam = iam(&scoped, &trust, f.ips[0]);
        let err = scoped_iam.create_user("intruder").await.unwrap_err();
        assert!(
            matches!(&err.kind, ErrorKind::Service { code, status: 403 } if code == "AccessDenied"),
            "{err}"
        );
        // Inside the policy: allowed (a call preflight does not make).
        devices[1]
            .ec2()
            .describe_instances()
            .send()
            .await
            .expect("DescribeInstances is in the policy");
        // And the root key, which moto's IAM does not know, is now refused.
        let root_err = iam(&root, &trust, f.ips[0])
            .get_user(USER)
            .await
            .unwrap_err();
        assert_eq!(root_err.kind, ErrorKind::BadCredentials, "{root_err}");
    });
}

#[test]
fn a_key_that_cannot_be_written_is_deleted_again() {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let f = fleet(&ca, 1, &[]).await;
        let root = credentials(&f.ips, SECRET);
        let trust = trust(&ca);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("scoped");
        // The writer saw no file; another program creates one before the key is written.
        let mut writer = CredentialsWriter::open(&out, false).unwrap();
        std::fs::write(&out, "someone else's\n").unwrap();
        let report = tokio::time::timeout(
            Duration::from_secs(60),
            create_scoped_users(&root, &trust, &ips(&f.ips), &mut writer, &options(false)),
        )
        .await
        .unwrap();
        let err = report.devices[0].result.as_ref().unwrap_err();
        assert!(
            matches!(err, ScopedUserError::Write { deleted: true, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("deleted again"), "{err}");
        // Nothing unreadable is left on the device, and the other file is untouched.
        assert!(key_ids(&iam(&root, &trust, f.ips[0])).await.is_empty());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "someone else's\n");
    });
}
