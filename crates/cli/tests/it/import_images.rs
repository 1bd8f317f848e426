//! `snowctl import-images` end to end: two Debian `docker-registry` instances on loopback, the
//! source over plain HTTP (`--source-insecure`), the target over TLS from a test CA (`--ca-cert`).

use snow_test_devices::registry as support;

use assert_cmd::Command;
use support::{Registry, Tls};

use super::REFERENCE_BUNDLES as SAMPLE;

fn snowctl() -> Command {
    super::registry_snowctl(std::time::Duration::from_secs(60))
}

#[test]
fn list_prints_the_bundle_images_as_text_and_json() {
    let out = snowctl()
        .args(["import-images", "--list", "--bundles", SAMPLE])
        .args(["--kubernetes-version", "1.31", "--os", "ubuntu"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("kube-vip/kube-vip:"), "{text}");
    assert!(
        text.contains("eks-distro/kubernetes/kube-apiserver:v1.31"),
        "{text}"
    );
    assert!(!text.contains("bottlerocket"), "{text}");
    let out = snowctl()
        .args(super::sample_release(&[
            "import-images",
            "--list",
            "-o",
            "json",
        ]))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(json.as_array().unwrap().iter().any(|i| {
        i["uri"]
            .as_str()
            .unwrap()
            .contains("cluster-api-provider-aws-snow/manager")
    }));
}

#[test]
fn usage_errors_exit_2() {
    snowctl().args(["import-images"]).assert().code(2);
    snowctl()
        .args(super::sample_release(&[
            "import-images",
            "--list",
            "--kubernetes-version",
            "1.99",
        ]))
        .assert()
        .code(2);
}

#[test]
fn import_copies_then_a_rerun_copies_nothing_and_failures_exit_1() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (a, multi) = rt.block_on(async {
        let src = support::client(&[&source], None);
        let a = support::push_image(
            &src,
            &source,
            "eks-distro/kubernetes/pause",
            "v1",
            2,
            16 * 1024,
            &[],
        )
        .await;
        let multi =
            support::push_multi_platform(&src, &source, "kube-vip/kube-vip", "v1", 16 * 1024).await;
        (a, multi)
    });
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("images.txt");
    std::fs::write(
        &list,
        format!(
            "# what the site needs\npublic.ecr.aws/{}:{}\npublic.ecr.aws/{}:{}\n",
            a.path, a.tag, multi.path, multi.tag
        ),
    )
    .unwrap();
    let registry = format!("{}/site", target.host);
    let ca = tls.ca_file.to_str().unwrap().to_owned();
    let args = |extra: &[&str]| {
        let mut v: Vec<String> = vec![
            "import-images".into(),
            "--images-file".into(),
            list.to_str().unwrap().into(),
            "--registry".into(),
            registry.clone(),
            "--source-registry".into(),
            source.host.clone(),
            "--source-insecure".into(),
            "--ca-cert".into(),
            ca.clone(),
        ];
        v.extend(extra.iter().map(|s| (*s).to_owned()));
        v
    };

    let out = snowctl()
        .args(args(&[]))
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2 copied"), "{stdout}");
    rt.block_on(async {
        let dst = support::client(&[], Some(&tls.ca_pem));
        let (_, digest) =
            support::manifest(&dst, &format!("{}/site/{}:{}", target.host, a.path, a.tag)).await;
        assert_eq!(digest, a.digest);
    });

    let out = snowctl()
        .args(args(&["-o", "json"]))
        .assert()
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["upToDate"], 2, "{json}");
    assert_eq!(json["blobsCopied"], 0, "{json}");
    let out = snowctl()
        .args(args(&[]))
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to copy"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[2/2] "), "{stderr}");
    // -q: the same result on stdout, no progress on stderr.
    let quiet = snowctl()
        .args(args(&["-q"]))
        .assert()
        .success()
        .get_output()
        .clone();
    let said = String::from_utf8_lossy(&quiet.stdout);
    assert!(said.contains("2 already up to date"), "{said}");
    assert!(said.contains("nothing to copy"), "{said}");
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");

    // One missing image: the other is still handled, exit 1, the summary names the failure.
    let out = snowctl()
        .args(args(&["--image", "public.ecr.aws/no/such-image:v0"]))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 failed") && stdout.contains("failed: public.ecr.aws/no/such-image:v0"),
        "{stdout}"
    );

    // Without --ca-cert the self-signed registry is refused.
    let mut no_ca = args(&[]);
    no_ca.truncate(no_ca.len() - 2);
    no_ca[4] = format!("{}/other", target.host);
    snowctl().args(no_ca).assert().code(1);
}
