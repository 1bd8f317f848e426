//! JSON merge patch (RFC 7386; strategic merge is treated the same) and JSON patch (RFC 6902).

use super::status::ApiError;
use serde_json::Value;

/// Applies an RFC 7386 merge patch: objects merge, `null` deletes, everything else replaces.
pub(crate) fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(map) = target {
        for (k, v) in patch {
            if v.is_null() {
                map.remove(k);
            } else {
                merge(map.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn pointer_parts(path: &str) -> Result<Vec<String>, ApiError> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| ApiError::bad_request(format!("invalid JSON pointer {path:?}")))?;
    Ok(rest.split('/').map(unescape).collect())
}

fn parent_of<'a>(doc: &'a mut Value, parts: &[String]) -> Result<&'a mut Value, ApiError> {
    let mut cur = doc;
    for p in parts {
        cur = match cur {
            Value::Object(m) => m.get_mut(p),
            Value::Array(a) => p.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| ApiError::invalid(format!("the server rejected our request due to an error in our request: path /{} not found", parts.join("/"))))?;
    }
    Ok(cur)
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), ApiError> {
    let parts = pointer_parts(path)?;
    let Some((last, parents)) = parts.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent_of(doc, parents)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                last.parse()
                    .map_err(|_| ApiError::invalid(format!("invalid index {last}")))?
            };
            if i > a.len() {
                return Err(ApiError::invalid(format!("index {i} out of range")));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(ApiError::invalid(format!("cannot add at {path}"))),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, ApiError> {
    let parts = pointer_parts(path)?;
    let Some((last, parents)) = parts.split_last() else {
        return Ok(std::mem::take(doc));
    };
    let missing = || {
        ApiError::invalid(format!(
            "the server rejected our request: path {path} does not exist"
        ))
    };
    match parent_of(doc, parents)? {
        Value::Object(m) => m.remove(last).ok_or_else(missing),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i < a.len() {
                Ok(a.remove(i))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

/// Applies an RFC 6902 JSON patch (add, remove, replace, move, copy, test).
pub(crate) fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), ApiError> {
    let ops = ops
        .as_array()
        .ok_or_else(|| ApiError::bad_request("a JSON patch must be an array of operations"))?;
    for op in ops {
        let path = op["path"].as_str().unwrap_or_default();
        match op["op"].as_str().unwrap_or_default() {
            "add" => add(doc, path, op["value"].clone())?,
            "remove" => {
                remove(doc, path)?;
            }
            "replace" => {
                remove(doc, path)?;
                add(doc, path, op["value"].clone())?;
            }
            "move" => {
                let v = remove(doc, op["from"].as_str().unwrap_or_default())?;
                add(doc, path, v)?;
            }
            "copy" => {
                let v = doc
                    .pointer(op["from"].as_str().unwrap_or_default())
                    .cloned()
                    .ok_or_else(|| ApiError::invalid("copy: from does not exist"))?;
                add(doc, path, v)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&op["value"]) {
                    return Err(ApiError::invalid(format!("test failed at {path}")));
                }
            }
            other => {
                return Err(ApiError::bad_request(format!(
                    "unknown JSON patch op {other:?}"
                )));
            }
        }
    }
    Ok(())
}
