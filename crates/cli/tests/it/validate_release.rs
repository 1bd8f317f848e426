//! `validate` checks the spec's Kubernetes version against the release `create cluster` would
//! use, resolved the same way: `--bundles`/`--artifacts` when given, else the published
//! release (here the loopback release site, `snow_test_devices::release_site`, through
//! `--release-manifest` and `--ca-cert`); `--offline` against the embedded sample, as before.
//! The devices are moto and the Device API stand-in, seeded with an AMI tagged for the version.

use super::{show, text};
use serde_json::Value;
use snow_test_devices::fleet::{self, Fleet, KEY, KEY_MATERIAL};
use snow_test_devices::{TestCa, loopback_ip, release_site};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A version the embedded sample lacks (it has 1.30 to 1.36), and one nothing here has.
const VERSION: &str = "1.28";
const ABSENT: &str = "1.29";

const EKSD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/eksd/kubernetes-1-21-eks-4.yaml"
);

/// The embedded sample with its 1.30 versions bundle made 1.28.
fn bundles_with_version() -> String {
    let sample = snow_api::release::ReleaseInputs::embedded_bundles_yaml();
    let edited = sample.replacen(
        "kubeVersion: '1.30'",
        &format!("kubeVersion: '{VERSION}'"),
        1,
    );
    assert_ne!(edited, sample);
    edited
}

fn snowctl(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.env("XDG_CACHE_HOME", dir.join("cache"))
        .env("NO_COLOR", "1")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env_remove("REGISTRY_USERNAME")
        .env_remove("REGISTRY_PASSWORD");
    cmd
}

/// Every device gets the key pair and one Ubuntu AMI tagged for `version`; its id.
async fn seed(f: &Fleet, version: &str) -> Vec<String> {
    use snow_validate::aws_sdk_ec2::{primitives::Blob, types::Tag};
    let mut ids = Vec::new();
    for device in &f.devices {
        let ec2 = device.ec2();
        let image = ec2
            .register_image()
            .name(format!("eks-d-{version}-ubuntu"))
            .send()
            .await
            .expect("RegisterImage");
        let id = image.image_id().unwrap().to_owned();
        let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build();
        ec2.create_tags()
            .resources(&id)
            .tags(tag("eksa.aws.com/k8s-version", version))
            .tags(tag("eksa.aws.com/os-family", "ubuntu"))
            .send()
            .await
            .expect("CreateTags");
        ec2.import_key_pair()
            .key_name(KEY)
            .public_key_material(Blob::new(KEY_MATERIAL))
            .send()
            .await
            .expect("ImportKeyPair");
        ids.push(id);
    }
    ids
}

/// A spec of `version` for the fleet's devices, written by `generate` with `bundles` (which has
/// the version: generate checks it).
fn spec(dir: &Path, f: &Fleet, version: &str, bundles: &Path, name: &str) -> PathBuf {
    let devices: Vec<String> = f.ips.iter().map(ToString::to_string).collect();
    let out = snowctl(dir)
        .args(["generate", "clusterconfig", "edge", "--provider", "snow"])
        .arg(format!("--devices={}", devices.join(",")))
        .args(["--endpoint", "192.0.2.10", "--ssh-key-name", KEY])
        .args(["--kubernetes-version", version, "--bundles"])
        .arg(bundles)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// `validate -o json` of `spec` against the devices, with `extra` flags.
fn validate(dir: &Path, spec: &Path, files: &(PathBuf, PathBuf), extra: &[&str]) -> Output {
    snowctl(dir)
        .args([
            "validate",
            "-o",
            "json",
            "--skip-ip-check",
            "--timeout",
            "5s",
        ])
        .arg("--credentials")
        .arg(&files.0)
        .arg("--ca-bundle")
        .arg(&files.1)
        .args(extra)
        .arg("-f")
        .arg(spec)
        .output()
        .unwrap()
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(out)))
}

/// The `release.version` findings of a report.
fn version_findings(report: &Value) -> Vec<&Value> {
    (report["findings"].as_array().unwrap().iter())
        .filter(|f| f["check"] == "release.version")
        .collect()
}

#[test]
fn bundles_given_decide_the_version_and_offline_keeps_the_embedded_sample() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("validate release CA").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = rt.block_on(fleet::fleet(&ca, 1, &[]));
    let amis = rt.block_on(seed(&f, VERSION));
    let files = f.write_files(&ca, &[], dir.path());
    let with_version = dir.path().join("bundles-1.28.yaml");
    std::fs::write(&with_version, bundles_with_version()).unwrap();
    let cluster = spec(dir.path(), &f, VERSION, &with_version, "edge.yaml");

    // --bundles with the version: no version finding, the devices checked, the AMI of that
    // version found on them; nothing fetched, nothing said on stderr.
    let out = validate(
        dir.path(),
        &cluster,
        &files,
        &["--bundles", path(&with_version)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = report(&out);
    assert_eq!(got["ok"], true, "{}", show(&out));
    assert!(version_findings(&got).is_empty(), "{}", show(&out));
    assert_eq!(got["preflight"]["devices"].as_array().unwrap().len(), 1);
    assert!(text(&out.stdout).contains(&amis[0]), "{}", show(&out));
    assert!(out.stderr.is_empty(), "{}", show(&out));
    assert!(!dir.path().join("cache").exists(), "nothing fetched");

    // A Bundles without it (the embedded sample as a file): an error naming the versions it
    // has, as create would refuse the spec.
    let sample = super::SAMPLE_BUNDLES;
    let out = validate(dir.path(), &cluster, &files, &["--bundles", sample]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let got = report(&out);
    let found = version_findings(&got);
    assert_eq!(found.len(), 1, "{}", show(&out));
    assert_eq!(found[0]["severity"], "error");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Kubernetes 1.28 is not in the Bundles manifest ")
            && message.ends_with("(1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)"),
        "{message}"
    );
    assert!(
        found[0]["hint"]
            .as_str()
            .unwrap()
            .contains("--bundles FILE"),
        "{}",
        found[0]
    );

    // --offline: the embedded sample as before, a warning that names it (exit 0), nothing on
    // stderr and no device contacted.
    let out = snowctl(dir.path())
        .args(["validate", "-o", "json", "--offline", "-f"])
        .arg(&cluster)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = report(&out);
    let found = version_findings(&got);
    assert_eq!(found.len(), 1, "{}", show(&out));
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(
        found[0]["message"],
        "Kubernetes 1.28 is not in snowctl's embedded release bundle (1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)"
    );
    assert!(got.get("preflight").is_none(), "{}", show(&out));
    assert!(out.stderr.is_empty(), "{}", show(&out));
    // --offline with --bundles: that Bundles, read from the file.
    let out = snowctl(dir.path())
        .args(["validate", "-o", "json", "--offline", "--bundles"])
        .arg(&with_version)
        .arg("-f")
        .arg(&cluster)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(version_findings(&report(&out)).is_empty(), "{}", show(&out));
    // --offline reads no network: --release-manifest, and the cache and CA of a fetch, are
    // refused with it.
    for fetch_flag in [
        &["--release-manifest", "https://127.0.0.1:1/m.yaml"][..],
        &["--cache-dir", "cache"],
        &["--ca-cert", "ca.pem"],
    ] {
        let out = snowctl(dir.path())
            .args(["validate", "--offline"])
            .args(fetch_flag)
            .arg("-f")
            .arg(&cluster)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{fetch_flag:?}: {}", show(&out));
        assert!(
            text(&out.stderr).contains("cannot be used with"),
            "{}",
            show(&out)
        );
    }
}

#[test]
fn without_release_flags_the_published_release_decides_the_version() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = TestCa::new("validate published CA").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let eksd = std::fs::read(EKSD).unwrap();
    let published = bundles_with_version();
    let server = rt
        .block_on(release_site::start_with_bundles(
            loopback_ip(),
            &ca,
            eksd,
            &published,
        ))
        .unwrap();
    let url = format!("{}{}", server.base, release_site::RELEASE_MANIFEST_PATH);
    let pem = dir.path().join("site-ca.pem");
    std::fs::write(&pem, ca.pem()).unwrap();
    let f = rt.block_on(fleet::fleet(&ca, 1, &[]));
    rt.block_on(seed(&f, VERSION));
    let files = f.write_files(&ca, &[], dir.path());
    let with_version = dir.path().join("bundles-1.28.yaml");
    std::fs::write(&with_version, &published).unwrap();
    let cluster = spec(dir.path(), &f, VERSION, &with_version, "edge.yaml");
    let site = ["--release-manifest", url.as_str(), "--ca-cert", path(&pem)];

    // The published release has 1.28 (the embedded sample does not): it passes, and stderr
    // says which release was taken, as create says it.
    let out = validate(dir.path(), &cluster, &files, &site);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = report(&out);
    assert!(version_findings(&got).is_empty(), "{}", show(&out));
    assert_eq!(got["preflight"]["devices"].as_array().unwrap().len(), 1);
    assert!(
        text(&out.stderr).contains(&format!(
            "release: EKS Anywhere {} ({}/releases/bundles/29/manifest.yaml), from {url}",
            release_site::SNOW_RELEASE,
            server.base
        )),
        "{}",
        show(&out)
    );
    // The Release manifest, the Bundles of v0.30.0 (no Snow) and v0.29.1, one EKS-D manifest.
    assert_eq!(server.requests(), 4);

    // No release has 1.29: not a stop, a finding naming the versions of the newest release
    // with a Snow section.
    let absent = std::fs::read_to_string(&cluster).unwrap().replace(
        &format!("kubernetesVersion: \"{VERSION}\""),
        &format!("kubernetesVersion: \"{ABSENT}\""),
    );
    assert!(absent.contains(ABSENT), "{absent}");
    let absent_spec = dir.path().join("absent.yaml");
    std::fs::write(&absent_spec, absent).unwrap();
    let out = validate(dir.path(), &absent_spec, &files, &site);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let got = report(&out);
    let found = version_findings(&got);
    assert_eq!(found.len(), 1, "{}", show(&out));
    assert_eq!(found[0]["severity"], "error");
    assert_eq!(
        found[0]["message"],
        format!(
            "Kubernetes 1.29 is not in EKS Anywhere {}, the newest release with a Snow section (1.28, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)",
            release_site::SNOW_RELEASE
        )
    );

    // The site gone: the release from the cache, said so; the verdict the same.
    server.stop();
    let out = validate(dir.path(), &cluster, &files, &site);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("could not be fetched"),
        "{}",
        show(&out)
    );
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}
