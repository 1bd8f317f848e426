//! Small helpers for tests that probe a server of their own on loopback (the controller's health
//! endpoint): a free port, a bare HTTP GET, a bounded wait.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A free loopback port (bound and released at once).
pub fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

/// `GET path` over a new connection; the whole answer, or `""` when nothing answers.
pub async fn http_get(addr: SocketAddr, path: &str) -> String {
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return String::new();
    };
    let _ = stream
        .write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
        .await;
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out).await;
    out
}

/// Waits until `check` holds, looking every 50 ms; panics (the test fails) after 30 s.
pub async fn wait_until(what: &str, check: impl AsyncFn() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what} never happened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
