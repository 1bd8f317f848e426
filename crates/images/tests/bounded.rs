//! A registry that never finishes an answer: every request of a copy has an overall deadline,
//! on top of the per-read timeout that a byte now and then keeps resetting.

use snow_images::{
    CopyConfig, CopyLimits, Credentials, ImageStatus, NoProgress, TargetRegistry,
    copy_images_with_limits, plan,
};
use std::{sync::Arc, time::Duration};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// Answers `/v2/` at once (no auth challenge) and anything else with headers and then a byte
/// every 100 ms, for ever.
async fn trickling_registry() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream));
        }
    });
    host
}

async fn serve(mut stream: TcpStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let Ok(n) = stream.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        head.extend_from_slice(&buf[..n]);
        let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let request = String::from_utf8_lossy(&head[..end]).into_owned();
        head.drain(..end + 4);
        let path = request.split_whitespace().nth(1).unwrap_or("");
        if path == "/v2/" {
            let ok =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
            if stream.write_all(ok.as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let headers = "HTTP/1.1 200 OK\r\n\
            Content-Type: application/vnd.oci.image.manifest.v1+json\r\n\
            Content-Length: 1000000\r\n\r\n";
        if stream.write_all(headers.as_bytes()).await.is_err() {
            return;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream.write_all(b" ").await.is_err() {
                return;
            }
        }
    }
}

#[test]
fn a_trickling_registry_fails_the_image_at_the_deadline() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let host = trickling_registry().await;
        let config = CopyConfig {
            target: TargetRegistry::parse(&format!("{host}/mirror")).unwrap(),
            source_registry: Some(host.clone()),
            all_platforms: false,
            concurrency: 1,
            ca_certs_pem: Vec::new(),
            plain_http: vec![host.clone()],
            credentials: Credentials::default(),
        };
        let copies = plan(&["public.ecr.aws/eks/pause:v1".to_owned()], &config).unwrap();
        let limits = CopyLimits {
            request_deadline: Duration::from_secs(1),
            ..CopyLimits::default()
        };
        // The outer bound only keeps a regression from hanging the test run.
        let report = tokio::time::timeout(
            Duration::from_secs(120),
            copy_images_with_limits(&copies, &config, limits, Arc::new(NoProgress)),
        )
        .await
        .expect("the copy stalled: no deadline");
        let [image] = report.images.as_slice() else {
            panic!("{report:?}")
        };
        let ImageStatus::Failed { error } = &image.status else {
            panic!("{image:?}")
        };
        assert!(
            error.starts_with("reading manifest")
                && error.contains("within the 1 s deadline")
                && error.contains("CopyLimits::request_deadline"),
            "{error}"
        );
    });
}

#[test]
fn debug_never_shows_registry_passwords() {
    let mut credentials = Credentials::default();
    credentials.insert(
        "registry.example:5000",
        "admin".into(),
        "hunter2-pass".into(),
    );
    let docker = Credentials::from_docker_config(
        r#"{"auths": {"other.example": {"auth": "dXNlcjpzM2NyZXQtZnJvbS1hdXRo"},
                      "third.example": {"username": "u", "password": "pl41n-pass"}}}"#,
    )
    .unwrap();
    let config = CopyConfig {
        target: TargetRegistry::parse("registry.example:5000/mirror").unwrap(),
        source_registry: None,
        all_platforms: false,
        concurrency: 1,
        ca_certs_pem: Vec::new(),
        plain_http: Vec::new(),
        credentials,
    };
    let shown = format!("{config:?} {config:#?} {docker:?}");
    for secret in ["hunter2-pass", "s3cret-from-auth", "pl41n-pass"] {
        assert!(!shown.contains(secret), "{secret} shown: {shown}");
    }
    assert!(
        shown.contains("admin") && shown.contains("<redacted>"),
        "{shown}"
    );
    assert!(shown.contains("other.example") && shown.contains("third.example"));
}
