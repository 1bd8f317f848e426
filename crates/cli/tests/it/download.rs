//! `snowctl download artifacts` then `snowctl import-images --from` end to end: the source
//! registry (plain HTTP) is stopped before the import into the site registry (TLS, test CA).

use snow_test_devices::registry as support;

use assert_cmd::Command;
use support::{Registry, Tls};

use super::REFERENCE_BUNDLES as SAMPLE;

fn snowctl() -> Command {
    super::registry_snowctl(std::time::Duration::from_secs(120))
}

#[test]
fn download_artifacts_then_import_from_the_archive_offline() {
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
    let file = dir.path().join("artifacts.tar");
    let uri_a = format!("public.ecr.aws/{}:{}", a.path, a.tag);
    let uri_multi = format!("public.ecr.aws/{}:{}", multi.path, multi.tag);
    let download = |extra: &[&str]| {
        let mut cmd = snowctl();
        cmd.args([
            "download",
            "artifacts",
            "--output-file",
            file.to_str().unwrap(),
        ])
        .args(["--image", &uri_a, "--image", &uri_multi])
        .args(["--source-registry", &source.host, "--source-insecure"])
        .args(["--bundles", SAMPLE, "--no-components"])
        .args(extra);
        cmd
    };
    let out = download(&["--platform", "all"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2 image(s): 2 downloaded"), "{stdout}");
    assert!(
        stdout.contains("archive ") && stdout.contains("distinct blob(s)"),
        "{stdout}"
    );
    // A re-run has everything already.
    let out = download(&["--platform", "all", "-o", "json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["archive"]["images"], 2, "{json}");
    assert!(
        json["report"]["images"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == "up-to-date"),
        "{json}"
    );
    download(&["--platform", "amd64"]).assert().code(2);
    drop(source);

    let out = snowctl()
        .args(["import-images", "--from", file.to_str().unwrap(), "--list"])
        .assert()
        .success()
        .get_output()
        .clone();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains(&format!("{uri_a} {}", a.digest)),
        "{listed}"
    );
    assert!(
        listed.contains(&format!("{uri_multi} {}", multi.digest)),
        "{listed}"
    );

    // The archive's release manifests stand in for --bundles (here: the sample it was made from).
    let run = |args: &[&str]| snowctl().args(args).output().unwrap();
    let spec = dir.path().join("cluster.yaml");
    let generate = ["generate", "clusterconfig", "edge", "--provider", "snow"];
    let out = run(&[
        &generate[..],
        &["--devices", "192.168.1.11", "--endpoint", "192.168.1.100"],
    ]
    .concat());
    std::fs::write(&spec, &out.stdout).unwrap();
    let (spec, archive) = (spec.to_str().unwrap(), file.to_str().unwrap());
    for (command, rest) in [
        (vec!["render", "-f", spec, "--no-secrets"], "render"),
        (vec!["import-images", "--list"], "list"),
    ] {
        let with_archive = run(&[&command[..], &["--artifacts", archive]].concat());
        let with_bundles = run(&[&command[..], &["--bundles", SAMPLE]].concat());
        assert!(
            with_archive.status.success(),
            "{rest}: {}",
            String::from_utf8_lossy(&with_archive.stderr)
        );
        assert!(!with_archive.stdout.is_empty());
        assert_eq!(with_archive.stdout, with_bundles.stdout, "{rest}");
    }
    let not_an_archive = run(&["render", "-f", spec, "--no-secrets", "--artifacts", spec]);
    assert_eq!(not_an_archive.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&not_an_archive.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("not a tar"),
        "{stderr}"
    );
    let both = run(&[
        "render",
        "-f",
        spec,
        "--artifacts",
        archive,
        "--bundles",
        SAMPLE,
    ]);
    assert_eq!(both.status.code(), Some(2));

    let registry = format!("{}/site", target.host);
    let import = || {
        let mut cmd = snowctl();
        cmd.args([
            "import-images",
            "--from",
            file.to_str().unwrap(),
            "-r",
            &registry,
        ])
        .args(["--ca-cert", tls.ca_file.to_str().unwrap()]);
        cmd
    };
    let out = import().assert().success().get_output().clone();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2 copied"),
        "{out:?}"
    );
    rt.block_on(async {
        let dst = support::client(&[], Some(&tls.ca_pem));
        let (_, digest) =
            support::manifest(&dst, &format!("{}/site/{}:{}", target.host, a.path, a.tag)).await;
        assert_eq!(digest, a.digest);
        // --platform all kept the index byte for byte, every platform with it.
        let (_, digest) = support::manifest(
            &dst,
            &format!("{}/site/{}:{}", target.host, multi.path, multi.tag),
        )
        .await;
        assert_eq!(digest, multi.digest);
    });
    let out = import().assert().success().get_output().clone();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("nothing to copy"),
        "{out:?}"
    );

    // Not an archive: a usage error naming the file.
    let junk = dir.path().join("junk.tar");
    std::fs::write(&junk, b"hello").unwrap();
    let out = snowctl()
        .args([
            "import-images",
            "--from",
            junk.to_str().unwrap(),
            "-r",
            &registry,
        ])
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a tar archive"),
        "{out:?}"
    );
}

/// A download onto a disk that fills up (a real tmpfs: ENOSPC from the kernel) stops with exit 1
/// and says which file, that the disk is full and what to do; with room again the same command
/// finishes the archive.
#[allow(
    clippy::print_stderr,
    reason = "the transcript docs/ quotes, with `--nocapture`"
)]
#[test]
fn a_full_disk_is_said_and_the_same_command_finishes_once_there_is_room() {
    let source = Registry::start(None);
    let disk = snow_test_devices::small_disk::SmallDisk::mount(384);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let uris: Vec<String> = rt.block_on(async {
        let src = support::client(&[&source], None);
        let mut uris = Vec::new();
        for path in ["etcd-io/etcd", "cilium/cilium"] {
            let p = support::push_image(&src, &source, path, "v1", 4, 128 * 1024, &[]).await;
            uris.push(format!("public.ecr.aws/{}:{}", p.path, p.tag));
        }
        uris
    });
    let file = disk.path().join("snow-artifacts.tar");
    let download = || {
        let mut cmd = snowctl();
        cmd.args([
            "download",
            "artifacts",
            "--output-file",
            file.to_str().unwrap(),
        ])
        .args(["--image", &uris[0], "--image", &uris[1]])
        .args(["--source-registry", &source.host, "--source-insecure"])
        .args(["--bundles", SAMPLE, "--no-components"]);
        cmd
    };
    let out = download().output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprintln!(
        "--- first run, exit {:?}\n{stdout}{stderr}",
        out.status.code()
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let partial = format!("{}.partial", file.display());
    assert!(
        stderr.contains(&format!(
            "error: no space left on the disk holding {partial}: the partial archive is kept"
        )) && stderr.contains("run the same download again"),
        "{stderr}"
    );
    assert!(stderr.contains("the disk is full"), "{stderr}");
    assert!(std::path::Path::new(&partial).exists() && !file.exists());

    disk.grow(4096);
    let out = download().output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "--- after the disk was given room, exit {:?}\n{stdout}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("0 failed"), "{stdout}");
    assert!(file.exists() && !std::path::Path::new(&partial).exists());
}
