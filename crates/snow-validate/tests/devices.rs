//! The real clients over TLS: EC2 is moto (one server per device, certificate from a test CA),
//! the Snowball Device API is the stand-in (SigV4 verified). Every fault case yields its
//! classified finding within a bounded time.

use snow_api::{DeviceIp, Finding, Severity};
use snow_test_devices::{
    BlackHole, DeviceApiStandIn, DeviceState, Faults, InMemoryDevice, Moto, TestCa, loopback_ip,
};
use snow_validate::preflight::{self, PreflightOptions};
use snow_validate::{
    ClientConfig, Device, DeviceDescription, DeviceError, DeviceSoftware, ErrorKind, Image,
    InstanceTypeInfo, MachinePlan, Plan, Role, SnowDevice,
};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

mod common;
use common::*;

fn plan(devices: &[IpAddr], instance_type: &str, ami: Option<&str>, count: u32) -> Plan {
    let m = MachinePlan {
        name: "snow-cp".into(),
        object: "SnowMachineConfig/snow-cp".into(),
        devices: devices.iter().map(|i| DeviceIp::from(*i)).collect(),
        ami_id: ami.map(str::to_owned),
        ssh_key_name: Some(KEY.into()),
        instance_type: Some(instance_type.into()),
        os_family: Some("ubuntu".into()),
        machines: BTreeMap::from([(Role::ControlPlane, count)]),
    };
    Plan {
        cluster: "snow".into(),
        kubernetes_version: Some("1.31".into()),
        endpoint: None,
        skip_ip_check_annotation: false,
        machines: BTreeMap::from([("snow-cp".into(), m)]),
    }
}

fn options() -> PreflightOptions {
    PreflightOptions {
        imds: None,
        ..PreflightOptions::default()
    }
}

fn errors(findings: &[Finding]) -> Vec<(String, Option<String>)> {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.check.clone(), f.device.clone()))
        .collect()
}

#[test]
fn moto_and_stand_in_three_devices_pass_then_fail_exactly_where_they_should() {
    let rt = rt();
    rt.block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        // Device 3 lacks sbe-c.xlarge.
        let f = fleet(&ca, 3, &[&[], &[], &["sbe-c.xlarge"]]).await;
        let mut amis = Vec::new();
        for (i, d) in f.devices.iter().enumerate() {
            // Device 2 has no key pair.
            amis.push(seed(d, i != 1).await);
        }
        // moto ids differ per server: look the AMI up by tag (amiID empty) first.
        let p = plan(&f.ips, "sbe-c.large", None, 3);
        let report = tokio::time::timeout(
            Duration::from_secs(30),
            preflight::run(&p, &f.devices, &[], &options(), &mut |_| {}),
        )
        .await
        .unwrap();
        let e = errors(&report.findings);
        assert_eq!(
            e,
            vec![("preflight.key-pair".into(), Some(f.ips[1].to_string()))],
            "{:#?}",
            report.findings
        );
        for (i, ip) in f.ips.iter().enumerate() {
            let used = report
                .findings
                .iter()
                .find(|x| {
                    x.check == "preflight.ami" && x.device.as_deref() == Some(&ip.to_string())
                })
                .unwrap();
            assert!(
                used.message.contains(&amis[i]) && used.message.contains(AMI_NAME),
                "{}",
                used.message
            );
        }
        let capacity = report
            .findings
            .iter()
            .filter(|x| x.check == "preflight.capacity")
            .count();
        assert_eq!(capacity, 3);

        // The first device's AMI id: present there, missing on the others (a real NotFound).
        let p = plan(&f.ips, "sbe-c.xlarge", Some(&amis[0]), 3);
        let report = preflight::run(&p, &f.devices, &[], &options(), &mut |_| {}).await;
        let e = errors(&report.findings);
        let (d1, d2, d3) = (
            f.ips[0].to_string(),
            f.ips[1].to_string(),
            f.ips[2].to_string(),
        );
        assert!(
            e.contains(&("preflight.ami".into(), Some(d2.clone()))),
            "{e:?}"
        );
        assert!(e.contains(&("preflight.ami".into(), Some(d3.clone()))));
        assert!(!e.contains(&("preflight.ami".into(), Some(d1.clone()))));
        assert!(e.contains(&("preflight.key-pair".into(), Some(d2.clone()))));
        assert!(e.contains(&("preflight.instance-type".into(), Some(d3.clone()))));
        assert_eq!(e.len(), 4, "{e:?}");
        let it = report
            .findings
            .iter()
            .find(|x| x.check == "preflight.instance-type" && x.device.as_deref() == Some(&d3))
            .unwrap();
        assert!(
            it.message.contains("sbe-c.xlarge is not offered"),
            "{}",
            it.message
        );
        // No secret anywhere in the report.
        let all = format!("{:?}", report.findings);
        assert!(!all.contains(SECRET) && !all.contains(ACCESS_KEY));
    });
}

/// EC2 from memory, the Device API for real: the Device API faults in isolation.
struct ApiOnly {
    api: SnowDevice,
    ec2: InMemoryDevice,
}

impl Device for ApiOnly {
    fn ip(&self) -> DeviceIp {
        self.api.ip()
    }
    async fn describe_image(&self, ami_id: &str) -> Result<Option<Image>, DeviceError> {
        self.ec2.describe_image(ami_id).await
    }
    async fn images_tagged(&self, tags: &[(String, String)]) -> Result<Vec<Image>, DeviceError> {
        self.ec2.images_tagged(tags).await
    }
    async fn key_pair_exists(&self, name: &str) -> Result<bool, DeviceError> {
        self.ec2.key_pair_exists(name).await
    }
    async fn instance_types(&self) -> Result<Vec<InstanceTypeInfo>, DeviceError> {
        self.ec2.instance_types().await
    }
    async fn describe_device(&self) -> Result<DeviceDescription, DeviceError> {
        self.api.describe_device().await
    }
    async fn describe_device_software(&self) -> Result<DeviceSoftware, DeviceError> {
        self.api.describe_device_software().await
    }
}

enum Server {
    None,
    BlackHole,
    StandIn {
        ca_other: bool,
        state: DeviceState,
        faults: Faults,
    },
}

struct Outcome {
    findings: Vec<Finding>,
    requests: u32,
    device: String,
}

fn device_api_case(server: Server, secret: &str, count: u32) -> Outcome {
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let ip = loopback_ip();
        let mut _hole = None;
        let mut stand_in = None;
        match server {
            Server::None => assert!(snow_test_devices::closed_port(ip, 9092)),
            Server::BlackHole => _hole = Some(BlackHole::start(ip, 9092).await.unwrap()),
            Server::StandIn {
                ca_other,
                state,
                faults,
            } => {
                let other = TestCa::new("another CA").unwrap();
                let cert = if ca_other {
                    other.server_certificate(ip)
                } else {
                    ca.server_certificate(ip)
                }
                .unwrap();
                stand_in = Some(
                    DeviceApiStandIn::start(ip, 9092, &cert, ACCESS_KEY, SECRET, state, faults)
                        .await
                        .unwrap(),
                );
            }
        }
        let creds = credentials(&[ip], secret);
        let config = ClientConfig {
            request_timeout: Duration::from_secs(1),
            ..config()
        };
        let api = SnowDevice::new(
            creds.provider(DeviceIp::from(ip)).unwrap(),
            &trust(&ca),
            config,
        );
        let ec2 = InMemoryDevice::new(DeviceIp::from(ip))
            .with_key_pair(KEY)
            .with_image("ami-1", &[]);
        let devices = [ApiOnly { api, ec2 }];
        let p = plan(&[ip], "sbe-c.4xlarge", Some("ami-1"), count);
        let report = tokio::time::timeout(
            Duration::from_secs(20),
            preflight::run(&p, &devices, &[], &options(), &mut |_| {}),
        )
        .await
        .unwrap();
        let text = format!("{:?}", report.findings);
        assert!(
            !text.contains(SECRET) && !text.contains("wrong-secret") && !text.contains(ACCESS_KEY),
            "{text}"
        );
        Outcome {
            findings: report.findings,
            requests: stand_in.as_ref().map_or(0, |s| s.requests()),
            device: ip.to_string(),
        }
    })
}

fn only_error(o: &Outcome, check: &str) -> Finding {
    let e = errors(&o.findings);
    assert_eq!(
        e,
        vec![(check.to_owned(), Some(o.device.clone()))],
        "{:#?}",
        o.findings
    );
    o.findings
        .iter()
        .find(|f| f.check == check)
        .unwrap()
        .clone()
}

fn good_stand_in() -> Server {
    in_state(DeviceState::default())
}

/// The stand-in, trusted and without faults, reporting `state`.
fn in_state(state: DeviceState) -> Server {
    Server::StandIn {
        ca_other: false,
        state,
        faults: Faults::default(),
    }
}

#[test]
fn healthy_device_api_passes() {
    let o = device_api_case(good_stand_in(), SECRET, 1);
    assert_eq!(errors(&o.findings), vec![]);
    assert_eq!(o.requests, 2, "DescribeDevice and DescribeDeviceSoftware");
}

#[test]
fn closed_port_is_refused() {
    let o = device_api_case(Server::None, SECRET, 1);
    let f = only_error(&o, "preflight.reachability");
    assert!(
        f.message.contains("9092") && f.message.contains("refused"),
        "{}",
        f.message
    );
    // Refused is answered at once: final, never retried with backoff.
    assert!(!snow_validate::ErrorKind::Refused.is_retryable());
}

#[test]
fn black_hole_is_bounded_by_the_timeout() {
    let o = device_api_case(Server::BlackHole, SECRET, 1);
    let f = only_error(&o, "preflight.reachability");
    // The finding names the bound that ended the wait (no assertion on the clock: a loaded
    // machine stretches time, not behaviour).
    assert!(f.message.contains("no answer within 1s"), "{}", f.message);
}

#[test]
fn certificate_from_another_ca_is_untrusted() {
    let o = device_api_case(
        Server::StandIn {
            ca_other: true,
            state: DeviceState::default(),
            faults: Faults::default(),
        },
        SECRET,
        1,
    );
    let f = only_error(&o, "preflight.reachability");
    assert!(
        f.message.contains(&format!(
            "the certificate for {} is not in the CA bundle",
            o.device
        )),
        "{}",
        f.message
    );
    assert!(f.hint.unwrap().contains("snowballEdge get-certificate"));
    assert_eq!(o.requests, 0);
}

#[test]
fn wrong_secret_is_bad_credentials() {
    let o = device_api_case(
        good_stand_in(),
        "wrong-secret-wrong-secret-wrong-secret00",
        1,
    );
    let f = only_error(&o, "preflight.reachability");
    assert!(
        f.message.contains("rejected the credentials") && f.message.contains("signature"),
        "{}",
        f.message
    );
    assert!(f.hint.unwrap().contains("get-secret-access-key"));
    // Not retried: one request per call.
    assert_eq!(o.requests, 2);
}

#[test]
fn throttled_twice_then_fine() {
    let faults = Faults {
        throttle_first: 2,
        ..Faults::default()
    };
    let o = device_api_case(
        Server::StandIn {
            ca_other: false,
            state: DeviceState::default(),
            faults,
        },
        SECRET,
        1,
    );
    assert_eq!(errors(&o.findings), vec![], "{:#?}", o.findings);
    assert_eq!(
        o.requests, 4,
        "two throttled answers, then both calls succeed"
    );
}

#[test]
fn throttled_for_good_is_a_throttled_error() {
    let faults = Faults {
        throttle_first: 100,
        ..Faults::default()
    };
    let o = device_api_case(
        Server::StandIn {
            ca_other: false,
            state: DeviceState::default(),
            faults,
        },
        SECRET,
        1,
    );
    let e = errors(&o.findings);
    assert!(
        e.contains(&("preflight.unlocked".into(), Some(o.device.clone()))),
        "{e:?}"
    );
    let f = o
        .findings
        .iter()
        .find(|f| f.check == "preflight.unlocked")
        .unwrap();
    assert!(f.message.contains("throttled"), "{}", f.message);
    assert_eq!(o.requests, 6, "3 attempts for each of the 2 calls");
}

#[test]
fn locked_device() {
    let state = DeviceState {
        unlock_state: "LOCKED".into(),
        ..DeviceState::default()
    };
    let o = device_api_case(in_state(state), SECRET, 1);
    let f = only_error(&o, "preflight.unlocked");
    assert!(
        f.message.contains("is not unlocked (UnlockStatus LOCKED)"),
        "{}",
        f.message
    );
}

#[test]
fn software_101() {
    let state = DeviceState {
        installed_version: "101".into(),
        ..DeviceState::default()
    };
    let o = device_api_case(in_state(state), SECRET, 1);
    let f = only_error(&o, "preflight.software-version");
    assert!(
        f.message
            .contains("is 101, below the minimum supported version 102"),
        "{}",
        f.message
    );
}

#[test]
fn not_enough_capacity() {
    // 3 × sbe-c.4xlarge on one device: 48 vCPU; the device has 40 free.
    let state = DeviceState {
        available_vcpus: 40,
        used_vcpus: 64,
        ..DeviceState::default()
    };
    let o = device_api_case(in_state(state), SECRET, 3);
    let f = only_error(&o, "preflight.capacity");
    assert!(
        f.message.contains("not enough vCPU")
            && f.message.contains("48 vCPU")
            && f.message.contains("40 vCPU"),
        "{}",
        f.message
    );
}

#[test]
fn a_missing_field_is_a_protocol_error() {
    let state = DeviceState {
        omit: vec!["UnlockStatus".into()],
        ..DeviceState::default()
    };
    let o = device_api_case(in_state(state), SECRET, 1);
    let f = only_error(&o, "preflight.unlocked");
    assert!(
        f.message.contains("UnlockStatus is missing"),
        "{}",
        f.message
    );
}

/// A Device API answer of 5 MiB is refused at the 4 MiB bound, which the finding names.
#[test]
fn an_oversized_answer_is_a_protocol_error_naming_the_limit() {
    let state = DeviceState {
        unlock_state: "U".repeat(5 << 20),
        ..DeviceState::default()
    };
    let o = device_api_case(in_state(state), SECRET, 1);
    let f = only_error(&o, "preflight.unlocked");
    let limit = snow_validate::limits::MAX_RESPONSE_BYTES.to_string();
    assert!(
        f.message
            .contains(&format!("larger than the {limit} bytes accepted")),
        "{}",
        f.message
    );
    assert!(f.message.len() < 1_000, "{} bytes", f.message.len());
}

#[test]
fn ec2_classification_over_tls() {
    // EC2 side: closed port and a certificate from another CA, through aws-sdk-ec2.
    rt().block_on(async {
        let ca = TestCa::new("snow test CA").unwrap();
        let other = TestCa::new("another CA").unwrap();
        let closed = loopback_ip();
        let creds = credentials(&[closed], SECRET);
        let d = SnowDevice::new(
            creds.provider(DeviceIp::from(closed)).unwrap(),
            &trust(&ca),
            config(),
        );
        let err = d.key_pair_exists(KEY).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Refused, "{err}");

        let ip = loopback_ip();
        let cert = other.server_certificate(ip).unwrap();
        let moto = tokio::task::spawn_blocking(move || Moto::start(ip, 8243, &cert, &[]))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}"));
        let creds = credentials(&[ip], SECRET);
        let d = SnowDevice::new(
            creds.provider(DeviceIp::from(ip)).unwrap(),
            &trust(&ca),
            config(),
        );
        let err = d.key_pair_exists(KEY).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::TlsUntrusted, "{err}");
        assert!(!err.to_string().contains(SECRET));
        drop(moto);
    });
}
