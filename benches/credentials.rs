//! Parse and check a 64-device credentials file and a 64-certificate CA bundle (issue: credentials
//! performance target: under 1 ms median).
//!
//! `cargo bench -p snowctl-benches --bench credentials`

use criterion::{Criterion, criterion_group, criterion_main};
use rcgen::{CertificateParams, DnType, KeyPair, PKCS_ECDSA_P256_SHA256};
use snow_credentials::{CaBundle, CredentialsFile, UnixTime, check};
use std::hint::black_box;
use time::{Duration, OffsetDateTime};

const DEVICES: usize = 64;

fn ip(n: usize) -> String {
    format!("192.168.{}.{}", n / 200, 10 + n % 200)
}

fn credentials() -> Vec<u8> {
    let mut out = String::from("# Snow devices\n");
    for n in 0..DEVICES {
        out.push_str(&format!(
            "[{}]\naws_access_key_id = AKIASNOWDEVICE{n:06}\naws_secret_access_key = sEcReT/{n:04}+wJalrXUtnFEMIK7MDENGbPxRfiCY\nregion = snow\n\n",
            ip(n)
        ));
    }
    out.into_bytes()
}

/// 64 self-signed device certificates (ECDSA P-256, IP SAN), generated once per run.
fn bundle() -> Vec<u8> {
    let now = OffsetDateTime::now_utc();
    let mut out = String::new();
    for n in 0..DEVICES {
        let mut params = CertificateParams::new(vec![ip(n)]).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, ip(n));
        params.not_before = now - Duration::days(30);
        params.not_after = now + Duration::days(365);
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
        out.push_str(&params.self_signed(&key).expect("cert").pem());
    }
    out.into_bytes()
}

fn bench(c: &mut Criterion) {
    let creds = credentials();
    let pem = bundle();
    let now = UnixTime::now();
    c.bench_function("credentials/parse+check 64 devices, 64 certificates", |b| {
        b.iter(|| {
            let (file, f1) = CredentialsFile::parse("credentials", black_box(creds.clone()));
            let (ca, f2) = CaBundle::parse("ca-bundle", black_box(pem.clone()));
            let report = check(&file, &ca, now);
            assert!(f1.is_empty() && f2.is_empty() && report.findings.is_empty());
            black_box(report)
        })
    });
    c.bench_function("credentials/parse 64-device INI", |b| {
        b.iter(|| CredentialsFile::parse("credentials", black_box(creds.clone())))
    });
    c.bench_function("credentials/parse 64-certificate bundle", |b| {
        b.iter(|| CaBundle::parse("ca-bundle", black_box(pem.clone())))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
