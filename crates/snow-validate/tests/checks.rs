//! Every check against in-memory devices: passes and fails exactly when it should, on several
//! devices at once, each finding tagged with its device.

use snow_api::{DeviceIp, Finding, Severity};
use snow_test_devices::{InFlight, InMemoryDevice};
use snow_validate::preflight::{self, Mode, PreflightOptions, Schedule};
use snow_validate::{ErrorKind, MachinePlan, Plan, Role, UnlockState};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const AMI: &str = "ami-0eksd13100000001";
const KEY: &str = "snow-key";

fn ip(s: &str) -> DeviceIp {
    s.parse().unwrap()
}

fn devices() -> Vec<DeviceIp> {
    vec![ip("192.168.1.10"), ip("192.168.1.11"), ip("192.168.1.12")]
}

fn plan(cp: u32, workers: u32, instance_type: &str) -> Plan {
    let machine = |name: &str, role: Role, n: u32| MachinePlan {
        name: name.into(),
        object: format!("SnowMachineConfig/{name}"),
        devices: devices(),
        ami_id: Some(AMI.into()),
        ssh_key_name: Some(KEY.into()),
        instance_type: Some(instance_type.into()),
        os_family: Some("ubuntu".into()),
        machines: BTreeMap::from([(role, n)]),
    };
    Plan {
        cluster: "snow".into(),
        kubernetes_version: Some("1.31".into()),
        endpoint: None,
        skip_ip_check_annotation: false,
        machines: BTreeMap::from([
            ("snow-cp".into(), machine("snow-cp", Role::ControlPlane, cp)),
            ("snow-md".into(), machine("snow-md", Role::Worker, workers)),
        ]),
    }
}

fn good(ip: DeviceIp) -> InMemoryDevice {
    InMemoryDevice::new(ip)
        .with_image(
            AMI,
            &[
                ("eksa.aws.com/k8s-version", "1.31"),
                ("eksa.aws.com/os-family", "ubuntu"),
            ],
        )
        .with_key_pair(KEY)
}

fn options() -> PreflightOptions {
    PreflightOptions {
        imds: None,
        ..PreflightOptions::default()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn run(plan: &Plan, devices: &[InMemoryDevice]) -> Vec<Finding> {
    run_with(plan, devices, &options())
}

fn run_with(plan: &Plan, devices: &[InMemoryDevice], options: &PreflightOptions) -> Vec<Finding> {
    rt().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(10),
            preflight::run(plan, devices, &[], options, &mut |_| {}),
        )
        .await
        .expect("preflight is bounded")
        .findings
    })
}

fn errors(findings: &[Finding]) -> Vec<(String, Option<String>)> {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.check.clone(), f.device.clone()))
        .collect()
}

fn one(findings: &[Finding], check: &str, device: &str) -> Finding {
    let matching: Vec<&Finding> = findings
        .iter()
        .filter(|f| {
            f.check == check && f.device.as_deref() == Some(device) && f.severity == Severity::Error
        })
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "one {check} error for {device} in {findings:#?}"
    );
    matching[0].clone()
}

#[test]
fn three_good_devices_pass_every_check() {
    let fleet: Vec<_> = devices().into_iter().map(good).collect();
    let findings = run(&plan(3, 3, "sbe-c.xlarge"), &fleet);
    assert_eq!(errors(&findings), vec![], "{findings:#?}");
    // Every device was asked: DescribeDevice, software, instance types, one image, one key.
    for d in &fleet {
        assert_eq!(d.calls(), 5);
    }
    let capacity: Vec<_> = findings
        .iter()
        .filter(|f| f.check == "preflight.capacity")
        .collect();
    assert_eq!(capacity.len(), 3);
    assert!(
        capacity[0].message.contains("8 vCPU"),
        "{}",
        capacity[0].message
    );
    assert!(
        capacity[0].message.contains("round-robin"),
        "the placement assumption is stated"
    );
}

#[test]
fn locked_and_old_devices_are_named() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    fleet[0].description.unlock_state = UnlockState::Locked;
    fleet[2].software.installed_version = "101".into();
    let findings = run(&plan(1, 1, "sbe-c.large"), &fleet);
    assert_eq!(
        errors(&findings),
        vec![
            ("preflight.unlocked".into(), Some("192.168.1.10".into())),
            (
                "preflight.software-version".into(),
                Some("192.168.1.12".into())
            ),
        ]
    );
    let locked = one(&findings, "preflight.unlocked", "192.168.1.10");
    assert!(locked.message.contains("LOCKED"));
    assert!(locked.hint.unwrap().contains("unlock-device"));
    let old = one(&findings, "preflight.software-version", "192.168.1.12");
    assert!(
        old.message.contains("101") && old.message.contains("102"),
        "{}",
        old.message
    );
}

#[test]
fn a_non_numeric_version_is_an_error() {
    let mut fleet = vec![good(ip("192.168.1.10"))];
    fleet[0].software.installed_version = "v102".into();
    let mut p = plan(1, 0, "sbe-c.large");
    for m in p.machines.values_mut() {
        m.devices.truncate(1);
    }
    let findings = run(&p, &fleet);
    assert!(
        one(&findings, "preflight.software-version", "192.168.1.10")
            .message
            .contains("not a number")
    );
}

#[test]
fn missing_ami_key_and_type_are_reported_per_device_and_summarised() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    fleet[0].images.clear();
    fleet[1].key_pairs.clear();
    fleet[2]
        .instance_types
        .retain(|t| t.name != "sbe-c.2xlarge");
    let findings = run(&plan(1, 2, "sbe-c.2xlarge"), &fleet);
    // Two machine configs use each device: each gets its own finding.
    let errs = errors(&findings);
    assert_eq!(
        errs.iter().filter(|e| e.0 == "preflight.ami").count(),
        2,
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .filter(|e| e.0 == "preflight.ami")
            .all(|e| e.1.as_deref() == Some("192.168.1.10"))
    );
    assert!(
        errs.iter()
            .filter(|e| e.0 == "preflight.key-pair")
            .all(|e| e.1.as_deref() == Some("192.168.1.11"))
    );
    assert!(
        errs.iter()
            .filter(|e| e.0 == "preflight.instance-type")
            .all(|e| e.1.as_deref() == Some("192.168.1.12"))
    );
    assert_eq!(errs.len(), 6, "{errs:?}");
    let summary = findings
        .iter()
        .find(|f| f.check == "preflight.instance-type" && f.device.is_none())
        .expect("a summary naming the devices that lack the type");
    assert!(
        summary.message.contains("1 of the 3 devices") && summary.message.contains("192.168.1.12"),
        "{}",
        summary.message
    );
}

#[test]
fn too_small_instance_type_is_an_error() {
    let fleet: Vec<_> = devices().into_iter().map(good).collect();
    let mut p = plan(1, 0, "sbe-c.medium");
    p.machines.remove("snow-md");
    let findings = run(&p, &fleet);
    let f = one(&findings, "preflight.instance-type", "192.168.1.10");
    assert!(f.message.contains("1 default vCPU"), "{}", f.message);
}

#[test]
fn not_enough_capacity_names_the_device_and_the_numbers() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    // 7 × sbe-c.4xlarge over 3 devices: 3 on .10, 2 on the others; 16 vCPU / 64 GiB each.
    fleet[0].description.capacities[0].available = 40;
    fleet[1].description.capacities[1].available = 100 << 30;
    let findings = run(&plan(3, 4, "sbe-c.4xlarge"), &fleet);
    let cpu = one(&findings, "preflight.capacity", "192.168.1.10");
    assert!(cpu.message.contains("not enough vCPU"), "{}", cpu.message);
    assert!(
        cpu.message.contains("needs 48 vCPU") && cpu.message.contains("40 vCPU"),
        "{}",
        cpu.message
    );
    let mem = one(&findings, "preflight.capacity", "192.168.1.11");
    assert!(
        mem.message.contains("not enough memory") && mem.message.contains("128 GiB"),
        "{}",
        mem.message
    );
    assert_eq!(errors(&findings).len(), 2);
}

#[test]
fn an_unreachable_port_is_one_finding_not_one_per_check() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    fleet[1].ec2_failure = Some(ErrorKind::Refused);
    fleet[2].device_api_failure = Some(ErrorKind::TlsUntrusted);
    let findings = run(&plan(1, 1, "sbe-c.large"), &fleet);
    assert_eq!(
        errors(&findings),
        vec![
            ("preflight.reachability".into(), Some("192.168.1.11".into())),
            ("preflight.reachability".into(), Some("192.168.1.12".into())),
        ],
        "{findings:#?}"
    );
    let tls = one(&findings, "preflight.reachability", "192.168.1.12");
    assert!(tls.message.contains(":9092"), "{}", tls.message);
    assert!(tls.hint.unwrap().contains("snowballEdge get-certificate"));
    let refused = one(&findings, "preflight.reachability", "192.168.1.11");
    assert!(
        refused.message.contains("8243") && refused.message.contains("refused"),
        "{}",
        refused.message
    );
}

#[test]
fn a_service_error_stays_with_its_check() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    fleet[0].ec2_failure = Some(ErrorKind::Service {
        status: 400,
        code: "UnauthorizedOperation".into(),
    });
    let findings = run(&plan(1, 0, "sbe-c.large"), &fleet);
    let errs = errors(&findings);
    assert!(errs.contains(&("preflight.ami".into(), Some("192.168.1.10".into()))));
    assert!(errs.contains(&("preflight.key-pair".into(), Some("192.168.1.10".into()))));
    assert!(errs.contains(&(
        "preflight.instance-type".into(),
        Some("192.168.1.10".into())
    )));
    assert!(!errs.iter().any(|e| e.0 == "preflight.reachability"));
}

#[test]
fn empty_ami_and_key_are_looked_up_and_reported() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    fleet[2].images.clear();
    let mut p = plan(1, 0, "sbe-c.large");
    p.machines.remove("snow-md");
    for m in p.machines.values_mut() {
        m.ami_id = None;
        m.ssh_key_name = None;
    }
    let findings = run(&p, &fleet);
    let used = findings
        .iter()
        .find(|f| f.check == "preflight.ami" && f.device.as_deref() == Some("192.168.1.10"))
        .unwrap();
    assert_eq!(used.severity, Severity::Info);
    assert!(used.message.contains(AMI), "{}", used.message);
    let missing = one(&findings, "preflight.ami", "192.168.1.12");
    assert!(
        missing.message.contains("eksa.aws.com/k8s-version=1.31"),
        "{}",
        missing.message
    );
    assert!(findings.iter().any(|f| {
        f.check == "preflight.key-pair"
            && f.severity == Severity::Info
            && f.message
                .contains("create uses the default key pair eksa-default-")
            && f.message.contains("if the device lacks it")
    }));
}

#[test]
fn devices_without_credentials_are_errors() {
    let fleet = vec![good(ip("192.168.1.10")), good(ip("192.168.1.11"))];
    let findings = run(&plan(1, 0, "sbe-c.large"), &fleet);
    assert_eq!(
        errors(&findings),
        vec![("preflight.credentials".into(), Some("192.168.1.12".into()))]
    );
}

#[test]
fn endpoint_in_use_and_skips() {
    let rt = rt();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let fleet: Vec<_> = devices().into_iter().map(good).collect();
    let mut p = plan(1, 0, "sbe-c.large");
    p.endpoint = Some("127.0.0.1".into());
    let mut o = PreflightOptions {
        endpoint_probe_port: port,
        ..options()
    };
    let findings = run_with(&p, &fleet, &o);
    assert!(
        errors(&findings).contains(&("preflight.endpoint-in-use".into(), None)),
        "{findings:#?}"
    );
    drop(listener);
    // Refused counts as in use too (EKS-A's rule: something is there).
    let findings = run_with(&p, &fleet, &o);
    assert!(errors(&findings).contains(&("preflight.endpoint-in-use".into(), None)));
    o.skip_ip_check = true;
    let findings = run_with(&p, &fleet, &o);
    assert_eq!(errors(&findings), vec![]);
    assert!(
        findings
            .iter()
            .any(|f| f.check == "preflight.endpoint-in-use" && f.message.contains("(as asked)"))
    );
    o.skip_ip_check = false;
    p.skip_ip_check_annotation = true;
    assert_eq!(errors(&run_with(&p, &fleet, &o)), vec![]);
    p.skip_ip_check_annotation = false;
    o.mode = Mode::Upgrade;
    assert_eq!(errors(&run_with(&p, &fleet, &o)), vec![]);
}

#[test]
fn unreachable_imds_skips_the_admin_check_with_an_info() {
    let fleet: Vec<_> = devices().into_iter().map(good).collect();
    let mut p = plan(1, 0, "sbe-c.large");
    p.endpoint = Some("192.0.2.10".into());
    // A closed loopback port: IMDS refuses at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let o = PreflightOptions {
        imds: Some(closed),
        skip_ip_check: true,
        ..options()
    };
    let findings = run_with(&p, &fleet, &o);
    let admin = findings
        .iter()
        .find(|f| f.check == "preflight.admin-ip")
        .unwrap();
    assert_eq!(admin.severity, Severity::Info);
    assert!(admin.message.contains("skipped"));
}

#[test]
fn sequential_and_concurrent_agree() {
    let mut fleet: Vec<_> = devices().into_iter().map(good).collect();
    fleet[1].key_pairs.clear();
    fleet[2].description.unlock_state = UnlockState::Unlocking;
    let p = plan(2, 2, "sbe-c.xlarge");
    let a = run(&p, &fleet);
    let b = run_with(
        &p,
        &fleet,
        &PreflightOptions {
            schedule: Schedule::Sequential,
            ..options()
        },
    );
    assert_eq!(a, b);
}

#[test]
fn devices_run_at_once() {
    // Behaviour, not time: the calls of several devices are under way together.
    let gauge = Arc::new(InFlight::default());
    let fleet: Vec<_> = devices()
        .into_iter()
        .map(|d| {
            good(d)
                .with_delay(Duration::from_millis(100))
                .with_in_flight(gauge.clone())
        })
        .collect();
    let findings = run(&plan(1, 1, "sbe-c.large"), &fleet);
    assert_eq!(errors(&findings), vec![]);
    assert!(gauge.peak() > 1, "one call at a time: {}", gauge.peak());
    // Sequential runs one call at a time.
    let gauge = Arc::new(InFlight::default());
    let fleet: Vec<_> = devices()
        .into_iter()
        .map(|d| good(d).with_in_flight(gauge.clone()))
        .collect();
    let sequential = PreflightOptions {
        schedule: Schedule::Sequential,
        ..options()
    };
    run_with(&plan(1, 1, "sbe-c.large"), &fleet, &sequential);
    assert_eq!(gauge.peak(), 1);
}

#[test]
fn plan_from_a_spec_counts_machines_by_config_and_role() {
    let report = snow_api::check(include_str!("data/cluster.yaml")).unwrap();
    let p = Plan::from_spec(report.spec.as_ref().unwrap());
    assert_eq!(p.cluster, "edge");
    assert_eq!(p.kubernetes_version.as_deref(), Some("1.33"));
    assert_eq!(p.endpoint.as_deref(), Some("192.168.1.100"));
    let names: Vec<&str> = p.machines.keys().map(String::as_str).collect();
    assert_eq!(names, ["edge-cp", "edge-etcd", "edge-md"]);
    assert_eq!(
        p.machines["edge-cp"].machines,
        BTreeMap::from([(Role::ControlPlane, 3)])
    );
    assert_eq!(
        p.machines["edge-etcd"].machines,
        BTreeMap::from([(Role::Etcd, 3)])
    );
    // Two worker groups share edge-md: 2 + 1.
    assert_eq!(
        p.machines["edge-md"].machines,
        BTreeMap::from([(Role::Worker, 3)])
    );
    assert_eq!(p.machines["edge-md"].devices.len(), 2);
    assert!(p.machines["edge-cp"].ami_id.is_none());
}
