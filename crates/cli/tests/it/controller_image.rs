//! The controller image through the binary: the image `scripts/build-controller-image` built
//! (its path in `SNOWCTL_TEST_CONTROLLER_IMAGE`, which `scripts/test` sets) read by skopeo,
//! pushed to a Debian `docker-registry`, unpacked and its snowctl run in a chroot; `build
//! controller-image` refusing a dynamically linked snowctl; `download artifacts
//! --controller-image-archive` carrying an image and `import-images --from` pushing it to
//! `<mirror>/snowctl/controller:v<version>`, the reference the Deployment pulls.

use assert_cmd::Command;
use snow_api::release::controller_image;
use snow_images::controller_image::{
    ControllerImageInputs, build_controller_image, controller_image_name, static_executable_problem,
};
use snow_test_devices::{
    elf,
    registry::{self as support, Registry},
};
use std::path::{Path, PathBuf};

/// Where `scripts/test` puts the image's path.
const IMAGE_VAR: &str = "SNOWCTL_TEST_CONTROLLER_IMAGE";

use super::REFERENCE_BUNDLES as SAMPLE;

fn snowctl() -> Command {
    super::registry_snowctl(std::time::Duration::from_secs(120))
}

/// Runs a program to success (at most 120 s), its stdout.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap_or_else(|e| panic!("{program} cannot run: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        super::show(&out)
    );
    super::text(&out.stdout)
}

fn skopeo(args: &[&str]) -> String {
    run("skopeo", &[&["--insecure-policy"][..], args].concat())
}

fn oci_archive(path: &Path) -> String {
    format!("oci-archive:{}:{}", path.display(), controller_image_name())
}

/// The digest of `skopeo inspect --raw` output.
fn raw_digest(raw: &str) -> String {
    support::sha256(raw.strip_suffix('\n').unwrap_or(raw).as_bytes())
}

/// The built image: failing (not skipping) when the test command did not build it.
fn built_image() -> PathBuf {
    let path = std::env::var_os(IMAGE_VAR).unwrap_or_else(|| {
        panic!(
            "{IMAGE_VAR} is not set: run the tests with scripts/test (README's test command), which builds the controller image with scripts/build-controller-image and sets it"
        )
    });
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "{IMAGE_VAR}={} is not a file: run scripts/build-controller-image",
        path.display()
    );
    path
}

/// The image's root filesystem, unpacked with GNU tar from the archive's layout: index.json,
/// then the manifest, then its one layer.
fn unpack(archive: &Path, dir: &Path) -> PathBuf {
    let (layout, rootfs) = (dir.join("layout"), dir.join("rootfs"));
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
    let json = |digest: &str| -> serde_json::Value {
        let hex = digest.strip_prefix("sha256:").unwrap();
        serde_json::from_slice(&std::fs::read(layout.join("blobs/sha256").join(hex)).unwrap())
            .unwrap()
    };
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let entries = index["manifests"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{index}");
    assert_eq!(
        entries[0]["annotations"]["org.opencontainers.image.ref.name"],
        controller_image_name()
    );
    let manifest = json(entries[0]["digest"].as_str().unwrap());
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "{manifest}");
    let hex = layers[0]["digest"]
        .as_str()
        .unwrap()
        .strip_prefix("sha256:")
        .unwrap();
    let layer = layout.join("blobs/sha256").join(hex);
    run(
        "tar",
        &[
            "-xf",
            layer.to_str().unwrap(),
            "-C",
            rootfs.to_str().unwrap(),
        ],
    );
    rootfs
}

/// Every path below `root`, sorted.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_built_image_runs_its_static_snowctl_in_a_chroot_as_the_nonroot_user() {
    let image = built_image();
    let uid = run("id", &["-u"]);
    assert_eq!(
        uid.trim(),
        "0",
        "chroot takes root (CI runs as root): run the tests as root"
    );
    let dir = tempfile::tempdir().unwrap();

    // skopeo reads it: its digest, and the config the Deployment relies on.
    let digest = raw_digest(&skopeo(&["inspect", "--raw", &oci_archive(&image)]));
    let config: serde_json::Value =
        serde_json::from_str(&skopeo(&["inspect", "--config", &oci_archive(&image)])).unwrap();
    assert_eq!(config["os"], "linux");
    assert_eq!(config["architecture"], "amd64");
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/snowctl"])
    );

    // skopeo copies it into a registry, where it keeps its digest.
    let registry = Registry::start(None);
    let reference = format!("docker://{}", controller_image(&registry.host));
    skopeo(&[
        "copy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &oci_archive(&image),
        &reference,
    ]);
    let pushed = skopeo(&["inspect", "--raw", "--tls-verify=false", &reference]);
    assert_eq!(raw_digest(&pushed), digest);

    // Unpacked: the executable, the CA file and the user, nothing else.
    let rootfs = unpack(&image, dir.path());
    assert_eq!(
        tree(&rootfs),
        [
            "etc",
            "etc/group",
            "etc/passwd",
            "etc/ssl",
            "etc/ssl/certs",
            "etc/ssl/certs/ca-certificates.crt",
            "snowctl"
        ]
    );
    let binary = std::fs::read(rootfs.join("snowctl")).unwrap();
    assert_eq!(static_executable_problem(&binary), None);

    // Stripped: no symbol table and no debug info in the image; they are in the file beside the
    // archive that the executable names (gdb's .gnu_debuglink).
    let in_image = rootfs.join("snowctl");
    let sections = run("readelf", &["-S", "--wide", in_image.to_str().unwrap()]);
    for absent in [".symtab", ".debug_info", ".debug_line"] {
        assert!(
            !sections.contains(absent),
            "{absent} in the image's snowctl:\n{sections}"
        );
    }
    assert!(sections.contains(".gnu_debuglink"), "{sections}");
    let debug_file = image.with_extension("debug");
    let debug_sections = run("readelf", &["-S", "--wide", debug_file.to_str().unwrap()]);
    assert!(debug_sections.contains(".symtab"), "{debug_sections}");
    let link = run(
        "readelf",
        &["-p", ".gnu_debuglink", in_image.to_str().unwrap()],
    );
    let debug_name = debug_file.file_name().unwrap().to_str().unwrap();
    assert!(link.contains(debug_name), "{link}");

    // It runs alone in the image's root filesystem, as root and as the image's user.
    let root = rootfs.to_str().unwrap();
    let version = format!("snowctl {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(run("chroot", &[root, "/snowctl", "--version"]), version);
    assert_eq!(
        run(
            "chroot",
            &["--userspec=65532:65532", root, "/snowctl", "--version"]
        ),
        version
    );
    let spec = run(
        "chroot",
        &[
            "--userspec=65532:65532",
            root,
            "/snowctl",
            "generate",
            "clusterconfig",
            "edge",
            "--provider",
            "snow",
            "--devices",
            "192.168.1.11",
            "--endpoint",
            "192.168.1.100",
        ],
    );
    assert!(spec.contains("kind: Cluster"), "{spec}");

    // The image's own snowctl, given the image's CA file, builds the same image byte for byte.
    let again = dir.path().join("again.tar");
    let ca = rootfs.join("etc/ssl/certs/ca-certificates.crt");
    let out = run(
        rootfs.join("snowctl").to_str().unwrap(),
        &[
            "build",
            "controller-image",
            "--output-file",
            again.to_str().unwrap(),
            "--ca-certificates",
            ca.to_str().unwrap(),
        ],
    );
    assert_eq!(out, format!("{} {digest}\n", controller_image_name()));
    assert!(
        std::fs::read(&again).unwrap() == std::fs::read(&image).unwrap(),
        "the rebuilt archive differs from {}",
        image.display()
    );
}

#[test]
fn build_controller_image_refuses_a_dynamically_linked_snowctl_naming_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("controller.tar");
    // The binary under test is the dev build: dynamically linked, as cargo builds it by default.
    let out = snowctl()
        .args([
            "build",
            "controller-image",
            "--output-file",
            output.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", super::show(&out));
    let stderr = super::text(&out.stderr);
    assert!(
        stderr.starts_with("error: ")
            && stderr.contains(
                "cannot run in a FROM-scratch linux/amd64 image: it is dynamically linked"
            )
            && stderr.contains("scripts/build-controller-image"),
        "{stderr}"
    );
    assert!(!output.exists());
}

#[test]
fn download_artifacts_carries_the_controller_image_and_import_images_pushes_it_to_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    // A controller image of a small stand-in executable, built by the library.
    let binary = dir.path().join("snowctl");
    std::fs::write(&binary, elf::static_executable(b"stand-in")).unwrap();
    let ca_certificates = dir.path().join("ca.pem");
    std::fs::write(&ca_certificates, support::Tls::generate().ca_pem).unwrap();
    let image = dir.path().join("controller.tar");
    let inputs = ControllerImageInputs {
        binary,
        ca_certificates,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let built = rt
        .block_on(build_controller_image(&inputs, &image))
        .unwrap();

    let source = Registry::start(None);
    let pause = rt.block_on(async {
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
    let uri = format!("public.ecr.aws/{}:{}", pause.path, pause.tag);
    let download = |output: &Path, controller: &Path| {
        snowctl()
            .args([
                "download",
                "artifacts",
                "--output-file",
                output.to_str().unwrap(),
            ])
            .args(["--image", &uri])
            .args(["--source-registry", &source.host, "--source-insecure"])
            .args(["--bundles", SAMPLE, "--no-components"])
            .args(["--controller-image-archive", controller.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let artifacts = dir.path().join("artifacts.tar");
    let out = download(&artifacts, &image);
    assert!(out.status.success(), "{}", super::show(&out));
    let stdout = super::text(&out.stdout);
    assert!(stdout.contains("2 image(s): 2 downloaded"), "{stdout}");

    // Another version's image is refused before anything is downloaded.
    let old = dir.path().join("old.tar");
    skopeo(&[
        "copy",
        "--preserve-digests",
        &oci_archive(&image),
        &format!("oci-archive:{}:snowctl/controller:v0.0.1", old.display()),
    ]);
    let refused = dir.path().join("refused.tar");
    let out = download(&refused, &old);
    assert_eq!(out.status.code(), Some(2), "{}", super::show(&out));
    let stderr = super::text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "holds snowctl/controller:v0.0.1, not {}",
            controller_image_name()
        )) && stderr.contains("scripts/build-controller-image"),
        "{stderr}"
    );
    assert!(!refused.exists() && !dir.path().join("refused.tar.partial").exists());
    drop(source);

    // At the site: listed, then pushed to the mirror where the Deployment pulls it.
    let out = snowctl()
        .args([
            "import-images",
            "--from",
            artifacts.to_str().unwrap(),
            "--list",
        ])
        .output()
        .unwrap();
    let listed = super::text(&out.stdout);
    assert!(
        listed.contains(&format!("{} {}\n", controller_image_name(), built.digest)),
        "{listed}"
    );
    let mirror = Registry::start(None);
    let out = snowctl()
        .args(["import-images", "--from", artifacts.to_str().unwrap()])
        .args(["-r", &mirror.host, "--insecure"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::show(&out));
    rt.block_on(async {
        let client = support::client(&[&mirror], None);
        let (_, digest) = support::manifest(&client, &controller_image(&mirror.host)).await;
        assert_eq!(digest, built.digest);
    });
}
