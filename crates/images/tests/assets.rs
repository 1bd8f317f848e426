//! The management components fetched over HTTPS: a loopback HTTPS server (certificate of a test
//! CA) serving the real manifests of `../shared/data`; the cache makes a second run offline; a
//! 404, a body that is not YAML, an unknown CA and a server that never answers are each named
//! with the component, its version and the URI.

use snow_api::release::ComponentAssets;
use snow_images::assets::{self, AssetsError, FetchConfig};
use snow_test_devices::{BlackHole, FileServer, TestCa, loopback_ip, release_site};
use std::{collections::HashMap, path::PathBuf, sync::Arc, time::Duration};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

/// (label, version, components file, metadata file) of the real stack.
const STACK: [(&str, &str, &str, Option<&str>); 7] = [
    (
        "cert-manager",
        "v1.20.2",
        "components/cert-manager.yaml",
        None,
    ),
    (
        "cluster-api",
        "v1.13.5",
        "components/core-components.yaml",
        Some("components/core-components.metadata.yaml"),
    ),
    (
        "bootstrap-kubeadm",
        "v1.13.5",
        "components/bootstrap-kubeadm-components.yaml",
        Some("components/bootstrap-kubeadm-components.metadata.yaml"),
    ),
    (
        "control-plane-kubeadm",
        "v1.13.5",
        "components/control-plane-kubeadm-components.yaml",
        Some("components/control-plane-kubeadm-components.metadata.yaml"),
    ),
    (
        "bootstrap-etcdadm-bootstrap",
        "v1.0.19",
        "components/bootstrap-etcdadm-bootstrap-components.yaml",
        Some("components/bootstrap-etcdadm-bootstrap-components.metadata.yaml"),
    ),
    (
        "bootstrap-etcdadm-controller",
        "v1.0.28",
        "components/bootstrap-etcdadm-controller-components.yaml",
        Some("components/bootstrap-etcdadm-controller-components.metadata.yaml"),
    ),
    (
        "infrastructure-snow",
        "v0.3.3",
        "crds/capas-infrastructure-components.yaml",
        Some("components/core-components.metadata.yaml"),
    ),
];

/// The server's files (`/<label>/<version>/<name>`) and the assets naming them under `base`.
fn stack(base: &str) -> (HashMap<String, Vec<u8>>, Vec<ComponentAssets>) {
    let mut files = HashMap::new();
    let mut assets = Vec::new();
    for (label, version, components, metadata) in STACK {
        let name = components.rsplit('/').next().unwrap();
        let path = format!("/{label}/{version}/{name}");
        files.insert(
            path.clone(),
            std::fs::read(data().join(components)).unwrap(),
        );
        let metadata_uri = metadata.map(|m| {
            let path = format!("/{label}/{version}/metadata.yaml");
            files.insert(path.clone(), std::fs::read(data().join(m)).unwrap());
            format!("{base}{path}")
        });
        let label = snow_api::release::MANAGEMENT_COMPONENTS
            .into_iter()
            .find(|l| *l == label)
            .unwrap();
        assets.push(ComponentAssets {
            label,
            version: format!("{version}+abcdef1"),
            components_uri: format!("{base}{path}"),
            metadata_uri,
        });
    }
    (files, assets)
}

fn config(cache: &std::path::Path, ca: &TestCa) -> FetchConfig {
    FetchConfig {
        ca_certs_pem: vec![ca.pem().as_bytes().to_vec()],
        deadline: Duration::from_secs(20),
        ..FetchConfig::new(cache.to_path_buf())
    }
}

/// Starts a server for `files` on a fresh loopback address; the assets' URIs use it.
async fn serve(
    ca: &TestCa,
    edit: impl FnOnce(&mut HashMap<String, Vec<u8>>),
) -> (FileServer, Vec<ComponentAssets>) {
    let ip = loopback_ip();
    // The URIs need the port, known once the server listens: serve, then name the files.
    let (mut files, _) = stack("");
    edit(&mut files);
    let server = FileServer::start(ip, ca, files).await.unwrap();
    let (_, assets) = stack(&server.base);
    (server, assets)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_run_fetches_and_the_second_reads_the_cache_only() {
    let ca = TestCa::new("assets").unwrap();
    let (server, assets) = serve(&ca, |_| {}).await;
    let cache = tempfile::tempdir().unwrap();
    let first = assets::fetch_components(&assets, &config(cache.path(), &ca))
        .await
        .unwrap();
    assert_eq!((first.fetched, first.cached), (13, 0));
    assert_eq!(server.requests(), 13);
    let core = std::fs::read_to_string(data().join("components/core-components.yaml")).unwrap();
    assert_eq!(first.files[1].components, core);
    assert_eq!(first.files[1].origin, assets[1].components_uri);
    assert!(first.files[0].metadata.is_none());
    assert!(
        first.files[6]
            .metadata
            .as_ref()
            .unwrap()
            .1
            .contains("releaseSeries")
    );
    // Named by digest: 13 URIs, fewer distinct contents (the CAPI metadata.yaml is one file).
    let (files, _) = stack("");
    let distinct: std::collections::HashSet<&Vec<u8>> = files.values().collect();
    let blobs = std::fs::read_dir(cache.path().join("sha256"))
        .unwrap()
        .count();
    assert_eq!(blobs, distinct.len());
    assert!(blobs < 13);

    server.stop();
    let second = assets::fetch_components(&assets, &config(cache.path(), &ca))
        .await
        .unwrap();
    assert_eq!((second.fetched, second.cached), (0, 13));
    assert_eq!(second.files, first.files);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_and_a_body_that_is_not_yaml_are_named_together_and_not_cached() {
    let ca = TestCa::new("assets").unwrap();
    let (server, assets) = serve(&ca, |files| {
        files.remove("/cluster-api/v1.13.5/core-components.yaml");
        files.insert(
            "/infrastructure-snow/v0.3.3/capas-infrastructure-components.yaml".into(),
            b"<html><body>Access denied</body></html>\n".to_vec(),
        );
    })
    .await;
    let cache = tempfile::tempdir().unwrap();
    let err = assets::fetch_components(&assets, &config(cache.path(), &ca))
        .await
        .unwrap_err();
    let AssetsError::Fetch(failures) = &err else {
        panic!("{err}")
    };
    assert_eq!(failures.len(), 2, "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "the cluster-api v1.13.5+abcdef1 components ({}/cluster-api/v1.13.5/core-components.yaml): the server answered 404 Not Found",
            server.base
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the infrastructure-snow v0.3.3+abcdef1 components ({}/infrastructure-snow/v0.3.3/capas-infrastructure-components.yaml): the body is not a YAML manifest",
            server.base
        )),
        "{text}"
    );
    // The good files are cached, the bad ones are not: a re-run asks for exactly those two.
    let before = server.requests();
    let again = assets::fetch_components(&assets, &config(cache.path(), &ca)).await;
    assert!(again.is_err());
    assert_eq!(server.requests() - before, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_another_ca_is_refused() {
    let ca = TestCa::new("assets").unwrap();
    let (_server, assets) = serve(&ca, |_| {}).await;
    let other = TestCa::new("someone else").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let err = assets::fetch_components(&assets[..1], &config(cache.path(), &other))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the cert-manager v1.20.2+abcdef1 components (https://"),
        "{err}"
    );
    assert!(err.contains("certificate"), "{err}");
    assert_eq!(
        std::fs::read_dir(cache.path().join("sha256"))
            .unwrap()
            .count(),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_meets_the_deadline_and_plain_http_is_refused() {
    let ip = loopback_ip();
    let _hole = BlackHole::start(ip, 8443).await.unwrap();
    let ca = TestCa::new("assets").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (_, mut assets) = stack(&format!("https://{ip}:8443"));
    assets.truncate(2);
    assets[1].components_uri = format!("http://{ip}:8443/core-components.yaml");
    let config = FetchConfig {
        deadline: Duration::from_secs(1),
        ..config(cache.path(), &ca)
    };
    let err = assets::fetch_components(&assets, &config)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the cert-manager v1.20.2+abcdef1 components")
            && err.contains("no complete answer within the 1 s deadline"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "the cluster-api v1.13.5+abcdef1 components (http://{ip}:8443/core-components.yaml)"
        )),
        "{err}"
    );
}

/// The release site stand-in, its EKS-D manifests the reference one.
async fn release_server(ca: &TestCa) -> FileServer {
    let eksd = std::fs::read(data().join("eksd/kubernetes-1-21-eks-4.yaml")).unwrap();
    release_site::start(loopback_ip(), ca, eksd).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_release_with_snow_is_taken_and_a_second_run_offline_reads_the_cache() {
    let ca = TestCa::new("release").unwrap();
    let server = release_server(&ca).await;
    let cache = tempfile::tempdir().unwrap();
    let url = format!("{}{}", server.base, release_site::RELEASE_MANIFEST_PATH);
    let first = assets::fetch_release(&url, Some("1.31"), &config(cache.path(), &ca))
        .await
        .unwrap();
    // v0.31.0 is past latestVersion; v0.30.0 has no Snow section: v0.29.1.
    assert_eq!(first.version, release_site::SNOW_RELEASE);
    assert_eq!(
        first.bundles_url,
        format!("{}/releases/bundles/29/manifest.yaml", server.base)
    );
    assert_eq!(first.eksd.len(), 1, "only Kubernetes 1.31's EKS-D manifest");
    assert!(first.eksd[0].0.ends_with("kubernetes-1-31-eks-47.yaml"));
    assert!(first.stale.is_none());
    // The Release manifest, two Bundles and one EKS-D manifest.
    assert_eq!((first.fetched, server.requests()), (4, 4));

    let any = assets::fetch_release(&url, None, &config(cache.path(), &ca))
        .await
        .unwrap();
    assert_eq!(any.version, "v0.29.1");
    assert_eq!(
        any.eksd.len(),
        7,
        "one EKS-D manifest per Snow Kubernetes version"
    );

    // Offline: the Release manifest from the cache, said so; the rest from the cache.
    server.stop();
    let offline = assets::fetch_release(&url, Some("1.31"), &config(cache.path(), &ca))
        .await
        .unwrap();
    assert_eq!((offline.version.as_str(), offline.fetched), ("v0.29.1", 0));
    assert_eq!(offline.bundles, first.bundles);
    assert!(offline.stale.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_release_with_snow_for_the_version_and_an_unreachable_manifest_are_named() {
    let ca = TestCa::new("release").unwrap();
    let server = release_server(&ca).await;
    let cache = tempfile::tempdir().unwrap();
    let url = format!("{}{}", server.base, release_site::RELEASE_MANIFEST_PATH);
    let err = assets::fetch_release(&url, Some("1.19"), &config(cache.path(), &ca))
        .await
        .unwrap_err();
    // The newest release with a Snow section comes with the error, for a caller that reports
    // the version missing (validate), and the message names its versions.
    let assets::AssetsError::NoSnowRelease {
        newest: Some(newest),
        snow_versions,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(newest.version, release_site::SNOW_RELEASE);
    assert!(newest.bundles.contains("kubeVersion: '1.31'"));
    assert_eq!(snow_versions.len(), 7, "{snow_versions:?}");
    let err = err.to_string();
    assert!(
        err.contains(&url)
            && err.contains("none of the 2 newest releases (v0.30.0, v0.29.1) has a Snow section for Kubernetes 1.19 (the newest with one, v0.29.1, has 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)"),
        "{err}"
    );
    let missing = format!("{}/nothing.yaml", server.base);
    let err = assets::fetch_release(&missing, None, &config(cache.path(), &ca))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&missing) && err.contains("404") && err.contains("not in the cache"),
        "{err}"
    );
}

/// Flux's install manifest: the real one Flux's kustomization builds (capi-render's fixture).
fn flux_install_yaml() -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../capi-render/tests/data/flux/install.yaml"),
    )
    .unwrap()
}

/// Flux's install manifest of a bundle with Flux `version`, published under `releases`.
fn flux_asset(version: &str, releases: &str) -> ComponentAssets {
    let bundle = snow_api::release::VersionsBundle {
        kube_version: "1.33".into(),
        flux: Some(snow_api::release::FluxBundle {
            version: version.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    snow_api::release::flux_install_asset(&bundle, releases)
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flux_install_manifest_is_fetched_into_the_cache_archived_and_read_back() {
    let ca = TestCa::new("flux releases").unwrap();
    let install = flux_install_yaml();
    let files = HashMap::from([
        ("/flux/v2.8.8/install.yaml".to_owned(), install.clone()),
        // What GitHub answers for a missing asset through some proxies: YAML, not objects.
        (
            "/bad/v2.8.8/install.yaml".to_owned(),
            b"{\"error\": \"Not Found\"}\n".to_vec(),
        ),
    ]);
    let server = FileServer::start(loopback_ip(), &ca, files).await.unwrap();
    let flux = flux_asset("v2.8.8+abcdef1", &format!("{}/flux", server.base));
    assert_eq!(
        flux.components_uri,
        format!("{}/flux/v2.8.8/install.yaml", server.base)
    );
    let cache = tempfile::tempdir().unwrap();
    let first = assets::fetch_components(std::slice::from_ref(&flux), &config(cache.path(), &ca))
        .await
        .unwrap();
    assert_eq!((first.fetched, first.cached), (1, 0));
    assert_eq!(first.files[0].components.as_bytes(), install);
    assert_eq!(first.files[0].metadata, None);

    let bad = flux_asset("v2.8.8+abcdef1", &format!("{}/bad", server.base));
    let err = assets::fetch_components(std::slice::from_ref(&bad), &config(cache.path(), &ca))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "the flux v2.8.8+abcdef1 install manifest ({}/bad/v2.8.8/install.yaml): the body is not Kubernetes objects: document(s) 1 have no apiVersion or kind",
            server.base
        )),
        "{err}"
    );
    assert_eq!(server.requests(), 2);

    // The server gone: the good one from the cache, the refused one was not cached.
    server.stop();
    let second = assets::fetch_components(std::slice::from_ref(&flux), &config(cache.path(), &ca))
        .await
        .unwrap();
    assert_eq!((second.fetched, second.cached), (0, 1));
    assert_eq!(second.files, first.files);
    let again =
        assets::fetch_components(std::slice::from_ref(&bad), &config(cache.path(), &ca)).await;
    assert!(again.is_err());

    // Into the archive as `download artifacts` stores it, and read back.
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("artifacts.tar");
    let download = snow_images::DownloadConfig::new(
        output.clone(),
        assets::archive_files(std::slice::from_ref(&flux), &second.files),
    );
    let report =
        snow_images::download_images(&[], &download, Arc::new(snow_images::NoProgress)).await;
    assert!(report.error.is_none(), "{report}");
    let archive = snow_images::Archive::open(&output).unwrap();
    let stored = archive
        .file("components/flux/v2.8.8+abcdef1/install.yaml")
        .unwrap()
        .unwrap();
    assert_eq!(stored, install);
    let read = assets::from_archive(&archive, std::slice::from_ref(&flux)).unwrap();
    assert_eq!(read[0].components, first.files[0].components);
    assert!(
        read[0]
            .origin
            .ends_with(":snowctl/manifests/components/flux/v2.8.8+abcdef1/install.yaml"),
        "{}",
        read[0].origin
    );
    let other = flux_asset("v2.9.0", snow_api::release::FLUX_RELEASES);
    let err = assets::from_archive(&archive, &[other])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the flux v2.9.0 install manifest (https://github.com/fluxcd/flux2/releases/download/v2.9.0/install.yaml): no snowctl/manifests/components/flux/v2.9.0/install.yaml"),
        "{err}"
    );
}

#[test]
fn a_flux_install_manifest_carried_by_hand_is_cached_under_its_uri_when_it_is_objects() {
    let cache = tempfile::tempdir().unwrap();
    let flux = flux_asset("v2.8.8+abcdef1", snow_api::release::FLUX_RELEASES);
    let err = assets::cache_file(cache.path(), &flux, "kind: Namespace\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("document(s) 1 have no apiVersion or kind"),
        "{err}"
    );
    let install = String::from_utf8(flux_install_yaml()).unwrap();
    assets::cache_file(cache.path(), &flux, &install).unwrap();
    // No server for github.com here: the fetch reads the cache only (a loopback-only test).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("unused").unwrap();
    let got = rt
        .block_on(assets::fetch_components(
            std::slice::from_ref(&flux),
            &config(cache.path(), &ca),
        ))
        .unwrap();
    assert_eq!((got.fetched, got.cached), (0, 1));
    assert_eq!(got.files[0].components, install);
}
