//! A static HTTPS file server on loopback (the TLS serving loop of [`crate::https`]), standing in
//! for the server release assets come from: a path it holds is 200 with its bytes, any other 404.

use crate::ca::TestCa;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

/// A running file server; stopped on drop.
#[derive(Debug)]
pub struct FileServer {
    /// `https://IP:PORT` (no trailing slash).
    pub base: String,
    requests: Arc<AtomicUsize>,
    serving: crate::https::Serving,
}

impl FileServer {
    /// Serves `files` (path, starting with `/`, to bytes) on `ip` with a certificate of `ca`
    /// (inside a tokio runtime).
    pub async fn start(
        ip: IpAddr,
        ca: &TestCa,
        files: HashMap<String, Vec<u8>>,
    ) -> Result<FileServer, String> {
        FileServer::start_with(ip, ca, |_| files).await
    }

    /// As [`FileServer::start`], the files made by `files` from the server's base URL
    /// (`https://IP:PORT`), for files that name other files of the server (a Release manifest
    /// naming its Bundles).
    pub async fn start_with(
        ip: IpAddr,
        ca: &TestCa,
        files: impl FnOnce(&str) -> HashMap<String, Vec<u8>>,
    ) -> Result<FileServer, String> {
        let certificate = ca.server_certificate(ip).map_err(|e| e.to_string())?;
        let acceptor = crate::https::acceptor(&certificate)?;
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let base = format!("https://{addr}");
        let files: Arc<HashMap<String, Bytes>> = Arc::new(
            files(&base)
                .into_iter()
                .map(|(k, v)| (k, Bytes::from(v)))
                .collect(),
        );
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        let serving = crate::https::serve(listener, acceptor, move |req| {
            counted.fetch_add(1, Ordering::SeqCst);
            let found = files.get(req.uri().path()).cloned();
            async move {
                match found {
                    Some(body) => Response::new(Full::new(body)),
                    None => {
                        let mut r = Response::new(Full::new(Bytes::from_static(b"Not Found\n")));
                        *r.status_mut() = StatusCode::NOT_FOUND;
                        r
                    }
                }
            }
        });
        Ok(FileServer {
            base,
            requests,
            serving,
        })
    }

    /// Requests answered so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Stops serving: the server is unreachable from now on.
    pub fn stop(&self) {
        self.serving.stop();
    }
}
