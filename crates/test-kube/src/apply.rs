//! Field ownership: server-side apply and `metadata.managedFields`.
//!
//! Leaves are map paths; **lists are atomic** (a list is one leaf owned as a whole; the real
//! server merges associative lists by key, `k:{...}` in `fieldsV1`). Tracked: everything but
//! `apiVersion`, `kind` and the server-owned metadata; of `metadata` only `labels`,
//! `annotations`, `finalizers` and `ownerReferences`. With a status subresource, the main
//! resource does not own `status` and `/status` owns only `status`.

use super::clock;
use super::patch;
use super::status::ApiError;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// A field path: map keys from the root.
pub(crate) type Path = Vec<String>;
/// A set of owned leaves.
pub(crate) type FieldSet = BTreeSet<Path>;

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The main resource; `status` is left out when the kind has a status subresource.
    Main {
        /// The kind has a status subresource.
        status_subresource: bool,
    },
    /// The `/status` subresource: `status` only.
    Status,
}

impl Scope {
    fn takes(self, top: &str) -> bool {
        match self {
            Scope::Status => top == "status",
            Scope::Main { status_subresource } => {
                !(top == "apiVersion" || top == "kind" || (status_subresource && top == "status"))
            }
        }
    }

    fn subresource(self) -> Option<&'static str> {
        match self {
            Scope::Status => Some("status"),
            Scope::Main { .. } => None,
        }
    }
}

const METADATA_TRACKED: [&str; 4] = ["labels", "annotations", "finalizers", "ownerReferences"];

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) api_version: String,
    pub(crate) time: String,
    pub(crate) subresource: Option<String>,
    pub(crate) fields: FieldSet,
}

fn leaves_under(value: &Value, prefix: &mut Path, out: &mut FieldSet) {
    match value {
        Value::Null => {}
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                prefix.push(k.clone());
                leaves_under(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// The tracked leaves of `object` within `scope`.
pub(crate) fn leaves(object: &Value, scope: Scope) -> FieldSet {
    let mut out = FieldSet::new();
    let Some(map) = object.as_object() else {
        return out;
    };
    for (k, v) in map {
        if k == "metadata" {
            if matches!(scope, Scope::Main { .. }) {
                for field in METADATA_TRACKED {
                    if let Some(v) = v.get(field) {
                        leaves_under(v, &mut vec!["metadata".into(), field.into()], &mut out);
                    }
                }
            }
        } else if scope.takes(k) {
            leaves_under(v, &mut vec![k.clone()], &mut out);
        }
    }
    out
}

/// The value at `path`.
pub(crate) fn get_path<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, k| v.as_object()?.get(k))
}

/// Removes the value at `path`, then parents left empty by the removal.
fn remove_path(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = &mut *value;
    for k in parents {
        match cur.as_object_mut().and_then(|m| m.get_mut(k)) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last);
        if m.is_empty() && parents.len() > 1 {
            remove_path(value, parents);
        }
    }
}

fn overlaps(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn encode(fields: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in fields {
        let mut cur = &mut root;
        for k in path {
            let next = cur
                .entry(format!("f:{k}"))
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(m) = next else {
                break;
            };
            cur = m;
        }
    }
    Value::Object(root)
}

fn decode_into(value: &Value, prefix: &mut Path, out: &mut FieldSet) {
    let children: Vec<(&String, &Value)> = value
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| k.starts_with("f:")).collect())
        .unwrap_or_default();
    let keyed = value.as_object().is_some_and(|m| {
        m.keys()
            .any(|k| k.starts_with("k:") || k.starts_with("v:") || k.starts_with("i:"))
    });
    if children.is_empty() || keyed {
        if !prefix.is_empty() {
            out.insert(prefix.clone());
        }
        return;
    }
    for (k, v) in children {
        prefix.push(k[2..].to_owned());
        decode_into(v, prefix, out);
        prefix.pop();
    }
}

/// The `managedFields` entries of `object`.
pub(crate) fn entries(object: &Value) -> Vec<Entry> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let mut fields = FieldSet::new();
            decode_into(&e["fieldsV1"], &mut Vec::new(), &mut fields);
            Entry {
                manager: e["manager"].as_str().unwrap_or_default().to_owned(),
                operation: e["operation"].as_str().unwrap_or("Update").to_owned(),
                api_version: e["apiVersion"].as_str().unwrap_or_default().to_owned(),
                time: e["time"].as_str().unwrap_or_default().to_owned(),
                subresource: e["subresource"].as_str().map(str::to_owned),
                fields,
            }
        })
        .collect()
}

/// Writes `entries` (dropping empty ones and paths `object` no longer has) as managedFields.
pub(crate) fn write_entries(object: &mut Value, mut entries: Vec<Entry>) {
    for e in &mut entries {
        e.fields.retain(|p| get_path(object, p).is_some());
    }
    entries.retain(|e| !e.fields.is_empty());
    let list: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut v = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": encode(&e.fields),
            });
            if let Some(sub) = &e.subresource {
                v["subresource"] = json!(sub);
            }
            v
        })
        .collect();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// `.spec.replicas` for a conflict message.
fn dotted(path: &[String]) -> String {
    path.iter().map(|k| format!(".{k}")).collect()
}

/// Server-side apply of `config` by `manager` onto `current` (the stored object, or a skeleton
/// with identity metadata when creating). Returns the new object with its managedFields.
pub(crate) fn apply(
    current: &Value,
    config: &Value,
    manager: &str,
    api_version: &str,
    force: bool,
    scope: Scope,
) -> Result<Value, ApiError> {
    let subresource = scope.subresource().map(str::to_owned);
    let mut all = entries(current);
    let mine_at = all.iter().position(|e| {
        e.manager == manager && e.operation == "Apply" && e.subresource == subresource
    });
    let previous = mine_at.map(|i| all[i].fields.clone()).unwrap_or_default();
    let applied = leaves(config, scope);
    let owned_by_others = |p: &Path, all: &[Entry]| {
        all.iter()
            .filter(|e| e.manager != manager)
            .any(|e| e.fields.iter().any(|q| overlaps(p, q)))
    };

    let mut result = current.clone();
    // Pruning: what this manager applied before and omits now goes, unless someone else owns it.
    for p in previous.difference(&applied) {
        if !owned_by_others(p, &all) {
            remove_path(&mut result, p);
        }
    }
    if let Some(map) = config.as_object() {
        for (k, v) in map {
            if k == "metadata" {
                if matches!(scope, Scope::Main { .. }) {
                    for field in METADATA_TRACKED {
                        if let Some(v) = v.get(field) {
                            let meta = &mut result["metadata"];
                            if v.is_null() {
                                if let Some(m) = meta.as_object_mut() {
                                    m.remove(field);
                                }
                            } else {
                                patch::merge(&mut meta[field], v);
                            }
                        }
                    }
                }
            } else if scope.takes(k) {
                if v.is_null() {
                    if let Some(m) = result.as_object_mut() {
                        m.remove(k);
                    }
                } else if let Some(m) = result.as_object_mut() {
                    patch::merge(m.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
    }

    // Conflicts: another manager's field that this apply changes.
    let mut conflicts: Vec<(String, String, Path)> = Vec::new();
    for e in all.iter().filter(|e| e.manager != manager) {
        for q in &e.fields {
            if applied.iter().any(|p| overlaps(p, q))
                && get_path(current, q) != get_path(&result, q)
            {
                conflicts.push((e.manager.clone(), e.api_version.clone(), q.clone()));
            }
        }
    }
    if !conflicts.is_empty() {
        if !force {
            let message = if let [(m, v, p)] = conflicts.as_slice() {
                format!(
                    "Apply failed with 1 conflict: conflict with \"{m}\" using {v}: {}",
                    dotted(p)
                )
            } else {
                let mut msg = format!("Apply failed with {} conflicts:", conflicts.len());
                let mut last = None;
                for (m, v, p) in &conflicts {
                    if last != Some((m, v)) {
                        msg.push_str(&format!(" conflicts with \"{m}\" using {v}:"));
                        last = Some((m, v));
                    }
                    msg.push_str(&format!("\n- {}", dotted(p)));
                }
                msg
            };
            return Err(ApiError::new(409, "Conflict", message));
        }
        for e in all.iter_mut().filter(|e| e.manager != manager) {
            e.fields
                .retain(|q| !conflicts.iter().any(|(_, _, c)| c == q));
        }
    }

    let now = clock::now_rfc3339();
    match mine_at {
        Some(i) => {
            let e = &mut all[i];
            if e.fields != applied || e.api_version != api_version {
                e.time = now;
            }
            e.fields = applied;
            e.api_version = api_version.to_owned();
        }
        None => all.push(Entry {
            manager: manager.to_owned(),
            operation: "Apply".into(),
            api_version: api_version.to_owned(),
            time: now,
            subresource,
            fields: applied,
        }),
    }
    write_entries(&mut result, all);
    Ok(result)
}

/// Records a non-apply write (create, replace, patch) by `manager`: it takes the fields whose
/// value it changed; fields it removed leave every set.
pub(crate) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    scope: Scope,
) {
    let subresource = scope.subresource().map(str::to_owned);
    let changed: FieldSet = leaves(new, scope)
        .into_iter()
        .filter(|p| old.and_then(|o| get_path(o, p)) != get_path(new, p))
        .collect();
    let mut all = old.map(entries).unwrap_or_default();
    let mine =
        |e: &Entry| e.manager == manager && e.operation == "Update" && e.subresource == subresource;
    for e in all.iter_mut().filter(|e| !mine(e)) {
        e.fields.retain(|q| !changed.iter().any(|p| overlaps(p, q)));
    }
    if !changed.is_empty() {
        let now = clock::now_rfc3339();
        match all.iter_mut().find(|e| mine(e)) {
            Some(e) => {
                e.fields.extend(changed);
                e.time = now;
                e.api_version = api_version.to_owned();
            }
            None => all.push(Entry {
                manager: manager.to_owned(),
                operation: "Update".into(),
                api_version: api_version.to_owned(),
                time: now,
                subresource,
                fields: changed,
            }),
        }
    }
    write_entries(new, all);
}
