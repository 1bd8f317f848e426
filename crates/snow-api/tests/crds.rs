//! The generated CRDs have the same field paths, types, enums and bounds as EKS Anywhere's own
//! CRDs.

use serde_json::Value;
use snow_api::Kind;
use std::{collections::BTreeSet, path::PathBuf};

fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/crds")
}

/// `path type` lines for every node of a structural schema.
fn fields(schema: &Value, path: &str, out: &mut BTreeSet<String>) {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let mut line = format!("{path} {ty}");
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        line.push_str(" int-or-string");
    }
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        line.push_str(" preserve-unknown-fields");
    }
    for bound in ["minimum", "maximum", "minItems", "maxItems"] {
        if let Some(n) = schema.get(bound).and_then(Value::as_f64) {
            line.push_str(&format!(" {bound}={n}"));
        }
    }
    if let Some(values) = schema.get("enum") {
        line.push_str(&format!(" enum={values}"));
    }
    out.insert(line);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            fields(sub, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = schema.get("items") {
        fields(items, &format!("{path}[]"), out);
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        fields(additional, &format!("{path}{{}}"), out);
    }
}

fn reference_schema(kind: Kind) -> Value {
    let plural = kind.crd().spec.names.plural;
    let file = reference_dir().join(format!("anywhere.eks.amazonaws.com_{plural}.yaml"));
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("reference CRD {} is missing: {e}", file.display()));
    let crd: Value = serde_saphyr::from_str(&text).expect("reference CRD parses");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

#[test]
fn generated_crds_match_the_reference_field_for_field() {
    for kind in Kind::SNOW {
        let mut want = BTreeSet::new();
        fields(&reference_schema(kind), "", &mut want);
        let mut got = BTreeSet::new();
        fields(kind.schema(), "", &mut got);
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{}: missing from ours {missing:#?}\nonly in ours {extra:#?}",
            kind.as_str()
        );
    }
}

#[test]
fn crds_have_the_reference_names_scope_and_subresources() {
    for kind in Kind::SNOW {
        let crd = kind.crd();
        assert_eq!(crd.spec.group, "anywhere.eks.amazonaws.com");
        assert_eq!(crd.spec.scope, "Namespaced");
        assert_eq!(crd.spec.names.kind, kind.as_str());
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(version.served && version.storage);
        assert!(
            version
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some()
        );
    }
}

/// EKS Anywhere's `anywhere.eks.amazonaws.com_fluxconfigs.yaml` (`config/crd/bases`, from
/// `fluxconfig_types.go`), field by field: it is not among the reference CRDs, so its shape is
/// written out here.
const FLUX_CONFIG_FIELDS: &[&str] = &[
    " object",
    ".apiVersion string",
    ".kind string",
    ".metadata object",
    ".spec object",
    ".spec.branch string",
    ".spec.clusterConfigPath string",
    ".spec.git object",
    ".spec.git.repositoryUrl string",
    ".spec.git.sshKeyAlgorithm string",
    ".spec.github object",
    ".spec.github.owner string",
    ".spec.github.personal boolean",
    ".spec.github.repository string",
    ".spec.systemNamespace string",
    ".status object",
];

#[test]
fn the_flux_config_crd_has_eks_anywheres_shape() {
    let mut got = BTreeSet::new();
    fields(Kind::FluxConfig.schema(), "", &mut got);
    let want: BTreeSet<String> = FLUX_CONFIG_FIELDS.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want);
    let spec = &Kind::FluxConfig.schema()["properties"]["spec"]["properties"];
    assert_eq!(spec["branch"]["default"], "main");
    assert_eq!(
        spec["github"]["required"],
        serde_json::json!(["owner", "repository"])
    );
    assert_eq!(
        spec["git"]["required"],
        serde_json::json!(["repositoryUrl"])
    );
    // A required field has no default (the API server would fill it and the rule would never fire).
    assert!(spec["git"]["properties"]["repositoryUrl"]["default"].is_null());
    assert!(spec["github"]["properties"]["owner"]["default"].is_null());
    let crd = Kind::FluxConfig.crd();
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("fluxconfigs.anywhere.eks.amazonaws.com")
    );
    assert_eq!(crd.spec.names.plural, "fluxconfigs");
    assert_eq!(crd.spec.scope, "Namespaced");
}

/// What the API server requires of a CRD's schema (structural schemas): every node has a type,
/// and every `required` name is a property of its object.
fn structural(schema: &Value, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let free = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
        || schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if schema.get("type").and_then(Value::as_str).is_none() && !free {
        out.push(format!("{path}: no type"));
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        if !props.is_some_and(|p| p.contains_key(name)) {
            out.push(format!("{path}: required {name} is not a property"));
        }
    }
    for (name, sub) in props.into_iter().flatten() {
        out.extend(structural(sub, &format!("{path}.{name}")));
    }
    if let Some(items) = schema.get("items") {
        out.extend(structural(items, &format!("{path}[]")));
    }
    out
}

#[test]
fn crds_prints_the_snow_kinds_and_flux_config_as_structural_crds() {
    let crds = snow_api::crds();
    let kinds: Vec<&str> = crds.iter().map(|c| c.spec.names.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "Cluster",
            "SnowDatacenterConfig",
            "SnowMachineConfig",
            "SnowIPPool",
            "FluxConfig"
        ]
    );
    // The YAML reads back as CustomResourceDefinitions, each with a structural schema.
    let text = snow_api::crds_yaml().unwrap();
    let docs: Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        serde_saphyr::from_multiple(&text).unwrap();
    assert_eq!(docs.len(), 5);
    for crd in &docs {
        let schema = serde_json::to_value(
            crd.spec.versions[0]
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            structural(&schema, &crd.spec.names.kind),
            Vec::<String>::new()
        );
    }
}
