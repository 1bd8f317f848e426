//! The health endpoint: `GET /healthz` (the process serves) and `GET /readyz` (it has reached the
//! management cluster), as Kubernetes probes expect. Plain HTTP/1.1, one answer per connection.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let health = health.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let n = match tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    stream.read(&mut buf),
                )
                .await
                {
                    Ok(Ok(n)) => n,
                    _ => return,
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
}
