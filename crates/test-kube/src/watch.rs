//! Watches: newline-delimited JSON events over a chunked response, replayed from the event
//! history when started from an older resourceVersion (410 Gone when it is no longer kept),
//! bookmarks, `timeoutSeconds`, and an end when the stand-in drops its watches.

use super::Shared;
use super::registry::ResourceType;
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::store::{Event, Store};
use http_body_util::StreamBody;
use hyper::body::{Bytes, Frame};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// How often a watch that allows bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(2);

/// The body of a watch response.
pub(crate) type WatchBody =
    StreamBody<futures_util::stream::BoxStream<'static, Result<Frame<Bytes>, Infallible>>>;

/// What a watch asks for.
#[derive(Debug, Clone)]
pub(crate) struct WatchRequest {
    pub(crate) rt: ResourceType,
    pub(crate) namespace: Option<String>,
    pub(crate) resource_version: String,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    pub(crate) bookmarks: bool,
    pub(crate) timeout: Option<Duration>,
}

fn line(kind: &str, object: &Value) -> Bytes {
    let mut s = json!({"type": kind, "object": object}).to_string();
    s.push('\n');
    Bytes::from(s)
}

impl WatchRequest {
    fn selects(&self, object: &Value) -> bool {
        self.labels.matches(object) && self.fields.matches(object)
    }

    /// The event this watch sees for a store event, if any.
    fn translate(&self, event: &Event) -> Option<Bytes> {
        let (group, plural, ns, _) = &event.key;
        if *group != self.rt.group || *plural != self.rt.plural {
            return None;
        }
        if self.rt.namespaced && self.namespace.as_ref().is_some_and(|n| n != ns) {
            return None;
        }
        let object = Store::serve(&self.rt, &event.object);
        let now = self.selects(&object);
        let before = event.old.as_ref().map(|o| self.selects(o));
        let kind = match (event.kind, before, now) {
            ("MODIFIED", Some(true), true) => "MODIFIED",
            ("MODIFIED", Some(false), true) => "ADDED",
            ("MODIFIED", Some(true), false) => "DELETED",
            ("MODIFIED", _, _) => return None,
            (kind, _, true) => kind,
            _ => return None,
        };
        Some(line(kind, &object))
    }
}

/// Starts a watch: the events to replay now, then live ones on a channel.
pub(crate) fn start(shared: &Arc<Shared>, request: WatchRequest) -> Result<WatchBody, ApiError> {
    let (initial, last_rv, receiver) = {
        let store = shared.lock();
        let receiver = store.subscribe();
        let current = store.resource_version();
        let mut initial = Vec::new();
        let mut gone = false;
        if request.resource_version.is_empty() || request.resource_version == "0" {
            let ns = if request.rt.namespaced {
                request.namespace.as_deref()
            } else {
                None
            };
            for o in store.list(&request.rt, ns, &request.labels, &request.fields) {
                initial.push(line("ADDED", &o));
            }
        } else {
            let rv: u64 = request.resource_version.parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid resource version {:?}",
                    request.resource_version
                ))
            })?;
            match store.since(rv) {
                Some(events) => initial.extend(events.iter().filter_map(|e| request.translate(e))),
                None => gone = true,
            }
            if gone {
                let status = ApiError::new(
                    410,
                    "Expired",
                    format!("too old resource version: {rv} ({})", current),
                )
                .to_json();
                initial = vec![line("ERROR", &status)];
            }
        }
        (
            if gone { Err(initial) } else { Ok(initial) },
            current,
            receiver,
        )
    };
    let (tx, rx) = mpsc::channel::<Bytes>(1024);
    let epoch = shared.epoch.subscribe();
    tokio::spawn(run(request, initial, last_rv, receiver, epoch, tx));
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok(Frame::data(b)), rx))
    });
    Ok(StreamBody::new(Box::pin(stream)))
}

async fn run(
    request: WatchRequest,
    initial: Result<Vec<Bytes>, Vec<Bytes>>,
    mut last_rv: u64,
    mut receiver: broadcast::Receiver<Arc<Event>>,
    mut epoch: tokio::sync::watch::Receiver<u64>,
    tx: mpsc::Sender<Bytes>,
) {
    let replay = match initial {
        Ok(lines) => lines,
        Err(lines) => {
            for l in lines {
                let _ = tx.send(l).await;
            }
            return;
        }
    };
    for l in replay {
        if tx.send(l).await.is_err() {
            return;
        }
    }
    let deadline = request.timeout.map(|t| tokio::time::Instant::now() + t);
    let mut bookmarks = tokio::time::interval(BOOKMARK_EVERY);
    bookmarks.tick().await;
    loop {
        let ended = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            received = receiver.recv() => match received {
                Ok(event) => {
                    if event.rv <= last_rv {
                        continue;
                    }
                    last_rv = event.rv;
                    if let Some(l) = request.translate(&event)
                        && tx.send(l).await.is_err()
                    {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let status = ApiError::new(410, "Expired", "the watch fell behind; watch again from the last resourceVersion seen").to_json();
                    let _ = tx.send(line("ERROR", &status)).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = bookmarks.tick(), if request.bookmarks => {
                let bookmark = json!({
                    "kind": request.rt.kind,
                    "apiVersion": request.rt.api_version(),
                    "metadata": {"resourceVersion": last_rv.to_string()},
                });
                if tx.send(line("BOOKMARK", &bookmark)).await.is_err() {
                    return;
                }
            }
            _ = epoch.changed() => return,
            () = ended => return,
            () = tx.closed() => return,
        }
    }
}
