//! A simulated cert-manager (its certificates controller and its cainjector), acting only while
//! cert-manager's Deployments (`cert-manager/cert-manager`, `cert-manager-cainjector`,
//! `cert-manager-webhook`) are Available, as on a cluster where nothing is issued before
//! cert-manager runs:
//!
//! - a Certificate whose `issuerRef` is a `selfSigned` Issuer of its namespace gets its Secret
//!   (`kubernetes.io/tls`: `tls.crt`, `tls.key` and `ca.crt`, a real self-signed certificate for
//!   its `dnsNames`, its own `ca.crt` as cert-manager's SelfSigned issuer makes it) and
//!   `Ready=True`; issued again when its `dnsNames` change. A missing Issuer, or one of another
//!   type (not simulated), leaves it `Ready=False` with cert-manager's reason;
//! - the cainjector: every webhook of a Validating- or MutatingWebhookConfiguration annotated
//!   `cert-manager.io/inject-ca-from: NAMESPACE/CERTIFICATE` gets that Certificate's Secret's
//!   `ca.crt` as `clientConfig.caBundle`, once the Secret exists.

use super::clock;
use super::store::Store;
use base64::Engine as _;
use serde_json::{Value, json};

/// The field manager of the simulated cert-manager's writes.
pub const MANAGER: &str = "cert-manager";
/// cert-manager's namespace and Deployments (its manifest's names).
const DEPLOYMENTS: [&str; 3] = [
    "cert-manager",
    "cert-manager-cainjector",
    "cert-manager-webhook",
];
const INJECT: &str = "cert-manager.io/inject-ca-from";
const ALT_NAMES: &str = "cert-manager.io/alt-names";

/// The string at `path` of `v`, or "".
pub(crate) fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether a Deployment's status says `Available=True`.
pub(crate) fn available(d: &Value) -> bool {
    d["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Available" && c["status"] == "True")
}

/// Whether cert-manager's Deployments are all there and Available.
fn running(store: &Store) -> bool {
    let found = store.select("apps", "deployments", |d| {
        text(d, &["metadata", "namespace"]) == "cert-manager"
            && DEPLOYMENTS.contains(&text(d, &["metadata", "name"]))
            && available(d)
    });
    found.len() == DEPLOYMENTS.len()
}

/// One pass of the simulated cert-manager over `store`.
pub(crate) fn pass(store: &mut Store) {
    if !running(store) {
        return;
    }
    for (_, certificate) in store.raw("cert-manager.io", "certificates") {
        issue(store, &certificate);
    }
    for plural in [
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    ] {
        for (_, config) in store.raw("admissionregistration.k8s.io", plural) {
            inject(store, &config);
        }
    }
}

fn condition(ready: bool, reason: &str, message: &str) -> Value {
    json!({"type": "Ready", "status": if ready { "True" } else { "False" }, "reason": reason,
        "message": message, "lastTransitionTime": clock::now_rfc3339(),
        "observedGeneration": 1})
}

/// Writes `status` on the Certificate unless it says that already (no write, no event).
fn set_status(store: &mut Store, certificate: &Value, ready: bool, reason: &str, message: &str) {
    let now = &certificate["status"]["conditions"][0];
    if now["status"] == if ready { "True" } else { "False" } && now["reason"] == reason {
        return;
    }
    let mut new = certificate.clone();
    new["status"] = json!({"conditions": [condition(ready, reason, message)]});
    if ready {
        new["status"]["revision"] = json!(1);
    }
    if let Some(m) = new["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    let _ = store.put(new, MANAGER);
}

fn issue(store: &mut Store, certificate: &Value) {
    let ns = text(certificate, &["metadata", "namespace"]).to_owned();
    let spec = &certificate["spec"];
    let issuer_kind = match text(spec, &["issuerRef", "kind"]) {
        "" => "Issuer",
        kind => kind,
    };
    let issuer_name = text(spec, &["issuerRef", "name"]);
    let issuer = match issuer_kind {
        "Issuer" => store
            .select("cert-manager.io", "issuers", |i| {
                text(i, &["metadata", "namespace"]) == ns
                    && text(i, &["metadata", "name"]) == issuer_name
            })
            .into_iter()
            .next()
            .map(|(_, i)| i),
        _ => None,
    };
    let Some(issuer) = issuer else {
        let message = format!(
            "Referenced \"{issuer_kind}\" not found: issuer.cert-manager.io \"{issuer_name}\" not found"
        );
        return set_status(store, certificate, false, "IssuerNotFound", &message);
    };
    if issuer["spec"]["selfSigned"].is_null() {
        let message = "the stand-in's cert-manager issues from selfSigned Issuers only";
        return set_status(store, certificate, false, "Pending", message);
    }
    let names: Vec<String> = spec["dnsNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    let secret_name = text(spec, &["secretName"]).to_owned();
    let current = store
        .select("", "secrets", |s| {
            text(s, &["metadata", "namespace"]) == ns
                && text(s, &["metadata", "name"]) == secret_name
        })
        .into_iter()
        .next()
        .map(|(_, s)| s);
    let wanted = names.join(",");
    let up_to_date = current
        .as_ref()
        .is_some_and(|s| text(s, &["metadata", "annotations", ALT_NAMES]) == wanted);
    if !up_to_date {
        let Ok(cert) = snow_test_devices::self_signed_for_names(&names) else {
            return set_status(
                store,
                certificate,
                false,
                "Failed",
                "the certificate could not be made",
            );
        };
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let secret = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {
                "name": secret_name,
                "namespace": ns,
                "annotations": {
                    ALT_NAMES: wanted,
                    "cert-manager.io/certificate-name": text(certificate, &["metadata", "name"]),
                    "cert-manager.io/issuer-kind": issuer_kind,
                    "cert-manager.io/issuer-name": issuer_name,
                },
            },
            "data": {
                "tls.crt": b64(&cert.cert_pem),
                "tls.key": b64(&cert.key_pem),
                "ca.crt": b64(&cert.cert_pem),
            },
        });
        if store.put(secret, MANAGER).is_err() {
            return;
        }
    }
    set_status(
        store,
        certificate,
        true,
        "Ready",
        "Certificate is up to date and has not expired",
    );
}

fn inject(store: &mut Store, config: &Value) {
    let from = text(config, &["metadata", "annotations", INJECT]);
    let Some((ns, name)) = from.split_once('/') else {
        return;
    };
    let secret_name = store
        .select("cert-manager.io", "certificates", |c| {
            text(c, &["metadata", "namespace"]) == ns && text(c, &["metadata", "name"]) == name
        })
        .into_iter()
        .next()
        .map(|(_, c)| text(&c, &["spec", "secretName"]).to_owned());
    let Some(secret_name) = secret_name else {
        return;
    };
    let ca = store
        .select("", "secrets", |s| {
            text(s, &["metadata", "namespace"]) == ns
                && text(s, &["metadata", "name"]) == secret_name
        })
        .into_iter()
        .next()
        .and_then(|(_, s)| s["data"]["ca.crt"].as_str().map(str::to_owned));
    let Some(ca) = ca else {
        return;
    };
    let mut new = config.clone();
    let mut changed = false;
    for hook in new["webhooks"].as_array_mut().into_iter().flatten() {
        if hook["clientConfig"]["caBundle"] != ca.as_str() {
            hook["clientConfig"]["caBundle"] = json!(ca);
            changed = true;
        }
    }
    if changed {
        if let Some(m) = new["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let _ = store.put(new, MANAGER);
    }
}
