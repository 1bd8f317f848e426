//! FluxConfig and the Cluster's gitOpsRef: every finding, with its line and column, the defaults,
//! the checked `GitOps` a valid spec carries, and the update rules.

use serde_json::json;
use snow_api::{
    Finding, Severity, admission, check,
    gitops::{GitProvider, GitScheme, SshKeyAlgorithm},
    immutable::immutable_changes,
};

const VALID: &str = include_str!("specs/valid-full.yaml");

const FLUX: &str = "\
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: FluxConfig
metadata:
  name: edge-flux
  namespace: default
spec:
  git:
    repositoryUrl: ssh://git@git.example/fleet/edge.git
";

/// The valid spec with `gitOpsRef` naming `edge-flux`, and the FluxConfig `flux` (edited by
/// `pairs`, each of which must occur) appended.
fn spec_with(flux: &str, pairs: &[(&str, &str)]) -> String {
    let mut text = VALID.replacen(
        "  kubernetesVersion: 1.33\n",
        "  kubernetesVersion: 1.33\n  gitOpsRef:\n    kind: FluxConfig\n    name: edge-flux\n",
        1,
    );
    text.push_str(flux);
    for (from, to) in pairs {
        assert!(text.contains(from), "fixture lacks {from:?}");
        text = text.replacen(from, to, 1);
    }
    text
}

/// The 1-based line and column where `needle` starts (it must occur once).
fn at(text: &str, needle: &str) -> (usize, usize) {
    assert_eq!(text.matches(needle).count(), 1, "{needle:?} once");
    let offset = text.find(needle).unwrap();
    let line = text[..offset].matches('\n').count() + 1;
    let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

fn errors(text: &str) -> Vec<Finding> {
    let report = check(text).expect("readable");
    report
        .findings
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

/// The one error of `text`: its check, object and field, and that it sits at `needle`.
#[track_caller]
fn one_error(text: &str, check: &str, object: &str, field: &str, needle: &str) -> Finding {
    let found = errors(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = found.into_iter().next().unwrap();
    assert_eq!(
        (f.check.as_str(), f.object.as_deref(), f.field.as_deref()),
        (check, Some(object), Some(field)),
        "{f:#?}"
    );
    let (line, column) = at(text, needle);
    assert_eq!((f.line, f.column), (Some(line), Some(column)), "{f:#?}");
    assert!(f.hint.as_deref().is_some_and(|h| !h.is_empty()), "{f:#?}");
    f
}

#[test]
fn a_valid_flux_config_is_defaulted_and_carried_checked() {
    let text = spec_with(FLUX, &[]);
    let report = check(&text).unwrap();
    assert!(report.is_valid(), "{:#?}", report.findings);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let filled: Vec<(&str, &str)> = (report.defaults.iter())
        .filter(|d| d.object == "FluxConfig/edge-flux")
        .map(|d| (d.field.as_str(), d.value.as_str()))
        .collect();
    assert_eq!(
        filled,
        [
            ("spec.branch", "main"),
            ("spec.clusterConfigPath", "clusters/edge"),
            ("spec.systemNamespace", "flux-system"),
            ("spec.git.sshKeyAlgorithm", "ecdsa"),
        ]
    );
    let spec = report.into_valid().unwrap();
    let gitops = spec.gitops().expect("the spec names a FluxConfig");
    assert_eq!(gitops.name(), "edge-flux");
    assert_eq!(gitops.branch().as_str(), "main");
    assert_eq!(gitops.cluster_config_path().as_str(), "clusters/edge");
    assert_eq!(gitops.system_namespace(), "flux-system");
    let GitProvider::Git {
        url,
        ssh_key_algorithm,
    } = gitops.provider()
    else {
        panic!("a git provider");
    };
    assert_eq!(url.scheme(), GitScheme::Ssh);
    assert_eq!(url.repository_name(), "edge");
    assert_eq!(*ssh_key_algorithm, SshKeyAlgorithm::Ecdsa);
}

#[test]
fn without_gitops_ref_there_is_no_gitops() {
    let spec = check(VALID).unwrap().into_valid().unwrap();
    assert!(spec.gitops().is_none());
}

#[test]
fn a_workload_cluster_defaults_to_its_management_clusters_folder() {
    let text = spec_with(
        FLUX,
        &[(
            "  kubernetesVersion: 1.33\n",
            "  kubernetesVersion: 1.33\n  managementCluster:\n    name: mgmt\n",
        )],
    );
    let spec = check(&text).unwrap().into_valid().unwrap();
    assert!(!spec.is_self_managed());
    assert_eq!(
        spec.gitops().unwrap().cluster_config_path().as_str(),
        "clusters/mgmt"
    );
}

#[test]
fn github_and_https_are_accepted() {
    let text = spec_with(
        FLUX,
        &[(
            "  git:\n    repositoryUrl: ssh://git@git.example/fleet/edge.git\n",
            "  github:\n    owner: acme\n    repository: fleet.config\n    personal: true\n  branch: release-1.2\n",
        )],
    );
    let spec = check(&text).unwrap().into_valid().unwrap();
    let gitops = spec.gitops().unwrap();
    assert_eq!(
        gitops.provider(),
        &GitProvider::GitHub {
            owner: "acme".into(),
            repository: "fleet.config".into(),
            personal: true
        }
    );
    // EKS Anywhere's branch regex refuses `release-1.2`; git accepts it, and so do we.
    assert_eq!(gitops.branch().as_str(), "release-1.2");
    assert_eq!(
        gitops.repository_url(),
        "ssh://git@github.com/acme/fleet.config"
    );

    let text = spec_with(
        FLUX,
        &[(
            "ssh://git@git.example/fleet/edge.git",
            "https://git.example:8443/fleet/edge.git",
        )],
    );
    let report = check(&text).unwrap();
    // No SSH key for an https repository, so no key algorithm is filled.
    assert!(
        !(report.defaults.iter()).any(|d| d.field == "spec.git.sshKeyAlgorithm"),
        "{:#?}",
        report.defaults
    );
    let spec = report.into_valid().unwrap();
    let GitProvider::Git { url, .. } = spec.gitops().unwrap().provider() else {
        panic!("git");
    };
    assert_eq!((url.scheme(), url.port()), (GitScheme::Https, Some(8443)));
}

#[test]
fn unknown_fields_have_positions() {
    let text = spec_with(FLUX, &[("  git:\n", "  git:\n    sshKeyAlgoritm: rsa\n")]);
    one_error(
        &text,
        "schema.unknown-field",
        "FluxConfig/edge-flux",
        "spec.git.sshKeyAlgoritm",
        "sshKeyAlgoritm",
    );
}

#[test]
fn a_missing_required_field_is_one_finding() {
    let text = spec_with(
        FLUX,
        &[(
            "    repositoryUrl: ssh://git@git.example/fleet/edge.git\n",
            "    sshKeyAlgorithm: rsa\n",
        )],
    );
    let found = errors(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].check, "schema.required");
    assert_eq!(found[0].field.as_deref(), Some("spec.git.repositoryUrl"));
    assert!(found[0].line.is_some());
}

#[test]
fn bad_urls() {
    let url = "ssh://git@git.example/fleet/edge.git";
    for (bad, says) in [
        (
            "git@git.example:fleet/edge.git",
            "ssh://git@git.example/fleet/edge.git",
        ),
        ("git.example/fleet/edge.git", "no scheme"),
        ("ssh:///fleet/edge.git", "no host"),
        ("http://git.example/fleet/edge.git", "not supported"),
        ("https://me:hunter2@git.example/fleet.git", "credentials"),
    ] {
        let text = spec_with(FLUX, &[(url, bad)]);
        let f = one_error(
            &text,
            "flux.repository-url",
            "FluxConfig/edge-flux",
            "spec.git.repositoryUrl",
            "repositoryUrl",
        );
        let shown = format!("{} {}", f.message, f.hint.clone().unwrap_or_default());
        assert!(shown.contains(says), "{bad}: {shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}

#[test]
fn bad_key_algorithm_branch_path_and_namespace() {
    let text = spec_with(FLUX, &[("  git:\n", "  git:\n    sshKeyAlgorithm: dsa\n")]);
    one_error(
        &text,
        "flux.ssh-key-algorithm",
        "FluxConfig/edge-flux",
        "spec.git.sshKeyAlgorithm",
        "sshKeyAlgorithm",
    );
    for branch in ["\"\"", "a..b", "\"-x\"", "a/", "\"my branch\""] {
        let text = spec_with(
            FLUX,
            &[(
                "spec:\n  git:",
                &format!("spec:\n  branch: {branch}\n  git:"),
            )],
        );
        // An empty branch is the default's to fill: EKS Anywhere's SetDefaults does the same.
        if branch == "\"\"" {
            assert!(check(&text).unwrap().is_valid());
            continue;
        }
        one_error(
            &text,
            "flux.branch",
            "FluxConfig/edge-flux",
            "spec.branch",
            "branch:",
        );
    }
    for path in [
        "../other",
        "/clusters/edge",
        "clusters/../../x",
        "clusters//edge",
    ] {
        let text = spec_with(
            FLUX,
            &[(
                "spec:\n  git:",
                &format!("spec:\n  clusterConfigPath: {path}\n  git:"),
            )],
        );
        one_error(
            &text,
            "flux.cluster-config-path",
            "FluxConfig/edge-flux",
            "spec.clusterConfigPath",
            "clusterConfigPath",
        );
    }
    let text = spec_with(
        FLUX,
        &[(
            "spec:\n  git:",
            "spec:\n  systemNamespace: Flux_System\n  git:",
        )],
    );
    one_error(
        &text,
        "flux.system-namespace",
        "FluxConfig/edge-flux",
        "spec.systemNamespace",
        "systemNamespace",
    );
}

#[test]
fn exactly_one_provider() {
    let both = spec_with(
        FLUX,
        &[(
            "spec:\n  git:",
            "spec:\n  github: {owner: a, repository: b}\n  git:",
        )],
    );
    let f = one_error(
        &both,
        "flux.provider",
        "FluxConfig/edge-flux",
        "spec",
        "spec:\n  github",
    );
    assert!(f.message.contains("only one provider"));
    let neither = spec_with(
        FLUX,
        &[(
            "  git:\n    repositoryUrl: ssh://git@git.example/fleet/edge.git\n",
            "  branch: main\n",
        )],
    );
    let f = one_error(
        &neither,
        "flux.provider",
        "FluxConfig/edge-flux",
        "spec",
        "spec:\n  branch",
    );
    assert!(f.message.contains("must specify a provider"));
    let bad_repo = spec_with(
        FLUX,
        &[(
            "  git:\n    repositoryUrl: ssh://git@git.example/fleet/edge.git\n",
            "  github:\n    owner: acme\n    repository: acme/fleet\n",
        )],
    );
    one_error(
        &bad_repo,
        "flux.github",
        "FluxConfig/edge-flux",
        "spec.github.repository",
        "repository: acme",
    );
}

#[test]
fn gitops_ref_must_name_a_flux_config_of_the_file() {
    let missing = spec_with(
        FLUX,
        &[(
            "    name: edge-flux\n  workerNode",
            "    name: other\n  workerNode",
        )],
    );
    let errors = errors(&missing);
    let f = errors
        .iter()
        .find(|f| f.check == "cluster.gitops-ref")
        .expect("a finding");
    assert_eq!(f.field.as_deref(), Some("spec.gitOpsRef.name"));
    assert!(f.message.contains("unable to find FluxConfig other"));
    assert!(f.hint.as_deref().unwrap().contains("edge-flux"));
    let (line, column) = at(&missing, "name: other");
    assert_eq!((f.line, f.column), (Some(line), Some(column)));

    let legacy = spec_with(
        FLUX,
        &[(
            "    kind: FluxConfig\n    name: edge-flux",
            "    kind: GitOpsConfig\n    name: edge-flux",
        )],
    );
    let report = check(&legacy).unwrap();
    let f = (report.findings.iter())
        .find(|f| f.check == "cluster.gitops-ref")
        .expect("a finding");
    assert!(f.is_error());
    assert_eq!(f.field.as_deref(), Some("spec.gitOpsRef.kind"));
    assert!(f.message.contains("legacy"));
    assert!(f.hint.as_deref().unwrap().contains("kind: FluxConfig"));
    let (line, column) = at(&legacy, "kind: GitOpsConfig");
    assert_eq!((f.line, f.column), (Some(line), Some(column)));
}

#[test]
fn an_unreferenced_flux_config_is_a_warning() {
    let text = format!("{VALID}{FLUX}");
    let report = check(&text).unwrap();
    assert!(report.is_valid());
    let f = &report.findings[0];
    assert_eq!(
        (f.check.as_str(), f.object.as_deref()),
        ("document.unreferenced", Some("FluxConfig/edge-flux"))
    );
    assert!(report.into_valid().unwrap().gitops().is_none());
}

#[test]
fn a_flux_config_in_another_namespace() {
    let text = spec_with(
        FLUX,
        &[(
            "  name: edge-flux\n  namespace: default",
            "  name: edge-flux\n  namespace: fleet",
        )],
    );
    one_error(
        &text,
        "namespace.mismatch",
        "FluxConfig/edge-flux",
        "metadata.namespace",
        "namespace: fleet",
    );
}

#[test]
fn upgrade_keeps_the_flux_config_and_the_reference() {
    let old = check(&spec_with(FLUX, &[])).unwrap().into_valid().unwrap();
    let new_text = spec_with(
        FLUX,
        &[(
            "ssh://git@git.example/fleet/edge.git",
            "ssh://git@git.example/fleet/other.git",
        )],
    );
    let new = check(&new_text).unwrap().into_valid().unwrap();
    let found = immutable_changes(&old, &new);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].check, "flux.immutable");
    assert_eq!(found[0].field.as_deref(), Some("spec.git.repositoryUrl"));
    assert_eq!(found[0].line, Some(at(&new_text, "repositoryUrl").0));

    // Writing a default out is no change.
    let explicit = spec_with(FLUX, &[("spec:\n  git:", "spec:\n  branch: main\n  git:")]);
    let explicit = check(&explicit).unwrap().into_valid().unwrap();
    assert!(immutable_changes(&old, &explicit).is_empty());

    // GitOps may be added to a cluster that manages itself, not removed.
    let plain = check(VALID).unwrap().into_valid().unwrap();
    assert!(immutable_changes(&plain, &old).is_empty());
    let found = immutable_changes(&old, &plain);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].field.as_deref(), Some("spec.gitOpsRef"));
}

fn flux_object(spec: serde_json::Value) -> serde_json::Value {
    json!({"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "FluxConfig",
        "metadata": {"name": "fleet", "namespace": "default"}, "spec": spec})
}

#[test]
fn admission_checks_a_flux_config_and_keeps_its_spec() {
    let good = flux_object(json!({"git": {"repositoryUrl": "ssh://git@h/r.git"}}));
    assert!(admission::review(&good, None).is_empty());
    let bad = flux_object(json!({"git": {"repositoryUrl": "git@h:r.git"}}));
    let found = admission::review(&bad, None);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].check, "flux.repository-url");

    let moved =
        flux_object(json!({"git": {"repositoryUrl": "ssh://git@h/r.git"}, "branch": "dev"}));
    let found = admission::review(&moved, Some(&good));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].check.as_str(), found[0].field.as_deref()),
        ("flux.immutable", Some("spec.branch"))
    );
    assert!(
        found[0]
            .message
            .contains("`main` in the stored FluxConfig, `dev`")
    );
    let defaults_written = flux_object(
        json!({"git": {"repositoryUrl": "ssh://git@h/r.git", "sshKeyAlgorithm": "ecdsa"}, "branch": "main"}),
    );
    assert!(admission::review(&defaults_written, Some(&good)).is_empty());
}

#[test]
fn admission_of_a_cluster_naming_a_flux_config() {
    let text = spec_with(FLUX, &[]);
    let cluster: serde_json::Value =
        serde_saphyr::from_str(text.split("\n---\n").next().unwrap()).unwrap();
    assert!(
        admission::review(&cluster, None).is_empty(),
        "{:#?}",
        admission::review(&cluster, None)
    );
}

#[test]
fn a_workload_must_say_what_the_management_cluster_says() {
    let management = check(&spec_with(FLUX, &[])).unwrap().into_valid().unwrap();
    let workload_text = spec_with(
        FLUX,
        &[
            (
                "  kubernetesVersion: 1.33\n",
                "  kubernetesVersion: 1.33\n  managementCluster:\n    name: edge\n",
            ),
            ("spec:\n  git:", "spec:\n  branch: dev\n  git:"),
        ],
    );
    let workload = check(&workload_text).unwrap().into_valid().unwrap();
    let found = snow_api::gitops::workload_matches_management(
        management.gitops().unwrap(),
        workload.gitops().unwrap(),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].field.as_deref(), Some("spec.branch"));
    let same = workload_text.replace("  branch: dev\n", "");
    let same = check(&same).unwrap().into_valid().unwrap();
    assert!(
        snow_api::gitops::workload_matches_management(
            management.gitops().unwrap(),
            same.gitops().unwrap()
        )
        .is_empty()
    );
}
