//! The provider stack from a components directory and from an archive that cannot be used.

use snow_api::release::ReleaseInputs;
use snow_lifecycle::init::{self, components::STACK};
use snow_provision::components::{
    ComponentsError, ComponentsOptions, ComponentsSource, components,
};
use snow_test_kube::components::{SHIPPED, TEST_VALUES};
use std::path::Path;

/// The shipped manifests laid out like clusterctl's local repository, as the 1.33 bundle names
/// them.
fn components_dir(root: &Path, inputs: &ReleaseInputs) {
    let bundle = init::source::versions_bundle(&inputs.bundles, Some("1.33")).unwrap();
    for wanted in init::source::wanted(bundle).unwrap() {
        let shipped = SHIPPED.iter().find(|s| s.label == wanted.label).unwrap();
        let mut files = vec![(
            wanted.path(&wanted.components_uri),
            std::fs::read(shipped.path()).unwrap(),
        )];
        if let Some(uri) = &wanted.metadata_uri {
            files.push((wanted.path(uri), shipped.metadata_bytes().unwrap()));
        }
        for (path, bytes) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
}

fn options<'a>(inputs: &'a ReleaseInputs, source: ComponentsSource<'a>) -> ComponentsOptions<'a> {
    ComponentsOptions {
        inputs,
        kubernetes_version: Some("1.33"),
        secrets: None,
        environment: TEST_VALUES
            .iter()
            .chain(&[("CAPI_DIAGNOSTICS_ADDRESS", ":18443")])
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        source,
    }
}

#[tokio::test]
async fn the_stack_comes_from_a_directory_in_install_order_and_a_bad_source_is_input() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("components");
    components_dir(&root, &inputs);

    let made = components(options(&inputs, ComponentsSource::Dir(&root)))
        .await
        .unwrap();
    let order: Vec<_> = made.objects.iter().map(|c| c.component).collect();
    assert_eq!(order, STACK);
    assert!(made.objects.iter().all(|c| !c.objects.is_empty()));
    assert!(made.fetched.is_none());
    // The environment's values are substituted into the manifests.
    let text = serde_json::to_string(&made.objects.iter().map(|c| &c.objects).collect::<Vec<_>>())
        .unwrap();
    assert!(text.contains("--diagnostics-address=:18443"));

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = components(options(&inputs, ComponentsSource::Dir(&empty)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ComponentsError::Lifecycle(_)) && err.is_input(),
        "{err}"
    );

    let not_archive = dir.path().join("artifacts.tar");
    std::fs::write(&not_archive, b"not a tar").unwrap();
    let err = components(options(&inputs, ComponentsSource::Archive(&not_archive)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ComponentsError::Archive(_)) && err.is_input(),
        "{err}"
    );
}
