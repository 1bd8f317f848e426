//! `snowctl render` and `snowctl create cluster --dry-run`, run as a user would.

use assert_cmd::Command;
use std::path::PathBuf;

fn snowctl() -> Command {
    let mut cmd = Command::cargo_bin("snowctl").expect("binary is built");
    cmd.env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
    cmd
}

fn generated(dir: &tempfile::TempDir, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "generate",
        "clusterconfig",
        "edge",
        "--provider",
        "snow",
        "--devices",
        "192.168.1.11,192.168.1.12",
        "--endpoint",
        "192.168.1.100",
    ];
    args.extend_from_slice(extra);
    let out = snowctl().args(&args).output().unwrap();
    assert!(out.status.success());
    let path = dir.path().join("cluster.yaml");
    std::fs::write(&path, out.stdout).unwrap();
    path
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = snowctl().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn render_works_offline_with_no_flags_and_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let spec = generated(&dir, &[]);
    let spec = spec.to_str().unwrap();
    let (code, first, stderr) = run(&["render", "-f", spec]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("identity Secret is left out"), "{stderr}");
    let (_, second, _) = run(&["render", "-f", spec]);
    assert_eq!(first, second);
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&first).unwrap();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds[..4],
        [
            "Cluster",
            "KubeadmControlPlane",
            "AWSSnowCluster",
            "AWSSnowMachineTemplate"
        ]
    );
    assert!(
        docs.iter()
            .all(|d| d["metadata"]["namespace"] == "eksa-system")
    );
    let dry_run = super::sample_release(&["create", "cluster", "-f", spec, "--dry-run"]);
    let dry_run: Vec<&str> = dry_run.iter().map(String::as_str).collect();
    let (code, dry, _) = run(&dry_run);
    assert_eq!(code, 0);
    assert_eq!(dry, first);
    let (code, v1, _) = run(&[
        "render",
        "-f",
        spec,
        "--contract",
        "v1beta1",
        "--no-secrets",
    ]);
    assert_eq!(code, 0);
    assert!(v1.contains("apiVersion: cluster.x-k8s.io/v1beta1"));
}

#[test]
fn render_refuses_invalid_specs_and_unknown_versions() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let out = snowctl()
        .args(["generate", "clusterconfig", "edge", "--provider", "snow"])
        .output()
        .unwrap();
    std::fs::write(&bad, out.stdout).unwrap();
    let (code, stdout, stderr) = run(&["render", "-f", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("endpoint.host") && stderr.contains("not rendered"),
        "{stderr}"
    );

    // generate refuses a version the catalog lacks: the spec is edited as a user would.
    let old = generated(&dir, &[]);
    let text = std::fs::read_to_string(&old).unwrap();
    let default = format!(
        "kubernetesVersion: \"{}\"",
        snow_api::template::DEFAULT_KUBERNETES_VERSION
    );
    assert!(text.contains(&default), "{text}");
    std::fs::write(&old, text.replace(&default, "kubernetesVersion: \"1.28\"")).unwrap();
    let (code, _, stderr) = run(&["render", "-f", old.to_str().unwrap(), "--no-secrets"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("has no Kubernetes 1.28; available: 1.30"),
        "{stderr}"
    );
}

#[test]
fn a_bundles_file_overrides_the_embedded_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let spec = generated(&dir, &["--kubernetes-version", "1.31"]);
    let bundle = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/bundles/eksa-bundle-release-sample.yaml");
    let (code, out, stderr) = run(&[
        "render",
        "-f",
        spec.to_str().unwrap(),
        "--bundles",
        bundle.to_str().unwrap(),
        "--no-secrets",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("kube-vip/kube-vip:v1.2.0-eks-a-v0.0.0-dev-build.1"));
    let no_snow = dir.path().join("bundle.yaml");
    std::fs::write(
        &no_snow,
        std::fs::read_to_string(&bundle)
            .unwrap()
            .replace("    snow:\n", "    notSnow:\n"),
    )
    .unwrap();
    let (code, _, stderr) = run(&[
        "render",
        "-f",
        spec.to_str().unwrap(),
        "--bundles",
        no_snow.to_str().unwrap(),
        "--no-secrets",
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("missing the snow section"), "{stderr}");
}

#[test]
fn an_existing_cluster_renders_as_an_upgrade_plan() {
    let dir = tempfile::tempdir().unwrap();
    let spec = generated(&dir, &[]);
    let (_, live, _) = run(&["render", "-f", spec.to_str().unwrap(), "--no-secrets"]);
    let live_path = dir.path().join("live.yaml");
    std::fs::write(&live_path, live).unwrap();
    let changed = dir.path().join("changed.yaml");
    std::fs::write(
        &changed,
        std::fs::read_to_string(&spec)
            .unwrap()
            .replace("sbe-c.large", "sbe-c.xlarge"),
    )
    .unwrap();
    let (code, out, stderr) = run(&[
        "render",
        "-f",
        changed.to_str().unwrap(),
        "--existing",
        live_path.to_str().unwrap(),
        "--no-secrets",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("AWSSnowMachineTemplate/edge-control-plane-2 (replaces AWSSnowMachineTemplate/edge-control-plane-1)"), "{stderr}");
    assert!(
        stderr.contains("AWSSnowMachineTemplate/edge-md-0-2"),
        "{stderr}"
    );
    assert!(out.contains("name: edge-md-0-2"));
}

/// A device certificate with an IP SAN, valid for a year.
fn cert(ip: &str) -> String {
    let mut params = rcgen::CertificateParams::new(vec![ip.to_owned()]).unwrap();
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(365);
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    params.self_signed(&key).unwrap().pem()
}

#[test]
fn the_identity_secret_is_rendered_from_the_files_and_decodes_like_capas_reads_it() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let dir = tempfile::tempdir().unwrap();
    let spec = generated(&dir, &[]);
    let creds_text = "[192.168.1.11]\naws_access_key_id = AKIDRENDERTEST000001\naws_secret_access_key = renderSecret/0001+abc\nregion = snow\n\n[192.168.1.12]\naws_access_key_id = AKIDRENDERTEST000002\naws_secret_access_key = renderSecret/0002+abc\nregion = snow\n";
    let bundle_text = format!("{}{}", cert("192.168.1.11"), cert("192.168.1.12"));
    let creds = dir.path().join("creds");
    let bundle = dir.path().join("bundle.pem");
    std::fs::write(&creds, creds_text).unwrap();
    std::fs::write(&bundle, &bundle_text).unwrap();
    let out = snowctl()
        .args(["render", "-f", spec.to_str().unwrap()])
        .env("EKSA_AWS_CREDENTIALS_FILE", &creds)
        .env("EKSA_AWS_CA_BUNDLES_FILE", &bundle)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for key in [
        "AKIDRENDERTEST000001",
        "renderSecret/0001+abc",
        "renderSecret/0002+abc",
    ] {
        // In clear text and base64-encoded on its own (the file's base64 in the Secret is what
        // the Secret is for).
        let encoded = base64::engine::general_purpose::STANDARD.encode(key);
        for secret in [key, encoded.as_str()] {
            assert!(
                !stdout.contains(secret) && !stderr.contains(secret),
                "{secret} leaked"
            );
        }
    }
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&stdout).unwrap();
    let secret = docs
        .iter()
        .find(|d| d["kind"] == "Secret")
        .expect("a Secret");
    assert_eq!(secret["metadata"]["name"], "edge-snow-credentials");
    assert_eq!(secret["metadata"]["namespace"], "eksa-system");
    assert_eq!(
        secret["metadata"]["labels"]["clusterctl.cluster.x-k8s.io/move"],
        "true"
    );
    // A kube client decodes `data` once; CAPAS gets base64 text and decodes it again.
    let once = b64
        .decode(secret["data"]["credentials"].as_str().unwrap())
        .unwrap();
    assert_eq!(b64.decode(once).unwrap(), creds_text.as_bytes());
    let once = b64
        .decode(secret["data"]["ca-bundle"].as_str().unwrap())
        .unwrap();
    assert_eq!(b64.decode(once).unwrap(), bundle_text.as_bytes());
    let snow_cluster = docs.iter().find(|d| d["kind"] == "AWSSnowCluster").unwrap();
    assert_eq!(
        snow_cluster["spec"]["identityRef"]["name"],
        "edge-snow-credentials"
    );
}
