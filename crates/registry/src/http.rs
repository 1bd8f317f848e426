//! One request in, one answer out: the pull side of the OCI Distribution API over the archive.
//! Every answer is bounded: bodies stream from the archive in chunks of [`CHUNK`] bytes, tag
//! lists hold at most [`MAX_TAGS`] tags, and a push is refused without its body being read.

use crate::{
    catalog::{Catalog, Repository},
    metrics::{Kind, Metrics},
    names::{Namespaces, is_digest, is_name, is_tag},
};
use futures_util::StreamExt as _;
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Bytes, Frame},
    header::{self, HeaderValue},
};
use snow_images::{Archive, BlobBytes};
use std::sync::Arc;

/// The most bytes read from the archive at once for one answer: a connection holds at most
/// this much of a body in memory.
pub const CHUNK: usize = 256 << 10;
/// The most tags in one tag list answer, whatever `n` asks (a `Link` header names the rest).
pub const MAX_TAGS: usize = 1000;

pub(crate) type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// What the answers are made from.
pub(crate) struct Served {
    pub(crate) archive: Arc<Archive>,
    pub(crate) catalog: Catalog,
    pub(crate) namespaces: Namespaces,
    pub(crate) metrics: Arc<Metrics>,
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn empty() -> Body {
    full(Bytes::new())
}

fn respond(status: StatusCode, content_type: &str, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    response
}

/// The spec's error body: `{"errors":[{"code","message","detail"}]}`.
fn error(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({"errors": [{"code": code, "message": message, "detail": null}]});
    respond(status, "application/json", full(body.to_string()))
}

/// What the path asks for.
enum Route<'a> {
    Base,
    Metrics,
    Manifest(&'a str, &'a str),
    Blob(&'a str, &'a str),
    Tags(&'a str),
    Upload,
    Unknown,
}

fn route(path: &str) -> Route<'_> {
    if path == "/v2/" || path == "/v2" {
        return Route::Base;
    }
    if path == "/metrics" {
        return Route::Metrics;
    }
    let Some(rest) = path.strip_prefix("/v2/") else {
        return Route::Unknown;
    };
    if let Some(name) = rest.strip_suffix("/tags/list") {
        return Route::Tags(name);
    }
    if rest.contains("/blobs/uploads") {
        return Route::Upload;
    }
    for (marker, blob) in [("/manifests/", false), ("/blobs/", true)] {
        if let Some(i) = rest.rfind(marker) {
            let (name, reference) = (&rest[..i], &rest[i + marker.len()..]);
            return if blob {
                Route::Blob(name, reference)
            } else {
                Route::Manifest(name, reference)
            };
        }
    }
    Route::Unknown
}

/// The query's value of `key`, percent-decoded.
fn query(request: &Request<hyper::body::Incoming>, key: &str) -> Option<String> {
    request.uri().query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| {
            percent_encoding::percent_decode_str(v)
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

impl Served {
    /// Answers `request`, counted in the metrics.
    pub(crate) async fn answer(&self, request: Request<hyper::body::Incoming>) -> Response<Body> {
        let (kind, response) = self.route(&request).await;
        self.metrics.request(kind, response.status().as_u16());
        response
    }

    async fn route(&self, request: &Request<hyper::body::Incoming>) -> (Kind, Response<Body>) {
        let method = request.method();
        let read = method == Method::GET || method == Method::HEAD;
        let head = method == Method::HEAD;
        let unsupported = || {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "UNSUPPORTED",
                "this registry serves an archive read-only: pushes and deletes are not supported",
            )
        };
        match route(request.uri().path()) {
            Route::Unknown => (
                Kind::Other,
                error(StatusCode::NOT_FOUND, "NAME_UNKNOWN", "no such endpoint"),
            ),
            Route::Upload => (Kind::Other, unsupported()),
            _ if !read => (Kind::Other, unsupported()),
            Route::Base => {
                let mut response = respond(StatusCode::OK, "application/json", full("{}"));
                response.headers_mut().insert(
                    "Docker-Distribution-API-Version",
                    HeaderValue::from_static("registry/2.0"),
                );
                (Kind::Base, response)
            }
            Route::Metrics => {
                let text = self.metrics.render();
                let body = if head { empty() } else { full(text) };
                (
                    Kind::Metrics,
                    respond(StatusCode::OK, "text/plain; version=0.0.4", body),
                )
            }
            Route::Manifest(name, reference) => {
                let ns = query(request, "ns");
                (
                    Kind::Manifest,
                    self.manifest(name, reference, ns.as_deref(), head),
                )
            }
            Route::Blob(name, digest) => {
                let ns = query(request, "ns");
                let range = request.headers().get(header::RANGE).cloned();
                (
                    Kind::Blob,
                    self.blob(name, digest, ns.as_deref(), range, head),
                )
            }
            Route::Tags(name) => (Kind::Tags, self.tags(request, name)),
        }
    }

    /// The repository a request names, or why not: status, code and message of the error.
    fn repository(
        &self,
        name: &str,
        ns: Option<&str>,
    ) -> Result<&Repository, (StatusCode, &'static str, &'static str)> {
        if !is_name(name) {
            return Err((
                StatusCode::BAD_REQUEST,
                "NAME_INVALID",
                "invalid repository name",
            ));
        }
        if ns.is_some_and(|ns| ns.is_empty() || ns.len() > 255 || ns.contains('/')) {
            return Err((
                StatusCode::BAD_REQUEST,
                "NAME_INVALID",
                "invalid ns parameter",
            ));
        }
        self.namespaces
            .candidates(name, ns)
            .iter()
            .find_map(|c| self.catalog.repositories.get(c))
            .ok_or((
                StatusCode::NOT_FOUND,
                "NAME_UNKNOWN",
                "repository name not known to registry",
            ))
    }

    fn manifest(
        &self,
        name: &str,
        reference: &str,
        ns: Option<&str>,
        head: bool,
    ) -> Response<Body> {
        let repository = match self.repository(name, ns) {
            Ok(r) => r,
            Err((status, code, message)) => return error(status, code, message),
        };
        let digest = if reference.contains(':') {
            if !is_digest(reference) {
                return error(StatusCode::BAD_REQUEST, "DIGEST_INVALID", "invalid digest");
            }
            reference
        } else if !is_tag(reference) {
            return error(StatusCode::BAD_REQUEST, "MANIFEST_INVALID", "invalid tag");
        } else {
            match repository.tags.get(reference) {
                Some(d) => d.as_str(),
                None => return manifest_unknown(),
            }
        };
        let (Some(media), Some(bytes)) = (
            repository.manifests.get(digest),
            self.archive.blob_bytes(digest),
        ) else {
            return manifest_unknown();
        };
        let mut response = self.body(&bytes, digest, media, None, head);
        if response.status() == StatusCode::OK {
            response.headers_mut().remove(header::ACCEPT_RANGES);
        }
        response
    }

    fn blob(
        &self,
        name: &str,
        digest: &str,
        ns: Option<&str>,
        range: Option<HeaderValue>,
        head: bool,
    ) -> Response<Body> {
        let repository = match self.repository(name, ns) {
            Ok(r) => r,
            Err((status, code, message)) => return error(status, code, message),
        };
        if !is_digest(digest) {
            return error(StatusCode::BAD_REQUEST, "DIGEST_INVALID", "invalid digest");
        }
        let known = repository.blobs.contains(digest) || repository.manifests.contains_key(digest);
        let Some(bytes) = known.then(|| self.archive.blob_bytes(digest)).flatten() else {
            return error(
                StatusCode::NOT_FOUND,
                "BLOB_UNKNOWN",
                "blob unknown to registry",
            );
        };
        self.body(&bytes, digest, "application/octet-stream", range, head)
    }

    /// The stored bytes with their digest and length headers, the range asked for when it is
    /// one satisfiable range.
    fn body(
        &self,
        bytes: &BlobBytes,
        digest: &str,
        media: &str,
        range: Option<HeaderValue>,
        head: bool,
    ) -> Response<Body> {
        let total = bytes.len();
        let (status, start, len) = match range.as_ref().map(|r| parse_range(r, total)) {
            None | Some(Range::Whole) => (StatusCode::OK, 0, total),
            Some(Range::Part(start, end)) => (StatusCode::PARTIAL_CONTENT, start, end - start + 1),
            Some(Range::Unsatisfiable) => {
                let mut response = error(
                    StatusCode::RANGE_NOT_SATISFIABLE,
                    "RANGE_INVALID",
                    "the range is outside the blob",
                );
                if let Ok(v) = HeaderValue::from_str(&format!("bytes */{total}")) {
                    response.headers_mut().insert(header::CONTENT_RANGE, v);
                }
                return response;
            }
        };
        let body = if head || len == 0 {
            empty()
        } else {
            match bytes.open() {
                Ok(reader) => self.stream(reader, start, len),
                Err(e) => {
                    tracing::warn!(%digest, error = %e, "registry: a blob cannot be read");
                    return error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "BLOB_UNKNOWN",
                        "the blob cannot be read from the archive",
                    );
                }
            }
        };
        let mut response = respond(status, media, body);
        let headers = response.headers_mut();
        let mut put = |name: &'static str, value: String| {
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.insert(name, v);
            }
        };
        put("content-length", len.to_string());
        put("docker-content-digest", digest.to_owned());
        put("etag", format!("\"{digest}\""));
        put("accept-ranges", "bytes".to_owned());
        // Content-addressed: the bytes of a digest never change.
        put("cache-control", "max-age=31536000".to_owned());
        if status == StatusCode::PARTIAL_CONTENT {
            put(
                "content-range",
                format!("bytes {start}-{}/{total}", start + len - 1),
            );
        }
        response
    }

    /// `len` bytes from `start`, read in chunks off the async workers as the client takes them.
    fn stream(&self, reader: snow_images::BlobReader, start: u64, len: u64) -> Body {
        let reader = Arc::new(reader);
        let metrics = self.metrics.clone();
        let end = start + len;
        let chunks = futures_util::stream::unfold(start, move |at| {
            let reader = reader.clone();
            let metrics = metrics.clone();
            async move {
                if at >= end {
                    return None;
                }
                let n = usize::try_from((end - at).min(CHUNK as u64)).unwrap_or(CHUNK);
                let read = tokio::task::spawn_blocking(move || reader.read(at, n)).await;
                let chunk = match read {
                    Ok(Ok(chunk)) => chunk,
                    Ok(Err(e)) => return Some((Err(e), end)),
                    Err(e) => return Some((Err(std::io::Error::other(e)), end)),
                };
                metrics.sent(chunk.len() as u64);
                Some((Ok(Frame::data(chunk)), at + n as u64))
            }
        });
        StreamBody::new(chunks.boxed()).boxed_unsync()
    }

    fn tags(&self, request: &Request<hyper::body::Incoming>, name: &str) -> Response<Body> {
        let repository = match self.repository(name, query(request, "ns").as_deref()) {
            Ok(r) => r,
            Err((status, code, message)) => return error(status, code, message),
        };
        let n = match query(request, "n") {
            None => MAX_TAGS,
            // A number past the bound (however many digits) is the bound.
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse::<usize>().unwrap_or(MAX_TAGS).min(MAX_TAGS)
            }
            Some(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "PAGINATION_NUMBER_INVALID",
                    "n must be a non-negative number",
                );
            }
        };
        let last = query(request, "last");
        let after = repository
            .tags
            .keys()
            .filter(|t| last.as_ref().is_none_or(|l| t.as_str() > l.as_str()));
        let tags: Vec<&String> = after.clone().take(n).collect();
        let more = n > 0 && after.count() > tags.len();
        let body = serde_json::json!({"name": name, "tags": tags});
        let mut response = respond(StatusCode::OK, "application/json", full(body.to_string()));
        if let (true, Some(last)) = (more, tags.last()) {
            let link = format!("</v2/{name}/tags/list?n={n}&last={last}>; rel=\"next\"");
            if let Ok(v) = HeaderValue::from_str(&link) {
                response.headers_mut().insert(header::LINK, v);
            }
        }
        response
    }
}

fn manifest_unknown() -> Response<Body> {
    error(
        StatusCode::NOT_FOUND,
        "MANIFEST_UNKNOWN",
        "manifest unknown to registry",
    )
}

/// A `Range` header against a body of `total` bytes (RFC 9110 §14).
#[derive(Debug, PartialEq, Eq)]
enum Range {
    /// Absent in effect: several ranges or a form not understood, answered whole (allowed).
    Whole,
    /// First and last byte, inclusive.
    Part(u64, u64),
    /// One range that starts past the end.
    Unsatisfiable,
}

fn parse_range(value: &HeaderValue, total: u64) -> Range {
    let Some(spec) = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().strip_prefix("bytes="))
    else {
        return Range::Whole;
    };
    if spec.contains(',') {
        return Range::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Range::Whole;
    };
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u64>().ok())
    };
    match (number(first), number(last)) {
        // bytes=-N: the last N bytes.
        (None, Some(Some(n))) if first.is_empty() => {
            if n == 0 || total == 0 {
                Range::Unsatisfiable
            } else {
                Range::Part(total.saturating_sub(n), total - 1)
            }
        }
        (Some(Some(a)), None) if last.is_empty() => {
            if a >= total {
                Range::Unsatisfiable
            } else {
                Range::Part(a, total - 1)
            }
        }
        (Some(Some(a)), Some(b)) => {
            let b = b.unwrap_or(u64::MAX);
            if a > b {
                Range::Whole
            } else if a >= total {
                Range::Unsatisfiable
            } else {
                Range::Part(a, b.min(total - 1))
            }
        }
        // A number too large for u64 as the first byte: past any end.
        (Some(None), _) => Range::Unsatisfiable,
        _ => Range::Whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(v: &str, total: u64) -> Range {
        parse_range(&HeaderValue::from_str(v).unwrap(), total)
    }

    #[test]
    fn ranges_follow_rfc_9110() {
        assert_eq!(range("bytes=0-9", 100), Range::Part(0, 9));
        assert_eq!(range("bytes=90-", 100), Range::Part(90, 99));
        assert_eq!(range("bytes=-10", 100), Range::Part(90, 99));
        assert_eq!(range("bytes=-1000", 100), Range::Part(0, 99));
        assert_eq!(range("bytes=50-1000", 100), Range::Part(50, 99));
        assert_eq!(range("bytes=100-", 100), Range::Unsatisfiable);
        assert_eq!(
            range("bytes=99999999999999999999999-", 100),
            Range::Unsatisfiable
        );
        assert_eq!(range("bytes=0-1,5-6", 100), Range::Whole);
        assert_eq!(range("items=0-1", 100), Range::Whole);
        assert_eq!(range("bytes=5-1", 100), Range::Whole);
        assert_eq!(range("bytes=-0", 100), Range::Unsatisfiable);
    }

    #[test]
    fn paths_route_by_their_last_marker() {
        assert!(matches!(route("/v2/"), Route::Base));
        assert!(matches!(
            route("/v2/a/manifests/b/manifests/v1"),
            Route::Manifest("a/manifests/b", "v1")
        ));
        assert!(matches!(route("/v2/a/blobs/uploads/"), Route::Upload));
        assert!(matches!(route("/v2/a/tags/list"), Route::Tags("a")));
        assert!(matches!(route("/v1/x"), Route::Unknown));
    }
}
