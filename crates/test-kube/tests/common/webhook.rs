//! A small HTTPS admission webhook server for the tests that configure webhooks: a certificate
//! of a test CA for the Service's DNS name, each AdmissionReview answered by the test's function.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use serde_json::{Value, json};
use snow_test_devices::TestCa;
use snow_test_devices::https::Serving;
use std::future::Future;
use std::net::SocketAddr;

/// Serves on loopback as `host` (a certificate of `ca`); `answer` gets each call's path, query
/// and AdmissionReview and gives the review's `response` (its `uid` is filled in).
pub(crate) async fn serve<F, Fut>(
    ca: &TestCa,
    host: &str,
    answer: F,
) -> Result<(SocketAddr, Serving), Box<dyn std::error::Error + Send + Sync>>
where
    F: Fn(String, String, Value) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Value> + Send,
{
    let cert = ca.server_certificate_for_name(host)?;
    let acceptor = snow_test_devices::https::acceptor(&cert)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let serving = snow_test_devices::https::serve(
        listener,
        acceptor,
        move |req: hyper::Request<Incoming>| {
            let answer = answer.clone();
            async move {
                let path = req.uri().path().to_owned();
                let query = req.uri().query().unwrap_or_default().to_owned();
                let body = req
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                let uid = review["request"]["uid"].clone();
                let mut response = answer(path, query, review).await;
                response["uid"] = uid;
                let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
                hyper::Response::new(Full::new(Bytes::from(out.to_string())))
            }
        },
    );
    Ok((addr, serving))
}
