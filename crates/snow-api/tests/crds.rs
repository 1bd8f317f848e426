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
