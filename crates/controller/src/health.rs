//! The health endpoint: `GET /healthz` (the process serves) and `GET /readyz` (it has reached the
//! management cluster), as Kubernetes probes expect. Plain HTTP/1.1, one answer per connection.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Connections served at once; more are closed at once (a probe retries), so a flood cannot
/// grow memory or tasks without bound.
pub(crate) const MAX_CONNECTIONS: usize = 64;
/// How long a connection may take to send its request line.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What the endpoint reports.
#[derive(Debug, Default)]
pub struct Health {
    ready: AtomicBool,
    leader: AtomicBool,
}

impl Health {
    /// Marks the controller ready (it reached the API server).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Marks whether this replica leads.
    pub fn set_leader(&self, leader: bool) {
        self.leader.store(leader, Ordering::SeqCst);
    }

    fn answer(&self, path: &str) -> (&'static str, String) {
        let role = if self.leader.load(Ordering::SeqCst) {
            "leader"
        } else {
            "standby"
        };
        match path {
            "/healthz" | "/livez" => ("200 OK", format!("ok ({role})\n")),
            "/readyz" if self.ready.load(Ordering::SeqCst) => ("200 OK", format!("ok ({role})\n")),
            "/readyz" => (
                "503 Service Unavailable",
                "the management cluster has not been reached yet\n".into(),
            ),
            _ => ("404 Not Found", "not found\n".into()),
        }
    }
}

/// Binds `addr` and serves until the task is dropped; returns the bound address.
pub(super) async fn serve(
    addr: SocketAddr,
    health: Arc<Health>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let task = tokio::spawn(async move {
        loop {
            let mut stream = next(|| async { listener.accept().await.map(|(s, _)| s) }).await;
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                continue; // dropped: closed without an answer
            };
            let health = health.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let mut buf = [0u8; 1024];
                let Ok(Ok(n)) = tokio::time::timeout(READ_TIMEOUT, stream.read(&mut buf)).await
                else {
                    return;
                };
                let request = String::from_utf8_lossy(&buf[..n]);
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let (status, body) = health.answer(path);
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok((bound, task))
}

/// The next accepted connection. An accept error (out of file descriptors under a flood, a
/// connection reset before it was accepted) is waited out with a growing pause, never the end of
/// the server: liveness must not fail for good because of one bad moment.
async fn next<T, F, Fut>(mut accept: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::io::Result<T>>,
{
    let mut pause = Duration::from_millis(10);
    loop {
        match accept().await {
            Ok(connection) => return connection,
            Err(e) => {
                tracing::warn!(error = %e, "health endpoint: accept failed; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_follows_the_flag() {
        let h = Health::default();
        assert_eq!(h.answer("/healthz").0, "200 OK");
        assert_eq!(h.answer("/readyz").0, "503 Service Unavailable");
        h.set_ready(true);
        h.set_leader(true);
        assert_eq!(h.answer("/readyz"), ("200 OK", "ok (leader)\n".into()));
        assert_eq!(h.answer("/nope").0, "404 Not Found");
    }

    #[tokio::test]
    async fn accept_errors_are_waited_out() {
        let failures = std::cell::Cell::new(3u32);
        let got = next(|| {
            let left = failures.get();
            failures.set(left.saturating_sub(1));
            async move {
                if left > 0 {
                    Err(std::io::Error::other("too many open files"))
                } else {
                    Ok("connection")
                }
            }
        })
        .await;
        assert_eq!((got, failures.get()), ("connection", 0));
    }

    async fn get(addr: SocketAddr) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\n\r\n").await;
        let mut out = String::new();
        let _ = stream.read_to_string(&mut out).await;
        out
    }

    #[tokio::test]
    async fn a_connection_flood_is_bounded_and_the_endpoint_recovers() {
        let (addr, task) = serve("127.0.0.1:0".parse().unwrap(), Arc::default())
            .await
            .unwrap();
        // Idle connections fill every slot (each gets one once accepted).
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
        }
        // One more is closed without an answer while they hold the slots.
        let mut refused = false;
        for _ in 0..50 {
            if get(addr).await.is_empty() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(refused, "a connection past the limit was answered");
        drop(idle);
        let mut answered = String::new();
        for _ in 0..100 {
            answered = get(addr).await;
            if !answered.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(answered.starts_with("HTTP/1.1 200 OK"), "{answered:?}");
        task.abort();
    }
}
