//! The registry mirror a cluster uses, through the binary: `describe cluster` and `get clusters`
//! say where it is and whether it answers (a running `snowctl registry serve` on loopback: it
//! answers; a closed port: refused; another CA in the spec: the TLS failure said plainly; no
//! mirror: none), and `generate clusterconfig` pre-fills the spec's mirror section from the CA
//! `registry serve --state-dir` wrote, which `validate` accepts.

use super::lifecycle::{Group, Mgmt, create, management, spec};
use super::{show, text};
use snow_test_devices::{TestCa, layout::Layout, registry as support};
use std::{
    net::IpAddr,
    path::Path,
    process::{Command, Output},
};

/// `snowctl registry serve` of a one-image layout on 127.0.0.1, with its state directory; the
/// server, its port and the state directory.
fn serve(dir: &Path) -> (std::process::Child, u16, std::path::PathBuf) {
    let mut layout = Layout::new(&dir.join("layout"));
    let image = layout.image("amd64", &support::random_bytes(1000));
    layout.name(&image, "public.ecr.aws/eks-distro/kubernetes/pause:v1");
    let root = layout.finish();
    let state = dir.join("state");
    let port = snow_test_kube::probe::free_addr().port();
    let (child, _) = super::registry::start(&root, &state, port);
    (child, port, state)
}

/// The `edge` spec with `mirror` (a `registryMirrorConfiguration:` block at column 0) under
/// its spec.
fn with_mirror(mirror: Option<&str>) -> String {
    let text = spec("192.168.1.100", &[Group("md-0", 1, "edge")], "sbe-c.large");
    let version = "  kubernetesVersion: \"1.33\"\n";
    assert!(text.contains(version));
    let block: String = mirror
        .unwrap_or_default()
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect();
    text.replace(version, &format!("{version}{block}"))
}

fn loopback() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

/// Records `text` as the spec snowctl applied for `edge` (its inventory's `spec.yaml`), as an
/// upgrade to that spec would.
fn record_spec(m: &Mgmt, text: &str) {
    let mut inventory = m
        .api
        .get("v1", "ConfigMap", Some("eksa-system"), "edge-snowctl")
        .expect("the create's inventory");
    inventory["data"]["spec.yaml"] = text.into();
    m.api.put(inventory).unwrap();
}

/// Runs snowctl on the management cluster with no device files (no device is contacted).
async fn on_management(m: &Mgmt, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(args)
        .arg("--kubeconfig")
        .arg(&m.kubeconfig)
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env_remove("KUBECONFIG");
    tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
        .await
        .unwrap()
}

/// `describe cluster edge`'s text from its mirror line on.
async fn mirror_part(m: &Mgmt) -> String {
    let out = on_management(m, &["describe", "cluster", "edge"]).await;
    assert!(out.status.success(), "{}", show(&out));
    let all = text(&out.stdout);
    let at = all.find("Registry mirror:").expect("a mirror line");
    all[at..].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_and_get_clusters_say_whether_the_mirror_answers_and_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port, state) = serve(dir.path());
    let ca = std::fs::read_to_string(state.join("ca.crt")).unwrap();
    let mirror = snow_registry::tls::mirror_configuration(&loopback(), port, Some(ca.as_str()));
    let m = management().await;
    let created = create(&m, &m.write_spec("edge.yaml", &with_mirror(Some(&mirror)))).await;
    assert!(created.status.success(), "{}", show(&created));

    let answering = mirror_part(&m).await;
    let json = on_management(&m, &["describe", "cluster", "edge", "-o", "json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("describe -o json");
    let shown = &json["registryMirror"];
    assert_eq!(shown["endpoint"], "127.0.0.1");
    assert_eq!(shown["port"], port.to_string());
    assert_eq!(shown["answer"]["state"], "answering", "{shown}");
    assert_eq!(shown["answer"]["status"], 200, "{shown}");
    let listed = on_management(&m, &["get", "clusters"]).await;
    assert!(listed.status.success(), "{}", show(&listed));
    assert!(
        text(&listed.stdout).contains(&format!("\t127.0.0.1:{port} answering\n")),
        "{}",
        show(&listed)
    );

    // The spec moved to a port where nothing listens.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = listener.local_addr().unwrap().port();
    drop(listener);
    let elsewhere =
        snow_registry::tls::mirror_configuration(&loopback(), closed, Some(ca.as_str()));
    record_spec(&m, &with_mirror(Some(&elsewhere)));
    let refused = mirror_part(&m).await;
    let listed = on_management(&m, &["get", "clusters"]).await;
    assert!(
        text(&listed.stdout).contains(&format!("\t127.0.0.1:{closed} not answering (refused)\n")),
        "{}",
        show(&listed)
    );

    // Another CA than the one that signed the mirror's certificate.
    let other = TestCa::new("another CA").unwrap();
    let distrusted = snow_registry::tls::mirror_configuration(&loopback(), port, Some(other.pem()));
    record_spec(&m, &with_mirror(Some(&distrusted)));
    let wrong_ca = mirror_part(&m).await;

    record_spec(&m, &with_mirror(None));
    let none = mirror_part(&m).await;
    super::registry::stop(server);

    let said = format!("{answering}---\n{refused}---\n{wrong_ca}---\n{none}",)
        .replace(&format!(":{port}"), ":[PORT]")
        .replace(&format!(":{closed}"), ":[CLOSED]");
    insta::assert_snapshot!("describe_registry_mirror", said);
}

fn snowctl() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
    cmd
}

#[test]
fn generate_fills_the_mirror_section_with_the_served_ca_and_validate_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port, state) = serve(dir.path());
    super::registry::stop(server);
    let ca_file = state.join("ca.crt");
    let out = snowctl()
        .args(["generate", "clusterconfig", "edge", "--provider", "snow"])
        .args(["--devices", "192.168.1.11", "--endpoint", "192.168.1.100"])
        .args(["--registry-mirror", &format!("127.0.0.1:{port}")])
        .arg("--registry-mirror-ca")
        .arg(&ca_file)
        .args(["--oci-namespace", "public.ecr.aws=eks-anywhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let generated = text(&out.stdout);
    // The nodes get the CA `registry serve` signs with, byte for byte.
    let spec = snow_api::check(&generated).unwrap().into_valid().unwrap();
    let mirror = spec.cluster.spec.registry_mirror_configuration.clone();
    let mirror = mirror.expect("a registryMirrorConfiguration");
    assert_eq!(
        mirror.ca_cert_content.as_deref().map(str::trim_end),
        Some(std::fs::read_to_string(&ca_file).unwrap().trim_end())
    );
    let path = dir.path().join("edge.yaml");
    std::fs::write(&path, &generated).unwrap();
    let validated = snowctl()
        .args(["validate", "--offline", "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(validated.status.code(), Some(0), "{}", show(&validated));
    let at = generated.find("  # The registry the nodes pull").unwrap();
    let section: String = generated[at..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::with_settings!({filters => vec![
        (r"(?s)-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", "[the CA of registry serve --state-dir]"),
        (r#"port: "\d+""#, "port: \"[PORT]\""),
    ]}, {
        insta::assert_snapshot!("generate_registry_mirror", section);
    });

    // A CA file that is not a PEM certificate and a port out of range: both said, exit 2.
    let not_pem = dir.path().join("not-a-ca.pem");
    std::fs::write(&not_pem, "hello\n").unwrap();
    let out = snowctl()
        .args(["generate", "clusterconfig", "edge", "--provider", "snow"])
        .args([
            "--registry-mirror",
            "10.0.0.5:70000",
            "--registry-mirror-ca",
        ])
        .arg(&not_pem)
        .args(["--oci-namespace", "public.ecr.aws"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(out.stdout.is_empty(), "{}", show(&out));
    let said = text(&out.stderr).replace(&dir.path().display().to_string(), "[DIR]");
    insta::assert_snapshot!("generate_registry_mirror_bad_flags", said);
}
