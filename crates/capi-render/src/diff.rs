//! Field-level changes between a rendered object's spec and the live one: what `upgrade` and
//! `upgrade plan` name when a template rolls (`instanceType: sbe-c.large → sbe-c.xlarge`).

use crate::upgrade::derivative;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// One field whose rendered value is not a derivative of the live one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldChange {
    /// The field's path below the compared object, `a.b[2].c`.
    pub path: String,
    /// The live value (`null` when unset).
    pub old: Value,
    /// The rendered value.
    pub new: Value,
}

/// A value as one short piece of text: a string bare, unset as `(unset)`, the rest as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "(unset)".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl fmt::Display for FieldChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} → {}",
            self.path,
            shown(&self.old),
            shown(&self.new)
        )
    }
}

/// The fields where `new` is not a derivative of `old` (see [`derivative`]: what `new` leaves
/// unset or empty is no change), as deep as both sides are maps, or lists of one length; sorted
/// by path.
pub fn field_changes(new: &Value, old: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk(new, old, "", &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(new: &Value, old: &Value, path: &str, out: &mut Vec<FieldChange>) {
    if derivative(new, old) {
        return;
    }
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            // serde_json's maps are sorted by key here (no preserve_order), so the paths are.
            for (key, value) in n {
                walk(
                    value,
                    o.get(key).unwrap_or(&Value::Null),
                    &join(path, key),
                    out,
                );
            }
        }
        (Value::Array(n), Value::Array(o)) if n.len() == o.len() => {
            for (i, (a, b)) in n.iter().zip(o).enumerate() {
                walk(a, b, &format!("{path}[{i}]"), out);
            }
        }
        _ => out.push(FieldChange {
            path: if path.is_empty() {
                ".".into()
            } else {
                path.to_owned()
            },
            old: old.clone(),
            new: new.clone(),
        }),
    }
}

/// The changes as one line, `a: x → y, b: (unset) → z`.
pub fn fields_text(changes: &[FieldChange]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_each_changed_leaf_with_both_values() {
        let old = json!({"instanceType": "sbe-c.large", "ami": {"id": "a"}, "devices": ["1", "2"], "keep": 1});
        let new = json!({"instanceType": "sbe-c.xlarge", "ami": {"id": "b"}, "devices": ["1", "3"], "sshKeyName": "k"});
        let text = fields_text(&field_changes(&new, &old));
        assert_eq!(
            text,
            "ami.id: a → b, devices[1]: 2 → 3, instanceType: sbe-c.large → sbe-c.xlarge, sshKeyName: (unset) → k"
        );
    }

    #[test]
    fn a_derivative_has_no_changes_and_lists_of_other_lengths_are_one_change() {
        let old = json!({"a": "x", "b": [1, 2]});
        assert!(field_changes(&json!({"a": "x", "b": []}), &old).is_empty());
        let changes = field_changes(&json!({"b": [1, 2, 3]}), &old);
        assert_eq!(fields_text(&changes), "b: [1,2] → [1,2,3]");
    }
}
