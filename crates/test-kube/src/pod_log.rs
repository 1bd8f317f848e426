//! The `pods/log` subresource (`GET /api/v1/namespaces/NS/pods/NAME/log`), answered as the API
//! server answers it: `text/plain`, a 404 for a missing pod, a 400 when the pod has several
//! containers and no `container` is named or the one named is not the pod's, a 400 for a
//! negative `tailLines` or a `limitBytes` below 1, then the last `tailLines` lines cut at
//! `limitBytes` bytes. What a container wrote is set by the test
//! ([`crate::KubeStandIn::set_pod_log`]); a container with nothing set wrote nothing.

use super::http::Body;
use super::registry::ResourceType;
use super::status::ApiError;
use super::store::Store;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use hyper::body::Bytes;
use std::collections::HashMap;

/// What each container wrote, by (namespace, pod, container).
pub(crate) type Logs = HashMap<(String, String, String), String>;

/// The log of `ns/name` as `params` (`container`, `tailLines`, `limitBytes`) select it.
pub(crate) fn answer(
    store: &Store,
    logs: &Logs,
    rt: &ResourceType,
    ns: &str,
    name: &str,
    params: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let pod = store.get(rt, Some(ns), name)?;
    let containers: Vec<&str> = pod["spec"]["containers"]
        .as_array()
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    let container = match params.get("container") {
        Some(c) if containers.contains(&c.as_str()) => c.clone(),
        Some(c) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )));
        }
        None if containers.len() == 1 => containers[0].to_owned(),
        None => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            )));
        }
    };
    let tail = number(params, "tailLines", 0, name)?;
    let limit = number(params, "limitBytes", 1, name)?;
    let text = logs
        .get(&(ns.to_owned(), name.to_owned(), container))
        .map(String::as_str)
        .unwrap_or_default();
    let mut bytes = tail_lines(text, tail).as_bytes().to_vec();
    if let Some(limit) = limit {
        bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    let mut response = Response::new(Full::new(Bytes::from(bytes)).boxed_unsync());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain"),
    );
    Ok(response)
}

/// The integer parameter `key`, at least `min`, if given.
fn number(
    params: &HashMap<String, String>,
    key: &str,
    min: i64,
    pod: &str,
) -> Result<Option<i64>, ApiError> {
    let Some(text) = params.get(key) else {
        return Ok(None);
    };
    let value: i64 = text.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "{key}: Invalid value: \"{text}\": must be an integer"
        ))
    })?;
    if value < min {
        let bound = match min {
            0 => "must be greater than or equal to 0",
            _ => "must be greater than 0",
        };
        return Err(ApiError::invalid(format!(
            "PodLogOptions \"{pod}\" is invalid: {key}: Invalid value: {value}: {bound}"
        )));
    }
    Ok(Some(value))
}

/// The last `tail` lines of `text` (all of it without `tail`).
fn tail_lines(text: &str, tail: Option<i64>) -> &str {
    let Some(tail) = tail else { return text };
    // Each line's start; the last line needs no newline after it.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&start| start < text.len())
        .collect();
    let tail = usize::try_from(tail).unwrap_or(0);
    match starts.len().checked_sub(tail) {
        Some(first) if tail > 0 => &text[starts[first]..],
        Some(_) => "",
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::tail_lines;

    #[test]
    fn the_last_lines_are_kept() {
        let text = "a\nb\nc\n";
        assert_eq!(tail_lines(text, None), text);
        assert_eq!(tail_lines(text, Some(5)), text);
        assert_eq!(tail_lines(text, Some(3)), text);
        assert_eq!(tail_lines(text, Some(2)), "b\nc\n");
        assert_eq!(tail_lines(text, Some(1)), "c\n");
        assert_eq!(tail_lines(text, Some(0)), "");
        assert_eq!(tail_lines("a\nb", Some(1)), "b");
    }
}
