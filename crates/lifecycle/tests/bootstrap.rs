//! The bootstrap cluster: the kind driver's generated files (snapshots) and argument contract,
//! run against a `kind` the test writes (it records its arguments and, on `create cluster`,
//! writes a kubeconfig for a Kubernetes API stand-in); the existing-cluster bootstrap against a
//! stand-in; and an opt-in run with the real kind and docker (`SNOWCTL_E2E_KIND=1`).

use snow_api::{ValidSpec, release::ReleaseInputs};
use snow_lifecycle::{
    Event, LifecycleError,
    bootstrap::{self, Bootstrap, BootstrapCluster, Existing, Kind, KindOptions},
};
use snow_test_kube::{KubeStandIn, kind::FakeKind};
use std::{
    path::{Path, PathBuf},
    time::Duration,
};

const MIRROR: &str = "  registryMirrorConfiguration:
    endpoint: 10.0.0.7
    port: \"5000\"
    ociNamespaces:
    - {registry: public.ecr.aws, namespace: eks-anywhere}
    - {registry: 783794618700.dkr.ecr.us-west-2.amazonaws.com, namespace: curated-packages}
    caCertContent: |
      -----BEGIN CERTIFICATE-----
      MIIBmirrorCA
      -----END CERTIFICATE-----
";

fn spec(version: &str, mirror: bool) -> ValidSpec {
    let mut text = format!(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {{name: mgmt}}
spec:
  clusterNetwork:
    cniConfig: {{cilium: {{}}}}
    pods: {{cidrBlocks: [10.1.0.0/16]}}
    services: {{cidrBlocks: [10.96.0.0/12]}}
  controlPlaneConfiguration:
    count: 1
    endpoint: {{host: 10.0.0.4}}
    machineGroupRef: {{kind: SnowMachineConfig, name: cp}}
  datacenterRef: {{kind: SnowDatacenterConfig, name: dc}}
  kubernetesVersion: \"{version}\"
  workerNodeGroupConfigurations:
  - name: md-0
    count: 1
    machineGroupRef: {{kind: SnowMachineConfig, name: cp}}
"
    );
    if mirror {
        text.push_str(MIRROR);
    }
    text.push_str(
        "---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowDatacenterConfig
metadata: {name: dc}
spec: {}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata: {name: cp}
spec:
  amiID: ami-0123456789abcdef0
  devices: [10.0.0.2]
  instanceType: sbe-c.large
  osFamily: ubuntu
  sshKeyName: default
  physicalNetworkConnector: SFP_PLUS
  network:
    directNetworkInterfaces:
    - {index: 1, primary: true, dhcp: true}
",
    );
    snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

fn files(version: &str, mirror: bool) -> String {
    let inputs = ReleaseInputs::embedded().unwrap();
    let spec = spec(version, mirror);
    let release = inputs.resolve(&spec, None).unwrap();
    let files = bootstrap::kind_files(&spec, &release, Path::new("/site/mgmt/generated"));
    let image = bootstrap::kind_node_image(&spec, &release).unwrap();
    let mut out = format!(
        "# image\n{image}\n# {}\n{}# {}\n{}",
        bootstrap::CONFIG_FILE,
        files.config,
        bootstrap::AUDIT_POLICY_FILE,
        files.audit_policy
    );
    for (path, content) in &files.certs {
        out.push_str(&format!("# {}\n{content}", path.display()));
    }
    out
}

#[test]
fn kind_config_of_a_1_30_cluster() {
    insta::assert_snapshot!(files("1.30", false));
}

#[test]
fn kind_config_of_a_1_31_cluster_with_a_registry_mirror() {
    let text = files("1.31", true);
    // The generated config is YAML kind can read.
    let config = text.split("# kind_tmp.yaml\n").nth(1).unwrap();
    let config = config.split("# kubernetes/").next().unwrap();
    let parsed: serde_json::Value = serde_saphyr::from_str(config).unwrap();
    assert_eq!(parsed["nodes"].as_array().unwrap().len(), 1);
    insta::assert_snapshot!(text);
}

/// The recording `kind` (`snow_test_kube::kind`) whose clusters are a Kubernetes API stand-in.
struct Fake {
    kind: FakeKind,
    api: KubeStandIn,
}

impl Fake {
    async fn new() -> Fake {
        let api = KubeStandIn::start().await.expect("stand-in");
        let kind = FakeKind::new(&api.kubeconfig()).unwrap();
        Fake { kind, api }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.kind.path(name)
    }

    fn options(&self) -> KindOptions {
        KindOptions {
            dir: self.path("site"),
            search_path: Some(self.path("bin").into_os_string()),
            command_timeout: Duration::from_secs(30),
            create_timeout: Duration::from_secs(30),
            ..KindOptions::default()
        }
    }

    fn kind(&self, options: KindOptions) -> Kind {
        let inputs = ReleaseInputs::embedded().unwrap();
        let spec = spec("1.30", true);
        let release = inputs.resolve(&spec, None).unwrap();
        Kind::new(&spec, &release, options).unwrap()
    }

    fn calls(&self) -> Vec<Vec<String>> {
        self.kind.calls()
    }
}

fn args(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_creates_once_is_found_again_and_is_deleted() {
    let fake = Fake::new().await;
    let kind = fake.kind(fake.options());
    let generated = fake.path("site/mgmt/generated");
    let kubeconfig = generated.join("mgmt.kind.kubeconfig");
    let config = generated.join("kind_tmp.yaml");
    assert_eq!(kind.kubeconfig(), kubeconfig);

    let mut events = Vec::new();
    let mgmt = kind.create_or_find(&mut |e| events.push(e)).await.unwrap();
    mgmt.ping().await.unwrap();
    assert_eq!(
        events,
        [
            Event::Step("Creating new bootstrap cluster".into()),
            Event::Applied {
                object: "Namespace/eksa-system".into()
            }
        ]
    );
    let image = "10.0.0.7:5000/eks-anywhere/release-container-registry/kubernetes-sigs/kind/node:v1.30.14-eks-d-1-30-58-eks-a-v0.0.0-dev-build.1";
    assert_eq!(
        fake.calls(),
        [
            args(&["get", "clusters"]),
            args(&[
                "create",
                "cluster",
                "--name",
                "mgmt-eks-a-cluster",
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "--image",
                image,
                "--config",
                config.to_str().unwrap(),
            ]),
        ]
    );
    // kind read the generated config, and the files it mounts are where it says.
    let seen = std::fs::read_to_string(fake.path("config.seen")).unwrap();
    assert_eq!(seen, kind.files().config);
    assert!(seen.contains(&format!(
        "hostPath: \"{}/kubernetes/audit-policy.yaml\"",
        generated.display()
    )));
    assert_eq!(
        std::fs::read_to_string(generated.join("kubernetes/audit-policy.yaml")).unwrap(),
        bootstrap::AUDIT_POLICY
    );
    let hosts =
        std::fs::read_to_string(generated.join("certs.d/public.ecr.aws/hosts.toml")).unwrap();
    assert!(
        hosts.contains("[host.\"https://10.0.0.7:5000/v2/eks-anywhere\"]"),
        "{hosts}"
    );
    assert!(generated.join("certs.d/10.0.0.7:5000/ca.crt").is_file());
    assert!(
        fake.api
            .get("v1", "Namespace", None, "eksa-system")
            .is_some(),
        "eksa-system was created on the cluster"
    );

    // A re-run finds it: no second create (the fake, like kind, would refuse one).
    let mut again = Vec::new();
    kind.create_or_find(&mut |e| again.push(e)).await.unwrap();
    assert_eq!(
        again[0],
        Event::Step("Using existing bootstrap cluster mgmt-eks-a-cluster".into())
    );
    let calls = fake.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2], args(&["get", "clusters"]));

    // A re-run that lost the kubeconfig file exports it again.
    std::fs::remove_file(&kubeconfig).unwrap();
    kind.create_or_find(&mut |_| {}).await.unwrap();
    assert_eq!(
        fake.calls()[4],
        args(&[
            "export",
            "kubeconfig",
            "--name",
            "mgmt-eks-a-cluster",
            "--kubeconfig",
            kubeconfig.to_str().unwrap()
        ])
    );

    let mut deleting = Vec::new();
    kind.delete(&mut |e| deleting.push(e)).await.unwrap();
    assert_eq!(deleting, [Event::Step("Deleting bootstrap cluster".into())]);
    assert_eq!(
        fake.calls().last().unwrap(),
        &args(&[
            "delete",
            "cluster",
            "--name",
            "mgmt-eks-a-cluster",
            "--kubeconfig",
            kubeconfig.to_str().unwrap()
        ])
    );
    assert_eq!(std::fs::read_to_string(fake.path("clusters")).unwrap(), "");

    // After delete, the next run creates anew.
    let mut fresh = Vec::new();
    kind.create_or_find(&mut |e| fresh.push(e)).await.unwrap();
    assert_eq!(
        fresh[0],
        Event::Step("Creating new bootstrap cluster".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_failure_carries_the_exit_status_and_stderr() {
    let fake = Fake::new().await;
    std::fs::write(
        fake.path("fail"),
        "Creating cluster ...\nERROR: failed to create cluster: could not find a log line that matches \"Reached target .*Multi-User System.*\"\n",
    )
    .unwrap();
    let kind = fake.kind(fake.options());
    let err = kind.create_or_find(&mut |_| {}).await.unwrap_err();
    let LifecycleError::Command {
        command,
        status,
        stderr,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert!(
        command.contains("create cluster --name mgmt-eks-a-cluster"),
        "{command}"
    );
    assert_eq!(status, "exit status 1");
    assert!(stderr.ends_with("Multi-User System.*\""), "{stderr}");
    assert!(
        err.to_string()
            .contains("failed (exit status 1):\nCreating cluster"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_kind_or_docker_names_the_existing_cluster_alternative_and_no_cli_flag() {
    let fake = Fake::new().await;
    let empty = fake.path("empty");
    std::fs::create_dir(&empty).unwrap();

    let no_kind = fake.kind(KindOptions {
        search_path: Some(empty.clone().into_os_string()),
        ..fake.options()
    });
    let err = no_kind.create_or_find(&mut |_| {}).await.unwrap_err();
    assert!(
        matches!(&err, LifecycleError::ToolMissing { tool, .. } if tool == "kind"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("an existing cluster") && !err.to_string().contains("--"),
        "{err}"
    );

    let no_docker = fake.kind(KindOptions {
        docker: empty.join("docker"),
        ..fake.options()
    });
    for err in [
        no_docker.create_or_find(&mut |_| {}).await.unwrap_err(),
        no_docker.delete(&mut |_| {}).await.unwrap_err(),
    ] {
        assert!(
            matches!(&err, LifecycleError::ToolMissing { tool, .. } if tool.ends_with("docker")),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("an existing cluster") && !err.to_string().contains("--"),
            "{err}"
        );
    }
    assert!(fake.calls().is_empty(), "kind never ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_cluster_is_connected_to_and_left_alone() {
    let api = KubeStandIn::start().await.expect("stand-in");
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let existing = Bootstrap::Existing(Existing::new(&kubeconfig, None));
    assert_eq!(existing.kubeconfig(), kubeconfig);

    let mut events = Vec::new();
    let mgmt = existing
        .create_or_find(&mut |e| events.push(e))
        .await
        .unwrap();
    assert_eq!(
        events,
        [Event::Step(format!(
            "Using existing bootstrap cluster at {}",
            mgmt.server()
        ))]
    );
    let writes = api.writes();
    existing.delete(&mut |e| events.push(e)).await.unwrap();
    assert_eq!(api.writes(), writes, "nothing was written to the cluster");
    assert!(api.get("v1", "Namespace", None, "eksa-system").is_none());
    assert_eq!(events.len(), 1);

    // A cluster that does not answer is an error, in bounded time.
    api.stop();
    let gone = Existing::new(&kubeconfig, None);
    let err = gone.create_or_find(&mut |_| {}).await.unwrap_err();
    assert!(
        matches!(
            err,
            LifecycleError::Kube(snow_kube::KubeError::Unreachable { .. })
        ),
        "{err:?}"
    );
}

/// With `SNOWCTL_E2E_KIND=1`: the real kind and docker create, find and delete the bootstrap
/// cluster. `SNOWCTL_E2E_KIND_NODE_IMAGE` replaces the bundle's kind node image (the embedded
/// bundle's is a development build that no public registry serves).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    clippy::print_stderr,
    reason = "the skip note and kind's progress, for `--nocapture`"
)]
async fn real_kind_when_opted_in() {
    if std::env::var_os("SNOWCTL_E2E_KIND").is_none_or(|v| v != "1") {
        eprintln!("skipped: set SNOWCTL_E2E_KIND=1 to run kind and docker for real");
        return;
    }
    let mut inputs = ReleaseInputs::embedded().unwrap();
    if let Some(image) = std::env::var_os("SNOWCTL_E2E_KIND_NODE_IMAGE") {
        for vb in &mut inputs.bundles.spec.versions_bundles {
            if let Some(node) = vb.eks_d.kind_node.as_mut() {
                node.uri = image.to_string_lossy().into_owned();
            }
        }
    }
    let spec = spec("1.30", false);
    let release = inputs.resolve(&spec, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kind = Kind::new(
        &spec,
        &release,
        KindOptions {
            dir: dir.path().to_owned(),
            ..KindOptions::default()
        },
    )
    .unwrap();
    let mut log = |e: Event| eprintln!("{e}");
    let mgmt = kind.create_or_find(&mut log).await.unwrap();
    let ns = mgmt
        .get("v1", "Namespace", None, "eksa-system")
        .await
        .unwrap();
    assert!(ns.is_some());
    kind.create_or_find(&mut log).await.unwrap();
    kind.delete(&mut log).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authenticated_mirror_login_goes_into_containerd_hosts_files_only() {
    use std::os::unix::fs::PermissionsExt;
    let fake = Fake::new().await;
    let login = snow_credentials::RegistryCredentials::new(
        "mirror-user".into(),
        "s3cret-pw".to_owned().into(),
    );
    let kind = fake.kind(fake.options()).with_registry_login(Some(login));
    assert!(!format!("{kind:?}").contains("s3cret-pw"));
    kind.create_or_find(&mut |_| {}).await.unwrap();
    let certs = fake.path("site/mgmt/generated/certs.d");
    let hosts = certs.join("public.ecr.aws/hosts.toml");
    let text = std::fs::read_to_string(&hosts).unwrap();
    // base64("mirror-user:s3cret-pw"), under the mirror host's own table.
    assert!(
        text.ends_with("\n[host.\"https://10.0.0.7:5000/v2/eks-anywhere\".header]\n  authorization = \"Basic bWlycm9yLXVzZXI6czNjcmV0LXB3\"\n"),
        "{text}"
    );
    let mode = std::fs::metadata(&hosts).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "it holds the login");
    // Nothing else holds it: not the kind config, not the recorded kind arguments.
    let config = std::fs::read_to_string(fake.path("site/mgmt/generated/kind_tmp.yaml")).unwrap();
    assert!(!config.contains("bWlycm9yLXVzZXI6czNjcmV0LXB3"));
    assert!(!format!("{:?}", fake.calls()).contains("s3cret-pw"));
}

/// Files outside the generated directory, and links to them planted where the kind driver
/// writes: returns the outside files.
fn plant_links(generated: &Path, outside: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut victims = Vec::new();
    for (i, relative) in [
        "kind_tmp.yaml",
        "kubernetes/audit-policy.yaml",
        "certs.d/public.ecr.aws/hosts.toml",
    ]
    .into_iter()
    .enumerate()
    {
        let victim = outside.join(format!("victim-{i}"));
        std::fs::write(&victim, "keep me\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = generated.join(relative);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        victims.push(victim);
    }
    victims
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_planted_at_the_generated_files_are_replaced_never_written_through() {
    use std::os::unix::fs::PermissionsExt;
    let fake = Fake::new().await;
    // kind fails: the files are written, nothing after them runs.
    std::fs::write(fake.path("fail"), "ERROR: stop here\n").unwrap();
    let generated = fake.path("site/mgmt/generated");
    let outside = tempfile::tempdir().unwrap();
    let victims = plant_links(&generated, outside.path());
    let login = snow_credentials::RegistryCredentials::new(
        "mirror-user".into(),
        "s3cret-pw".to_owned().into(),
    );
    let kind = fake.kind(fake.options()).with_registry_login(Some(login));
    let err = kind.create_or_find(&mut |_| {}).await.unwrap_err();
    assert!(err.to_string().contains("stop here"), "{err}");
    for victim in &victims {
        assert_eq!(std::fs::read_to_string(victim).unwrap(), "keep me\n");
        let mode = std::fs::metadata(victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{}", victim.display());
    }
    for relative in [
        "kind_tmp.yaml",
        "kubernetes/audit-policy.yaml",
        "certs.d/public.ecr.aws/hosts.toml",
    ] {
        let path = generated.join(relative);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file(), "{}", path.display());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    let hosts = std::fs::read_to_string(generated.join("certs.d/public.ecr.aws/hosts.toml"));
    assert!(hosts.unwrap().contains("authorization = \"Basic "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_directory_on_the_way_is_refused_and_nothing_is_written_there() {
    let fake = Fake::new().await;
    let generated = fake.path("site/mgmt/generated");
    std::fs::create_dir_all(&generated).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), generated.join("certs.d")).unwrap();
    let login = snow_credentials::RegistryCredentials::new(
        "mirror-user".into(),
        "s3cret-pw".to_owned().into(),
    );
    let kind = fake.kind(fake.options()).with_registry_login(Some(login));
    let err = kind.create_or_find(&mut |_| {}).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("generated/certs.d is a symbolic link"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(
        !fake
            .calls()
            .iter()
            .any(|c| c.first().is_some_and(|a| a == "create")),
        "kind did not run"
    );
}
