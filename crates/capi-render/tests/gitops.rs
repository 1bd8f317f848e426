//! The GitOps repository's files and Flux's objects: snapshots of the bytes, the install
//! manifest's images replaced over Flux's real manifests, the sync objects checked against
//! Flux's own CRDs, and the flux-system folder built by the real `kubectl kustomize`.

use capi_render::gitops::{
    GitOpsError, RepoFile, cluster_files, flux_install, flux_system_files, sync_objects,
};
use serde_json::Value;
use snow_api::{
    ValidSpec,
    release::{Bundles, FluxBundle},
    template::{TemplateOptions, cluster_config},
};
use std::path::{Path, PathBuf};

/// Flux's install manifest built from its real bases (see `data/flux/SOURCES.md`).
fn install_yaml() -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/flux/install.yaml"),
    )
    .unwrap()
}

/// The embedded catalog's Flux section (the EKS Anywhere sample's).
fn flux() -> FluxBundle {
    let bundles =
        Bundles::from_yaml(snow_api::release::ReleaseInputs::embedded_bundles_yaml()).unwrap();
    bundles
        .versions_bundle("1.33")
        .unwrap()
        .flux()
        .unwrap()
        .clone()
}

fn spec(name: &str, management: Option<&str>, flux_spec: &str) -> ValidSpec {
    let mut text = cluster_config(&TemplateOptions {
        name: name.into(),
        devices: vec!["192.168.1.11".into()],
        endpoint: Some("192.168.1.100".into()),
        kubernetes_version: Some("1.33".into()),
        ssh_key_name: Some("edge-key".into()),
        ..Default::default()
    })
    .unwrap()
    .replacen(
        "  kubernetesVersion:",
        "  gitOpsRef:\n    kind: FluxConfig\n    name: fleet\n  kubernetesVersion:",
        1,
    );
    if let Some(management) = management {
        text = text.replacen(
            &format!("  managementCluster:\n    name: {name}\n"),
            &format!("  managementCluster:\n    name: {management}\n"),
            1,
        );
    }
    let name = if management.is_some() {
        format!("{name}-fleet")
    } else {
        "fleet".into()
    };
    let mut text = text.replacen("    name: fleet\n", &format!("    name: {name}\n"), 1);
    text.push_str(&format!(
        "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: {name}\nspec:\n{flux_spec}"
    ));
    snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

const SSH: &str = "  git:\n    repositoryUrl: ssh://git@127.0.0.1:2222/fleet/edge.git\n";

fn show(files: &[RepoFile]) -> String {
    files
        .iter()
        .map(|f| format!("### {}\n{}", f.path, f.content))
        .collect()
}

#[test]
fn the_management_clusters_files() {
    let spec = spec("edge", None, SSH);
    let gitops = spec.gitops().unwrap();
    let mut files = cluster_files(gitops, &spec).to_vec();
    // gotk-components.yaml is the install manifest as given: shown by its path only.
    let flux_files = flux_system_files(gitops, &flux(), "# install.yaml\n");
    assert_eq!(flux_files[0].content, "# install.yaml\n");
    files.extend(flux_files);
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "clusters/edge/edge/eksa-system/eksa-cluster.yaml",
            "clusters/edge/edge/eksa-system/kustomization.yaml",
            "clusters/edge/flux-system/gotk-components.yaml",
            "clusters/edge/flux-system/gotk-sync.yaml",
            "clusters/edge/flux-system/kustomization.yaml",
        ]
    );
    insta::assert_snapshot!(show(&files));
    // The same inputs give the same bytes.
    assert_eq!(cluster_files(gitops, &spec), cluster_files(gitops, &spec));
}

#[test]
fn the_spec_in_the_repository_reads_back_as_the_same_valid_spec() {
    let spec = spec("edge", None, SSH);
    let [config, _] = cluster_files(spec.gitops().unwrap(), &spec);
    let report = snow_api::check(&config.content).unwrap();
    assert!(report.is_valid(), "{:#?}", report.findings);
    // Defaults were written out: reading it back fills none.
    assert!(report.defaults.is_empty(), "{:#?}", report.defaults);
    let again = report.into_valid().unwrap();
    assert_eq!(again.gitops(), spec.gitops());
}

#[test]
fn a_workload_cluster_gets_its_own_folder_under_the_management_clusters_path() {
    let spec = spec(
        "edge-2",
        Some("edge"),
        "  github:\n    owner: acme\n    repository: fleet\n  branch: prod\n",
    );
    let gitops = spec.gitops().unwrap();
    let files = cluster_files(gitops, &spec);
    assert_eq!(
        files[0].path,
        "clusters/edge/edge-2/eksa-system/eksa-cluster.yaml"
    );
    assert_eq!(
        files[1].path,
        "clusters/edge/edge-2/eksa-system/kustomization.yaml"
    );
    let [repository, kustomization] = sync_objects(gitops);
    assert_eq!(repository["spec"]["url"], "ssh://git@github.com/acme/fleet");
    assert_eq!(repository["spec"]["ref"]["branch"], "prod");
    assert_eq!(kustomization["spec"]["path"], "./clusters/edge");
}

#[test]
fn a_custom_path_and_namespace() {
    let spec = spec(
        "edge",
        None,
        "  clusterConfigPath: sites/north\n  systemNamespace: gitops\n  git:\n    repositoryUrl: https://git.example/fleet.git\n",
    );
    let gitops = spec.gitops().unwrap();
    let files = flux_system_files(gitops, &flux(), "");
    assert_eq!(files[2].path, "sites/north/gitops/kustomization.yaml");
    let [repository, kustomization] = sync_objects(gitops);
    assert_eq!(repository["metadata"]["namespace"], "gitops");
    assert_eq!(repository["metadata"]["name"], "gitops");
    assert_eq!(repository["spec"]["url"], "https://git.example/fleet.git");
    assert_eq!(kustomization["spec"]["path"], "./sites/north");
    assert_eq!(kustomization["spec"]["sourceRef"]["name"], "gitops");
}

/// The container images of the Deployments, as `(deployment, image)`.
fn images(objects: &[Value]) -> Vec<(String, String)> {
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .flat_map(|o| {
            let name = o["metadata"]["name"].as_str().unwrap().to_owned();
            o["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |c| (name.clone(), c["image"].as_str().unwrap().to_owned()))
        })
        .collect()
}

#[test]
fn the_real_install_manifest_gets_the_bundles_images() {
    let install = install_yaml();
    let before: Vec<Value> = serde_saphyr::from_multiple(&install).unwrap();
    assert_eq!(
        images(&before),
        [
            (
                "kustomize-controller".to_owned(),
                "ghcr.io/fluxcd/kustomize-controller:v1.9.0".to_owned()
            ),
            (
                "source-controller".to_owned(),
                "ghcr.io/fluxcd/source-controller:v1.9.0".to_owned()
            ),
        ]
    );
    let (objects, text) = flux_install(&install, &flux()).unwrap();
    assert_eq!(
        images(&objects),
        [
            ("kustomize-controller".to_owned(), "public.ecr.aws/release-container-registry/fluxcd/kustomize-controller:v1.9.0-eks-a-v0.0.0-dev-build.1".to_owned()),
            ("source-controller".to_owned(), "public.ecr.aws/release-container-registry/fluxcd/source-controller:v1.9.0-eks-a-v0.0.0-dev-build.1".to_owned()),
        ]
    );
    // Everything else is unchanged, object for object.
    assert_eq!(objects.len(), before.len());
    let strip = |mut objects: Vec<Value>| {
        for o in objects.iter_mut().filter(|o| o["kind"] == "Deployment") {
            for c in o["spec"]["template"]["spec"]["containers"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                c["image"] = Value::Null;
            }
        }
        objects
    };
    assert_eq!(strip(objects.clone()), strip(before));
    // The YAML reads back as the same objects, and is deterministic.
    let again: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    assert_eq!(again, objects);
    assert_eq!(flux_install(&install, &flux()).unwrap().1, text);
    assert!(!text.contains("ghcr.io/fluxcd/source-controller"));
}

#[test]
fn helm_and_notification_controllers_and_init_containers_are_replaced_too() {
    let install = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: helm-controller, namespace: flux-system}
spec:
  template:
    spec:
      initContainers:
      - {name: init, image: ghcr.io/fluxcd/notification-controller:v1.9.0}
      containers:
      - {name: manager, image: ghcr.io/fluxcd/helm-controller:v1.6.0}
      - {name: sidecar, image: ghcr.io/fluxcd/source-watcher:v2.0.0}
";
    let (objects, _) = flux_install(install, &flux()).unwrap();
    let pod = &objects[0]["spec"]["template"]["spec"];
    assert!(
        pod["containers"][0]["image"]
            .as_str()
            .unwrap()
            .starts_with("public.ecr.aws/release-container-registry/fluxcd/helm-controller:")
    );
    assert!(
        pod["initContainers"][0]["image"]
            .as_str()
            .unwrap()
            .starts_with(
                "public.ecr.aws/release-container-registry/fluxcd/notification-controller:"
            )
    );
    assert_eq!(
        pod["containers"][1]["image"],
        "ghcr.io/fluxcd/source-watcher:v2.0.0"
    );
    assert!(matches!(
        flux_install(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
            &flux()
        ),
        Err(GitOpsError::NoControllers)
    ));
}

/// The openAPIV3Schema of `kind` from the CRDs in Flux's install manifest.
fn flux_crd_schema(install: &[Value], kind: &str, version: &str) -> Value {
    let crd = install
        .iter()
        .find(|o| o["kind"] == "CustomResourceDefinition" && o["spec"]["names"]["kind"] == kind)
        .unwrap_or_else(|| panic!("no CRD of {kind}"));
    crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap()["schema"]["openAPIV3Schema"]
        .clone()
}

#[test]
fn the_sync_objects_are_valid_for_fluxs_crds() {
    let install: Vec<Value> = serde_saphyr::from_multiple(&install_yaml()).unwrap();
    for flux_spec in [
        SSH,
        "  git:\n    repositoryUrl: https://git.example/fleet.git\n",
        "  github:\n    owner: acme\n    repository: fleet\n",
    ] {
        let spec = spec("edge", None, flux_spec);
        for object in sync_objects(spec.gitops().unwrap()) {
            let (_, version) = object["apiVersion"]
                .as_str()
                .unwrap()
                .split_once('/')
                .unwrap();
            let kind = object["kind"].as_str().unwrap();
            let schema = flux_crd_schema(&install, kind, version);
            let yaml = capi_render::yaml::emit(&object, 0);
            let docs = snow_api::yaml::parse_stream(&yaml, Default::default()).unwrap();
            let mut typer = snow_api::typing::Typer::new(kind);
            typer.value(docs[0].root.as_ref().unwrap(), &schema, "");
            assert!(typer.findings.is_empty(), "{kind}: {:#?}", typer.findings);
        }
    }
}

fn write(dir: &Path, files: &[RepoFile]) {
    for f in files {
        let path = dir.join(&f.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &f.content).unwrap();
    }
}

fn kustomize(dir: &Path) -> Vec<Value> {
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("kubectl is on PATH (scripts/test-world checks it)");
    assert!(
        out.status.success(),
        "kubectl kustomize {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_saphyr::from_multiple(&String::from_utf8(out.stdout).unwrap()).unwrap()
}

#[test]
fn kubectl_kustomize_builds_the_folders_with_the_bundles_images() {
    let spec = spec("edge", None, SSH);
    let gitops = spec.gitops().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The fixture has two of the four controllers (see data/flux/SOURCES.md); a patch without
    // its Deployment fails the build, so the other two are added as their bare Deployments.
    let mut install = install_yaml();
    for controller in ["helm-controller", "notification-controller"] {
        install.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {controller}\n  namespace: flux-system\nspec:\n  selector:\n    matchLabels:\n      app: {controller}\n  template:\n    metadata:\n      labels:\n        app: {controller}\n    spec:\n      containers:\n      - name: manager\n        image: ghcr.io/fluxcd/{controller}:v1.0.0\n"
        ));
    }
    write(dir.path(), &flux_system_files(gitops, &flux(), &install));
    write(dir.path(), &cluster_files(gitops, &spec));

    let built = kustomize(&dir.path().join("clusters/edge/flux-system"));
    // The patches set the bundle's images, the four controllers'.
    let got = images(&built);
    assert_eq!(got.len(), 4, "{got:#?}");
    let bundle = flux();
    for (deployment, image) in &got {
        let (_, want) = (bundle.controller_images().into_iter())
            .find(|(c, _)| c == deployment)
            .unwrap();
        assert_eq!(image, &want.uri);
    }
    // The same objects as the install manifest with the images replaced, and the sync objects.
    let (mut want, _) = flux_install(&install, &flux()).unwrap();
    want.extend(sync_objects(gitops));
    assert_eq!(built.len(), want.len());
    for object in &want {
        let same = built.iter().any(|b| {
            b["kind"] == object["kind"]
                && b["metadata"]["name"] == object["metadata"]["name"]
                && b["spec"] == object["spec"]
        });
        assert!(
            same,
            "{} {} differs: {object:#}\n{:#?}",
            object["kind"],
            object["metadata"]["name"],
            built
                .iter()
                .filter(|b| b["kind"] == object["kind"])
                .collect::<Vec<_>>()
        );
    }
    for object in built
        .iter()
        .filter(|o| o["metadata"]["namespace"].is_string())
    {
        assert_eq!(object["metadata"]["namespace"], "flux-system");
    }

    // The whole path, as Flux's Kustomization builds it: kustomize finds the kustomization.yaml
    // of each folder. (Flux generates one where a folder has none; the path's root has none.)
    let cluster = kustomize(&dir.path().join("clusters/edge/edge/eksa-system"));
    // kustomize orders the objects by kind.
    let mut kinds: Vec<&str> = cluster
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "Cluster",
            "FluxConfig",
            "SnowDatacenterConfig",
            "SnowMachineConfig",
            "SnowMachineConfig"
        ]
    );
}
