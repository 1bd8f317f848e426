//! Flux's install manifest from each source: fetched over HTTPS from a loopback server standing
//! for Flux's releases (a test CA) into the cache, read from the cache with the server gone,
//! from an archive `download artifacts` writes, and carried by hand into the cache; a body that
//! is Kubernetes objects but not Flux's install is named with its URI.

use snow_api::release::{FLUX_RELEASES, ReleaseInputs, VersionsBundle, flux_install_asset};
use snow_images::assets::{self, FetchConfig};
use snow_provision::flux_manifest::{FluxManifest, FluxManifestError};
use snow_test_devices::{FileServer, TestCa, loopback_ip};
use std::{collections::HashMap, path::PathBuf, sync::Arc, time::Duration};

fn bundle() -> VersionsBundle {
    let inputs = ReleaseInputs::embedded().unwrap();
    inputs.bundles.spec.versions_bundles[0].clone()
}

/// The real install manifest Flux's kustomization builds (capi-render's fixture).
fn install_yaml() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../capi-render/tests/data/flux/install.yaml");
    std::fs::read_to_string(path).unwrap()
}

fn config(cache: &std::path::Path, ca: &TestCa) -> FetchConfig {
    FetchConfig {
        ca_certs_pem: vec![ca.pem().as_bytes().to_vec()],
        deadline: Duration::from_secs(20),
        ..FetchConfig::new(cache.to_path_buf())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetched_then_cached_then_archived_each_gives_the_checked_manifest() {
    let ca = TestCa::new("flux releases").unwrap();
    let install = install_yaml();
    let tag = bundle().flux().unwrap().release_tag().unwrap();
    let files = HashMap::from([
        (
            format!("/flux/{tag}/install.yaml"),
            install.clone().into_bytes(),
        ),
        (
            format!("/other/{tag}/install.yaml"),
            b"apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n".to_vec(),
        ),
    ]);
    let server = FileServer::start(loopback_ip(), &ca, files).await.unwrap();
    let cache = tempfile::tempdir().unwrap();
    let source = |releases: &str| FluxManifest::Fetch {
        config: config(cache.path(), &ca),
        releases: format!("{}/{releases}", server.base),
    };
    let uri = format!("{}/flux/{tag}/install.yaml", server.base);
    let got = source("flux").resolve(&bundle()).await.unwrap();
    assert_eq!(
        (got.origin.as_str(), got.fetched),
        (uri.as_str(), Some((1, 0)))
    );
    assert_eq!(got.text, install);

    // Objects, so cached, but no Flux controller in them: named with the URI.
    let err = source("other").resolve(&bundle()).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}/other/{tag}/install.yaml: Flux's install manifest has no container of source-controller", server.base)),
        "{text}"
    );
    assert!(matches!(err, FluxManifestError::Invalid { .. }) && err.is_input());

    server.stop();
    let again = source("flux").resolve(&bundle()).await.unwrap();
    assert_eq!(
        (again.fetched, again.text.as_str()),
        (Some((0, 1)), install.as_str())
    );

    // The archive `download artifacts` writes holds it, and gives it back.
    let asset = flux_install_asset(&bundle(), FLUX_RELEASES)
        .unwrap()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("artifacts.tar");
    let files = assets::archive_files(
        std::slice::from_ref(&asset),
        &[snow_api::release::ComponentFiles {
            origin: asset.components_uri.clone(),
            components: install.clone(),
            metadata: None,
        }],
    );
    let download = snow_images::DownloadConfig::new(output.clone(), files);
    let report =
        snow_images::download_images(&[], &download, Arc::new(snow_images::NoProgress)).await;
    assert!(report.error.is_none(), "{report}");
    let archive = snow_images::Archive::open(&output).unwrap();
    let got = FluxManifest::Archive(&archive)
        .resolve(&bundle())
        .await
        .unwrap();
    assert_eq!(got.text, install);
    assert!(
        got.origin.ends_with(&format!(
            ":snowctl/manifests/components/flux/{}/install.yaml",
            bundle().flux().unwrap().version
        )),
        "{}",
        got.origin
    );

    // Another bundle's Flux is not in it: the archive member is named.
    let mut other = bundle();
    other.flux.as_mut().unwrap().version = "v2.9.1".into();
    let err = FluxManifest::Archive(&archive)
        .resolve(&other)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the flux v2.9.1 install manifest (https://github.com/fluxcd/flux2/releases/download/v2.9.1/install.yaml): no snowctl/manifests/components/flux/v2.9.1/install.yaml"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_carried_into_the_cache_serves_the_published_uri_offline() {
    let cache = tempfile::tempdir().unwrap();
    let asset = flux_install_asset(&bundle(), FLUX_RELEASES)
        .unwrap()
        .unwrap();
    assets::cache_file(cache.path(), &asset, &install_yaml()).unwrap();
    let ca = TestCa::new("unused").unwrap();
    // The published URI (github.com) is never asked: the cache answers.
    let got = FluxManifest::fetch(config(cache.path(), &ca))
        .resolve(&bundle())
        .await
        .unwrap();
    assert_eq!(got.fetched, Some((0, 1)));
    assert_eq!(got.origin, asset.components_uri);
}
