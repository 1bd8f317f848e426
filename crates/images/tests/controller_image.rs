//! The controller image builder over small inputs (an x86-64 ELF file written by hand stands in
//! for the static snowctl, which `crates/cli/tests/it/controller_image.rs` runs for real): the
//! same inputs give the same bytes; skopeo and GNU tar read what it writes; a Debian
//! `docker-registry` takes it from the archive, from skopeo and through a download archive; bad
//! inputs are refused without writing anything.

use snow_api::release::controller_image;
use snow_images::{
    Archive, CopyConfig, Credentials, DownloadConfig, FromArchive, NoProgress, Platforms,
    TargetRegistry,
    controller_image::{
        ControllerImageInputs, ImageBuildError, build_controller_image, controller_image_name,
    },
    download_images, import_archive, plan_download, plan_import,
};
use snow_test_devices::{
    elf,
    registry::{self as support, Registry},
};
use std::{path::Path, process::Command, sync::Arc};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fake static executable and a CA file in `dir`.
fn inputs(dir: &Path, code: &[u8]) -> ControllerImageInputs {
    let binary = dir.join("snowctl");
    std::fs::write(&binary, elf::static_executable(code)).unwrap();
    let ca_certificates = dir.join("ca.pem");
    std::fs::write(&ca_certificates, support::Tls::generate().ca_pem).unwrap();
    ControllerImageInputs {
        binary,
        ca_certificates,
    }
}

fn build(
    inputs: &ControllerImageInputs,
    output: &Path,
) -> snow_images::controller_image::BuiltImage {
    rt().block_on(build_controller_image(inputs, output))
        .unwrap()
}

fn build_err(inputs: &ControllerImageInputs, output: &Path) -> ImageBuildError {
    rt().block_on(build_controller_image(inputs, output))
        .unwrap_err()
}

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("{program} cannot run ({e}): `apt-get install {program}` (.ci/run does)")
        });
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn skopeo(args: &[&str]) -> String {
    run("skopeo", &[&["--insecure-policy"][..], args].concat())
}

/// `oci-archive:FILE:snowctl/controller:v<version>`, as skopeo names the image in the archive.
fn oci_archive(path: &Path) -> String {
    format!("oci-archive:{}:{}", path.display(), controller_image_name())
}

/// The digest of `skopeo inspect --raw` output.
fn raw_digest(raw: &str) -> String {
    support::sha256(raw.strip_suffix('\n').unwrap_or(raw).as_bytes())
}

#[test]
fn building_twice_gives_the_same_bytes_and_digest_and_other_inputs_another() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path(), b"the same executable");
    let (one, two) = (dir.path().join("one.tar"), dir.path().join("two.tar"));
    let first = build(&inputs, &one);
    let second = build(&inputs, &two);
    assert_eq!(first.digest, second.digest);
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
    assert_eq!(
        first.name,
        format!("snowctl/controller:v{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(first.bytes, std::fs::metadata(&one).unwrap().len());

    // One byte more in the executable, or another CA file: another layer, another image.
    let mut other = inputs.clone();
    other.binary = dir.path().join("other");
    std::fs::write(
        &other.binary,
        elf::static_executable(b"the same executable!"),
    )
    .unwrap();
    let changed = build(&other, &dir.path().join("other.tar"));
    assert_ne!(changed.digest, first.digest);
    assert_ne!(changed.layer_digest, first.layer_digest);
    let mut other_ca = inputs.clone();
    other_ca.ca_certificates = dir.path().join("other-ca.pem");
    std::fs::write(&other_ca.ca_certificates, support::Tls::generate().ca_pem).unwrap();
    let changed = build(&other_ca, &dir.path().join("other-ca.tar"));
    assert_ne!(changed.digest, first.digest);
}

#[test]
fn skopeo_and_tar_read_the_image_as_built() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path(), b"code");
    let archive = dir.path().join("controller.tar");
    let built = build(&inputs, &archive);

    let raw = skopeo(&["inspect", "--raw", &oci_archive(&archive)]);
    assert_eq!(raw_digest(&raw), built.digest);
    let config: serde_json::Value =
        serde_json::from_str(&skopeo(&["inspect", "--config", &oci_archive(&archive)])).unwrap();
    assert_eq!(config["os"], "linux");
    assert_eq!(config["architecture"], "amd64");
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/snowctl"])
    );
    assert_eq!(config["config"]["Cmd"], serde_json::json!(["controller"]));
    assert_eq!(
        config["rootfs"]["diff_ids"],
        serde_json::json!([built.layer_digest])
    );

    // The layer, unpacked by GNU tar: the seven entries and nothing else, the files as given.
    let layout = dir.path().join("layout");
    let rootfs = dir.path().join("rootfs");
    std::fs::create_dir_all(&layout).unwrap();
    std::fs::create_dir_all(&rootfs).unwrap();
    run(
        "tar",
        &[
            "-xf",
            archive.to_str().unwrap(),
            "-C",
            layout.to_str().unwrap(),
        ],
    );
    let hex = built.layer_digest.strip_prefix("sha256:").unwrap();
    let layer = layout.join("blobs/sha256").join(hex);
    let listing = run("tar", &["-tvf", layer.to_str().unwrap()]);
    let entries: Vec<(String, String, String)> = listing
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_owned(), f[1].to_owned(), f[5].to_owned())
        })
        .collect();
    let want = [
        ("drwxr-xr-x", "etc/"),
        ("-rw-r--r--", "etc/group"),
        ("-rw-r--r--", "etc/passwd"),
        ("drwxr-xr-x", "etc/ssl/"),
        ("drwxr-xr-x", "etc/ssl/certs/"),
        ("-rw-r--r--", "etc/ssl/certs/ca-certificates.crt"),
        ("-rwxr-xr-x", "snowctl"),
    ];
    let got: Vec<(&str, &str)> = entries
        .iter()
        .map(|(mode, _, name)| (mode.as_str(), name.as_str()))
        .collect();
    assert_eq!(got, want, "{listing}");
    assert!(
        entries.iter().all(|(_, owner, _)| owner == "0/0"),
        "{listing}"
    );
    assert!(
        listing.lines().all(|l| l.contains("1970-01-01")),
        "{listing}"
    );
    run(
        "tar",
        &[
            "-xf",
            layer.to_str().unwrap(),
            "-C",
            rootfs.to_str().unwrap(),
        ],
    );
    assert_eq!(
        std::fs::read(rootfs.join("snowctl")).unwrap(),
        std::fs::read(&inputs.binary).unwrap()
    );
    assert_eq!(
        std::fs::read(rootfs.join("etc/ssl/certs/ca-certificates.crt")).unwrap(),
        std::fs::read(&inputs.ca_certificates).unwrap()
    );
    let passwd = std::fs::read_to_string(rootfs.join("etc/passwd")).unwrap();
    assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");
    let group = std::fs::read_to_string(rootfs.join("etc/group")).unwrap();
    assert!(group.contains("nonroot:x:65532:"), "{group}");
}

/// The registry mirror's reference of the controller image, as the Deployment pulls it.
fn mirror_reference(registry: &Registry) -> String {
    controller_image(&registry.host)
}

#[test]
fn the_image_reaches_the_mirror_path_from_skopeo_the_archive_and_a_download() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path(), b"code");
    let image = dir.path().join("controller.tar");
    let built = build(&inputs, &image);
    let rt = rt();

    // skopeo copies it into a registry (without --preserve-digests skopeo would gzip the layer:
    // another image digest).
    let by_skopeo = Registry::start(None);
    skopeo(&[
        "copy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &oci_archive(&image),
        &format!("docker://{}", mirror_reference(&by_skopeo)),
    ]);
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{}", mirror_reference(&by_skopeo)),
    ]);
    assert_eq!(raw_digest(&raw), built.digest);

    // A download holds it beside a registry image; the source registry is then stopped.
    let source = Registry::start(None);
    let pushed = rt.block_on(async {
        let client = support::client(&[&source], None);
        support::push_image(
            &client,
            &source,
            "eks-distro/kubernetes/pause",
            "v1",
            1,
            8 * 1024,
            &[],
        )
        .await
    });
    let uri = format!("public.ecr.aws/{}:{}", pushed.path, pushed.tag);
    let artifacts = dir.path().join("artifacts.tar");
    let from = FromArchive::new(
        Arc::new(Archive::open(&image).unwrap()),
        &controller_image_name(),
    )
    .unwrap();
    let config = DownloadConfig {
        output: artifacts.clone(),
        source_registry: Some(source.host.clone()),
        platforms: Platforms::default(),
        concurrency: 2,
        ca_certs_pem: Vec::new(),
        plain_http: vec![source.host.clone()],
        credentials: Credentials::default(),
        files: Vec::new(),
        from_archives: vec![from],
    };
    let plan = plan_download(std::slice::from_ref(&uri), Some(&source.host)).unwrap();
    let report = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert!(report.error.is_none(), "{report}");
    assert_eq!(report.report.copied(), 2, "{report}");
    // A re-run finds both in the archive.
    let again = rt.block_on(download_images(&plan, &config, Arc::new(NoProgress)));
    assert_eq!(again.report.up_to_date(), 2, "{again}");
    drop(source);

    // import-images' path: the download archive (and the image archive itself) pushed to the
    // mirror put the controller image at <mirror>/snowctl/controller:v<version>.
    for (archive, mirror) in [
        (&artifacts, Registry::start(None)),
        (&image, Registry::start(None)),
    ] {
        let archive = Archive::open(archive).unwrap();
        let config = CopyConfig {
            target: TargetRegistry::parse(&mirror.host).unwrap(),
            source_registry: None,
            all_platforms: false,
            concurrency: 2,
            ca_certs_pem: Vec::new(),
            plain_http: vec![mirror.host.clone()],
            credentials: Credentials::default(),
        };
        let plan = plan_import(&archive, &[], &config).unwrap();
        let targets: Vec<&str> = plan.iter().map(|c| c.target.as_str()).collect();
        assert!(
            targets.contains(&mirror_reference(&mirror).as_str()),
            "{targets:?}"
        );
        let report = rt.block_on(import_archive(
            &archive,
            &plan,
            &config,
            Arc::new(NoProgress),
        ));
        assert_eq!(report.failed(), 0, "{}", report.summary_text());
        rt.block_on(async {
            let client = support::client(&[&mirror], None);
            let (_, digest) = support::manifest(&client, &mirror_reference(&mirror)).await;
            assert_eq!(digest, built.digest);
        });
    }

    // A name the archive does not have is not taken.
    let missing = FromArchive::new(
        Arc::new(Archive::open(&image).unwrap()),
        "snowctl/controller:v0.0.0",
    );
    assert!(missing.is_err());
}

fn assert_nothing_written(output: &Path) {
    assert!(!output.exists(), "{} was written", output.display());
    assert!(!snow_images::partial_path(output).exists());
}

#[test]
fn bad_inputs_are_refused_naming_them_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let good = inputs(dir.path(), b"code");
    let output = dir.path().join("out.tar");

    let mut dynamic = good.clone();
    dynamic.binary = dir.path().join("dynamic");
    std::fs::write(&dynamic.binary, elf::dynamic_executable()).unwrap();
    let err = build_err(&dynamic, &output).to_string();
    assert!(
        err.contains("dynamically linked (its loader is /lib64/ld-linux-x86-64.so.2")
            && err.contains("scripts/build-controller-image"),
        "{err}"
    );
    assert_nothing_written(&output);

    let mut script = good.clone();
    script.binary = dir.path().join("script");
    std::fs::write(&script.binary, "#!/bin/sh\n").unwrap();
    let err = build_err(&script, &output).to_string();
    assert!(err.contains("it is not an ELF executable"), "{err}");

    let mut no_certs = good.clone();
    no_certs.ca_certificates = dir.path().join("empty.pem");
    std::fs::write(&no_certs.ca_certificates, "not a certificate\n").unwrap();
    let err = build_err(&no_certs, &output);
    assert!(
        matches!(err, ImageBuildError::NoCertificates { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("empty.pem holds no PEM certificate"),
        "{err}"
    );

    let mut missing = good.clone();
    missing.ca_certificates = dir.path().join("nowhere.pem");
    let err = build_err(&missing, &output).to_string();
    assert!(err.contains("nowhere.pem: No such file"), "{err}");

    let mut a_dir = good.clone();
    a_dir.binary = dir.path().to_owned();
    let err = build_err(&a_dir, &output).to_string();
    assert!(err.contains("not a regular file"), "{err}");
    // A device and a FIFO (which would block an open) are refused without being opened.
    let fifo = dir.path().join("fifo");
    run("mkfifo", &[fifo.to_str().unwrap()]);
    for special in [Path::new("/dev/zero"), &fifo] {
        let mut not_a_file = good.clone();
        not_a_file.ca_certificates = special.to_owned();
        let err = build_err(&not_a_file, &output).to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    // Past the bound: a sparse file, refused from its size before anything is read.
    let mut huge = good.clone();
    huge.binary = dir.path().join("huge");
    let file = std::fs::File::create(&huge.binary).unwrap();
    file.set_len(snow_images::limits::MAX_IMAGE_BINARY + 1)
        .unwrap();
    let err = build_err(&huge, &output);
    assert!(matches!(err, ImageBuildError::TooLarge { .. }), "{err}");
    assert_nothing_written(&output);

    // An existing output, its partial file or a link there: left as they are.
    std::fs::write(&output, "mine\n").unwrap();
    let err = build_err(&good, &output);
    assert!(matches!(err, ImageBuildError::Exists { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "mine\n");
    std::fs::remove_file(&output).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&victim, snow_images::partial_path(&output)).unwrap();
    let err = build_err(&good, &output).to_string();
    assert!(err.contains("out.tar.partial exists"), "{err}");
    std::os::unix::fs::symlink(&victim, &output).unwrap();
    let err = build_err(&good, &output).to_string();
    assert!(err.contains("out.tar exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
}
