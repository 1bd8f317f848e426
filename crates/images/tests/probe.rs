//! `snow_images::probe` against real servers on loopback: Debian's docker-registry over TLS
//! (a registry: 200 on `/v2/`) and in plain HTTP, HTTPS servers of the test's own answering 401
//! and 404 or holding a certificate for another address, a port that accepts and never answers,
//! and a closed port. Each case is one answer, said as the spec's terms name it.

use bytes::Bytes;
use http_body_util::Full;
use snow_api::mirror::{MirrorAnswer, Silence, TlsProblem, Trust};
use snow_images::probe::{MirrorTrust, PROBE_TIMEOUT, probe_mirror};
use snow_test_devices::{
    BlackHole, TestCa, https, loopback_ip,
    registry::{Registry, Tls},
};
use std::{net::IpAddr, time::Duration};

fn not_answering(reason: Silence) -> MirrorAnswer {
    MirrorAnswer::NotAnswering { reason }
}

async fn ask(host: &str, trust: MirrorTrust<'_>) -> MirrorAnswer {
    let (ip, port) = host.rsplit_once(':').unwrap();
    probe_mirror(ip, port.parse().unwrap(), trust, PROBE_TIMEOUT).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_answers_through_its_ca_and_a_wrong_ca_or_plain_http_is_said() {
    let tls = Tls::generate();
    let registry = Registry::start(Some(&tls));
    assert_eq!(
        ask(&registry.host, MirrorTrust::Ca(&tls.ca_pem)).await,
        MirrorAnswer::Answering {
            status: 200,
            trust: Trust::CaCertContent
        }
    );
    let other = TestCa::new("another CA").unwrap();
    assert_eq!(
        ask(&registry.host, MirrorTrust::Ca(other.pem())).await,
        not_answering(Silence::Tls {
            problem: TlsProblem::UnknownIssuer
        })
    );
    assert_eq!(
        ask(&registry.host, MirrorTrust::InsecureSkipVerify).await,
        MirrorAnswer::Answering {
            status: 200,
            trust: Trust::InsecureSkipVerify
        }
    );
    let plain = Registry::start(None);
    assert_eq!(
        ask(&plain.host, MirrorTrust::Ca(&tls.ca_pem)).await,
        not_answering(Silence::Tls {
            problem: TlsProblem::NotTls
        })
    );
}

/// An HTTPS server on `ip` answering every request with `status`, its certificate (from `ca`)
/// naming `named`; its `ip:port`.
async fn server(ca: &TestCa, ip: IpAddr, named: IpAddr, status: u16) -> (https::Serving, String) {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let acceptor = https::acceptor(&ca.server_certificate(named).unwrap()).unwrap();
    let serving = https::serve(listener, acceptor, move |_| async move {
        hyper::Response::builder()
            .status(status)
            .body(Full::new(Bytes::new()))
            .unwrap()
    });
    (serving, format!("{ip}:{port}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_answers_a_404_is_no_registry_and_a_certificate_for_another_address_is_named() {
    let ca = TestCa::new("mirror CA").unwrap();
    let ip = loopback_ip();
    let (_asks_login, host) = server(&ca, ip, ip, 401).await;
    assert_eq!(
        ask(&host, MirrorTrust::Ca(ca.pem())).await,
        MirrorAnswer::Answering {
            status: 401,
            trust: Trust::CaCertContent
        }
    );
    let ip = loopback_ip();
    let (_not_found, host) = server(&ca, ip, ip, 404).await;
    assert_eq!(
        ask(&host, MirrorTrust::Ca(ca.pem())).await,
        not_answering(Silence::NotARegistry { status: 404 })
    );
    // The certificate names another address than the one asked.
    let (ip, named) = (loopback_ip(), "10.9.9.9".parse().unwrap());
    let (_elsewhere, host) = server(&ca, ip, named, 200).await;
    match ask(&host, MirrorTrust::Ca(ca.pem())).await {
        MirrorAnswer::NotAnswering {
            reason:
                Silence::Tls {
                    problem:
                        TlsProblem::NotValidForName {
                            expected,
                            presented,
                        },
                },
        } => {
            assert_eq!(expected, ip.to_string());
            assert!(
                presented.iter().any(|p| p.contains("10.9.9.9")),
                "{presented:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_port_is_refused_and_a_silent_one_times_out() {
    let ip = loopback_ip();
    let listener = std::net::TcpListener::bind((ip, 0)).unwrap();
    let closed = listener.local_addr().unwrap().port();
    drop(listener);
    assert_eq!(
        probe_mirror(&ip.to_string(), closed, MirrorTrust::NoCa, PROBE_TIMEOUT).await,
        not_answering(Silence::Refused)
    );
    let silent = loopback_ip();
    let _hole = BlackHole::start(silent, 5000).await.unwrap();
    let limit = Duration::from_millis(300);
    assert_eq!(
        probe_mirror(&silent.to_string(), 5000, MirrorTrust::NoCa, limit).await,
        not_answering(Silence::Timeout { milliseconds: 300 })
    );
}
