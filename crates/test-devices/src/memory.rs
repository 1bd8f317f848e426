//! An in-memory device: the [`Device`] trait with no network, for validator tests and the
//! benchmark (with an injected delay per call).

use snow_api::DeviceIp;
use snow_validate::{
    Capacity, Device, DeviceDescription, DeviceError, DeviceSoftware, ErrorKind, Image,
    InstanceTypeInfo, NetworkInterface, Service, UnlockState,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{
    Arc,
    atomic::{AtomicU32, AtomicUsize, Ordering},
};
use std::time::Duration;

/// A device held in memory. Fields are public: tests shape the device they need.
#[derive(Debug)]
pub struct InMemoryDevice {
    /// The device IP.
    pub ip: DeviceIp,
    /// Every call waits this long first.
    pub delay: Duration,
    /// AMIs by id, with their tags.
    pub images: BTreeMap<String, BTreeMap<String, String>>,
    /// Key pair names.
    pub key_pairs: BTreeSet<String>,
    /// Offered instance types.
    pub instance_types: Vec<InstanceTypeInfo>,
    /// DescribeDevice.
    pub description: DeviceDescription,
    /// DescribeDeviceSoftware.
    pub software: DeviceSoftware,
    /// When set, every EC2 call fails with this kind.
    pub ec2_failure: Option<ErrorKind>,
    /// When set, every Device API call fails with this kind.
    pub device_api_failure: Option<ErrorKind>,
    calls: AtomicU32,
    in_flight: Option<Arc<InFlight>>,
}

/// Counts the calls under way across the devices that share it, and the most at once: a test
/// of concurrency that asserts behaviour, not time.
#[derive(Debug, Default)]
pub struct InFlight {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl InFlight {
    /// The most calls that were under way at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

impl InMemoryDevice {
    /// An unlocked device on software 102 with 104 vCPU and 416 GiB free, every Snow instance
    /// type, and no AMIs or key pairs.
    pub fn new(ip: DeviceIp) -> InMemoryDevice {
        InMemoryDevice {
            ip,
            in_flight: None,
            delay: Duration::ZERO,
            images: BTreeMap::new(),
            key_pairs: BTreeSet::new(),
            instance_types: crate::SNOW_INSTANCE_TYPES
                .iter()
                .map(|(name, vcpus, mib)| InstanceTypeInfo {
                    name: (*name).to_owned(),
                    default_vcpus: Some(*vcpus),
                    memory_mib: Some(*mib),
                })
                .collect(),
            description: DeviceDescription {
                device_id: Some(format!("JID-{ip}")),
                unlock_state: UnlockState::Unlocked,
                capacities: vec![
                    Capacity {
                        name: "vCPU".into(),
                        unit: "Number".into(),
                        total: 104,
                        used: 0,
                        available: 104,
                    },
                    Capacity {
                        name: "Memory".into(),
                        unit: "Byte".into(),
                        total: 416 << 30,
                        used: 0,
                        available: 416 << 30,
                    },
                ],
                network_interfaces: vec![NetworkInterface {
                    id: "s.ni-1".into(),
                    connector_type: "RJ45".into(),
                    ip_address: Some(ip.to_string()),
                }],
            },
            software: DeviceSoftware {
                installed_version: "102".into(),
                install_state: "NA".into(),
            },
            ec2_failure: None,
            device_api_failure: None,
            calls: AtomicU32::new(0),
        }
    }

    /// Adds an AMI with tags.
    pub fn with_image(mut self, id: &str, tags: &[(&str, &str)]) -> Self {
        self.images.insert(
            id.to_owned(),
            tags.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        self
    }

    /// Adds a key pair.
    pub fn with_key_pair(mut self, name: &str) -> Self {
        self.key_pairs.insert(name.to_owned());
        self
    }

    /// Sets the per-call delay.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Counts this device's calls in `gauge` while they are under way (each call waits its
    /// delay inside the count).
    pub fn with_in_flight(mut self, gauge: Arc<InFlight>) -> Self {
        self.in_flight = Some(gauge);
        self
    }

    /// Calls answered so far.
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    async fn enter(&self, service: Service) -> Result<(), DeviceError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(gauge) = &self.in_flight {
            let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
            gauge.peak.fetch_max(now, Ordering::SeqCst);
        }
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        if let Some(gauge) = &self.in_flight {
            gauge.now.fetch_sub(1, Ordering::SeqCst);
        }
        let failure = match service {
            Service::Ec2 => &self.ec2_failure,
            Service::DeviceApi => &self.device_api_failure,
            // In-memory devices have no IAM.
            Service::Iam => &None,
        };
        match failure {
            Some(kind) => Err(DeviceError::new(self.ip, service, kind.clone(), "injected")),
            None => Ok(()),
        }
    }
}

impl Device for InMemoryDevice {
    fn ip(&self) -> DeviceIp {
        self.ip
    }

    async fn describe_image(&self, ami_id: &str) -> Result<Option<Image>, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(self.images.contains_key(ami_id).then(|| Image {
            id: ami_id.to_owned(),
            name: None,
        }))
    }

    async fn images_tagged(&self, tags: &[(String, String)]) -> Result<Vec<Image>, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(self
            .images
            .iter()
            .filter(|(_, t)| tags.iter().all(|(k, v)| t.get(k) == Some(v)))
            .map(|(id, _)| Image {
                id: id.clone(),
                name: None,
            })
            .collect())
    }

    async fn key_pair_exists(&self, name: &str) -> Result<bool, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(self.key_pairs.contains(name))
    }

    async fn instance_types(&self) -> Result<Vec<InstanceTypeInfo>, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(self.instance_types.clone())
    }

    async fn describe_device(&self) -> Result<DeviceDescription, DeviceError> {
        self.enter(Service::DeviceApi).await?;
        Ok(self.description.clone())
    }

    async fn describe_device_software(&self) -> Result<DeviceSoftware, DeviceError> {
        self.enter(Service::DeviceApi).await?;
        Ok(self.software.clone())
    }
}

/// The inventory's reads over what the device holds (AMIs with their tags, key pairs); it runs no
/// instances and has no DNIs. Writes are refused: tests of key import and cleanup use moto and
/// the Device API stand-in.
impl snow_validate::inventory::FleetDevice for InMemoryDevice {
    async fn instances(&self) -> Result<Vec<snow_validate::inventory::Instance>, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(Vec::new())
    }

    async fn images(&self) -> Result<Vec<snow_validate::inventory::TaggedImage>, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(self
            .images
            .iter()
            .map(|(id, tags)| {
                let tags = tags.iter().map(|(k, v)| (k.as_str(), v.as_str()));
                snow_validate::inventory::image_from_tags(id.clone(), None, tags)
            })
            .collect())
    }

    async fn key_pairs(&self) -> Result<Vec<String>, DeviceError> {
        self.enter(Service::Ec2).await?;
        Ok(self.key_pairs.iter().cloned().collect())
    }

    async fn direct_network_interfaces(
        &self,
    ) -> Result<Vec<snow_validate::DirectNetworkInterface>, DeviceError> {
        self.enter(Service::DeviceApi).await?;
        Ok(Vec::new())
    }

    async fn import_key_pair(&self, _name: &str, _public_key: &[u8]) -> Result<(), DeviceError> {
        self.enter(Service::Ec2).await?;
        let kind = ErrorKind::Service {
            status: 501,
            code: "NotImplemented".into(),
        };
        let why = "the in-memory device does not import key pairs";
        Err(DeviceError::new(self.ip, Service::Ec2, kind, why))
    }
}
