//! Test registries: Debian's `docker-registry` (distribution) on loopback, one plain HTTP and one
//! with TLS from a CA made here, and small images of our own pushed to them.
//! Used by the tests of `snow-images` and of the CLI's `import-images`.

use oci_client::{
    Client, Reference,
    client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol},
    secrets::RegistryAuth,
};
use std::{
    net::{TcpListener, TcpStream},
    path::PathBuf,
    process::{Child, Command, Stdio},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// A CA and a server certificate for 127.0.0.1, as PEM files.
pub struct Tls {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The CA certificate as a file (for `--ca-cert`).
    pub ca_file: PathBuf,
    cert_file: PathBuf,
    key_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tls {
    /// A new CA and a certificate for 127.0.0.1 signed by it.
    pub fn generate() -> Tls {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
        let dir = tempfile::tempdir().unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(vec![]).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "snowctl test registry CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        let cert = params.signed_by(&key, &issuer).unwrap();
        let (ca_file, cert_file, key_file) = (
            dir.path().join("ca.pem"),
            dir.path().join("server.pem"),
            dir.path().join("server.key"),
        );
        std::fs::write(&ca_file, ca_cert.pem()).unwrap();
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        Tls {
            ca_pem: ca_cert.pem(),
            ca_file,
            cert_file,
            key_file,
            _dir: dir,
        }
    }
}

/// Runs `skopeo --insecure-policy ARGS…` (no policy file needed); its stdout. The test fails
/// when skopeo is missing or fails, with its stderr.
pub fn skopeo(args: &[&str]) -> String {
    let out = Command::new("skopeo")
        .args(["--insecure-policy"])
        .args(args)
        .output()
        .expect("skopeo is missing: `apt-get install skopeo` (scripts/test-world does)");
    assert!(
        out.status.success(),
        "skopeo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A running `docker-registry serve`, killed on drop.
pub struct Registry {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub host: String,
    /// Whether it serves TLS.
    pub tls: bool,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Registry {
    /// Starts a registry; panics (the test fails) if `docker-registry` is not installed.
    pub fn start(tls: Option<&Tls>) -> Registry {
        assert!(
            std::path::Path::new(REGISTRY_BIN).exists(),
            "{REGISTRY_BIN} is missing: `apt-get install docker-registry` (.ci/run does)"
        );
        let dir = tempfile::tempdir().unwrap();
        for _attempt in 0..5 {
            let port = free_port();
            let host = format!("127.0.0.1:{port}");
            let tls_block = tls.map_or(String::new(), |t| {
                format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    t.cert_file.display(),
                    t.key_file.display()
                )
            });
            let config = format!(
                "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n  secret: snowctl-test\n{tls_block}",
                dir.path().join("data").display()
            );
            let config_file = dir.path().join("config.yml");
            std::fs::write(&config_file, config).unwrap();
            let mut child = Command::new(REGISTRY_BIN)
                .arg("serve")
                .arg(&config_file)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if TcpStream::connect(&host).is_ok() {
                    return Registry {
                        child,
                        host,
                        tls: tls.is_some(),
                        _dir: dir,
                    };
                }
                if child.try_wait().unwrap().is_some() {
                    break; // port taken meanwhile: try another
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("docker-registry did not start");
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TLS front of a plain-HTTP test [`Registry`] that answers as AWS ECR does: a manifest PUT
/// gets its `201 Created` without a `Location` header (the OCI distribution spec asks for one;
/// ECR sends none). Everything else is passed through as it is. Stops on drop.
pub struct NoLocationFront {
    /// `127.0.0.1:PORT`.
    pub host: String,
    _serving: crate::https::Serving,
}

impl NoLocationFront {
    /// Starts the front of `upstream` (a plain-HTTP registry) with the certificate of `tls`;
    /// must be called within a tokio runtime, which then serves it.
    pub async fn start(upstream: &Registry, tls: &Tls) -> NoLocationFront {
        assert!(!upstream.tls, "the front speaks plain HTTP to its registry");
        let certificate = crate::ServerCertificate {
            cert_pem: std::fs::read_to_string(&tls.cert_file).unwrap(),
            key_pem: std::fs::read_to_string(&tls.key_file).unwrap(),
        };
        let acceptor = crate::https::acceptor(&certificate).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let to = upstream.host.clone();
        let serving = crate::https::serve(listener, acceptor, move |req| {
            forward_without_location(to.clone(), req)
        });
        NoLocationFront {
            host,
            _serving: serving,
        }
    }
}

type FrontError = Box<dyn std::error::Error + Send + Sync>;
type FrontBody = http_body_util::combinators::UnsyncBoxBody<hyper::body::Bytes, FrontError>;

/// Passes `req` to the registry at `to` (one connection per request); drops `Location` from
/// the answer to a manifest PUT.
async fn forward_without_location(
    to: String,
    mut req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<FrontBody> {
    use http_body_util::BodyExt as _;
    let manifest_put =
        req.method() == hyper::Method::PUT && req.uri().path().contains("/manifests/");
    // The registry builds the URLs it answers (blob upload locations) from the Host header and
    // this one: they must point at the front, over TLS.
    req.headers_mut().insert(
        "x-forwarded-proto",
        hyper::header::HeaderValue::from_static("https"),
    );
    let answer = async {
        let tcp = tokio::net::TcpStream::connect(&to).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
        tokio::spawn(connection);
        let answer = sender.send_request(req).await?;
        Ok::<_, FrontError>(answer)
    };
    match answer.await {
        Ok(mut answer) => {
            if manifest_put {
                answer.headers_mut().remove(hyper::header::LOCATION);
            }
            answer.map(|body| {
                body.map_err(|e| -> FrontError { Box::new(e) })
                    .boxed_unsync()
            })
        }
        Err(e) => {
            let mut answer = hyper::Response::new(
                http_body_util::Full::new(hyper::body::Bytes::from(e.to_string()))
                    .map_err(|never| match never {})
                    .boxed_unsync(),
            );
            *answer.status_mut() = hyper::StatusCode::BAD_GATEWAY;
            answer
        }
    }
}

/// A client for the test registries: plain HTTP for `plain`, the CA for TLS ones.
pub fn client(plain: &[&Registry], ca_pem: Option<&str>) -> Client {
    Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain.iter().map(|r| r.host.clone()).collect()),
        extra_root_certificates: ca_pem
            .map(|pem| {
                vec![Certificate {
                    encoding: CertificateEncoding::Pem,
                    data: pem.as_bytes().to_vec(),
                }]
            })
            .unwrap_or_default(),
        use_monolithic_push: true,
        platform_resolver: None,
        ..ClientConfig::default()
    })
}

static SEED: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);

/// `len` pseudo-random bytes, different on every call.
pub fn random_bytes(len: usize) -> Vec<u8> {
    let mut x = SEED.fetch_add(0x2545_f491_4f6c_dd1d, Ordering::Relaxed)
        ^ std::process::id() as u64
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// `sha256:<hex>` of `bytes`, as registries name blobs.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// What was pushed for one image.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// Repository path (no host), e.g. `eks-distro/kubernetes/pause`.
    pub path: String,
    /// The tag pushed.
    pub tag: String,
    /// The digest of what the tag points at (manifest or index).
    pub digest: String,
    /// For an index: (architecture, manifest digest, layer digests).
    pub platforms: Vec<(String, String, Vec<String>)>,
    /// For a single manifest: its layer digests.
    pub layers: Vec<String>,
}

async fn push_blob(client: &Client, r: &Reference, data: &[u8]) -> String {
    let digest = sha256(data);
    if !client.blob_exists(r, &digest).await.unwrap() {
        client.push_blob(r, data.to_vec(), &digest).await.unwrap();
    }
    digest
}

/// Pushes an image manifest with the given layers (and a fresh config) to `repo@digest` or
/// `repo:tag`; returns (manifest digest, manifest size, layer digests).
async fn push_manifest(
    client: &Client,
    registry: &str,
    path: &str,
    tag: Option<&str>,
    layers: &[Vec<u8>],
    arch: &str,
) -> (String, usize, Vec<String>) {
    let r = Reference::with_tag(registry.into(), path.into(), "x".into());
    // The layers are uncompressed, so their digests are also their diff IDs (which readers of
    // `docker save` archives, skopeo's among them, check against the layers).
    let diff_ids: Vec<String> = layers
        .iter()
        .map(|l| format!("\"{}\"", sha256(l)))
        .collect();
    let config = format!(
        r#"{{"architecture":"{arch}","os":"linux","rootfs":{{"type":"layers","diff_ids":[{}]}},"config":{{}},"nonce":"{}"}}"#,
        diff_ids.join(","),
        sha256(&random_bytes(16))
    );
    let config_digest = push_blob(client, &r, config.as_bytes()).await;
    let mut layer_digests = Vec::new();
    let mut layer_json = Vec::new();
    for layer in layers {
        let d = push_blob(client, &r, layer).await;
        layer_json.push(format!(
            r#"{{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"{d}","size":{}}}"#,
            layer.len()
        ));
        layer_digests.push(d);
    }
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{config_digest}","size":{}}},"layers":[{}]}}"#,
        config.len(),
        layer_json.join(",")
    );
    let digest = sha256(manifest.as_bytes());
    let target = match tag {
        Some(t) => Reference::with_tag(registry.into(), path.into(), t.into()),
        None => Reference::with_digest(registry.into(), path.into(), digest.clone()),
    };
    client
        .push_manifest_raw(
            &target,
            manifest.clone().into_bytes(),
            "application/vnd.oci.image.manifest.v1+json"
                .parse()
                .unwrap(),
        )
        .await
        .unwrap();
    (digest, manifest.len(), layer_digests)
}

/// Pushes a single-platform image with `layers` random layers of `layer_size` bytes, plus the
/// `shared` layers as given.
pub async fn push_image(
    client: &Client,
    registry: &Registry,
    path: &str,
    tag: &str,
    layers: usize,
    layer_size: usize,
    shared: &[Vec<u8>],
) -> Pushed {
    let mut data: Vec<Vec<u8>> = shared.to_vec();
    data.extend((0..layers).map(|_| random_bytes(layer_size)));
    let (digest, _, layer_digests) =
        push_manifest(client, &registry.host, path, Some(tag), &data, "amd64").await;
    Pushed {
        path: path.into(),
        tag: tag.into(),
        digest,
        platforms: vec![],
        layers: layer_digests,
    }
}

/// Pushes an OCI index for linux/amd64 and linux/arm64, one random layer each.
pub async fn push_multi_platform(
    client: &Client,
    registry: &Registry,
    path: &str,
    tag: &str,
    layer_size: usize,
) -> Pushed {
    let mut entries = Vec::new();
    let mut platforms = Vec::new();
    for arch in ["amd64", "arm64"] {
        let (digest, size, layers) = push_manifest(
            client,
            &registry.host,
            path,
            None,
            &[random_bytes(layer_size)],
            arch,
        )
        .await;
        entries.push(format!(
            r#"{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{digest}","size":{size},"platform":{{"architecture":"{arch}","os":"linux"}}}}"#
        ));
        platforms.push((arch.to_owned(), digest, layers));
    }
    let index = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{}]}}"#,
        entries.join(",")
    );
    let r = Reference::with_tag(registry.host.clone(), path.into(), tag.into());
    client
        .push_manifest_raw(
            &r,
            index.clone().into_bytes(),
            "application/vnd.oci.image.index.v1+json".parse().unwrap(),
        )
        .await
        .unwrap();
    Pushed {
        path: path.into(),
        tag: tag.into(),
        digest: sha256(index.as_bytes()),
        platforms,
        layers: vec![],
    }
}

/// The manifest at `reference` in a registry: (body, digest).
pub async fn manifest(client: &Client, reference: &str) -> (Vec<u8>, String) {
    let r: Reference = reference.parse().unwrap();
    let (body, digest) = client
        .pull_manifest_raw(
            &r,
            &RegistryAuth::Anonymous,
            &[
                "application/vnd.oci.image.index.v1+json",
                "application/vnd.oci.image.manifest.v1+json",
            ],
        )
        .await
        .unwrap();
    (body.to_vec(), digest)
}

/// Whether the blob is in `registry/path`.
pub async fn has_blob(client: &Client, registry: &Registry, path: &str, digest: &str) -> bool {
    let r = Reference::with_tag(registry.host.clone(), path.into(), "x".into());
    client.blob_exists(&r, digest).await.unwrap()
}

/// Pushes a Helm chart as `helm push` stores it: an OCI manifest with the Helm config media type
/// and one layer, the chart's `.tgz` (`chart`); returns what was pushed (`layers`: the `.tgz`'s
/// digest).
pub async fn push_helm_chart(
    client: &Client,
    registry: &Registry,
    path: &str,
    tag: &str,
    chart: &[u8],
) -> Pushed {
    let r = Reference::with_tag(registry.host.clone(), path.into(), tag.into());
    let config = format!(
        r#"{{"name":"{}","version":"{tag}","apiVersion":"v2"}}"#,
        path.rsplit('/').next().unwrap_or(path)
    );
    let config_digest = push_blob(client, &r, config.as_bytes()).await;
    let layer = push_blob(client, &r, chart).await;
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"{config_digest}","size":{}}},"layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"{layer}","size":{}}}]}}"#,
        config.len(),
        chart.len()
    );
    client
        .push_manifest_raw(
            &r,
            manifest.clone().into_bytes(),
            "application/vnd.oci.image.manifest.v1+json"
                .parse()
                .unwrap(),
        )
        .await
        .unwrap();
    Pushed {
        path: path.into(),
        tag: tag.into(),
        digest: sha256(manifest.as_bytes()),
        platforms: vec![],
        layers: vec![layer],
    }
}
