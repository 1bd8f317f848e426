//! The archive of a disconnected site, end to end: two Debian `docker-registry` instances (the
//! "public" source over plain HTTP, the site registry over TLS), the source stopped before every
//! import (so the import is offline), and skopeo as the independent reader and writer both ways.

use snow_test_devices::registry as support;

use snow_images::{
    Archive, ArchiveError, ArchiveFile, ArchiveFormat, CopyConfig, Credentials, DownloadConfig,
    DownloadError, ImageStatus, NoProgress, Platforms, Progress, TargetRegistry, download_images,
    import_archive, partial_path, plan_download, plan_import,
};
use snow_test_devices::small_disk::SmallDisk;
use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};
use support::{Registry, Tls, skopeo};

const PREFIX: &str = "public.ecr.aws";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn uri(p: &support::Pushed) -> String {
    format!("{PREFIX}/{}:{}", p.path, p.tag)
}

fn download_config(source: &Registry, output: &Path) -> DownloadConfig {
    DownloadConfig {
        output: output.to_owned(),
        source_registry: Some(source.host.clone()),
        platforms: Platforms::default(),
        concurrency: 3,
        ca_certs_pem: Vec::new(),
        plain_http: vec![source.host.clone()],
        credentials: Credentials::default(),
        files: vec![ArchiveFile {
            path: "bundles/bundle-release.yaml".into(),
            content: b"kind: Bundles\n".to_vec(),
        }],
        from_archives: Vec::new(),
    }
}

fn import_config(target: &Registry, tls: &Tls, namespace: &str) -> CopyConfig {
    CopyConfig {
        target: TargetRegistry::parse(&format!("{}/{namespace}", target.host)).unwrap(),
        source_registry: None,
        all_platforms: false,
        concurrency: 3,
        ca_certs_pem: vec![tls.ca_pem.clone().into_bytes()],
        plain_http: Vec::new(),
        credentials: Credentials::default(),
    }
}

/// A directory skopeo reads CA certificates from (`*.crt`), for `--dest-cert-dir`/`--cert-dir`.
fn cert_dir(tls: &Tls, dir: &Path) -> String {
    let certs = dir.join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::write(certs.join("ca.crt"), &tls.ca_pem).unwrap();
    certs.to_str().unwrap().to_owned()
}

/// The digest of `skopeo inspect --raw` output (without the newline skopeo may add).
fn raw_digest(raw: &str) -> String {
    support::sha256(raw.strip_suffix('\n').unwrap_or(raw).as_bytes())
}

/// (name, size) of every entry, from GNU tar (another independent reader).
fn tar_list(path: &Path) -> Vec<(String, u64)> {
    let out = Command::new("tar").arg("-tvf").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[5].to_owned(), f[2].parse().unwrap())
        })
        .collect()
}

struct Images {
    a: support::Pushed,
    b: support::Pushed,
    multi: support::Pushed,
}

async fn push_three(source: &Registry) -> Images {
    let src = support::client(&[source], None);
    let shared = vec![support::random_bytes(64 * 1024)];
    let a = support::push_image(
        &src,
        source,
        "eks-distro/kubernetes/pause",
        "v1",
        2,
        32 * 1024,
        &shared,
    )
    .await;
    let b = support::push_image(
        &src,
        source,
        "aws/cluster-api-provider-aws-snow/manager",
        "v0.3.3",
        1,
        32 * 1024,
        &shared,
    )
    .await;
    let multi =
        support::push_multi_platform(&src, source, "kube-vip/kube-vip", "v1.2.0", 48 * 1024).await;
    Images { a, b, multi }
}

#[test]
fn download_then_offline_import_keeps_every_digest_and_skopeo_reads_the_archive() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("artifacts.tar");
    let rt = rt();
    let images = rt.block_on(push_three(&source));
    let Images { a, b, multi } = &images;
    let uris = [uri(a), uri(b), uri(multi)];
    let config = download_config(&source, &file);
    let plan = plan_download(&uris, config.source_registry.as_deref()).unwrap();
    let report = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert!(report.error.is_none(), "{report:#?}");
    assert_eq!(report.report.failed(), 0, "{report:#?}");
    let summary = report.archive.clone().unwrap();
    assert!(file.exists() && !partial_path(&file).exists());

    // Blobs shared between images are stored once; the archive is the unique blobs plus tar
    // headers and the small files.
    // a: config + shared + 2 layers + manifest; b: config + 1 layer + manifest (shared again);
    // multi (amd64 only): config + layer + manifest + the rewritten index.
    assert_eq!(summary.blobs, 5 + 3 + 4, "{summary:#?}");
    let entries = tar_list(&file);
    let blobs: Vec<&(String, u64)> = entries
        .iter()
        .filter(|(n, _)| n.starts_with("blobs/sha256/"))
        .collect();
    assert_eq!(blobs.len(), summary.blobs);
    assert_eq!(
        blobs.iter().map(|(_, s)| s).sum::<u64>(),
        summary.blob_bytes
    );
    let overhead = summary.bytes - summary.blob_bytes;
    assert!(
        overhead < 512 * (entries.len() as u64 * 2 + 2) + 8192,
        "{overhead} bytes beyond the blobs: {summary:#?}"
    );
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[0], "oci-layout");
    assert_eq!(names[names.len() - 1], "index.json");
    assert!(names.contains(&"snowctl/manifests/bundles/bundle-release.yaml"));

    // The archive reads back: the names, the digests, the extra file.
    let archive = Archive::open(&file).unwrap();
    assert_eq!(archive.format(), ArchiveFormat::OciLayout);
    let listed: Vec<(String, String)> = archive
        .images()
        .iter()
        .map(|i| (i.name.clone().unwrap(), i.digest.clone()))
        .collect();
    assert!(listed.contains(&(uri(a), a.digest.clone())), "{listed:?}");
    assert!(listed.contains(&(uri(b), b.digest.clone())), "{listed:?}");
    assert_eq!(archive.files(), ["bundles/bundle-release.yaml"]);
    assert_eq!(
        archive
            .file("bundles/bundle-release.yaml")
            .unwrap()
            .unwrap(),
        b"kind: Bundles\n"
    );

    // skopeo reads it: as an oci-archive, and unpacked as an oci: layout.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        &format!("oci-archive:{}:{}", file.display(), uri(a)),
    ]);
    assert_eq!(raw_digest(&raw), a.digest);
    let unpacked = dir.path().join("layout");
    std::fs::create_dir(&unpacked).unwrap();
    let status = Command::new("tar")
        .arg("-xf")
        .arg(&file)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());
    let skopeo_dest = format!("docker://{}/by-skopeo/{}:{}", target.host, b.path, b.tag);
    skopeo(&[
        "copy",
        "-q",
        "--preserve-digests",
        "--dest-cert-dir",
        &cert_dir(&tls, dir.path()),
        &format!("oci:{}:{}", unpacked.display(), uri(b)),
        &skopeo_dest,
    ]);

    // The source goes away: the import needs nothing but the archive.
    drop(source);
    let import = import_config(&target, &tls, "site");
    let plan = plan_import(&archive, &[], &import).unwrap();
    assert_eq!(plan.len(), 3);
    let report = rt.block_on(import_archive(
        &archive,
        &plan,
        &import,
        Arc::new(NoProgress),
    ));
    assert_eq!(report.failed(), 0, "{report:#?}");
    assert_eq!(report.copied(), 3);
    rt.block_on(async {
        let dst = support::client(&[], Some(&tls.ca_pem));
        for p in [a, b] {
            let (_, digest) =
                support::manifest(&dst, &format!("{}/site/{}:{}", target.host, p.path, p.tag))
                    .await;
            assert_eq!(digest, p.digest, "{}", p.path);
            for layer in &p.layers {
                assert!(support::has_blob(&dst, &target, &format!("site/{}", p.path), layer).await);
            }
        }
        // skopeo's copy of b (from the unpacked layout) is the same image.
        let (_, digest) = support::manifest(
            &dst,
            &format!("{}/by-skopeo/{}:{}", target.host, b.path, b.tag),
        )
        .await;
        assert_eq!(digest, b.digest);
        // The index was reduced to linux/amd64 at download; that index is what is tagged.
        let (body, digest) = support::manifest(
            &dst,
            &format!("{}/site/kube-vip/kube-vip:v1.2.0", target.host),
        )
        .await;
        assert_eq!(digest, support::sha256(&body));
        let multi_result = report
            .images
            .iter()
            .find(|i| i.copy.image == uri(multi))
            .unwrap();
        assert_eq!(Some(digest.as_str()), multi_result.digest.as_deref());
        let index: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(index["manifests"].as_array().unwrap().len(), 1);
        assert_eq!(
            index["manifests"][0]["digest"],
            multi.platforms[0].1.as_str()
        );
        let arm64_layer = &multi.platforms[1].2[0];
        assert!(!support::has_blob(&dst, &target, "site/kube-vip/kube-vip", arm64_layer).await);
    });

    // A re-run finds every tag in place and sends nothing.
    let again = rt.block_on(import_archive(
        &archive,
        &plan,
        &import,
        Arc::new(NoProgress),
    ));
    assert_eq!(again.up_to_date(), 3, "{again:#?}");
    assert_eq!(again.bytes(), 0);
}

#[test]
fn skopeo_archives_oci_and_docker_save_import_with_the_same_digests() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let images = rt.block_on(push_three(&source));
    let a = &images.a;
    let from = format!("docker://{}/{}:{}", source.host, a.path, a.tag);
    let oci = dir.path().join("skopeo-oci.tar");
    let docker = dir.path().join("skopeo-docker.tar");
    // Without --preserve-digests skopeo would compress the uncompressed layers.
    skopeo(&[
        "copy",
        "-q",
        "--preserve-digests",
        "--src-tls-verify=false",
        &from,
        &format!("oci-archive:{}:{}", oci.display(), uri(a)),
    ]);
    skopeo(&[
        "copy",
        "-q",
        "--src-tls-verify=false",
        &from,
        &format!("docker-archive:{}:{}", docker.display(), uri(a)),
    ]);
    drop(source);

    let import = import_config(&target, &tls, "oci");
    let archive = Archive::open(&oci).unwrap();
    assert_eq!(archive.format(), ArchiveFormat::OciLayout);
    let plan = plan_import(&archive, &[], &import).unwrap();
    let report = rt.block_on(import_archive(
        &archive,
        &plan,
        &import,
        Arc::new(NoProgress),
    ));
    assert_eq!(report.failed(), 0, "{report:#?}");
    let dst = support::client(&[], Some(&tls.ca_pem));
    let (_, digest) = rt.block_on(support::manifest(
        &dst,
        &format!("{}/oci/{}:{}", target.host, a.path, a.tag),
    ));
    assert_eq!(digest, a.digest);

    // docker save keeps the config and the uncompressed layers, not the manifest: the manifest
    // is made anew (Docker schema 2), with the original config and layer digests.
    let import = import_config(&target, &tls, "docker");
    let archive = Archive::open(&docker).unwrap();
    assert_eq!(archive.format(), ArchiveFormat::DockerArchive);
    let plan = plan_import(&archive, &[], &import).unwrap();
    assert_eq!(plan[0].image, uri(a));
    let report = rt.block_on(import_archive(
        &archive,
        &plan,
        &import,
        Arc::new(NoProgress),
    ));
    assert_eq!(report.failed(), 0, "{report:#?}");
    rt.block_on(async {
        let (original, _) =
            support::manifest(&dst, &format!("{}/oci/{}:{}", target.host, a.path, a.tag)).await;
        let original: serde_json::Value = serde_json::from_slice(&original).unwrap();
        let r: oci_client::Reference = format!("{}/docker/{}:{}", target.host, a.path, a.tag)
            .parse()
            .unwrap();
        let (body, _) = dst
            .pull_manifest_raw(
                &r,
                &oci_client::secrets::RegistryAuth::Anonymous,
                &["application/vnd.docker.distribution.manifest.v2+json"],
            )
            .await
            .unwrap();
        let imported: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(imported["config"]["digest"], original["config"]["digest"]);
        let digests = |m: &serde_json::Value| -> Vec<String> {
            m["layers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["digest"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(digests(&imported), digests(&original));
        assert_eq!(digests(&imported), a.layers);
    });
    // skopeo reads back what was imported from the docker archive.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--cert-dir",
        &cert_dir(&tls, dir.path()),
        &format!("docker://{}/docker/{}:{}", target.host, a.path, a.tag),
    ]);
    assert!(
        raw.contains("application/vnd.docker.image.rootfs.diff.tar"),
        "{raw}"
    );
}

/// Flips one byte at `offset`.
fn flip(path: &Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset).unwrap();
    f.write_all_at(&[b[0] ^ 0x5a], offset).unwrap();
}

/// Where an entry's data starts, and its size (by our own tar reading: GNU tar agrees on sizes).
fn entry_offset(path: &Path, name: &str) -> (u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let mut offset = 0usize;
    loop {
        let h = &bytes[offset..offset + 512];
        assert!(h.iter().any(|&b| b != 0), "{name} not found");
        let entry = String::from_utf8_lossy(&h[..100])
            .trim_end_matches('\0')
            .to_owned();
        let size_text = String::from_utf8_lossy(&h[124..135]).into_owned();
        let size = u64::from_str_radix(size_text.trim_matches(['\0', ' ']), 8).unwrap();
        if entry == name {
            return (offset as u64 + 512, size);
        }
        offset += 512 + (size as usize).div_ceil(512) * 512;
    }
}

#[test]
fn corrupt_archives_are_named_with_the_image_and_the_blob_and_nothing_is_tagged() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.tar");
    let rt = rt();
    let images = rt.block_on(push_three(&source));
    let a = &images.a;
    let config = download_config(&source, &file);
    let plan = plan_download(&[uri(a)], config.source_registry.as_deref()).unwrap();
    let report = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert!(report.error.is_none(), "{report:#?}");
    drop(source);
    let good = std::fs::read(&file).unwrap();
    let layer = &a.layers[1];
    let layer_name = format!("blobs/sha256/{}", layer.trim_start_matches("sha256:"));
    let (layer_offset, layer_size) = entry_offset(&file, &layer_name);
    let dst = support::client(&[], Some(&tls.ca_pem));
    let tagged = |ns: &str| {
        let r: oci_client::Reference = format!("{}/{ns}/{}:{}", target.host, a.path, a.tag)
            .parse()
            .unwrap();
        rt.block_on(dst.fetch_manifest_digest(&r, &oci_client::secrets::RegistryAuth::Anonymous))
            .is_ok()
    };
    let import_error = |path: &Path, ns: &str| -> String {
        let import = import_config(&target, &tls, ns);
        let archive = Archive::open(path).unwrap();
        let plan = plan_import(&archive, &[], &import).unwrap();
        let report = rt.block_on(import_archive(
            &archive,
            &plan,
            &import,
            Arc::new(NoProgress),
        ));
        let ImageStatus::Failed { error } = &report.images[0].status else {
            panic!("{report:#?}")
        };
        // As the CLI prints it: the image, then what went wrong.
        format!("{}: {error}", report.images[0].copy.image)
    };

    // A flipped byte in a layer: the digest check fails the upload before it is committed.
    let flipped = dir.path().join("flipped.tar");
    std::fs::write(&flipped, &good).unwrap();
    flip(&flipped, layer_offset + layer_size / 2);
    let error = import_error(&flipped, "flipped");
    assert!(
        error.contains(&uri(a)) && error.contains(layer) && error.contains("corrupt"),
        "{error}"
    );
    assert!(!tagged("flipped"));
    let r: oci_client::Reference = format!("{}/flipped/{}:x", target.host, a.path)
        .parse()
        .unwrap();
    assert!(!rt.block_on(dst.blob_exists(&r, layer)).unwrap());

    // A missing blob (the archive repacked by GNU tar without it).
    let unpacked = dir.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    assert!(
        Command::new("tar")
            .arg("-xf")
            .arg(&file)
            .arg("-C")
            .arg(&unpacked)
            .status()
            .unwrap()
            .success()
    );
    std::fs::remove_file(unpacked.join(&layer_name)).unwrap();
    let missing = dir.path().join("missing.tar");
    assert!(
        Command::new("tar")
            .arg("-cf")
            .arg(&missing)
            .arg("-C")
            .arg(&unpacked)
            .arg(".")
            .status()
            .unwrap()
            .success()
    );
    let error = import_error(&missing, "missing");
    assert!(
        error.contains(&uri(a)) && error.contains(layer) && error.contains("not in the archive"),
        "{error}"
    );
    assert!(!tagged("missing"));

    // Truncated in the middle of the layer: what describes the images is gone with the end.
    let truncated = dir.path().join("truncated.tar");
    std::fs::write(
        &truncated,
        &good[..(layer_offset + layer_size / 2) as usize],
    )
    .unwrap();
    let error = Archive::open(&truncated).unwrap_err();
    let ArchiveError::Truncated { entry, .. } = &error else {
        panic!("{error}")
    };
    assert_eq!(entry, &layer_name);
    assert!(error.to_string().contains("truncated"), "{error}");

    // Not a tar at all, and a compressed one.
    let junk = dir.path().join("junk.tar");
    std::fs::write(&junk, support::random_bytes(4096)).unwrap();
    assert!(matches!(
        Archive::open(&junk),
        Err(ArchiveError::NotTar { .. })
    ));
    let gz = dir.path().join("a.tar.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).unwrap();
    let error = Archive::open(&gz).unwrap_err().to_string();
    assert!(error.contains("gzip"), "{error}");

    // The intact archive still imports.
    let import = import_config(&target, &tls, "good");
    let archive = Archive::open(&file).unwrap();
    let plan = plan_import(&archive, &[], &import).unwrap();
    let report = rt.block_on(import_archive(
        &archive,
        &plan,
        &import,
        Arc::new(NoProgress),
    ));
    assert_eq!(report.failed(), 0, "{report:#?}");
    assert!(tagged("good"));
}

/// Stops the run (by dropping its future) after `after` blobs are in the archive.
struct Interrupt {
    done: AtomicUsize,
    after: usize,
    notify: tokio::sync::Notify,
}

impl Progress for Interrupt {
    fn blob_done(&self, _index: usize, _digest: &str) {
        if self.done.fetch_add(1, Ordering::SeqCst) + 1 == self.after {
            self.notify.notify_one();
        }
    }
}

#[test]
fn an_interrupted_download_resumes_with_only_what_is_missing() {
    let source = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join("artifacts.tar");
    let rt = rt();
    let a = rt.block_on(async {
        let src = support::client(&[&source], None);
        support::push_image(&src, &source, "etcd-io/etcd", "v3.5", 6, 256 * 1024, &[]).await
    });
    let mut config = download_config(&source, &file);
    config.concurrency = 1;
    let plan = plan_download(&[uri(&a)], config.source_registry.as_deref()).unwrap();
    let interrupt = Arc::new(Interrupt {
        done: AtomicUsize::new(0),
        after: 3,
        notify: tokio::sync::Notify::new(),
    });
    rt.block_on(async {
        let run = download_images(&plan, &config, interrupt.clone());
        tokio::select! {
            _ = run => panic!("the download finished before it was interrupted"),
            () = interrupt.notify.notified() => {}
        }
    });
    let partial = partial_path(&file);
    assert!(partial.exists() && !file.exists());
    // Cut the partial file in the middle of whatever was being written last, as a crash would.
    let len = std::fs::metadata(&partial).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&partial)
        .unwrap();
    f.set_len(len - 1000).unwrap();
    drop(f);

    let resumed = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert!(resumed.error.is_none(), "{resumed:#?}");
    match &resumed.report.images[0].status {
        ImageStatus::Copied {
            blobs_copied,
            blobs_skipped,
            bytes,
            ..
        } => {
            // config + 6 layers + the manifest; at least 2 of the first 3 survived the cut.
            assert!(*blobs_skipped >= 2, "{resumed:#?}");
            assert_eq!(blobs_copied + blobs_skipped, 8, "{resumed:#?}");
            assert!(*bytes <= 5 * 256 * 1024 + 4096, "{resumed:#?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(file.exists() && !partial.exists());
    // skopeo reads the resumed archive, and the layers are the source's.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        &format!("oci-archive:{}:{}", file.display(), uri(&a)),
    ]);
    assert_eq!(raw_digest(&raw), a.digest);

    // Run again on the finished archive: nothing is fetched, the archive is rewritten the same.
    let before = std::fs::read(&file).unwrap();
    let again = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert!(again.error.is_none(), "{again:#?}");
    assert_eq!(again.report.up_to_date(), 1, "{again:#?}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_failed_image_leaves_a_partial_archive_and_a_foreign_file_is_not_overwritten() {
    let source = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("artifacts.tar");
    let rt = rt();
    let a = rt.block_on(async {
        let src = support::client(&[&source], None);
        support::push_image(&src, &source, "cilium/cilium", "v1", 1, 1024, &[]).await
    });
    let config = download_config(&source, &file);
    let plan = plan_download(
        &[uri(&a), format!("{PREFIX}/does/not-exist:v9")],
        config.source_registry.as_deref(),
    )
    .unwrap();
    let report = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert_eq!(report.report.failed(), 1, "{report:#?}");
    assert!(report.archive.is_none());
    assert!(
        report
            .error
            .as_ref()
            .unwrap()
            .to_string()
            .contains(".partial"),
        "{report:#?}"
    );
    assert!(partial_path(&file).exists() && !file.exists());

    let foreign = dir.path().join("foreign.tar");
    std::fs::write(&foreign, b"not ours").unwrap();
    let mut config = download_config(&source, &foreign);
    config.files.clear();
    let report = rt.block_on(download_images(&plan[..1], &config, Arc::new(NoProgress)));
    assert!(
        report
            .error
            .as_ref()
            .unwrap()
            .to_string()
            .contains("not written by snowctl"),
        "{report:#?}"
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), b"not ours");
}

#[test]
fn unpacked_archives_and_skopeo_oci_directories_import_like_the_tar() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let images = rt.block_on(push_three(&source));
    let Images { a, b, .. } = &images;
    let file = dir.path().join("artifacts.tar");
    let config = download_config(&source, &file);
    let plan = plan_download(&[uri(a), uri(b)], config.source_registry.as_deref()).unwrap();
    let report = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert_eq!(report.report.failed(), 0, "{report:#?}");
    // skopeo's `oci:DIR` layout: a directory, never a tar.
    let layout = dir.path().join("skopeo-layout");
    skopeo(&[
        "copy",
        "-q",
        "--preserve-digests",
        "--src-tls-verify=false",
        &format!("docker://{}/{}:{}", source.host, a.path, a.tag),
        &format!("oci:{}:{}", layout.display(), uri(a)),
    ]);
    drop(source);
    // The archive unpacked with tar.
    let unpacked = dir.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let status = Command::new("tar")
        .arg("-xf")
        .arg(&file)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());

    let tar = Archive::open(&file).unwrap();
    let from_dir = Archive::open(&unpacked).unwrap();
    assert_eq!(from_dir.format(), ArchiveFormat::OciLayout);
    assert_eq!(from_dir.images(), tar.images());
    assert_eq!(from_dir.files(), tar.files());
    assert_eq!(
        from_dir.file("bundles/bundle-release.yaml").unwrap(),
        tar.file("bundles/bundle-release.yaml").unwrap()
    );
    for (archive, namespace, wanted) in [
        (&from_dir, "unpacked", vec![a, b]),
        (&Archive::open(&layout).unwrap(), "layout", vec![a]),
    ] {
        let import = import_config(&target, &tls, namespace);
        let plan = plan_import(archive, &[], &import).unwrap();
        assert_eq!(plan.len(), wanted.len(), "{plan:#?}");
        let report = rt.block_on(import_archive(
            archive,
            &plan,
            &import,
            Arc::new(NoProgress),
        ));
        assert_eq!(report.failed(), 0, "{report:#?}");
        let dst = support::client(&[], Some(&tls.ca_pem));
        for image in wanted {
            let reference = format!("{}/{namespace}/{}:{}", target.host, image.path, image.tag);
            let (_, digest) = rt.block_on(support::manifest(&dst, &reference));
            assert_eq!(digest, image.digest, "{reference}");
        }
    }

    // A flipped byte in an unpacked blob is caught as in the tar, naming the blob.
    let layer = a.layers.last().unwrap();
    let blob = unpacked
        .join("blobs/sha256")
        .join(layer.trim_start_matches("sha256:"));
    flip(&blob, 10);
    let archive = Archive::open(&unpacked).unwrap();
    let import = import_config(&target, &tls, "corrupt");
    let plan = plan_import(&archive, &[], &import).unwrap();
    let report = rt.block_on(import_archive(
        &archive,
        &plan,
        &import,
        Arc::new(NoProgress),
    ));
    let failed: Vec<String> = (report.images.iter())
        .filter_map(|i| match &i.status {
            ImageStatus::Failed { error } => Some(format!("{}: {error}", i.copy.image)),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{report:#?}");
    assert!(
        failed[0].contains(&uri(a))
            && failed[0].contains(layer.as_str())
            && failed[0].contains("corrupt"),
        "{failed:?}"
    );

    // A directory that is no archive says so.
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        Archive::open(empty.path()),
        Err(ArchiveError::NoImages { .. })
    ));
}

/// The blobs fetched (`blob_started`: only called when a blob is read from the source) and the
/// blobs finished in the archive (`blob_done`, skips included).
#[derive(Default)]
struct Blobs {
    fetched: std::sync::Mutex<Vec<String>>,
    done: std::sync::Mutex<Vec<String>>,
}

impl Progress for Blobs {
    fn blob_started(&self, _index: usize, digest: &str, _size: u64) {
        self.fetched.lock().unwrap().push(digest.to_owned());
    }
    fn blob_done(&self, _index: usize, digest: &str) {
        self.done.lock().unwrap().push(digest.to_owned());
    }
}

impl Blobs {
    fn fetched(&self) -> std::collections::BTreeSet<String> {
        self.fetched.lock().unwrap().iter().cloned().collect()
    }
    fn done(&self) -> std::collections::BTreeSet<String> {
        self.done.lock().unwrap().iter().cloned().collect()
    }
}

#[test]
fn a_full_disk_leaves_a_resumable_archive_and_the_error_says_so() {
    let source = Registry::start(None);
    let disk = SmallDisk::mount(512);
    let file = disk.path().join("artifacts.tar");
    let partial = partial_path(&file);
    let rt = rt();
    // 10 layers of 128 KiB: 1.25 MiB of incompressible bytes for a 512 KiB filesystem.
    let (a, b) = rt.block_on(async {
        let src = support::client(&[&source], None);
        let a =
            support::push_image(&src, &source, "etcd-io/etcd", "v3.5", 6, 128 * 1024, &[]).await;
        let b = support::push_image(&src, &source, "cilium/cilium", "v1", 4, 128 * 1024, &[]).await;
        (a, b)
    });
    let layers: std::collections::BTreeSet<String> =
        a.layers.iter().chain(&b.layers).cloned().collect();
    let mut config = download_config(&source, &file);
    config.concurrency = 2;
    let plan = plan_download(&[uri(&a), uri(&b)], config.source_registry.as_deref()).unwrap();

    // The disk fills up: a typed error naming the partial archive and what to do, the images
    // failed with the reason, the partial archive kept and no finished one.
    let first = Arc::new(Blobs::default());
    let report = rt.block_on(download_images(&plan, &config, first.clone()));
    let Some(error @ DownloadError::DiskFull { partial: named }) = &report.error else {
        panic!("not a disk-full error: {report:#?}")
    };
    assert_eq!(named, &partial);
    let message = error.to_string();
    for part in [
        partial.to_str().unwrap(),
        "no space left on the disk",
        "free space",
        "run the same download again",
        "fetches only what is missing",
    ] {
        assert!(message.contains(part), "{part:?} not in: {message}");
    }
    assert!(report.archive.is_none());
    assert!(report.report.failed() >= 1, "{report:#?}");
    let reasons: Vec<&str> = (report.report.images.iter())
        .filter_map(|i| match &i.status {
            ImageStatus::Failed { error } => Some(error.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("the disk is full")),
        "{reasons:?}"
    );
    assert!(partial.exists() && !file.exists());
    let done_first = first.done();
    assert!(
        !done_first.is_empty(),
        "nothing was written before the disk filled up"
    );

    // A little more room, still not enough: the re-run resumes (fetching none of what is in),
    // then fills the disk again and says so again.
    disk.grow(896);
    let second = Arc::new(Blobs::default());
    let report = rt.block_on(download_images(&plan, &config, second.clone()));
    assert!(
        matches!(report.error, Some(DownloadError::DiskFull { .. })),
        "{report:#?}"
    );
    assert!(
        second.fetched().is_disjoint(&done_first),
        "fetched again: {:?}",
        second
            .fetched()
            .intersection(&done_first)
            .collect::<Vec<_>>()
    );
    let done_second = second.done();
    assert!(
        done_second.is_superset(&done_first) && done_second.len() > done_first.len(),
        "no progress: {done_first:?} then {done_second:?}"
    );

    // Moved to a disk with room (the same name beside the output given), the download finishes
    // with only the missing blobs fetched.
    let big = tempfile::tempdir().unwrap();
    let moved = big.path().join("artifacts.tar");
    std::fs::copy(&partial, partial_path(&moved)).unwrap();
    std::fs::remove_file(&partial).unwrap();
    config.output = moved.clone();
    let third = Arc::new(Blobs::default());
    let report = rt.block_on(download_images(&plan, &config, third.clone()));
    assert!(report.error.is_none(), "{report:#?}");
    assert_eq!(report.report.failed(), 0, "{report:#?}");
    assert!(moved.exists() && !partial_path(&moved).exists());
    let fetched = third.fetched();
    assert!(
        fetched.is_disjoint(&done_second),
        "fetched again: {:?}",
        fetched.intersection(&done_second).collect::<Vec<_>>()
    );
    // Over the three runs every blob (10 layers, 2 configs) was fetched into the archive once.
    let all: std::collections::BTreeSet<String> = done_second.union(&fetched).cloned().collect();
    assert!(all.is_superset(&layers), "{all:?}");
    assert_eq!(all.len(), 12, "{all:?}");
    assert_eq!(fetched.len(), 12 - done_second.len(), "{fetched:?}");

    // skopeo reads the finished archive: it copies each image out of it, verifying every blob.
    for image in [&a, &b] {
        let raw = skopeo(&[
            "inspect",
            "--raw",
            &format!("oci-archive:{}:{}", moved.display(), uri(image)),
        ]);
        assert_eq!(raw_digest(&raw), image.digest);
        let out = big.path().join(image.path.replace('/', "-"));
        skopeo(&[
            "copy",
            "-q",
            &format!("oci-archive:{}:{}", moved.display(), uri(image)),
            &format!("dir:{}", out.display()),
        ]);
        for layer in &image.layers {
            let hex = layer.trim_start_matches("sha256:");
            assert!(out.join(hex).exists(), "{layer} not copied by skopeo");
        }
    }
}

#[test]
fn the_helm_chart_is_read_from_the_archive_with_its_digest_checked() {
    let source = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("artifacts.tar");
    let rt = rt();
    let tgz = support::random_bytes(20 * 1024);
    let (chart, image) = rt.block_on(async {
        let src = support::client(&[&source], None);
        let chart =
            support::push_helm_chart(&src, &source, "eks/cilium/cilium", "1.19.4-1", &tgz).await;
        let image = support::push_image(
            &src,
            &source,
            "eks/cilium/cilium",
            "v1.19.4-1",
            1,
            1024,
            &[],
        )
        .await;
        (chart, image)
    });
    let config = download_config(&source, &file);
    let plan = plan_download(
        &[uri(&chart), uri(&image)],
        config.source_registry.as_deref(),
    )
    .unwrap();
    let report = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert!(report.error.is_none(), "{report:#?}");
    // An archive of the image alone, without the chart.
    let without = dir.path().join("without-chart.tar");
    let config_without = download_config(&source, &without);
    let plan = plan_download(&[uri(&image)], config.source_registry.as_deref()).unwrap();
    let report = rt.block_on(download_images(
        &plan,
        &config_without,
        Arc::new(NoProgress),
    ));
    assert!(report.error.is_none(), "{report:#?}");
    drop(source);

    let archive = Archive::open(&file).unwrap();
    assert_eq!(archive.helm_chart(&uri(&chart)).unwrap(), tgz);

    // Taken out into a file helm reads (the embedded Bundles name this chart for every
    // Kubernetes version: one file), removed when the files are dropped.
    let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
    let charts = snow_images::charts::cilium_charts(&file, &inputs).unwrap();
    assert_eq!(charts.files.len(), 1);
    let taken = charts.files[&uri(&chart)].clone();
    assert_eq!(std::fs::read(&taken).unwrap(), tgz);
    assert!(
        taken.ends_with("0/cilium-1.19.4-1.tgz"),
        "{}",
        taken.display()
    );
    drop(charts);
    assert!(!taken.exists());
    let error = snow_images::charts::cilium_charts(&without, &inputs).unwrap_err();
    assert!(error.is_input());
    assert!(
        error.to_string().contains(&format!(
            "the Helm chart {} is not in the archive",
            uri(&chart)
        )),
        "{error}"
    );
    let error = archive.helm_chart(&uri(&image)).unwrap_err().to_string();
    assert!(
        error.contains(&uri(&image)) && error.contains("is not a Helm chart"),
        "{error}"
    );
    let missing = format!("{PREFIX}/eks/cilium/cilium:9.9.9");
    let error = archive.helm_chart(&missing).unwrap_err().to_string();
    assert!(
        error.contains(file.to_str().unwrap())
            && error.contains(&format!("the Helm chart {missing} is not in the archive")),
        "{error}"
    );
    // A flipped byte in the chart's layer: named, never returned.
    let layer = &chart.layers[0];
    let (offset, size) = entry_offset(
        &file,
        &format!("blobs/sha256/{}", layer.trim_start_matches("sha256:")),
    );
    flip(&file, offset + size / 2);
    let error = Archive::open(&file)
        .unwrap()
        .helm_chart(&uri(&chart))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(layer.as_str()) && error.contains("corrupt"),
        "{error}"
    );
}

#[test]
fn release_files_are_read_back_as_the_release_manifests_and_the_image_list() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("artifacts.tar");
    let eksd = vec![
        (
            "https://distro.eks.amazonaws.com/kubernetes-1-33/kubernetes-1-33-eks-9.yaml".into(),
            "kind: Release\n".to_owned(),
        ),
        (
            "kubernetes-1-32-eks-12.yaml".into(),
            "kind: Release\n# 1.32\n".to_owned(),
        ),
    ];
    let images = vec![snow_images::ListedImage {
        uri: format!("{PREFIX}/eks-anywhere/kube-vip:v1"),
        used_by: vec!["1.33 snow.kubeVip".into()],
    }];
    let config = DownloadConfig::new(
        output.clone(),
        snow_images::archive::release_files("kind: Bundles\n", &eksd, &images),
    );
    let report = rt().block_on(download_images(&[], &config, Arc::new(NoProgress)));
    assert!(report.error.is_none(), "{report}");

    let archive = Archive::open(&output).unwrap();
    let (bundles, read) = archive.release_manifests().unwrap();
    assert_eq!(bundles, "kind: Bundles\n");
    let names: Vec<(&str, &str)> = read.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    assert_eq!(
        names,
        [
            (
                "eksd/kubernetes-1-32-eks-12.yaml",
                "kind: Release\n# 1.32\n"
            ),
            ("eksd/kubernetes-1-33-eks-9.yaml", "kind: Release\n"),
        ]
    );
    let list = archive
        .file(snow_images::archive::IMAGES_FILE)
        .unwrap()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
    assert_eq!(list[0]["uri"], images[0].uri);
    assert_eq!(list[0]["usedBy"][0], "1.33 snow.kubeVip");
}
