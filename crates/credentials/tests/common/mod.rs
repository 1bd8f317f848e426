//! Test certificates, generated at test time with rcgen (never checked in, so they never expire
//! under the tests' feet), and credentials files.
#![allow(dead_code, unreachable_pub)]

use rcgen::{
    CertificateParams, CustomExtension, DnType, KeyPair, PKCS_ECDSA_P256_SHA256, PKCS_ED25519,
    PKCS_RSA_SHA256, SerialNumber, SignatureAlgorithm,
};
use time::{Duration, OffsetDateTime};

pub const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
pub const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

/// The access key of device number `n` (distinct per device, all recognisable).
pub fn access_key(n: usize) -> String {
    format!("AKIASNOWDEVICE{n:06}")
}

/// The secret key of device number `n`.
pub fn secret_key(n: usize) -> String {
    format!("sEcReT/{n:04}+wJalrXUtnFEMIK7MDENGbPxRfiCY")
}

/// A credentials file with one clean profile per IP (keys from `access_key`/`secret_key`).
pub fn credentials(ips: &[&str]) -> String {
    let mut out = String::new();
    for (n, ip) in ips.iter().enumerate() {
        out.push_str(&format!(
            "[{ip}]\naws_access_key_id = {}\naws_secret_access_key = {}\nregion = snow\n\n",
            access_key(n),
            secret_key(n)
        ));
    }
    out
}

/// Which key type a certificate gets.
#[derive(Clone, Copy, Debug)]
pub enum Key {
    Rsa,
    Ecdsa,
    Ed25519,
}

impl Key {
    fn alg(self) -> &'static SignatureAlgorithm {
        match self {
            Key::Rsa => &PKCS_RSA_SHA256,
            Key::Ecdsa => &PKCS_ECDSA_P256_SHA256,
            Key::Ed25519 => &PKCS_ED25519,
        }
    }
}

/// How to build one test certificate.
#[derive(Clone, Debug)]
pub struct Cert {
    pub sans: Vec<String>,
    pub cn: String,
    pub key: Key,
    /// Validity, in days relative to now.
    pub from_days: i64,
    pub to_days: i64,
    pub negative_serial: bool,
    pub critical_unknown_extension: bool,
}

impl Cert {
    /// A device certificate with the IP as IP SAN, valid from a year ago for two years.
    pub fn device(ip: &str) -> Self {
        Cert {
            sans: vec![ip.to_owned()],
            cn: ip.to_owned(),
            key: Key::Ecdsa,
            from_days: -365,
            to_days: 365,
            negative_serial: false,
            critical_unknown_extension: false,
        }
    }

    /// A certificate with the IP in the CN only.
    pub fn cn_only(ip: &str) -> Self {
        Cert {
            sans: vec![],
            ..Cert::device(ip)
        }
    }

    pub fn key(mut self, key: Key) -> Self {
        self.key = key;
        self
    }

    pub fn valid_days(mut self, from: i64, to: i64) -> Self {
        self.from_days = from;
        self.to_days = to;
        self
    }

    pub fn negative_serial(mut self) -> Self {
        self.negative_serial = true;
        self
    }

    pub fn critical_unknown_extension(mut self) -> Self {
        self.critical_unknown_extension = true;
        self
    }

    /// The certificate as DER.
    pub fn der(&self) -> Vec<u8> {
        let mut params = CertificateParams::new(self.sans.clone()).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, self.cn.clone());
        let now = OffsetDateTime::now_utc();
        params.not_before = now + Duration::days(self.from_days);
        params.not_after = now + Duration::days(self.to_days);
        // A recognisable positive serial; flipped to negative in the DER below (rcgen always
        // writes a positive INTEGER), which keeps every length the same.
        const SERIAL: [u8; 8] = [0x7A, 0x5A, 0xA5, 0x5A, 0xA5, 0x5A, 0xA5, 0x01];
        params.serial_number = Some(SerialNumber::from_slice(&SERIAL));
        if self.critical_unknown_extension {
            let mut ext =
                CustomExtension::from_oid_content(&[1, 3, 6, 1, 4, 1, 55555, 1], vec![0x05, 0x00]);
            ext.set_criticality(true);
            params.custom_extensions.push(ext);
        }
        let key = KeyPair::generate_for(self.key.alg()).expect("key");
        let cert = params.self_signed(&key).expect("self-signed");
        let mut der = cert.der().to_vec();
        if self.negative_serial {
            let mut pattern = vec![0x02, SERIAL.len() as u8];
            pattern.extend_from_slice(&SERIAL);
            let at = der
                .windows(pattern.len())
                .position(|w| w == pattern.as_slice())
                .expect("serial in DER");
            der[at + 2] = 0xFA;
        }
        der
    }

    /// The certificate as a PEM block.
    pub fn pem(&self) -> String {
        pem_block("CERTIFICATE", &self.der())
    }
}

/// A PEM block with 64-column base64 lines.
pub fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).expect("ascii"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A bundle with one clean device certificate per IP.
pub fn bundle(ips: &[&str]) -> String {
    ips.iter().map(|ip| Cert::device(ip).pem()).collect()
}
