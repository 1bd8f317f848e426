//! A fleet of test devices for the device chores and preflight: one moto server (EC2) and one
//! Device API stand-in per device, over TLS with a test CA on its own loopback address, the
//! clients for them, and what seeds them (a tagged AMI, a key pair, instances with cluster tags,
//! DNIs). Shared by snow-validate's tests and the CLI's.

use crate::{
    DeviceApiStandIn, DeviceState, Faults, Moto, PHYSICAL_INTERFACES, TestCa, loopback_ip,
};
use snow_api::DeviceIp;
use snow_credentials::{CaBundle, CredentialsFile};
use snow_validate::aws_sdk_ec2::types::{InstanceType, ResourceType, Tag, TagSpecification};
use snow_validate::inventory::CLUSTER_TAG_PREFIX;
use snow_validate::{ClientConfig, RetryPolicy, SnowDevice, Trust};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The access key of every test device profile.
pub const ACCESS_KEY: &str = "AKIDSNOWTEST00000001";
/// The secret key of every test device profile (test-only; never a real key).
pub const SECRET: &str = "snowSecretKeyForTestsOnly000000000000001";
/// The name of the AMI [`seed`] registers.
pub const AMI_NAME: &str = "eks-d-1-31-ubuntu";
/// The key pair [`seed`] imports.
pub const KEY: &str = "snow-key";
/// Its public key.
pub const KEY_MATERIAL: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtL0BVVb1z1ynqpvbGVPD0yTjNe5j6NRtk+4kwdbjEi test";

/// The parsed credentials file of `ips`.
pub fn credentials(ips: &[IpAddr], secret: &str) -> CredentialsFile {
    CredentialsFile::parse("credentials", credentials_ini(ips, secret).into_bytes()).0
}

/// Trust in the test CA only.
pub fn trust(ca: &TestCa) -> Trust {
    let (bundle, _) = CaBundle::parse("ca-bundle.pem", ca.pem().as_bytes().to_vec());
    Trust::from_bundle(&bundle).unwrap()
}

/// Client settings for tests: short timeouts, few retries.
pub fn config() -> ClientConfig {
    ClientConfig {
        connect_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_millis(200),
        },
        ..ClientConfig::default()
    }
}

/// Seeds moto through its EC2 API: an AMI tagged for 1.31/ubuntu, and the key pair.
pub async fn seed(device: &SnowDevice, key: bool) -> String {
    let ec2 = device.ec2();
    let image = ec2
        .register_image()
        .name(AMI_NAME)
        .description("EKS-D 1.31 ubuntu")
        .send()
        .await
        .expect("RegisterImage");
    let id = image.image_id().unwrap().to_owned();
    ec2.create_tags()
        .resources(&id)
        .tags(
            snow_validate::aws_sdk_ec2::types::Tag::builder()
                .key("eksa.aws.com/k8s-version")
                .value("1.31")
                .build(),
        )
        .tags(
            snow_validate::aws_sdk_ec2::types::Tag::builder()
                .key("eksa.aws.com/os-family")
                .value("ubuntu")
                .build(),
        )
        .send()
        .await
        .expect("CreateTags");
    if key {
        ec2.import_key_pair()
            .key_name(KEY)
            .public_key_material(snow_validate::aws_sdk_ec2::primitives::Blob::new(
                KEY_MATERIAL,
            ))
            .send()
            .await
            .expect("ImportKeyPair");
    }
    id
}

/// `n` devices: moto and the Device API stand-in on each.
pub struct Fleet {
    /// Each device's loopback address.
    pub ips: Vec<IpAddr>,
    /// Each device's moto (EC2 on port 8243).
    pub motos: Vec<Moto>,
    /// Each device's Device API stand-in (port 9092).
    pub apis: Vec<DeviceApiStandIn>,
    /// A client per device.
    pub devices: Vec<SnowDevice>,
}

/// `n` devices, each with moto (minus `drop_types[i]`) and the stand-in.
pub async fn fleet(ca: &TestCa, n: usize, drop_types: &[&[&str]]) -> Fleet {
    let ips: Vec<IpAddr> = (0..n).map(|_| loopback_ip()).collect();
    let mut motos = Vec::new();
    let mut apis = Vec::new();
    for (i, ip) in ips.iter().enumerate() {
        let cert = ca.server_certificate(*ip).unwrap();
        let drop = drop_types.get(i).copied().unwrap_or(&[]);
        let (ip2, cert2, drop2) = (
            *ip,
            cert.clone(),
            drop.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        );
        let moto = tokio::task::spawn_blocking(move || {
            let d: Vec<&str> = drop2.iter().map(String::as_str).collect();
            Moto::start(ip2, 8243, &cert2, &d)
        });
        motos.push(moto);
        apis.push(
            DeviceApiStandIn::start(
                *ip,
                9092,
                &cert,
                ACCESS_KEY,
                SECRET,
                DeviceState::default(),
                Faults::default(),
            )
            .await
            .unwrap(),
        );
    }
    let mut started = Vec::new();
    for m in motos {
        started.push(m.await.unwrap().unwrap_or_else(|e| panic!("{e}")));
    }
    let creds = credentials(&ips, SECRET);
    let (devices, missing) = SnowDevice::fleet(
        &creds,
        &trust(ca),
        config(),
        ips.iter().map(|i| DeviceIp::from(*i)),
    );
    assert!(missing.is_empty());
    Fleet {
        ips,
        motos: started,
        apis,
        devices,
    }
}

/// A subnet in moto's default VPC (RunInstances needs one; moto accepts AZ `us-west-2a` even in
/// region `snow`).
pub async fn subnet(device: &SnowDevice) -> String {
    let ec2 = device.ec2();
    let vpcs = ec2.describe_vpcs().send().await.expect("DescribeVpcs");
    let vpc = vpcs.vpcs()[0].vpc_id().unwrap().to_owned();
    let out = ec2
        .create_subnet()
        .vpc_id(vpc)
        .cidr_block("172.31.0.0/24")
        .availability_zone("us-west-2a")
        .send()
        .await
        .expect("CreateSubnet");
    out.subnet().unwrap().subnet_id().unwrap().to_owned()
}

/// One instance with a `Name` tag and, when given, the cluster tag.
pub async fn instance(
    device: &SnowDevice,
    ami: &str,
    subnet: &str,
    name: &str,
    cluster: Option<&str>,
) -> String {
    let mut tags = TagSpecification::builder()
        .resource_type(ResourceType::Instance)
        .tags(Tag::builder().key("Name").value(name).build());
    if let Some(c) = cluster {
        tags = tags.tags(
            Tag::builder()
                .key(format!("{CLUSTER_TAG_PREFIX}{c}"))
                .value("owned")
                .build(),
        );
    }
    let out = device
        .ec2()
        .run_instances()
        .image_id(ami)
        .instance_type(InstanceType::from("sbe-c.large"))
        .min_count(1)
        .max_count(1)
        .subnet_id(subnet)
        .tag_specifications(tags.build())
        .send()
        .await
        .expect("RunInstances");
    out.instances()[0].instance_id().unwrap().to_owned()
}

/// A DNI on the first physical interface, attached to `instance`; its ARN.
pub async fn dni(device: &SnowDevice, instance: &str) -> String {
    device
        .device_api()
        .create_direct_network_interface(PHYSICAL_INTERFACES[0], Some(instance))
        .await
        .expect("CreateDirectNetworkInterface")
        .arn
}

/// An instance's state name.
pub async fn state(device: &SnowDevice, id: &str) -> String {
    let out = device
        .ec2()
        .describe_instances()
        .instance_ids(id)
        .send()
        .await
        .expect("DescribeInstances");
    let i = &out.reservations()[0].instances()[0];
    i.state().unwrap().name().unwrap().as_str().to_owned()
}

/// The credentials INI of `ips` (every profile with [`ACCESS_KEY`] and `secret`).
pub fn credentials_ini(ips: &[IpAddr], secret: &str) -> String {
    let mut ini = String::new();
    for ip in ips {
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {secret}\nregion = snow\n\n"
        ));
    }
    ini
}

impl Fleet {
    /// Writes the credentials INI (0600) and the CA bundle for these devices and `extra` IPs
    /// (devices with a profile and nothing listening) into `dir`: (credentials, CA bundle).
    pub fn write_files(&self, ca: &TestCa, extra: &[IpAddr], dir: &Path) -> (PathBuf, PathBuf) {
        let ips: Vec<IpAddr> = self.ips.iter().chain(extra).copied().collect();
        let credentials = dir.join("credentials");
        std::fs::write(&credentials, credentials_ini(&ips, SECRET)).expect("credentials");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(0o600);
            std::fs::set_permissions(&credentials, mode).expect("chmod");
        }
        let bundle = dir.join("ca-bundle.pem");
        std::fs::write(&bundle, ca.pem()).expect("CA bundle");
        (credentials, bundle)
    }
}

/// The key pair names a device has.
pub async fn key_pairs(device: &SnowDevice) -> Vec<String> {
    let out = device
        .ec2()
        .describe_key_pairs()
        .send()
        .await
        .expect("DescribeKeyPairs");
    out.key_pairs()
        .iter()
        .filter_map(|k| k.key_name())
        .map(str::to_owned)
        .collect()
}
