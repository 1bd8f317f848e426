//! Preflight of a cluster on 16 devices whose every call answers after 50 ms (in-process devices
//! with an injected delay): snowctl's concurrent runner against an EKS Anywhere-style sequential
//! one (device by device, check by check).
//!
//! ```text
//! cargo bench -p snowctl-benches --bench preflight
//! ```
//!
//! The longest chain of dependent calls on one device is one call (every check of a device is an
//! independent request), so the target is a wall time within 1.5 × 50 ms. Prints the median of
//! several runs of each and the ratios.

#![allow(clippy::print_stdout)]

use snow_api::DeviceIp;
use snow_test_devices::InMemoryDevice;
use snow_validate::preflight::{self, PreflightOptions, Schedule};
use snow_validate::{MachinePlan, Plan, Role};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const DEVICES: usize = 16;
const DELAY: Duration = Duration::from_millis(50);

fn plan(devices: &[DeviceIp]) -> Plan {
    let machine = |name: &str, role: Role, n: u32, ami: &str| MachinePlan {
        name: name.into(),
        object: format!("SnowMachineConfig/{name}"),
        devices: devices.to_vec(),
        ami_id: Some(ami.into()),
        ssh_key_name: Some("snow-key".into()),
        instance_type: Some("sbe-c.xlarge".into()),
        os_family: Some("ubuntu".into()),
        machines: BTreeMap::from([(role, n)]),
    };
    Plan {
        cluster: "bench".into(),
        kubernetes_version: Some("1.31".into()),
        endpoint: None,
        skip_ip_check_annotation: false,
        machines: BTreeMap::from([
            ("cp".into(), machine("cp", Role::ControlPlane, 3, "ami-cp")),
            ("etcd".into(), machine("etcd", Role::Etcd, 3, "ami-cp")),
            ("md".into(), machine("md", Role::Worker, 32, "ami-md")),
        ]),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let ips: Vec<DeviceIp> = (0..DEVICES)
        .map(|i| format!("192.168.1.{}", 10 + i).parse().unwrap())
        .collect();
    let devices: Vec<InMemoryDevice> = ips
        .iter()
        .map(|ip| {
            InMemoryDevice::new(*ip)
                .with_image("ami-cp", &[])
                .with_image("ami-md", &[])
                .with_key_pair("snow-key")
                .with_delay(DELAY)
        })
        .collect();
    let plan = plan(&ips);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let measure = |schedule: Schedule, runs: usize| -> (Duration, usize) {
        let options = PreflightOptions {
            imds: None,
            schedule,
            ..PreflightOptions::default()
        };
        let mut times = Vec::new();
        let mut findings = 0;
        for _ in 0..runs {
            let started = Instant::now();
            let report =
                runtime.block_on(preflight::run(&plan, &devices, &[], &options, &mut |_| {}));
            times.push(started.elapsed());
            assert!(!report.has_errors(), "{:#?}", report.findings);
            findings = report.findings.len();
        }
        (median(times), findings)
    };
    let calls_before: u32 = devices.iter().map(InMemoryDevice::calls).sum();
    let (concurrent, findings) = measure(Schedule::Concurrent, 21);
    let calls = (devices.iter().map(InMemoryDevice::calls).sum::<u32>() - calls_before) / 21;
    let (sequential, _) = measure(Schedule::Sequential, 3);
    let chain = DELAY;
    println!(
        "preflight, {DEVICES} devices, {calls} calls per run, {DELAY:?} per call, {findings} findings"
    );
    println!("  longest chain on one device: 1 call = {chain:?}");
    println!(
        "  concurrent (snowctl):  median {concurrent:?}  = {:.2} × chain",
        concurrent.as_secs_f64() / chain.as_secs_f64()
    );
    println!(
        "  sequential (EKS-A):    median {sequential:?}  = {:.1} × chain",
        sequential.as_secs_f64() / chain.as_secs_f64()
    );
    println!(
        "  sequential / concurrent = {:.1} ×",
        sequential.as_secs_f64() / concurrent.as_secs_f64()
    );
}
