//! Hostile archives and registry answers (issue 25): each is read in bounded time or refused
//! with an error that names the entry, and nothing panics. Archives are written here by hand
//! (`snow_test_devices::layout`), registries are Debian's `docker-registry`, and the one that
//! answers as AWS ECR is a front of it that drops `Location` from manifest PUT answers.

use snow_images::{
    Archive, ArchiveError, CopyConfig, Credentials, ImageStatus, NoProgress, TargetRegistry,
    import_archive, plan_import,
};
use snow_test_devices::{
    layout::{INDEX, Layout},
    registry::{self as support, NoLocationFront, Registry, Tls},
};
use std::{path::Path, process::Command, sync::Arc, time::Duration};

/// How long an open may take here before the test calls it endless: far above what a fixed
/// reader needs (well under a second), far below what the defects took (150 s, or never).
const OPEN_DEADLINE: Duration = Duration::from_secs(60);

/// Opens `path` on its own thread: the result, or `None` when it is still running at the
/// deadline (the thread is left behind; the test fails).
fn open_within_deadline(path: &Path) -> Option<Result<Archive, ArchiveError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_owned();
    std::thread::spawn(move || {
        let _ = tx.send(Archive::open(&path));
    });
    rx.recv_timeout(OPEN_DEADLINE).ok()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn import_config(host: &str, tls: Option<&Tls>) -> CopyConfig {
    CopyConfig {
        target: TargetRegistry::parse(&format!("{host}/site")).unwrap(),
        source_registry: None,
        all_platforms: false,
        concurrency: 2,
        ca_certs_pem: tls
            .map(|t| vec![t.ca_pem.clone().into_bytes()])
            .unwrap_or_default(),
        plain_http: if tls.is_some() {
            Vec::new()
        } else {
            vec![host.to_owned()]
        },
        credentials: Credentials::default(),
    }
}

/// A layout with one multi-platform image named `name`.
fn multi_platform(dir: &Path, name: &str) -> std::path::PathBuf {
    let mut layout = Layout::new(dir);
    let amd = layout.image("amd64", &support::random_bytes(4096));
    let arm = layout.image("arm64", &support::random_bytes(4096));
    let index = layout.index(vec![
        amd.descriptor(Some(("linux", "amd64"))),
        arm.descriptor(Some(("linux", "arm64"))),
    ]);
    layout.name(&index, name);
    layout.finish()
}

#[test]
fn a_docker_save_archive_listing_one_layer_20000_times_hashes_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let layer = support::random_bytes(8 << 20);
    std::fs::write(dir.path().join("layer.tar"), &layer).unwrap();
    // No diff_ids: each layer's digest has to come from its bytes.
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"os":"linux","architecture":"amd64","rootfs":{"type":"layers"}}"#,
    )
    .unwrap();
    let layers = vec!["layer.tar"; 20_000];
    let manifest = serde_json::json!([{
        "Config": "config.json",
        "RepoTags": ["public.ecr.aws/a/many-layers:v1"],
        "Layers": layers,
    }]);
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    let archive = open_within_deadline(dir.path())
        .expect("listing took past the deadline: the layer is hashed once per listing")
        .unwrap();
    let image = &archive.images()[0];
    let plan = plan_import(&archive, &[], &import_config("127.0.0.1:1", None)).unwrap();
    assert_eq!(plan.len(), 1);
    let listing = archive.listing();
    assert!(listing.contains(&image.digest), "{listing}");
    // The manifest made for it lists all 20,000 layers (about 150 bytes each).
    assert!(image.size > 20_000 * 100, "{}", image.size);
}

#[test]
fn more_docker_save_layers_than_the_bound_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("layer.tar"), b"x").unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"rootfs":{"diff_ids":[]}}"#,
    )
    .unwrap();
    let layers = vec!["layer.tar"; snow_images::limits::MAX_DOCKER_LAYERS + 1];
    let manifest = serde_json::json!([{"Config": "config.json", "Layers": layers}]);
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    let error = Archive::open(dir.path()).unwrap_err().to_string();
    assert!(
        error.contains("manifest.json") && error.contains("more than 100000 layers"),
        "{error}"
    );
}

#[test]
fn directory_links_in_loops_out_of_it_or_to_nothing_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = multi_platform(&dir.path().join("layout"), "public.ecr.aws/a/b:v1");
    // A link to a file inside is followed, as `tar -x` of an old `docker save` archive makes.
    std::os::unix::fs::symlink("index.json", root.join("index-link.json")).unwrap();
    assert_eq!(Archive::open(&root).unwrap().images().len(), 1);

    // Twelve links to `.`: a loop, refused at once and named.
    let loops = dir.path().join("loops");
    multi_platform(&loops, "public.ecr.aws/a/b:v1");
    for i in 0..12 {
        std::os::unix::fs::symlink(".", loops.join(format!("loop{i}"))).unwrap();
    }
    let error = open_within_deadline(&loops)
        .expect("the walk of a directory with links to `.` did not end")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("loop") && error.contains("a symbolic link to ."),
        "{error}"
    );
    assert!(error.contains(&loops.display().to_string()), "{error}");

    // A dangling link is named, not "No such file or directory" for the directory.
    let dangling = dir.path().join("dangling");
    multi_platform(&dangling, "public.ecr.aws/a/b:v1");
    std::os::unix::fs::symlink("gone", dangling.join("blobs/sha256/ghost")).unwrap();
    let error = Archive::open(&dangling).unwrap_err().to_string();
    assert!(
        error.contains("blobs/sha256/ghost: a symbolic link to gone, which does not exist"),
        "{error}"
    );

    // A link out of the directory is not followed.
    let outside = dir.path().join("outside");
    multi_platform(&outside, "public.ecr.aws/a/b:v1");
    std::fs::write(dir.path().join("secret.txt"), "not part of it").unwrap();
    std::os::unix::fs::symlink("../secret.txt", outside.join("escape")).unwrap();
    let error = Archive::open(&outside).unwrap_err().to_string();
    assert!(
        error.contains("escape: a symbolic link to ../secret.txt, outside"),
        "{error}"
    );
}

#[test]
fn a_truncated_tar_says_where_it_ends_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let root = multi_platform(&dir.path().join("layout"), "public.ecr.aws/a/b:v1");
    let file = dir.path().join("a.tar");
    assert!(
        Command::new("tar")
            .arg("-cf")
            .arg(&file)
            .arg("-C")
            .arg(&root)
            .args(["oci-layout", "blobs", "index.json"])
            .status()
            .unwrap()
            .success()
    );
    let bytes = std::fs::read(&file).unwrap();
    // Cut in the first blob: index.json, at the end, is lost.
    let cut = dir.path().join("cut.tar");
    // oci-layout (2 blocks), blobs/, blobs/sha256/, then the first blob's header: 1 byte of its data.
    std::fs::write(&cut, &bytes[..2561]).unwrap();
    let error = Archive::open(&cut).unwrap_err();
    let ArchiveError::Truncated { entry, .. } = &error else {
        panic!("{error}")
    };
    assert!(entry.starts_with("blobs/sha256/"), "{entry}");
    let text = error.to_string();
    assert!(
        text.contains("is incomplete: the file ends at byte 2561, inside blobs/sha256/")
            && text.contains("holds neither index.json nor manifest.json")
            && text.contains("Copy it again in full")
            && !text.contains("is not in what is left"),
        "{text}"
    );
}

#[test]
fn names_with_control_characters_are_listed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = multi_platform(
        &dir.path().join("layout"),
        "evil\u{1b}]0;owned\u{7}\u{1b}[2J\nfake-line\u{9b}31m:v1",
    );
    let archive = Archive::open(&root).unwrap();
    let listing = archive.listing();
    assert!(
        !listing.chars().any(|c| c.is_control() && c != '\n') && listing.lines().count() == 1,
        "{listing:?}"
    );
    assert!(
        listing.contains("evil\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\nfake-line\\u{9b}31m:v1 sha256:"),
        "{listing}"
    );
}

#[test]
fn nested_indexes_are_copied_whole_and_too_deep_ones_refused() {
    let registry = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let mut layout = Layout::new(&dir.path().join("layout"));
    // An index of an index of two images.
    let amd = layout.image("amd64", &support::random_bytes(1024));
    let arm = layout.image("arm64", &support::random_bytes(1024));
    let inner = layout.index(vec![
        amd.descriptor(Some(("linux", "amd64"))),
        arm.descriptor(Some(("linux", "arm64"))),
    ]);
    let outer = layout.index(vec![inner.descriptor(None)]);
    layout.name(&outer, "public.ecr.aws/a/nested:v1");
    // An index of an index … 200 deep.
    let mut deep = layout.image("amd64", &support::random_bytes(1024));
    for _ in 0..200 {
        deep = layout.index(vec![deep.descriptor(None)]);
    }
    layout.name(&deep, "public.ecr.aws/a/deep:v1");
    let root = layout.finish();

    let archive = Archive::open(&root).unwrap();
    let config = import_config(&registry.host, None);
    let plan = plan_import(&archive, &[], &config).unwrap();
    let report = rt().block_on(import_archive(
        &archive,
        &plan,
        &config,
        Arc::new(NoProgress),
    ));
    let status = |name: &str| {
        let r = report.images.iter().find(|i| i.copy.image == name).unwrap();
        r.status.clone()
    };
    let deep_status = status("public.ecr.aws/a/deep:v1");
    let ImageStatus::Failed { error } = &deep_status else {
        panic!("{deep_status:?}")
    };
    assert!(
        error.contains("nested 9 deep") && error.contains("at most 8 deep"),
        "{error}"
    );
    assert!(
        matches!(
            status("public.ecr.aws/a/nested:v1"),
            ImageStatus::Copied {
                blobs_copied: 4,
                ..
            }
        ),
        "{report:?}"
    );
    // Every manifest of the tree is in the registry, the tag on the outer index; the deep image
    // is not tagged.
    rt().block_on(async {
        let client = support::client(&[&registry], None);
        let at = |r: &str| format!("{}/site/a/nested{r}", registry.host);
        assert_eq!(support::manifest(&client, &at(":v1")).await.1, outer.digest);
        for m in [&inner, &amd, &arm] {
            let (_, digest) = support::manifest(&client, &at(&format!("@{}", m.digest))).await;
            assert_eq!(digest, m.digest);
        }
        let deep_tag: oci_client::Reference =
            format!("{}/site/a/deep:v1", registry.host).parse().unwrap();
        let pulled = client
            .pull_manifest_raw(
                &deep_tag,
                &oci_client::secrets::RegistryAuth::Anonymous,
                &[INDEX],
            )
            .await;
        assert!(pulled.is_err(), "the deep image was tagged");
    });
}

#[test]
fn a_registry_that_answers_manifest_puts_without_location_gets_a_multi_platform_image() {
    let tls = Tls::generate();
    let registry = Registry::start(None);
    let runtime = rt();
    let front = runtime.block_on(NoLocationFront::start(&registry, &tls));
    let dir = tempfile::tempdir().unwrap();
    let root = multi_platform(dir.path(), "public.ecr.aws/a/multi:v1");
    let archive = Archive::open(&root).unwrap();
    let digest = archive.images()[0].digest.clone();
    let config = import_config(&front.host, Some(&tls));
    let plan = plan_import(&archive, &[], &config).unwrap();
    let report = runtime.block_on(import_archive(
        &archive,
        &plan,
        &config,
        Arc::new(NoProgress),
    ));
    assert!(
        matches!(report.images[0].status, ImageStatus::Copied { .. }),
        "{report:?}"
    );
    // The index is tagged, read straight from the registry behind the front.
    let client = support::client(&[&registry], None);
    let at = format!("{}/site/a/multi:v1", registry.host);
    assert_eq!(runtime.block_on(support::manifest(&client, &at)).1, digest);
}

#[test]
fn the_archive_fuzz_targets_return_on_a_generated_corpus() {
    use snow_images::fuzz::{image_archive, oci_layout, seeds};
    let seeds = seeds();
    let seeds: Vec<&[u8]> = seeds.iter().map(Vec::as_slice).collect();
    let corpus = snow_api::fuzz::mutations(&seeds, 1_500, 0x5eed_0025);
    for input in &corpus {
        image_archive(input);
        oci_layout(input);
    }
}
