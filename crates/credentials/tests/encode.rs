//! The encodings decode to the original bytes exactly as a Kubernetes client and CAPAS read them
//! (EKS Anywhere's `pkg/aws` and Snow credentials Secret), and nothing secret prints.

mod common;

use aws_credential_types::provider::ProvideCredentials;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::{ACCESS_KEY, SECRET_KEY, bundle};
use snow_credentials::{
    CaBundle, ClusterctlEnv, CredentialsFile, capas_bootstrap_secret, capas_cluster_secret,
    eksa_identity_secret,
};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// A two-profile file with CRLF, a BOM-less start and no trailing newline: the exact bytes must
/// survive, not a normalised copy.
const CREDS: &str = "[1.2.3.4]\r\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\r\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\r\nregion = snow\r\n\r\n[1.2.3.5]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion = snow";

fn files() -> (CredentialsFile, CaBundle, Vec<u8>, Vec<u8>) {
    let creds = CREDS.as_bytes().to_vec();
    let pem = bundle(&["1.2.3.4", "1.2.3.5"]).into_bytes();
    let (c, f1) = CredentialsFile::parse("credentials", creds.clone());
    let (b, f2) = CaBundle::parse("ca-bundle", pem.clone());
    assert!(f1.is_empty() && f2.is_empty(), "{f1:?} {f2:?}");
    (c, b, creds, pem)
}

/// What a Kubernetes client gets for `data.<key>`: base64-decoded once.
fn kube_read(secret: &serde_json::Value, key: &str) -> Vec<u8> {
    let text = secret["data"][key]
        .as_str()
        .expect("data value is a string");
    STANDARD.decode(text).expect("data is base64")
}

#[test]
fn base64_is_standard_with_padding() {
    assert_eq!(snow_credentials::encode::base64_standard(b"ab"), "YWI=");
    assert_eq!(
        snow_credentials::encode::base64_standard(&[0xfb, 0xff]),
        "+/8="
    );
}

#[test]
fn clusterctl_env_decodes_to_the_files() {
    let (c, b, creds, pem) = files();
    let env = ClusterctlEnv::new(&c, &b);
    let vars = env.vars();
    assert_eq!(vars[0].0, "AWS_B64ENCODED_CREDENTIALS");
    assert_eq!(vars[1].0, "AWS_B64ENCODED_CA_BUNDLES");
    assert_eq!(STANDARD.decode(vars[0].1).unwrap(), creds);
    assert_eq!(STANDARD.decode(vars[1].1).unwrap(), pem);
    let mut out = Vec::new();
    env.write_exports(&mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0],
        format!("export AWS_B64ENCODED_CREDENTIALS={}", vars[0].1)
    );
    assert_eq!(
        lines[1],
        format!("export AWS_B64ENCODED_CA_BUNDLES={}", vars[1].1)
    );
    assert!(!out.contains(ACCESS_KEY) && !out.contains(SECRET_KEY));
    assert!(!format!("{env:?}").contains(vars[0].1));
}

#[test]
fn bootstrap_secret_holds_the_raw_files_like_clusterctl_substitution() {
    let (c, b, creds, pem) = files();
    let secret = capas_bootstrap_secret(&c, &b).to_json();
    assert_eq!(secret["apiVersion"], "v1");
    assert_eq!(secret["kind"], "Secret");
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(
        secret["metadata"]["name"],
        "capas-manager-bootstrap-credentials"
    );
    assert_eq!(secret["metadata"]["namespace"], "capas-system");
    // The CAPAS deployment mounts it as files: the decoded value is the raw file.
    assert_eq!(kube_read(&secret, "credentials"), creds);
    assert_eq!(kube_read(&secret, "ca-bundle"), pem);
    // Same text as clusterctl substitutes from the env vars.
    let env = ClusterctlEnv::new(&c, &b);
    assert_eq!(secret["data"]["credentials"], env.vars()[0].1);
    assert_eq!(secret["data"]["ca-bundle"], env.vars()[1].1);
}

#[test]
fn eksa_identity_secret_stores_base64_text_and_capas_decodes_it_again() {
    let (c, b, creds, pem) = files();
    let secret = eksa_identity_secret("snow-creds", "default", &c, &b).to_json();
    assert_eq!(secret["metadata"]["name"], "snow-creds");
    assert_eq!(secret["metadata"]["namespace"], "default");
    assert!(secret["metadata"].get("labels").is_none());
    assert_eq!(secret["type"], "Opaque");
    let stored = kube_read(&secret, "credentials");
    // The stored value is base64(file), exactly what AWS_B64ENCODED_CREDENTIALS holds.
    assert_eq!(stored, STANDARD.encode(&creds).into_bytes());
    assert_eq!(STANDARD.decode(&stored).unwrap(), creds);
    assert_eq!(
        STANDARD.decode(kube_read(&secret, "ca-bundle")).unwrap(),
        pem
    );
    // Serialised: base64(base64(file)).
    assert_eq!(
        secret["data"]["credentials"],
        STANDARD.encode(STANDARD.encode(&creds))
    );
}

#[test]
fn capas_cluster_secret_is_in_eksa_system_with_the_move_label_and_same_data() {
    let (c, b, creds, pem) = files();
    let secret = capas_cluster_secret("mgmt", &c, &b);
    let json = secret.to_json();
    assert_eq!(json["metadata"]["name"], "mgmt-snow-credentials");
    assert_eq!(json["metadata"]["namespace"], "eksa-system");
    assert_eq!(
        json["metadata"]["labels"]["clusterctl.cluster.x-k8s.io/move"],
        "true"
    );
    assert_eq!(
        STANDARD.decode(kube_read(&json, "credentials")).unwrap(),
        creds
    );
    assert_eq!(STANDARD.decode(kube_read(&json, "ca-bundle")).unwrap(), pem);
    let identity = eksa_identity_secret("x", "y", &c, &b).to_json();
    assert_eq!(json["data"], identity["data"]);
    assert_eq!(
        secret.data_keys().collect::<Vec<_>>(),
        ["ca-bundle", "credentials"]
    );
    let debug = format!("{secret:?}");
    assert!(!debug.contains(json["data"]["credentials"].as_str().unwrap()));
    assert!(debug.contains("<redacted>"));
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[test]
fn provider_gives_the_device_keys_and_never_prints_them() {
    let (c, _, _, _) = files();
    let provider = c
        .provider("1.2.3.5".parse().unwrap())
        .expect("complete profile");
    assert_eq!(provider.device().to_string(), "1.2.3.5");
    let creds = block_on(provider.provide_credentials()).expect("static credentials");
    assert_eq!(creds.access_key_id(), ACCESS_KEY);
    assert_eq!(creds.secret_access_key(), SECRET_KEY);
    assert!(creds.session_token().is_none());
    assert!(creds.expiry().is_none());
    // The SDK's own `Credentials` Debug shows the access key id: only our types are checked.
    let shown = format!("{provider:?} {c:?}");
    assert!(
        !shown.contains(ACCESS_KEY) && !shown.contains(SECRET_KEY),
        "{shown}"
    );
    assert!(c.provider("9.9.9.9".parse().unwrap()).is_none());
}
