//! `snowctl devices describe` (`snow_validate::inventory::describe`) on 16 devices whose every
//! call answers after 50 ms (in-process devices with an injected delay), against a device-by-device
//! run of the same reads (one device after another, as a script looping over the devices does).
//!
//! ```text
//! cargo bench --workspace --bench devices --profile dev
//! ```
//!
//! A device's six reads (DescribeDevice, DescribeDeviceSoftware, DescribeInstances,
//! DescribeDirectNetworkInterfaces, DescribeImages, DescribeKeyPairs) do not depend on each
//! other, so one device's longest chain of dependent calls is one call; the target is a wall time
//! within 2 × 50 ms. Prints the median of several runs of each and the ratio.

#![allow(clippy::print_stdout)]

use snow_api::DeviceIp;
use snow_test_devices::InMemoryDevice;
use snow_validate::inventory;
use std::time::{Duration, Instant};

const DEVICES: usize = 16;
const DELAY: Duration = Duration::from_millis(50);

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let devices: Vec<InMemoryDevice> = (0..DEVICES)
        .map(|i| {
            let ip: DeviceIp = format!("192.168.1.{}", 10 + i).parse().unwrap();
            InMemoryDevice::new(ip)
                .with_image(
                    "ami-1",
                    &[
                        ("eksa.aws.com/k8s-version", "1.33"),
                        ("eksa.aws.com/os-family", "ubuntu"),
                    ],
                )
                .with_key_pair("snow-key")
                .with_delay(DELAY)
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let check = |found: &inventory::FleetInventory| {
        assert_eq!(found.devices.len(), DEVICES);
        assert!(!found.has_errors(), "{found}");
        assert!(found.devices.iter().all(|d| d.images.len() == 1));
    };
    let calls_before: u32 = devices.iter().map(InMemoryDevice::calls).sum();
    let mut concurrent = Vec::new();
    for _ in 0..21 {
        let started = Instant::now();
        let found = runtime.block_on(inventory::describe(&devices, &[]));
        concurrent.push(started.elapsed());
        check(&found);
    }
    let calls = (devices.iter().map(InMemoryDevice::calls).sum::<u32>() - calls_before) / 21;
    let mut by_device = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let found = runtime.block_on(async {
            let mut all = Vec::new();
            for device in &devices {
                all.push(inventory::describe_device(device).await);
            }
            inventory::FleetInventory { devices: all }
        });
        by_device.push(started.elapsed());
        check(&found);
    }
    let (concurrent, by_device) = (median(concurrent), median(by_device));
    println!("devices describe, {DEVICES} devices, {calls} calls per run, {DELAY:?} per call");
    println!("  longest chain on one device: 1 call = {DELAY:?}");
    println!(
        "  all devices at once (snowctl): median {concurrent:?} = {:.2} × chain",
        concurrent.as_secs_f64() / DELAY.as_secs_f64()
    );
    println!(
        "  device by device:              median {by_device:?} = {:.1} × chain",
        by_device.as_secs_f64() / DELAY.as_secs_f64()
    );
    println!(
        "  device by device / all at once = {:.1} ×",
        by_device.as_secs_f64() / concurrent.as_secs_f64()
    );
}
