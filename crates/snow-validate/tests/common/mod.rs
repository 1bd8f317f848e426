//! What the device tests share: one moto server and one Device API stand-in per device, over TLS
//! with a test CA, and the clients for them.
#![allow(dead_code)]

use snow_api::DeviceIp;
use snow_credentials::{CaBundle, CredentialsFile};
use snow_test_devices::{DeviceApiStandIn, DeviceState, Faults, Moto, TestCa, loopback_ip};
use snow_validate::{ClientConfig, RetryPolicy, SnowDevice, Trust};
use std::net::IpAddr;
use std::time::Duration;

pub(crate) const ACCESS_KEY: &str = "AKIDSNOWTEST00000001";
pub(crate) const SECRET: &str = "snowSecretKeyForTestsOnly0000000000000001";
pub(crate) const AMI_NAME: &str = "eks-d-1-31-ubuntu";
pub(crate) const KEY: &str = "snow-key";
pub(crate) const KEY_MATERIAL: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtL0BVVb1z1ynqpvbGVPD0yTjNe5j6NRtk+4kwdbjEi test";

pub(crate) fn credentials(ips: &[IpAddr], secret: &str) -> CredentialsFile {
    let mut ini = String::new();
    for ip in ips {
        ini.push_str(&format!(
            "[{ip}]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {secret}\nregion = snow\n\n"
        ));
    }
    CredentialsFile::parse("credentials", ini.into_bytes()).0
}

pub(crate) fn trust(ca: &TestCa) -> Trust {
    let (bundle, _) = CaBundle::parse("ca-bundle.pem", ca.pem().as_bytes().to_vec());
    Trust::from_bundle(&bundle).unwrap()
}

pub(crate) fn config() -> ClientConfig {
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

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Seeds moto through its EC2 API: an AMI tagged for 1.31/ubuntu, and the key pair.
pub(crate) async fn seed(device: &SnowDevice, key: bool) -> String {
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
pub(crate) struct Fleet {
    pub(crate) ips: Vec<IpAddr>,
    pub(crate) motos: Vec<Moto>,
    pub(crate) apis: Vec<DeviceApiStandIn>,
    pub(crate) devices: Vec<SnowDevice>,
}

/// `n` devices, each with moto (minus `drop_types[i]`) and the stand-in.
pub(crate) async fn fleet(ca: &TestCa, n: usize, drop_types: &[&[&str]]) -> Fleet {
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
