//! Shared test helpers: specs, inputs, and schema conformance against the real CRDs.

#![allow(dead_code, unreachable_pub)]

use serde_json::{Value, json};
use std::{collections::BTreeMap, path::PathBuf, sync::LazyLock};

pub fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(path)
}

/// `(group, kind, version)` → openAPIV3Schema, with the EKS-A fork additions
/// (reference/capi-fork-fields.md) patched in, and nothing else.
static SCHEMAS: LazyLock<BTreeMap<(String, String, String), Value>> = LazyLock::new(|| {
    let mut out = BTreeMap::new();
    let dir = shared("data/crds");
    for entry in std::fs::read_dir(&dir).expect("shared/data/crds exists") {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for doc in docs
            .into_iter()
            .filter(|d| d["kind"] == "CustomResourceDefinition")
        {
            let group = doc["spec"]["group"].as_str().unwrap().to_owned();
            let kind = doc["spec"]["names"]["kind"].as_str().unwrap().to_owned();
            for v in doc["spec"]["versions"].as_array().unwrap() {
                let version = v["name"].as_str().unwrap().to_owned();
                let mut schema = v["schema"]["openAPIV3Schema"].clone();
                patch_fork_fields(&kind, &version, &mut schema);
                out.insert((group.clone(), kind.clone(), version), schema);
            }
        }
    }
    out
});

fn image() -> Value {
    json!({"type": "object", "properties": {"imageRepository": {"type": "string"}, "imageTag": {"type": "string"}}})
}

fn bottlerocket_additions() -> Vec<(&'static str, Value)> {
    vec![
        ("pause", image()),
        ("bottlerocketBootstrap", image()),
        ("bottlerocketAdmin", image()),
        ("bottlerocketControl", image()),
        (
            "bottlerocketCustomBootstrapContainers",
            json!({"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "imageRepository": {"type": "string"}, "imageTag": {"type": "string"},
                "mode": {"type": "string", "enum": ["always", "off", "once"]}, "essential": {"type": "boolean"},
                "userData": {"type": "string"}}}}),
        ),
        (
            "bottlerocketCustomHostContainers",
            json!({"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}),
        ),
        (
            "proxy",
            json!({"type": "object", "properties": {"httpProxy": {"type": "string"}, "httpsProxy": {"type": "string"}, "noProxy": {"type": "array", "items": {"type": "string"}}}}),
        ),
        (
            "registryMirror",
            json!({"type": "object", "properties": {"endpoint": {"type": "string"}, "caCert": {"type": "string"}, "mirrors": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}),
        ),
        (
            "bottlerocket",
            json!({"type": "object", "properties": {
            "kernel": {"type": "object", "properties": {"sysctlSettings": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "boot": {"type": "object", "properties": {"bootKernelParameters": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}}}}}),
        ),
        (
            "certBundles",
            json!({"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "data": {"type": "string"}}}}),
        ),
    ]
}

fn patch_kubeadm_config_spec(spec: &mut Value) {
    if let Some(values) = spec["properties"]["format"]["enum"].as_array_mut() {
        values.push(json!("bottlerocket"));
    }
    for section in [
        "clusterConfiguration",
        "joinConfiguration",
        "initConfiguration",
    ] {
        if let Some(props) = spec["properties"][section]["properties"].as_object_mut() {
            for (k, v) in bottlerocket_additions() {
                props.insert(k.to_owned(), v);
            }
        }
    }
}

fn patch_fork_fields(kind: &str, version: &str, schema: &mut Value) {
    match kind {
        "KubeadmControlPlane" => patch_kubeadm_config_spec(
            &mut schema["properties"]["spec"]["properties"]["kubeadmConfigSpec"],
        ),
        "KubeadmConfigTemplate" => patch_kubeadm_config_spec(
            &mut schema["properties"]["spec"]["properties"]["template"]["properties"]["spec"],
        ),
        "Cluster" => {
            let reference = if version == "v1beta2" {
                json!({"type": "object", "required": ["apiGroup", "kind", "name"], "properties": {"apiGroup": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}}})
            } else {
                json!({"type": "object", "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}, "namespace": {"type": "string"}, "uid": {"type": "string"}, "resourceVersion": {"type": "string"}, "fieldPath": {"type": "string"}}})
            };
            if let Some(props) = schema["properties"]["spec"]["properties"].as_object_mut() {
                props.insert("managedExternalEtcdRef".into(), reference);
            }
        }
        _ => {}
    }
}

/// Validates one rendered YAML document against the CRD of its apiVersion and kind, rejecting
/// unknown fields; returns the problems.
pub fn schema_problems(yaml: &str) -> Vec<String> {
    let docs =
        snow_api::yaml::parse_stream(yaml, Default::default()).expect("rendered YAML parses");
    let root = docs[0].root.as_ref().expect("a document");
    let api_version = root
        .get("apiVersion")
        .and_then(|n| n.as_str())
        .unwrap_or("");
    let kind = root.get("kind").and_then(|n| n.as_str()).unwrap_or("");
    if api_version == "v1" && kind == "Secret" {
        return Vec::new();
    }
    let (group, version) = api_version.split_once('/').unwrap_or(("", ""));
    let Some(schema) = SCHEMAS.get(&(group.to_owned(), kind.to_owned(), version.to_owned())) else {
        return vec![format!("no CRD for {api_version} {kind}")];
    };
    let mut typer = snow_api::typing::Typer::new(kind);
    typer.value(root, schema, "");
    typer
        .findings
        .iter()
        .map(|f| format!("{kind}: {} {}", f.field.as_deref().unwrap_or(""), f.message))
        .collect()
}
