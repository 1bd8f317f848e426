//! The release defaults: without `--bundles` or `--artifacts`, the commands that act on devices,
//! registries or clusters take the newest EKS Anywhere release with a Snow section from a
//! Release manifest served over HTTPS on loopback (`snow_test_devices::release_site`); `render`
//! alone uses the embedded sample, and says so.

use snow_test_devices::{TestCa, loopback_ip, release_site};
use std::process::Command;

const EKSD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/eksd/kubernetes-1-21-eks-4.yaml"
);

fn snowctl(cache: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.env("XDG_CACHE_HOME", cache)
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
    cmd
}

#[test]
fn the_image_list_comes_from_the_published_release_then_from_the_cache_offline() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("release site").unwrap();
    let eksd = std::fs::read(EKSD).unwrap();
    let server = rt
        .block_on(release_site::start(loopback_ip(), &ca, eksd))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("ca.pem");
    std::fs::write(&pem, ca.pem()).unwrap();
    let url = format!("{}{}", server.base, release_site::RELEASE_MANIFEST_PATH);
    let list = || {
        snowctl(&dir.path().join("cache"))
            .args(["import-images", "--list", "--kubernetes-version", "1.31"])
            .args(["--release-manifest", &url])
            .arg("--ca-cert")
            .arg(&pem)
            .output()
            .unwrap()
    };
    let first = list();
    let shown = super::show(&first);
    assert_eq!(first.status.code(), Some(0), "{shown}");
    let err = super::text(&first.stderr);
    assert!(
        err.contains(&format!(
            "release: EKS Anywhere {} ({}/releases/bundles/29/manifest.yaml), from {url}",
            release_site::SNOW_RELEASE,
            server.base
        )),
        "{shown}"
    );
    assert!(!err.contains("embedded sample"), "{shown}");
    let out = super::text(&first.stdout);
    assert!(out.contains("kube-apiserver"), "{shown}");
    // The Release manifest, the Bundles of v0.30.0 (no Snow) and v0.29.1, one EKS-D manifest.
    assert_eq!(server.requests(), 4);

    server.stop();
    let offline = list();
    let shown = super::show(&offline);
    assert_eq!(offline.status.code(), Some(0), "{shown}");
    assert_eq!(offline.stdout, first.stdout);
    assert!(
        super::text(&offline.stderr).contains("could not be fetched")
            && super::text(&offline.stderr).contains("the copy in the cache"),
        "{shown}"
    );
}

#[test]
fn an_unreachable_release_manifest_with_nothing_cached_names_the_url_and_the_way_offline() {
    let dir = tempfile::tempdir().unwrap();
    let (components, _) = super::init::components_dir(dir.path());
    // Nothing listens on port 1.
    let url = "https://127.0.0.1:1/releases/eks-a/manifest.yaml";
    let out = snowctl(&dir.path().join("cache"))
        .args(["init", "--dry-run", "--release-manifest", url])
        .arg("--components-dir")
        .arg(&components)
        .output()
        .unwrap();
    let shown = super::show(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let err = super::text(&out.stderr);
    assert!(
        err.contains(&format!("cannot take the release defaults from {url}"))
            && err.contains("not in the cache")
            && err.contains("pass --bundles FILE"),
        "{shown}"
    );
}

#[test]
fn render_on_the_embedded_sample_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let spec = snow_api::template::cluster_config(&snow_api::template::TemplateOptions {
        name: "edge".into(),
        devices: vec!["192.168.1.11".into()],
        endpoint: Some("192.168.1.100".into()),
        ssh_key_name: Some("key".into()),
        ..Default::default()
    })
    .unwrap();
    let file = dir.path().join("edge.yaml");
    std::fs::write(&file, spec).unwrap();
    let out = snowctl(&dir.path().join("cache"))
        .args(["render", "--no-secrets", "-f"])
        .arg(&file)
        .output()
        .unwrap();
    let shown = super::show(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let err = super::text(&out.stderr);
    assert_eq!(
        err.matches("using the embedded sample catalog").count(),
        1,
        "{shown}"
    );
    assert!(
        err.contains("its images and components are not published"),
        "{shown}"
    );
}
