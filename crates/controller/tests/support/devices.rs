//! What the controller's tests give it for the world outside Kubernetes: in-memory devices
//! (`InMemoryDevice`) and EKS Anywhere's rendered Cilium manifest.

use snow_api::DeviceIp;
use snow_controller::DeviceSource;
use snow_lifecycle::Management;
use snow_test_devices::InMemoryDevice;
use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
};

/// Devices that have the AMIs the test gives them (shared with the test) and the key pair
/// `edge-key`.
#[derive(Default, Clone)]
pub(crate) struct Fleet {
    pub(crate) amis: Arc<Mutex<BTreeSet<String>>>,
}

impl DeviceSource for Fleet {
    type Device = InMemoryDevice;

    async fn devices(
        &self,
        _: &Management,
        ips: &[DeviceIp],
    ) -> Result<(Vec<InMemoryDevice>, Vec<DeviceIp>), String> {
        let amis = self.amis.lock().unwrap().clone();
        Ok((
            ips.iter()
                .map(|ip| {
                    amis.iter()
                        .fold(InMemoryDevice::new(*ip), |d, ami| d.with_image(ami, &[]))
                        .with_key_pair("edge-key")
                })
                .collect(),
            Vec::new(),
        ))
    }
}

/// EKS Anywhere's rendered Cilium manifest (the lifecycle tests' fixture).
pub(crate) fn cilium() -> snow_lifecycle::CniManifest {
    snow_lifecycle::CniManifest::parse(include_str!(
        "../../../lifecycle/tests/fixtures/cilium.yaml"
    ))
    .expect("fixture")
}
