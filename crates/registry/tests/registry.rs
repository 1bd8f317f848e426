//! The registry against real clients, on loopback: an archive made by `download artifacts`'s
//! code (images with real tar layers, written as an OCI layout, pushed with skopeo to Debian's
//! docker-registry, downloaded, the source then stopped) served by snow-registry; skopeo copies
//! every image out of it by tag and by digest, containerd's `ctr` pulls through the `hosts.toml`
//! snowctl renders for nodes, and hostile requests get bounded answers.

// A skipped test says so on stderr.
#![allow(clippy::print_stderr)]

use snow_images::{
    Archive, Credentials, DownloadConfig, NoProgress, Platforms, download_images, plan_download,
};
use snow_registry::{CertificateSource, Limits, Namespaces, Running, ServeOptions, serve};
use snow_test_devices::{
    layout::Layout,
    registry::{self as support, skopeo},
};
use std::{
    io::{Read as _, Write as _},
    net::TcpStream,
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
    time::Duration,
};

/// The images of the fixture: (name in the archive, layout name), the first an index.
const IMAGES: [&str; 3] = [
    "public.ecr.aws/eks-distro/kubernetes/pause:v1",
    "public.ecr.aws/eks-anywhere/cli-tools:v0.1",
    "public.ecr.aws/eks-distro/etcd-io/etcd:v3.5",
];

/// A tar holding one file, as GNU tar writes it: a layer containerd can unpack.
fn tar_layer(dir: &Path, name: &str, content: &[u8]) -> Vec<u8> {
    let root = dir.join(format!("layer-{name}"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(name), content).unwrap();
    let out = Command::new("tar")
        .args(["--owner=0", "--group=0", "--mtime=@0", "-cf", "-", "-C"])
        .arg(&root)
        .arg(name)
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

/// The archive: the three images in a layout, pushed to a docker-registry with skopeo, then
/// downloaded with every platform kept; the source is stopped when this returns.
struct Fixture {
    dir: tempfile::TempDir,
    archive: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut layout = Layout::new(&dir.path().join("layout"));
    let random = |n| support::random_bytes(n);
    let amd = layout.image("amd64", &tar_layer(dir.path(), "amd", &random(40_000)));
    let arm = layout.image("arm64", &tar_layer(dir.path(), "arm", &random(30_000)));
    let index = layout.index(vec![
        amd.descriptor(Some(("linux", "amd64"))),
        arm.descriptor(Some(("linux", "arm64"))),
    ]);
    layout.name(&index, "pause");
    let tools = layout.image("amd64", &tar_layer(dir.path(), "tools", &random(700_000)));
    layout.name(&tools, "tools");
    let etcd = layout.image("amd64", &tar_layer(dir.path(), "etcd", &random(20_000)));
    layout.name(&etcd, "etcd");
    let root = layout.finish();
    let source = support::Registry::start(None);
    for (layout_name, image) in ["pause", "tools", "etcd"].iter().zip(IMAGES) {
        let path = image.strip_prefix("public.ecr.aws/").unwrap();
        skopeo(&[
            "copy",
            "--all",
            "--dest-tls-verify=false",
            &format!("oci:{}:{layout_name}", root.display()),
            &format!("docker://{}/{path}", source.host),
        ]);
    }
    let archive = dir.path().join("artifacts.tar");
    let config = DownloadConfig {
        output: archive.clone(),
        source_registry: Some(source.host.clone()),
        platforms: Platforms::All,
        concurrency: 2,
        ca_certs_pem: Vec::new(),
        plain_http: vec![source.host.clone()],
        credentials: Credentials::default(),
        files: Vec::new(),
        from_archives: Vec::new(),
    };
    let uris: Vec<String> = IMAGES.iter().map(|s| s.to_string()).collect();
    let plan = plan_download(&uris, Some(&source.host)).unwrap();
    let report = snow_test_devices::runtime().block_on(download_images(
        &plan,
        &config,
        Arc::new(NoProgress),
    ));
    assert!(report.error.is_none(), "{report}");
    drop(source);
    Fixture { dir, archive }
}

struct Server {
    rt: tokio::runtime::Runtime,
    running: Option<Running>,
    /// A directory with the CA as `ca.crt`, for skopeo's `--src-cert-dir`.
    certs: PathBuf,
    ca_pem: String,
    host: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            let _guard = self.rt.enter();
            r.stop();
        }
    }
}

fn start(fixture: &Fixture, namespaces: Namespaces, limits: Limits) -> Server {
    let rt = snow_test_devices::runtime();
    let state = fixture.dir.path().join("state");
    let running = rt
        .block_on(serve(ServeOptions {
            archive: fixture.archive.clone(),
            listen: "127.0.0.1:0".parse().unwrap(),
            certificate: CertificateSource::StateDir {
                dir: state,
                ips: vec!["127.0.0.1".parse().unwrap()],
            },
            namespaces,
            limits,
        }))
        .unwrap();
    let ca_pem = running.ca_pem.clone().unwrap();
    let certs = fixture
        .dir
        .path()
        .join(format!("certs-{}", running.addr.port()));
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::write(certs.join("ca.crt"), &ca_pem).unwrap();
    Server {
        host: running.addr.to_string(),
        rt,
        running: Some(running),
        certs,
        ca_pem,
    }
}

/// The archive's image named `name`.
fn image<'a>(archive: &'a Archive, name: &str) -> &'a snow_images::ArchiveImage {
    (archive.images().iter())
        .find(|i| i.name.as_deref() == Some(name))
        .unwrap()
}

fn raw_digest(raw: &str) -> String {
    support::sha256(raw.as_bytes())
}

#[test]
fn skopeo_copies_every_image_by_tag_and_by_digest_with_the_archives_digests() {
    let fixture = fixture();
    let archive = Archive::open(&fixture.archive).unwrap();
    let server = start(&fixture, Namespaces::default(), Limits::default());
    let certs = server.certs.to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut platform_manifests = 0;
    for image in archive.images() {
        let name = image.name.as_deref().unwrap();
        let (repo, tag) = name.rsplit_once(':').unwrap();
        // Through a mirror no `ns` is sent and the registry is public.ecr.aws; the registry
        // host in the path is the other form (a mirror prefix).
        let path = repo.strip_prefix("public.ecr.aws/").unwrap();
        for reference in [
            format!("{}/{path}:{tag}", server.host),
            format!("{}/{repo}@{}", server.host, image.digest),
        ] {
            let raw = skopeo(&[
                "inspect",
                "--raw",
                "--cert-dir",
                certs,
                &format!("docker://{reference}"),
            ]);
            assert_eq!(raw_digest(&raw), image.digest, "{reference}");
            let dest = out.path().join(path.replace('/', "_"));
            skopeo(&[
                "copy",
                "--all",
                "--src-cert-dir",
                certs,
                &format!("docker://{reference}"),
                &format!("oci:{}:copied", dest.display()),
            ]);
            let copied = skopeo(&[
                "inspect",
                "--raw",
                &format!("oci:{}:copied", dest.display()),
            ]);
            assert_eq!(raw_digest(&copied), image.digest, "{reference}");
            let parsed: serde_json::Value = serde_json::from_str(&raw).unwrap();
            for child in parsed["manifests"].as_array().into_iter().flatten() {
                let digest = child["digest"].as_str().unwrap();
                let raw = skopeo(&[
                    "inspect",
                    "--raw",
                    "--cert-dir",
                    certs,
                    &format!("docker://{}/{path}@{digest}", server.host),
                ]);
                assert_eq!(raw_digest(&raw), digest);
                platform_manifests += 1;
            }
        }
    }
    // The index's two platform manifests, by tag and by digest.
    assert_eq!(platform_manifests, 4);
}

/// One HTTPS request written by hand (so that nothing normalizes the path), `Connection:
/// close`; the status, the headers (lowercase names) and the body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    fn code(&self) -> String {
        self.json()["errors"][0]["code"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

fn tls_client(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    use rustls_pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

fn connect(server: &Server) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let tcp = TcpStream::connect(&server.host).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(tls_client(&server.ca_pem), name).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

fn request(server: &Server, method: &str, target: &str, extra: &str) -> Answer {
    let mut tls = connect(server);
    // A request the server refuses early may not be written whole: its answer still counts.
    let _ = write!(
        tls,
        "{method} {target} HTTP/1.1\r\nHost: {}\r\n{extra}Connection: close\r\n\r\n",
        server.host
    );
    let mut bytes = Vec::new();
    // The server may close without close_notify after the body: what was read counts.
    let _ = tls.read_to_end(&mut bytes);
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: bytes[end + 4..].to_vec(),
    }
}

#[test]
fn answers_carry_the_stored_bytes_and_types_and_hostile_requests_are_bounded() {
    let fixture = fixture();
    let archive = Archive::open(&fixture.archive).unwrap();
    let limits = Limits {
        connections: 2,
        header_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(2),
    };
    let server = start(&fixture, Namespaces::default(), limits);
    let pause = image(&archive, IMAGES[0]);

    // /v2/ and a HEAD of a manifest, as containerd opens.
    let base = request(&server, "GET", "/v2/", "");
    assert_eq!((base.status, base.body.as_slice()), (200, &b"{}"[..]));
    let head = request(
        &server,
        "HEAD",
        "/v2/eks-distro/kubernetes/pause/manifests/v1?ns=public.ecr.aws",
        "",
    );
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("docker-content-digest"),
        Some(pause.digest.as_str())
    );
    assert_eq!(head.header("content-type"), Some(pause.media_type.as_str()));
    assert_eq!(
        head.header("content-length"),
        Some(pause.size.to_string().as_str())
    );
    assert!(head.body.is_empty());
    let get = request(
        &server,
        "GET",
        &format!("/v2/eks-distro/kubernetes/pause/manifests/{}", pause.digest),
        "",
    );
    assert_eq!(support::sha256(&get.body), pause.digest);

    // A blob whole and in ranges.
    let tools = image(&archive, IMAGES[1]);
    let manifest = request(
        &server,
        "GET",
        "/v2/eks-anywhere/cli-tools/manifests/v0.1",
        "",
    );
    assert_eq!(support::sha256(&manifest.body), tools.digest);
    let layer = &manifest.json()["layers"][0];
    let (digest, size) = (
        layer["digest"].as_str().unwrap(),
        layer["size"].as_u64().unwrap(),
    );
    let blob_path = format!("/v2/eks-anywhere/cli-tools/blobs/{digest}");
    let whole = request(&server, "GET", &blob_path, "");
    assert_eq!((whole.status, whole.body.len() as u64), (200, size));
    assert_eq!(support::sha256(&whole.body), digest);
    assert_eq!(whole.header("docker-content-digest"), Some(digest));
    let part = request(&server, "GET", &blob_path, "Range: bytes=1000-1999\r\n");
    assert_eq!(part.status, 206);
    assert_eq!(part.body, whole.body[1000..2000]);
    assert_eq!(
        part.header("content-range"),
        Some(format!("bytes 1000-1999/{size}").as_str())
    );
    let resume = request(
        &server,
        "GET",
        &blob_path,
        &format!("Range: bytes={}-\r\n", size - 10),
    );
    assert_eq!(resume.body, whole.body[size as usize - 10..]);
    let past = request(
        &server,
        "GET",
        &blob_path,
        &format!("Range: bytes={size}-\r\n"),
    );
    assert_eq!(past.status, 416);
    // A blob of another repository is not this one's.
    let other = request(
        &server,
        "GET",
        &format!("/v2/eks-distro/etcd-io/etcd/blobs/{digest}"),
        "",
    );
    assert_eq!((other.status, other.code().as_str()), (404, "BLOB_UNKNOWN"));

    // Tag lists: n past the bound, n = 0, last.
    let tags = request(
        &server,
        "GET",
        "/v2/eks-distro/kubernetes/pause/tags/list?n=99999999999999999999999999",
        "",
    );
    assert_eq!(tags.json()["tags"], serde_json::json!(["v1"]));
    let none = request(
        &server,
        "GET",
        "/v2/eks-distro/kubernetes/pause/tags/list?n=0",
        "",
    );
    assert_eq!(none.json()["tags"], serde_json::json!([]));
    let after = request(
        &server,
        "GET",
        "/v2/eks-distro/kubernetes/pause/tags/list?last=v1",
        "",
    );
    assert_eq!(after.json()["tags"], serde_json::json!([]));
    let bad_n = request(
        &server,
        "GET",
        "/v2/eks-distro/kubernetes/pause/tags/list?n=-1",
        "",
    );
    assert_eq!(bad_n.status, 400);

    // Bad names, digests and references; misses.
    for (target, status, code) in [
        ("/v2/eks-distro/../etc/manifests/v1", 400, "NAME_INVALID"),
        ("/v2/%2e%2e/%2e%2e/manifests/v1", 400, "NAME_INVALID"),
        (
            "/v2/eks-distro/kubernetes/pause/blobs/sha256:../../etc/passwd",
            400,
            "DIGEST_INVALID",
        ),
        (
            "/v2/eks-distro/kubernetes/pause/manifests/sha256:zz",
            400,
            "DIGEST_INVALID",
        ),
        (
            "/v2/eks-distro/kubernetes/pause/manifests/v2",
            404,
            "MANIFEST_UNKNOWN",
        ),
        ("/v2/nothing/here/manifests/v1", 404, "NAME_UNKNOWN"),
        (
            "/v2/eks-distro/kubernetes/pause/manifests/v1?ns=quay.io",
            404,
            "NAME_UNKNOWN",
        ),
    ] {
        let answer = request(&server, "GET", target, "");
        assert_eq!(
            (answer.status, answer.code()),
            (status, code.to_owned()),
            "{target}"
        );
    }
    let long = format!("/v2/{}/manifests/v1", "a/".repeat(40_000));
    let too_long = request(&server, "GET", &long, "");
    assert!(
        [400, 414, 431].contains(&too_long.status),
        "{}",
        too_long.status
    );

    // Pushes and deletes are refused without their bodies being read.
    for (method, target) in [
        ("POST", "/v2/eks-distro/kubernetes/pause/blobs/uploads/"),
        ("PUT", "/v2/eks-distro/kubernetes/pause/manifests/v9"),
        (
            "DELETE",
            &format!("/v2/eks-distro/kubernetes/pause/manifests/{}", pause.digest),
        ),
        ("PATCH", "/v2/eks-distro/kubernetes/pause/blobs/uploads/x"),
    ] {
        let answer = request(&server, method, target, "Content-Length: 0\r\n");
        assert_eq!(
            (answer.status, answer.code()),
            (405, "UNSUPPORTED".to_owned()),
            "{method} {target}"
        );
    }

    // A slow client (half a request head, then nothing) is cut off; so is one that opens a
    // connection and never speaks, and they hold no slot afterwards.
    let mut slow = connect(&server);
    slow.write_all(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n").unwrap();
    slow.flush().unwrap();
    let mut silent = TcpStream::connect(&server.host).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut buf = [0u8; 64];
    assert!(
        matches!(slow.read(&mut buf), Ok(0) | Err(_)),
        "the slow client was not cut off"
    );
    assert!(
        matches!(silent.read(&mut buf), Ok(0) | Err(_)),
        "the silent client was not cut off"
    );
    // Both slots are free again: two requests at once are answered.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| request(&server, "GET", "/v2/", ""));
        let b = s.spawn(|| request(&server, "GET", "/v2/", ""));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((a.status, b.status), (200, 200));

    // What was counted.
    let metrics = String::from_utf8(request(&server, "GET", "/metrics", "").body).unwrap();
    assert!(
        metrics.contains("snowctl_registry_misses_total 4\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("snowctl_registry_requests_total{kind=\"blob\",status=\"206\"} 2\n"),
        "{metrics}"
    );
    let sent: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("snowctl_registry_sent_bytes_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(sent >= size + 1010, "{metrics}");
}

#[test]
fn past_the_connection_limit_a_client_waits_for_a_slot() {
    let fixture = fixture();
    let limits = Limits {
        connections: 1,
        ..Limits::default()
    };
    let server = start(&fixture, Namespaces::default(), limits);
    // One connection holds the only slot (a finished handshake, then idle).
    let mut holder = connect(&server);
    holder
        .write_all(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 12];
    holder.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"HTTP/1.1 200");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let answer = request(&server, "GET", "/v2/", "");
            sender.send(answer.status).unwrap();
        });
        // Not answered while the slot is held (it waits in the listen queue)…
        assert!(receiver.recv_timeout(Duration::from_secs(1)).is_err());
        drop(holder);
        // …and answered once it is free.
        assert_eq!(receiver.recv_timeout(Duration::from_secs(60)).unwrap(), 200);
    });
}

/// containerd's `ctr` pulls through the `hosts.toml` capi-render writes for Ubuntu nodes (with
/// `ociNamespaces`: `override_path`, the namespace, `ns`), from the registry serving the
/// download archive; the image's digest is the archive's. containerd runs as root with a root,
/// state directory, socket and config of its own; the `ca` path of the rendered file is moved
/// from `/etc/containerd/certs.d` into the test's hosts directory, nothing else is changed.
#[test]
fn containerd_pulls_through_the_hosts_toml_snowctl_renders_for_nodes() {
    if !Path::new("/usr/bin/containerd").exists() || !Path::new("/usr/bin/ctr").exists() {
        eprintln!(
            "SKIPPED: /usr/bin/containerd or /usr/bin/ctr is missing (scripts/test-world installs Debian's containerd as root)"
        );
        return;
    }
    let fixture = fixture();
    let archive = Archive::open(&fixture.archive).unwrap();
    let namespaces = Namespaces::new([("public.ecr.aws".to_owned(), "eks-anywhere".to_owned())]);
    let server = start(&fixture, namespaces, Limits::default());
    let port = server.host.rsplit_once(':').unwrap().1.to_owned();
    let mirror =
        capi_render::RegistryMirror::new(&snow_api::types::cluster::RegistryMirrorConfiguration {
            endpoint: Some("127.0.0.1".into()),
            port: Some(port),
            ca_cert_content: Some(server.ca_pem.clone()),
            oci_namespaces: Some(vec![snow_api::types::cluster::OciNamespace {
                registry: "public.ecr.aws".into(),
                namespace: "eks-anywhere".into(),
            }]),
            ..Default::default()
        });
    let work = tempfile::tempdir().unwrap();
    let hosts = work.path().join("certs.d");
    let base = hosts.join(mirror.base());
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("ca.crt"), mirror.ca().unwrap()).unwrap();
    let rendered = mirror.registry_hosts();
    assert_eq!(rendered.len(), 1);
    for (registry, content) in &rendered {
        assert!(content.contains("override_path = true"), "{content}");
        let content = content.replace("/etc/containerd/certs.d", hosts.to_str().unwrap());
        std::fs::create_dir_all(hosts.join(registry)).unwrap();
        std::fs::write(hosts.join(registry).join("hosts.toml"), content).unwrap();
    }
    let containerd = Containerd::start(work.path());
    let pause = image(&archive, IMAGES[0]);
    let out = containerd.ctr(&[
        "images",
        "pull",
        "--snapshotter",
        "native",
        "--hosts-dir",
        hosts.to_str().unwrap(),
        IMAGES[0],
    ]);
    assert!(
        out.status.success(),
        "ctr pull: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = containerd.ctr(&["images", "ls"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let line = listed
        .lines()
        .find(|l| l.starts_with(IMAGES[0]))
        .unwrap_or_default();
    assert!(line.contains(&pause.digest), "{listed}");
    // An image the archive does not hold fails as a miss (the node would then try upstream).
    let missing = containerd.ctr(&[
        "images",
        "pull",
        "--hosts-dir",
        hosts.to_str().unwrap(),
        "public.ecr.aws/eks-distro/kubernetes/pause:v0",
    ]);
    assert!(!missing.status.success());
    let metrics = String::from_utf8(request(&server, "GET", "/metrics", "").body).unwrap();
    assert!(
        metrics.contains("kind=\"manifest\",status=\"200\""),
        "{metrics}"
    );
}

/// A containerd of the test's own (root, state, socket, config), killed on drop.
struct Containerd {
    child: std::process::Child,
    socket: PathBuf,
}

impl Containerd {
    fn start(dir: &Path) -> Containerd {
        let socket = dir.join("containerd.sock");
        let config = dir.join("config.toml");
        // Only what a pull needs: no CRI, no network plugins.
        std::fs::write(
            &config,
            "version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n",
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("containerd.log")).unwrap();
        let child = Command::new("/usr/bin/containerd")
            .arg("--config")
            .arg(&config)
            .arg("--root")
            .arg(dir.join("root"))
            .arg("--state")
            .arg(dir.join("state"))
            .arg("--address")
            .arg(&socket)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let containerd = Containerd { child, socket };
        for _ in 0..200 {
            if containerd.ctr(&["version"]).status.success() {
                return containerd;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(dir.join("containerd.log")).unwrap_or_default();
        panic!("containerd did not start (it runs as root): {log}");
    }

    fn ctr(&self, args: &[&str]) -> std::process::Output {
        Command::new("/usr/bin/ctr")
            .arg("--address")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
