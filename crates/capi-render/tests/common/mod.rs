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

/// The CRD schema as a JSON Schema for an independent validator (the `jsonschema` crate): the
/// Kubernetes extensions translated. `x-kubernetes-int-or-string` becomes "an integer or a
/// string", `nullable` adds `null`, an object with `properties` rejects other fields unless it
/// has `additionalProperties` or `x-kubernetes-preserve-unknown-fields` (the API server prunes
/// unknown fields; a rendered object must not have any), and an embedded resource takes
/// `apiVersion`, `kind` and `metadata`. `x-kubernetes-validations` (CEL) are checked apart:
/// [`cel_problems`].
fn json_schema(schema: &Value) -> Value {
    let Value::Object(node) = schema else {
        return schema.clone();
    };
    let mut out = node.clone();
    if let Some(Value::Object(props)) = out.get_mut("properties") {
        for sub in props.values_mut() {
            *sub = json_schema(sub);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = out.get_mut(key).filter(|s| s.is_object()) {
            *sub = json_schema(sub);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = out.get_mut(key) {
            for sub in list {
                *sub = json_schema(sub);
            }
        }
    }
    let flag = |name: &str| node.get(name).and_then(Value::as_bool) == Some(true);
    if flag("x-kubernetes-int-or-string") {
        out.remove("type");
        out.entry("anyOf")
            .or_insert(json!([{"type": "integer"}, {"type": "string"}]));
    }
    if flag("nullable")
        && let Some(Value::String(t)) = node.get("type")
    {
        out.insert("type".into(), json!([t, "null"]));
    }
    if flag("x-kubernetes-embedded-resource")
        && let Some(Value::Object(props)) = out.get_mut("properties")
    {
        for (name, sub) in [
            ("apiVersion", json!({"type": "string"})),
            ("kind", json!({"type": "string"})),
            ("metadata", json!({"type": "object"})),
        ] {
            props.entry(name).or_insert(sub);
        }
    }
    if node.get("type") == Some(&json!("object"))
        && node.contains_key("properties")
        && !node.contains_key("additionalProperties")
        && !flag("x-kubernetes-preserve-unknown-fields")
    {
        out.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(out)
}

/// A credentials file and a CA bundle for rendering the identity Secrets.
pub fn secret_files() -> (
    snow_credentials::CredentialsFile,
    snow_credentials::CaBundle,
) {
    let ini = "[1.2.3.4]\naws_access_key_id = AKIDCONFORMANCE00001\n\
               aws_secret_access_key = conformanceSecretKey00000000000000000001\nregion = snow\n";
    let pem = "-----BEGIN CERTIFICATE-----\nMIIBconformance\n-----END CERTIFICATE-----\n";
    let (credentials, _) =
        snow_credentials::CredentialsFile::parse("credentials", ini.as_bytes().to_vec());
    let (bundle, _) = snow_credentials::CaBundle::parse("ca.pem", pem.as_bytes().to_vec());
    (credentials, bundle)
}

/// A small schema of core/v1 Secret: the fields a rendered Secret may have.
fn secret_schema() -> Value {
    let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let dns_subdomain = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
    json!({
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "additionalProperties": false,
        "properties": {
            "apiVersion": {"const": "v1"},
            "kind": {"const": "Secret"},
            "metadata": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string", "maxLength": 253, "pattern": dns_subdomain},
                    "namespace": {"type": "string", "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                    "labels": strings,
                    "annotations": strings,
                },
            },
            "type": {"type": "string", "minLength": 1},
            "immutable": {"type": "boolean"},
            "data": {"type": "object", "additionalProperties": {
                "type": "string",
                "pattern": "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
            }},
            "stringData": strings,
        },
    })
}

/// Validators of the `jsonschema` crate, by `(group, kind, version)` (`("", "Secret", "v1")` for
/// Secrets). Formats are not checked: Kubernetes' own (`int32`, `int-or-string`) are not JSON
/// Schema's.
static VALIDATORS: LazyLock<BTreeMap<(String, String, String), jsonschema::Validator>> =
    LazyLock::new(|| {
        let build = |schema: &Value| {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(false)
                .build(&json_schema(schema))
                .expect("a CRD schema is a valid JSON Schema")
        };
        let mut out: BTreeMap<_, _> = SCHEMAS.iter().map(|(k, s)| (k.clone(), build(s))).collect();
        out.insert(
            (String::new(), "Secret".into(), "v1".into()),
            build(&secret_schema()),
        );
        out
    });

/// The rendered object as an API server reads it: YAML by an independent reader, and `null`
/// fields dropped (the server prunes them unless the field is nullable).
fn instance(yaml: &str) -> Value {
    fn drop_nulls(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                map.values_mut().for_each(drop_nulls);
            }
            Value::Array(items) => items.iter_mut().for_each(drop_nulls),
            _ => {}
        }
    }
    let mut value: Value = serde_saphyr::from_str(yaml).expect("rendered YAML reads");
    drop_nulls(&mut value);
    value
}

/// Evaluates one `x-kubernetes-validations` rule with `self` bound to `value`.
fn evaluate(rule: &str, value: &Value) -> Result<bool, String> {
    let program = cel_interpreter::Program::compile(rule).map_err(|e| e.to_string())?;
    let mut context = cel_interpreter::Context::default();
    let bound = cel_interpreter::to_value(value).map_err(|e| e.to_string())?;
    context.add_variable_from_value("self", bound);
    match program.execute(&context).map_err(|e| e.to_string())? {
        cel_interpreter::Value::Bool(verdict) => Ok(verdict),
        other => Err(format!("the rule gives {other:?}, not a boolean")),
    }
}

/// Every CEL rule of the reference CRDs, with the kind and version it belongs to.
pub fn cel_rules() -> Vec<(String, String)> {
    fn walk(schema: &Value, owner: &str, out: &mut Vec<(String, String)>) {
        match schema {
            Value::Object(map) => {
                for rule in map
                    .get("x-kubernetes-validations")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.push((
                        owner.to_owned(),
                        rule["rule"].as_str().unwrap_or("").to_owned(),
                    ));
                }
                map.values().for_each(|v| walk(v, owner, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, owner, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for ((_, kind, version), schema) in SCHEMAS.iter() {
        walk(schema, &format!("{kind} {version}"), &mut out);
    }
    out
}

/// Checks the CRD's CEL rules (`x-kubernetes-validations`) on the value, each with `self` bound
/// to the value at the rule's place. `oldSelf` (transition) rules only apply to updates: the
/// reference CRDs have none; one would be a problem here, so the test says so.
fn cel_problems(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    for rule in schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = rule["rule"].as_str().unwrap_or("");
        let message = rule["message"]
            .as_str()
            .unwrap_or("a CEL rule does not hold");
        match evaluate(text, value) {
            Ok(true) => {}
            Ok(false) => problems.push(format!("{path}: {message} (CEL `{text}`)")),
            Err(e) => problems.push(format!("{path}: CEL `{text}` not evaluated: {e}")),
        }
    }
    match value {
        Value::Object(map) => {
            for (key, sub_value) in map {
                let sub = schema["properties"]
                    .get(key)
                    .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()));
                if let Some(sub) = sub {
                    cel_problems(sub, sub_value, &format!("{path}.{key}"), problems);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    cel_problems(sub, item, &format!("{path}[{i}]"), problems);
                }
            }
        }
        _ => {}
    }
}

/// Validates one rendered YAML document against the CRD of its apiVersion and kind three ways:
/// the project's own typing (unknown fields, types, bounds), the `jsonschema` crate (also
/// `pattern`, `oneOf`/`anyOf`, `enum`, `required`) and the CRD's CEL rules (`cel-interpreter`).
/// Secrets are checked against a small core/v1 Secret schema. Returns the problems.
pub fn schema_problems(yaml: &str) -> Vec<String> {
    let mut problems = typing_problems(yaml);
    let value = instance(yaml);
    let api_version = value["apiVersion"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let key = (group.to_owned(), kind.to_owned(), version.to_owned());
    let Some(validator) = VALIDATORS.get(&key) else {
        problems.push(format!("no schema for {api_version} {kind}"));
        return problems;
    };
    problems.extend(
        validator
            .iter_errors(&value)
            .map(|e| format!("{kind} (jsonschema): {} {e}", e.instance_path())),
    );
    if let Some(schema) = SCHEMAS.get(&key) {
        let mut cel = Vec::new();
        cel_problems(schema, &value, "", &mut cel);
        problems.extend(cel.into_iter().map(|p| format!("{kind} (CEL): {p}")));
    }
    problems
}

/// The project's own typing of one rendered document against its CRD, rejecting unknown fields.
fn typing_problems(yaml: &str) -> Vec<String> {
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
