//! Is an object already as the controller would apply it? Then applying it again is a write
//! that changes nothing, and a resync of unchanged clusters must make none.
//!
//! Server-side apply makes an object exactly what was applied when the manager's fields are the
//! same set as before and every applied value is on the object. The manager's fields are read
//! from `metadata.managedFields` (FieldsV1); lists count as one field each (an associative
//! list's `k:`/`v:`/`i:` entries fold into the list), on both sides.

use serde_json::Value;
use std::collections::BTreeSet;

/// The fields an applied object sets, as dotted paths (apiVersion, kind, name and namespace,
/// which identify the object, are not fields).
pub fn fieldset(object: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Value::Object(map) = object {
        for (key, value) in map {
            match key.as_str() {
                "apiVersion" | "kind" | "status" => {}
                "metadata" => {
                    if let Value::Object(meta) = value {
                        for (k, v) in meta {
                            if !matches!(k.as_str(), "name" | "namespace") {
                                walk(v, format!("metadata.{k}"), &mut out);
                            }
                        }
                    }
                }
                _ => walk(value, key.clone(), &mut out),
            }
        }
    }
    out
}

fn walk(value: &Value, path: String, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                walk(v, format!("{path}.{k}"), out);
            }
        }
        _ => {
            out.insert(path);
        }
    }
}

/// The fields `manager` owns through apply, from the object's managedFields.
pub fn managed_fieldset(live: &Value, manager: &str) -> Option<BTreeSet<String>> {
    let entry = live["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| {
            e["manager"] == manager
                && e["operation"] == "Apply"
                && e["subresource"].as_str().unwrap_or_default().is_empty()
        })?;
    let mut out = BTreeSet::new();
    fields_v1(&entry["fieldsV1"], String::new(), &mut out);
    Some(out)
}

fn fields_v1(node: &Value, path: String, out: &mut BTreeSet<String>) {
    let Value::Object(map) = node else {
        return;
    };
    let mut children = false;
    for (key, child) in map {
        if let Some(name) = key.strip_prefix("f:") {
            children = true;
            let next = if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            };
            fields_v1(child, next, out);
        } else if key.starts_with("k:") || key.starts_with("v:") || key.starts_with("i:") {
            // A list's items: the list is the field.
            children = false;
            break;
        }
    }
    if !children && !path.is_empty() {
        out.insert(path);
    }
}

/// Every value `desired` sets is on `live` (lists compared whole).
fn contains(desired: &Value, live: &Value) -> bool {
    match (desired, live) {
        (Value::Object(d), Value::Object(l)) => d
            .iter()
            .all(|(k, v)| l.get(k).is_some_and(|lv| contains(v, lv))),
        (Value::Object(d), Value::Null) => d.is_empty(),
        (Value::Number(d), Value::Number(l)) => d.as_f64() == l.as_f64(),
        _ => desired == live,
    }
}

/// Whether applying `desired` as `manager` would change nothing on `live`.
pub fn up_to_date(desired: &Value, live: &Value, manager: &str) -> bool {
    let mut wanted = desired.clone();
    if let Value::Object(map) = &mut wanted {
        map.remove("status");
    }
    // An apply that sets no field (a bare Namespace) leaves no entry behind.
    managed_fieldset(live, manager).unwrap_or_default() == fieldset(&wanted)
        && contains(&wanted, live)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live(fields: Value) -> Value {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "n", "labels": {"a": "1"}, "resourceVersion": "7",
                "managedFields": [
                    {"manager": "other", "operation": "Update", "fieldsV1": {"f:data": {"f:other": {}}}},
                    {"manager": "me", "operation": "Apply", "fieldsV1": fields}
                ]},
            "data": {"k": "v", "other": "o", "list": [1, 2]}
        })
    }

    #[test]
    fn an_object_applied_unchanged_is_up_to_date() {
        let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "n", "labels": {"a": "1"}},
            "data": {"k": "v", "list": [1, 2]}});
        let owned = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
            "f:data": {"f:k": {}, "f:list": {}}});
        assert!(up_to_date(&desired, &live(owned.clone()), "me"));
        // Another manager's view of the object says nothing about mine.
        assert!(!up_to_date(&desired, &live(owned.clone()), "other"));
        // A changed value, an added field and a dropped field each need an apply.
        let mut changed = desired.clone();
        changed["data"]["k"] = json!("w");
        assert!(!up_to_date(&changed, &live(owned.clone()), "me"));
        let mut added = desired.clone();
        added["data"]["new"] = json!("n");
        assert!(!up_to_date(&added, &live(owned.clone()), "me"));
        let mut dropped = desired.clone();
        dropped["data"].as_object_mut().unwrap().remove("list");
        assert!(!up_to_date(&dropped, &live(owned), "me"));
    }

    #[test]
    fn associative_list_items_fold_into_their_list() {
        let fields = json!({"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {"f:image": {}}}}});
        let owned = managed_fieldset(
            &json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Apply", "fieldsV1": fields}]}}),
            "m",
        )
        .unwrap();
        assert_eq!(owned, BTreeSet::from(["spec.containers".to_owned()]));
    }
}
