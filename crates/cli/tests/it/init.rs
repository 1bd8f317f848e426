//! `snowctl init` end to end: the real components manifests of `../shared/data` in a components
//! directory, a Bundles manifest naming their versions, the Kubernetes API stand-in with its
//! simulated deployment controller, the real binary.

use super::text;
use snow_test_devices::TestCa;
use snow_test_kube::components::SHIPPED;
use snow_test_kube::{KubeStandIn, WorkloadHandle, WorkloadOptions};
use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    process::Output,
};

const CREDENTIALS_KEY: &str = "secretINITdevicekey";

/// A Bundles manifest whose management components are the shipped files' versions.
fn bundles() -> String {
    bundles_at("https://bucket.example")
}

/// The same, its URIs under `base` (`<base>/<label>/<version>/<file>`).
fn bundles_at(base: &str) -> String {
    let uri = |label: &str, version: &str, file: &str| format!("{base}/{label}/{version}/{file}");
    let provider = |key: &str, label: &str, version: &str, file: &str| {
        format!(
            "    {key}:\n      components: {{uri: \"{}\"}}\n      metadata: {{uri: \"{}\"}}\n      controller: {{uri: \"registry.local/{label}:{version}\"}}\n      version: {version}+abcdef1\n",
            uri(label, version, file),
            uri(label, version, "metadata.yaml")
        )
    };
    let mut text = String::from(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Bundles\nmetadata: {name: init-test}\nspec:\n  number: 1\n  versionsBundles:\n  - kubeVersion: \"1.33\"\n    eksD: {name: kubernetes-1-33-eks-30}\n",
    );
    text.push_str(&format!(
        "    certManager:\n      manifest: {{uri: \"{}\"}}\n      version: v1.20.2+abcdef1\n",
        uri("cert-manager", "v1.20.2", "cert-manager.yaml")
    ));
    for (key, shipped) in [
        "clusterAPI",
        "bootstrap",
        "controlPlane",
        "etcdadmBootstrap",
        "etcdadmController",
    ]
    .iter()
    .zip(&SHIPPED[1..6])
    {
        text.push_str(&provider(
            key,
            shipped.label,
            shipped.version,
            shipped.asset,
        ));
    }
    text.push_str(&format!(
        "    snow:\n      components: {{uri: \"{}\"}}\n      metadata: {{uri: \"{}\"}}\n      manager: {{uri: \"registry.local/capas:v0.3.3\"}}\n      version: v0.3.3+abcdef1\n",
        uri("infrastructure-snow", "v0.3.3", "infrastructure-components.yaml"),
        uri("infrastructure-snow", "v0.3.3", "metadata.yaml")
    ));
    text
}

/// Every file of the stack by its path `/<label>/<version>/<file>`, as a release server holds it
/// (cert-manager has no metadata.yaml: it gets one here too, unused).
fn layout_files() -> std::collections::HashMap<String, Vec<u8>> {
    let mut files = std::collections::HashMap::new();
    for shipped in SHIPPED {
        let (label, version) = (shipped.label, shipped.version);
        files.insert(
            format!("/{label}/{version}/{}", shipped.asset),
            std::fs::read(shipped.path()).unwrap(),
        );
        let meta = shipped.metadata_bytes().unwrap();
        files.insert(format!("/{label}/{version}/metadata.yaml"), meta);
    }
    files
}

struct Site {
    api: KubeStandIn,
    _workloads: WorkloadHandle,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    components: PathBuf,
    bundles: PathBuf,
    credentials: PathBuf,
    ca_bundle: PathBuf,
}

/// The shipped stack as a components directory `dir/components` and a Bundles manifest naming
/// it, `dir/bundles.yaml`: `(components, bundles)`.
pub(super) fn components_dir(dir: &Path) -> (PathBuf, PathBuf) {
    let components = dir.join("components");
    for (path, bytes) in layout_files() {
        // The bundle's version with its build metadata, as EKS Anywhere's overrides folder has it.
        let mut parts = path.trim_start_matches('/').splitn(3, '/');
        let (label, version, file) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let version_dir = components.join(label).join(format!("{version}+abcdef1"));
        std::fs::create_dir_all(&version_dir).unwrap();
        std::fs::write(version_dir.join(file), bytes).unwrap();
    }
    let bundles = dir.join("bundles.yaml");
    std::fs::write(&bundles, self::bundles()).unwrap();
    (components, bundles)
}

/// Cluster API core's components file in a directory of [`components_dir`].
pub(super) fn core_file(components: &Path) -> PathBuf {
    let core = &SHIPPED[1];
    components
        .join(core.label)
        .join(format!("{}+abcdef1", core.version))
        .join(core.asset)
}

async fn site() -> Site {
    let api = KubeStandIn::start().await.expect("stand-in");
    let workloads = api.start_workloads(WorkloadOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let (components, bundles) = components_dir(dir.path());
    let ca = TestCa::new("devices").unwrap();
    let cert = ca
        .server_certificate("192.168.1.11".parse::<IpAddr>().unwrap())
        .unwrap();
    let credentials = dir.path().join("credentials");
    let ca_bundle = dir.path().join("ca-bundle.pem");
    std::fs::write(
        &credentials,
        format!("[192.168.1.11]\naws_access_key_id = AKIDINITDEVICE0\naws_secret_access_key = {CREDENTIALS_KEY}\nregion = snow\n"),
    )
    .unwrap();
    std::fs::write(&ca_bundle, cert.cert_pem).unwrap();
    Site {
        api,
        _workloads: workloads,
        dir,
        kubeconfig,
        components,
        bundles,
        credentials,
        ca_bundle,
    }
}

impl Site {
    /// `snowctl init` with the components, the bundle and `extra` arguments.
    async fn init(&self, extra: &[&str], with_credentials: bool) -> Output {
        self.snowctl(&["init"], extra, with_credentials).await
    }

    /// `snowctl upgrade management-components` with the components, the bundle and `extra`.
    async fn upgrade(&self, extra: &[&str]) -> Output {
        self.snowctl(&["upgrade", "management-components"], extra, true)
            .await
    }

    async fn snowctl(&self, command: &[&str], extra: &[&str], with_credentials: bool) -> Output {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
        cmd.args(command)
            .arg("--components-dir")
            .arg(&self.components)
            .arg("--bundles")
            .arg(&self.bundles)
            .arg("--poll-interval")
            .arg("20ms")
            .args(extra)
            .current_dir(self.dir.path())
            .env_remove("KUBECONFIG")
            .env_remove("EKSA_AWS_CREDENTIALS_FILE")
            .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
        if with_credentials {
            cmd.arg("--credentials")
                .arg(&self.credentials)
                .arg("--ca-bundle")
                .arg(&self.ca_bundle);
        }
        tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
            .await
            .unwrap()
    }

    fn kubeconfig(&self) -> &str {
        self.kubeconfig.to_str().unwrap()
    }
}

fn file(site: &Site, label: &str, version: &str, name: &str) -> PathBuf {
    site.components
        .join(label)
        .join(format!("{version}+abcdef1"))
        .join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_installs_the_stack_once_and_a_rerun_changes_nothing() {
    let site = site().await;
    let out = site.init(&["--kubeconfig", site.kubeconfig()], true).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Installing cluster-api v1.13.5"),
        "{stderr}"
    );
    assert!(
        stderr.contains("The Snow provider stack is installed"),
        "{stderr}"
    );
    assert!(!stderr.contains(CREDENTIALS_KEY) && !stdout.contains(CREDENTIALS_KEY));
    assert_eq!(stdout.lines().count(), 7, "{stdout}");
    assert!(stdout.contains("infrastructure-snow"), "{stdout}");
    assert_eq!(
        site.api
            .list("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", None)
            .len(),
        6
    );
    let writes = site.api.writes();
    let again = site.init(&["--kubeconfig", site.kubeconfig()], true).await;
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("nothing changed"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(site.api.writes(), writes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_prints_the_objects_with_secrets_redacted() {
    let site = site().await;
    let out = site.init(&["--dry-run"], true).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("name: capas-manager-bootstrap-credentials"));
    assert!(stdout.contains("<redacted>"));
    assert!(stdout.contains("kind: Provider"));
    let shown = site.init(&["--dry-run", "--show-secrets"], true).await;
    assert!(!text(&shown.stdout).contains("<redacted>"));
    assert_eq!(site.api.writes(), 0);
}

/// The value `--dry-run --show-secrets` prints for `key` of the CAPAS credentials Secret.
async fn shown_secret(site: &Site, key: &str) -> String {
    let out = site.init(&["--dry-run", "--show-secrets"], true).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text(&out.stdout)).unwrap();
    docs.iter()
        .find(|d| d["metadata"]["name"] == "capas-manager-bootstrap-credentials")
        .and_then(|d| d["data"][key].as_str())
        .expect("the CAPAS credentials Secret")
        .to_owned()
}

/// Whether `output` holds any 16 characters in a row of `secret`.
fn shows_part_of(output: &str, secret: &str) -> bool {
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(16)
        .any(|w| output.contains(&w.iter().collect::<String>()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn substituted_secrets_are_redacted_wherever_they_land() {
    let site = site().await;
    let credentials = shown_secret(&site, "credentials").await;
    let ca_bundles = shown_secret(&site, "ca-bundle").await;
    assert!(credentials.len() > 40 && ca_bundles.len() > 40);
    // A components file may put the device credentials anywhere: a ConfigMap, an annotation, a
    // key.
    let snow = file(
        &site,
        "infrastructure-snow",
        "v0.3.3",
        "infrastructure-components.yaml",
    );
    let mut manifest = std::fs::read_to_string(&snow).unwrap();
    manifest.push_str("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: copies\n  annotations:\n    copy: \"x-${AWS_B64ENCODED_CREDENTIALS}-y\"\ndata:\n  ca: ${AWS_B64ENCODED_CA_BUNDLES}\n  ${AWS_B64ENCODED_CREDENTIALS}: as-a-key\n");
    std::fs::write(&snow, manifest).unwrap();
    let out = site.init(&["--dry-run"], true).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("name: copies"), "{stdout}");
    for secret in [&credentials, &ca_bundles] {
        assert!(!shows_part_of(&stdout, secret) && !shows_part_of(&stderr, secret));
    }
    assert!(stdout.contains("copy: x-<redacted>-y"), "{stdout}");
    assert!(stdout.contains("ca: <redacted>"), "{stdout}");
    assert!(stdout.contains("<redacted>: as-a-key"), "{stdout}");
    // --show-secrets shows them.
    let shown = site.init(&["--dry-run", "--show-secrets"], true).await;
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text(&shown.stdout)).unwrap();
    let copies = docs
        .iter()
        .find(|d| d["metadata"]["name"] == "copies")
        .unwrap();
    assert_eq!(
        copies["metadata"]["annotations"]["copy"],
        format!("x-{credentials}-y")
    );
    assert_eq!(site.api.writes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yaml_error_quotes_the_line_as_written_never_a_substituted_secret() {
    let site = site().await;
    let credentials = shown_secret(&site, "credentials").await;
    let snow = file(
        &site,
        "infrastructure-snow",
        "v0.3.3",
        "infrastructure-components.yaml",
    );
    let mut manifest = std::fs::read_to_string(&snow).unwrap();
    let line = manifest.lines().count() + 3;
    manifest.push_str("\n---\nk: ${AWS_B64ENCODED_CREDENTIALS}: x: y\n");
    std::fs::write(&snow, manifest).unwrap();
    for extra in [&["--dry-run"][..], &["--kubeconfig", site.kubeconfig()]] {
        let out = site.init(extra, true).await;
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("cannot use the infrastructure-snow v0.3.3 components")
                && stderr.contains(&format!("not YAML at line {line}, column ")),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "{line} | k: ${{AWS_B64ENCODED_CREDENTIALS}}: x: y"
            )),
            "{stderr}"
        );
        assert!(
            !shows_part_of(&stderr, &credentials) && !shows_part_of(&stdout, &credentials),
            "{stderr}"
        );
    }
    assert_eq!(site.api.writes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_version_that_leaves_the_components_directory_is_refused() {
    let site = site().await;
    // A version that climbs out of --components-dir to a planted copy of Cluster API's files.
    let outside = site.dir.path().join("comp-outside").join("v1.13.5");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(site.components.join("cluster-api").join("v1.13.5")).unwrap();
    let core = file(&site, "cluster-api", "v1.13.5", "core-components.yaml");
    let mut planted = std::fs::read_to_string(core).unwrap();
    planted.push_str("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: read-from-outside, namespace: capi-system}\n");
    std::fs::write(outside.join("core-components.yaml"), planted).unwrap();
    std::fs::copy(
        file(&site, "cluster-api", "v1.13.5", "metadata.yaml"),
        outside.join("metadata.yaml"),
    )
    .unwrap();
    let climbing = bundles().replacen(
        "version: v1.13.5+abcdef1",
        "version: v1.13.5/../../../comp-outside/v1.13.5",
        1,
    );
    std::fs::write(&site.bundles, climbing).unwrap();
    let out = site.init(&["--dry-run"], true).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        !stdout.contains("read-from-outside"),
        "read outside: {stdout}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Bundles 1.33: clusterAPI.version \"v1.13.5/../../../comp-outside/v1.13.5\" cannot be part of a path"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_named_and_nothing_is_applied() {
    let site = site().await;
    // No device files: CAPAS' two variables are missing, both listed.
    let out = site.init(&["--kubeconfig", site.kubeconfig()], false).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .contains("infrastructure-snow: AWS_B64ENCODED_CA_BUNDLES, AWS_B64ENCODED_CREDENTIALS"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: set them in the environment"),
        "{stderr}"
    );

    // A components file that is not YAML.
    let core = file(&site, "cluster-api", "v1.13.5", "core-components.yaml");
    std::fs::write(&core, "kind: [unclosed\n").unwrap();
    let out = site.init(&["--kubeconfig", site.kubeconfig()], true).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot use the cluster-api v1.13.5 components"),
        "{stderr}"
    );
    assert!(stderr.contains("not YAML"), "{stderr}");

    // A missing file: which component, version and URI.
    std::fs::remove_file(&core).unwrap();
    let out = site.init(&["--kubeconfig", site.kubeconfig()], true).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cluster-api v1.13.5+abcdef1 components (https://bucket.example/cluster-api/v1.13.5/core-components.yaml)"),
        "{stderr}"
    );
    assert_eq!(site.api.writes(), 0);
    let _ = Path::new("unused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_is_said_so() {
    let site = site().await;
    site.api.stop();
    let out = site.init(&["--kubeconfig", site.kubeconfig()], true).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot reach the management cluster"),
        "{stderr}"
    );
}

/// Cluster API core, kubeadm bootstrap and control plane at v1.12.0 in the components
/// directory (the shipped files; the core with one more ConfigMap), installed by `snowctl init`
/// with a bundle naming that version; the site's bundle stays the shipped versions.
async fn install_older_stack(site: &Site) {
    for shipped in &SHIPPED[1..4] {
        let (label, asset) = (shipped.label, shipped.asset);
        let dir = site.components.join(label).join("v1.12.0+abcdef1");
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = shipped.text().unwrap();
        if label == "cluster-api" {
            text.push_str("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: capi-legacy-settings, namespace: capi-system}\ndata: {mode: legacy}\n");
        }
        std::fs::write(dir.join(asset), text).unwrap();
        std::fs::copy(
            file(site, label, "v1.13.5", "metadata.yaml"),
            dir.join("metadata.yaml"),
        )
        .unwrap();
    }
    std::fs::write(&site.bundles, bundles().replace("v1.13.5", "v1.12.0")).unwrap();
    let out = site.init(&["--kubeconfig", site.kubeconfig()], true).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(&site.bundles, bundles()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_management_components_prints_the_plan_then_upgrades() {
    let site = site().await;
    install_older_stack(&site).await;
    let legacy = || {
        site.api.get(
            "v1",
            "ConfigMap",
            Some("capi-system"),
            "capi-legacy-settings",
        )
    };
    assert!(legacy().is_some());

    // --dry-run: the plan only, nothing written.
    let writes = site.api.writes();
    let out = site
        .upgrade(&["--kubeconfig", site.kubeconfig(), "--dry-run"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    insta::assert_snapshot!("upgrade_management_components_plan", text(&out.stdout));
    assert_eq!(site.api.writes(), writes);

    // The real run: the plan, then the upgrade.
    let out = site.upgrade(&["--kubeconfig", site.kubeconfig()]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("NAME "), "{stdout}");
    assert!(
        stdout.contains("\n\ncert-manager                   v1.20.2          cert-manager                         up to date, unchanged\ncluster-api                    v1.13.5          capi-system                          upgraded from v1.12.0 (26 objects applied, 1 deleted)\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Upgrading cluster-api from v1.12.0 to v1.13.5"),
        "{stderr}"
    );
    assert!(
        stderr.contains("The Snow provider stack is upgraded"),
        "{stderr}"
    );
    assert!(!stderr.contains(CREDENTIALS_KEY) && !stdout.contains(CREDENTIALS_KEY));
    assert!(legacy().is_none());

    // The real kubectl sees the new versions.
    let cache = site.dir.path().join("kube-cache");
    let listed = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&site.kubeconfig)
        .arg("--cache-dir")
        .arg(&cache)
        .args([
            "get",
            "providers.clusterctl.cluster.x-k8s.io",
            "-A",
            "--no-headers",
            "-o",
            "custom-columns=NAME:.metadata.name,VERSION:.version",
        ])
        .output()
        .expect("kubectl runs");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let mut rows: Vec<String> = text(&listed.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            "bootstrap-etcdadm-bootstrap v1.0.19",
            "bootstrap-etcdadm-controller v1.0.28",
            "bootstrap-kubeadm v1.13.5",
            "cluster-api v1.13.5",
            "control-plane-kubeadm v1.13.5",
            "infrastructure-snow v0.3.3",
        ]
    );

    // Again: up to date, nothing written.
    let writes = site.api.writes();
    let out = site.upgrade(&["--kubeconfig", site.kubeconfig()]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Every component is up to date: apply changes nothing."),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).contains("nothing changed"));
    assert_eq!(site.api.writes(), writes);
}

/// `snowctl` with `args`, in the site's directory, no components directory.
async fn bare(site: &Site, args: Vec<String>) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(args)
        .current_dir(site.dir.path())
        .env("DOCKER_CONFIG", "/nonexistent-snowctl-test")
        .env_remove("KUBECONFIG")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
    tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
        .await
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// A release server over HTTPS (a test CA) holding the stack's files, and a Bundles manifest
/// naming them; the CA written to `ca.pem` in the site's directory.
async fn release_server(site: &Site) -> (snow_test_devices::FileServer, PathBuf, PathBuf) {
    let ca = TestCa::new("release assets").unwrap();
    let server =
        snow_test_devices::FileServer::start(snow_test_devices::loopback_ip(), &ca, layout_files())
            .await
            .unwrap();
    let bundles = site.dir.path().join("bundles-https.yaml");
    std::fs::write(&bundles, bundles_at(&server.base)).unwrap();
    let ca_file = site.dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    (server, bundles, ca_file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_fetches_the_components_over_https_and_a_rerun_needs_only_the_cache() {
    let site = site().await;
    let (server, bundles, ca) = release_server(&site).await;
    let cache = site.dir.path().join("cache");
    let p = |p: &Path| p.to_str().unwrap().to_owned();
    let init = |extra: &[&str]| {
        let mut args = strings(&["init", "--bundles", &p(&bundles), "--cache-dir", &p(&cache)]);
        args.extend(strings(&[
            "--credentials",
            &p(&site.credentials),
            "--ca-bundle",
            &p(&site.ca_bundle),
        ]));
        args.extend(strings(extra));
        args
    };
    // Without the CA the server's certificate is refused: component, version and URI named.
    let out = bare(&site, init(&["--dry-run"])).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("the cluster-api v1.13.5+abcdef1 components ({}/cluster-api/v1.13.5/core-components.yaml)", server.base))
            && stderr.contains("UnknownIssuer"),
        "{stderr}"
    );
    let out = bare(&site, init(&["--dry-run", "--ca-cert", &p(&ca)])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("components: 13 file(s) fetched, 0 from the cache"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("kind: Provider"));
    let fetched = server.requests();
    assert_eq!(fetched, 13);

    // The server gone: everything comes from the cache.
    server.stop();
    let out = bare(
        &site,
        init(&["--kubeconfig", site.kubeconfig(), "--poll-interval", "20ms"]),
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("components: 0 file(s) fetched, 13 from the cache"),
        "{stderr}"
    );
    assert!(
        stderr.contains("The Snow provider stack is installed"),
        "{stderr}"
    );
    assert_eq!(
        site.api
            .list("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", None)
            .len(),
        6
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_from_an_archive_alone_with_every_server_stopped() {
    use snow_test_devices::registry as support;
    let site = site().await;
    let (server, bundles, ca) = release_server(&site).await;
    let registry = support::Registry::start(None);
    let image = support::push_image(
        &support::client(&[&registry], None),
        &registry,
        "eks-distro/kubernetes/pause",
        "v1",
        1,
        1024,
        &[],
    )
    .await;
    let p = |p: &Path| p.to_str().unwrap().to_owned();
    let archive = site.dir.path().join("artifacts.tar");
    let cache = site.dir.path().join("download-cache");
    // With Flux in the bundle, its install manifest goes into the archive too; the published
    // one (github.com) is carried into the cache by hand, so the download stays offline.
    let mut with_flux = std::fs::read_to_string(&bundles).unwrap();
    with_flux.push_str("    flux:\n      version: v2.8.8+abcdef1\n");
    for (key, name) in [
        ("sourceController", "source-controller"),
        ("kustomizeController", "kustomize-controller"),
        ("helmController", "helm-controller"),
        ("notificationController", "notification-controller"),
    ] {
        with_flux.push_str(&format!(
            "      {key}: {{uri: \"registry.local/fluxcd/{name}:v1.9.0\"}}\n"
        ));
    }
    std::fs::write(&bundles, &with_flux).unwrap();
    let flux_bundle = snow_api::release::Bundles::from_yaml(&with_flux)
        .unwrap()
        .spec
        .versions_bundles
        .remove(0);
    let flux_asset =
        snow_api::release::flux_install_asset(&flux_bundle, snow_api::release::FLUX_RELEASES)
            .unwrap()
            .unwrap();
    let install = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi-render/tests/data/flux/install.yaml"),
    )
    .unwrap();
    snow_images::assets::cache_file(&cache, &flux_asset, &install).unwrap();
    let out = bare(
        &site,
        strings(&[
            "download",
            "artifacts",
            "--output-file",
            &p(&archive),
            "--bundles",
            &p(&bundles),
            "--image",
            &format!("public.ecr.aws/{}:{}", image.path, image.tag),
            "--source-registry",
            &registry.host,
            "--source-insecure",
            "--ca-cert",
            &p(&ca),
            "--cache-dir",
            &p(&cache),
        ]),
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    // bundles.yaml, images.json, the 13 files of the 7 components (cert-manager has no
    // metadata.yaml) and Flux's install manifest.
    let stdout = text(&out.stdout);
    assert!(stdout.contains(", 16 file(s)"), "{stdout}");
    assert!(
        text(&out.stderr).contains("components: 13 file(s) fetched, 1 from the cache"),
        "{}",
        text(&out.stderr)
    );
    let opened = snow_images::Archive::open(&archive).unwrap();
    let flux = snow_provision::flux_manifest::FluxManifest::Archive(&opened)
        .resolve(&flux_bundle)
        .await
        .unwrap();
    assert_eq!(flux.text, install);
    drop(opened);
    server.stop();
    drop(registry);
    std::fs::remove_dir_all(&cache).unwrap();

    let out = bare(
        &site,
        strings(&[
            "init",
            "--artifacts",
            &p(&archive),
            "--kubeconfig",
            site.kubeconfig(),
            "--credentials",
            &p(&site.credentials),
            "--ca-bundle",
            &p(&site.ca_bundle),
            "--cache-dir",
            &p(&cache),
            "--poll-interval",
            "20ms",
        ]),
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("The Snow provider stack is installed"),
        "{stderr}"
    );
    assert!(!cache.exists(), "init --artifacts touched the cache");
    assert_eq!(
        site.api
            .list("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", None)
            .len(),
        6
    );

    // An archive without the components names what it lacks.
    let bare_archive = site.dir.path().join("images-only.tar");
    let registry = support::Registry::start(None);
    let image = support::push_image(
        &support::client(&[&registry], None),
        &registry,
        "x/pause",
        "v1",
        1,
        512,
        &[],
    )
    .await;
    let out = bare(
        &site,
        strings(&[
            "download",
            "artifacts",
            "--output-file",
            &p(&bare_archive),
            "--bundles",
            &p(&bundles),
            "--no-components",
            "--image",
            &format!("public.ecr.aws/{}:{}", image.path, image.tag),
            "--source-registry",
            &registry.host,
            "--source-insecure",
        ]),
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = bare(
        &site,
        strings(&["init", "--artifacts", &p(&bare_archive), "--dry-run"]),
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("lacks management components")
            && stderr.contains(
                "snowctl/manifests/components/cluster-api/v1.13.5+abcdef1/core-components.yaml"
            ),
        "{stderr}"
    );
}
