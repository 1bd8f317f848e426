//! Static validation, rule by rule: each case breaks a valid spec in one place (or several) and
//! checks that exactly the expected findings appear, with their positions.

use snow_api::{Finding, Severity, check};

const VALID: &str = include_str!("specs/valid-full.yaml");

fn errors(text: &str) -> Vec<Finding> {
    check(text)
        .expect("readable")
        .findings
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

/// Replaces `from` (which must occur) with `to` in the valid spec.
fn mutate(pairs: &[(&str, &str)]) -> String {
    let mut text = VALID.to_owned();
    for (from, to) in pairs {
        assert!(text.contains(from), "fixture lacks {from:?}");
        text = text.replacen(from, to, 1);
    }
    text
}

/// Asserts the error findings are exactly these `(check, object, field)` triples (any order).
#[track_caller]
fn assert_errors(text: &str, want: &[(&str, &str, &str)]) {
    let found = errors(text);
    let mut got: Vec<(String, String, String)> = found
        .iter()
        .map(|f| {
            (
                f.check.clone(),
                f.object.clone().unwrap_or_default(),
                f.field.clone().unwrap_or_default(),
            )
        })
        .collect();
    let mut want: Vec<(String, String, String)> = want
        .iter()
        .map(|(c, o, f)| (c.to_string(), o.to_string(), f.to_string()))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "findings: {found:#?}");
    assert!(
        found.iter().all(|f| f.line.is_some() && f.hint.is_some()),
        "every error has a line and a hint: {found:#?}"
    );
}

#[test]
fn the_fixture_is_valid() {
    let report = check(VALID).unwrap();
    assert!(report.is_valid(), "{:#?}", report.findings);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    // Defaults were applied and reported.
    assert!(
        report
            .defaults
            .iter()
            .any(|d| d.field == "spec.identityRef")
    );
    assert!(
        report
            .defaults
            .iter()
            .any(|d| d.object == "SnowMachineConfig/edge-etcd"
                && d.field == "spec.physicalNetworkConnector")
    );
}

#[test]
fn unknown_fields_are_reported_with_line_and_column() {
    let text = mutate(&[
        ("  amiID: \"\"\n", "  amiID: \"\"\n  amiId: x\n"),
        (
            "    count: 3\n    endpoint",
            "    count: 3\n    idont: 1\n    endpoint",
        ),
    ]);
    let found = errors(&text);
    let unknown: Vec<_> = found
        .iter()
        .filter(|f| f.check == "schema.unknown-field")
        .collect();
    assert_eq!(unknown.len(), 2, "{found:#?}");
    assert_eq!(
        unknown[0].field.as_deref(),
        Some("spec.controlPlaneConfiguration.idont")
    );
    assert_eq!((unknown[0].line, unknown[0].column), (Some(18), Some(5)));
    assert_eq!(unknown[1].hint.as_deref(), Some("did you mean `amiID`?"));
}

#[test]
fn several_independent_mistakes_are_all_reported() {
    let text = mutate(&[
        ("name: edge\n  namespace", "name: 9edge\n  namespace"),
        ("instanceType: sbe-c.xlarge", "instanceType: sbe-c-large"),
        (
            "physicalNetworkConnector: SFP_PLUS",
            "physicalNetworkConnector: USB",
        ),
        ("    gateway: 192.168.1.1", "    gateway: 10.0.0.1"),
        ("  - count: 1\n", "  - count: -1\n"),
    ]);
    assert_errors(
        &text,
        &[
            ("cluster.name", "Cluster/9edge", "metadata.name"),
            (
                "machine-config.instance-type",
                "SnowMachineConfig/edge-cp",
                "spec.instanceType",
            ),
            (
                "machine-config.physical-network-connector",
                "SnowMachineConfig/edge-cp",
                "spec.physicalNetworkConnector",
            ),
            (
                "ip-pool.gateway",
                "SnowIPPool/edge-pool",
                "spec.pools[0].gateway",
            ),
            (
                "workers.count",
                "Cluster/9edge",
                "spec.workerNodeGroupConfigurations[1].count",
            ),
        ],
    );
}

#[test]
fn control_plane_rules() {
    assert_errors(
        &mutate(&[("host: 192.168.1.100", "host: \"\"")]),
        &[(
            "control-plane.endpoint",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.endpoint.host",
        )],
    );
    assert_errors(
        &mutate(&[("host: 192.168.1.100", "host: cp.example.com")]),
        &[(
            "control-plane.endpoint",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.endpoint.host",
        )],
    );
    assert_errors(
        &mutate(&[("host: 192.168.1.100", "host: 10.1.2.3")]),
        &[(
            "control-plane.endpoint",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.endpoint.host",
        )],
    );
    assert_errors(
        &mutate(&[("    count: 3\n    endpoint", "    count: 0\n    endpoint")]),
        &[(
            "control-plane.count",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.count",
        )],
    );
    assert_errors(
        &mutate(&[(
            "        maxSurge: 1\n  datacenterRef",
            "        maxSurge: 2\n  datacenterRef",
        )]),
        &[(
            "control-plane.rollout",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.upgradeRolloutStrategy.rollingUpdate.maxSurge",
        )],
    );
    assert_errors(
        &mutate(&[(
            "    upgradeRolloutStrategy:\n      rollingUpdate:\n        maxSurge: 1\n  datacenterRef",
            "    upgradeRolloutStrategy:\n      type: InPlace\n  datacenterRef",
        )]),
        &[(
            "rollout.in-place",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.upgradeRolloutStrategy.type",
        )],
    );
    assert_errors(
        &mutate(&[("      name: edge-cp\n", "      name: edge-nope\n")]),
        &[(
            "machine-group-ref",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.machineGroupRef.name",
        )],
    );
}

#[test]
fn stacked_etcd_needs_an_odd_control_plane() {
    let text = mutate(&[
        (
            "  externalEtcdConfiguration:\n    count: 3\n    machineGroupRef:\n      kind: SnowMachineConfig\n      name: edge-etcd\n",
            "",
        ),
        ("    count: 3\n    endpoint", "    count: 2\n    endpoint"),
    ]);
    let found = errors(&text);
    assert!(
        found.iter().any(|f| f.check == "control-plane.count"),
        "{found:#?}"
    );
}

#[test]
fn external_etcd_rules() {
    assert_errors(
        &mutate(&[(
            "  externalEtcdConfiguration:\n    count: 3",
            "  externalEtcdConfiguration:\n    count: 2",
        )]),
        &[(
            "etcd.count",
            "Cluster/edge",
            "spec.externalEtcdConfiguration.count",
        )],
    );
    // Etcd machines need static addresses from a pool.
    let text = mutate(&[(
        "      dhcp: false\n      ipPoolRef: {kind: SnowIPPool, name: edge-pool}\n",
        "      dhcp: true\n",
    )]);
    assert_errors(
        &text,
        &[(
            "etcd.dhcp",
            "SnowMachineConfig/edge-etcd",
            "spec.network.directNetworkInterfaces[0].dhcp",
        )],
    );
}

#[test]
fn worker_rules() {
    assert_errors(
        &mutate(&[("    name: md-1\n", "    name: md-0\n")]),
        &[(
            "workers.name",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations[1].name",
        )],
    );
    assert_errors(
        &mutate(&[(
            "        maxSurge: 1\n        maxUnavailable: 0",
            "        maxSurge: 0\n        maxUnavailable: 0",
        )]),
        &[(
            "workers.rollout",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations[0].upgradeRolloutStrategy.rollingUpdate",
        )],
    );
    assert_errors(
        &mutate(&[(
            "  - count: 1\n",
            "  - count: 5\n    autoscalingConfiguration: {minCount: 1, maxCount: 3}\n",
        )]),
        &[(
            "workers.autoscaling",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations[1].count",
        )],
    );
    assert_errors(
        &mutate(&[(
            "    name: md-0\n",
            "    name: md-0\n    kubernetesVersion: \"1.30\"\n",
        )]),
        &[(
            "workers.kubernetes-version",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations[0].kubernetesVersion",
        )],
    );
    assert_errors(
        &mutate(&[(
            "      node.example.com/role: app",
            "      node.example.com/role: not valid!",
        )]),
        &[(
            "label",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations[0].labels[\"node.example.com/role\"]",
        )],
    );
    // All groups tainted NoSchedule on a self-managed cluster.
    let text = mutate(&[(
        "    labels:\n      node.example.com/role: app\n",
        "    taints:\n    - {key: a, effect: NoExecute}\n",
    )]);
    assert_errors(
        &text,
        &[(
            "workers.taints",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations",
        )],
    );
    // No worker groups at all.
    let start = VALID.find("  workerNodeGroupConfigurations:").unwrap();
    let end = VALID
        .find("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowDatacenterConfig")
        .unwrap();
    let text = format!("{}{}", &VALID[..start], &VALID[end..]);
    let found = errors(&text);
    assert!(
        found.iter().any(|f| f.check == "workers.empty"),
        "{found:#?}"
    );
}

#[test]
fn kubernetes_version_rules() {
    for (version, bad) in [
        ("1.33", false),
        ("\"1.36\"", false),
        ("1.17", true),
        ("1.37", true),
        ("1.30.2", true),
        ("v1.30", true),
    ] {
        let text = mutate(&[(
            "kubernetesVersion: 1.33",
            &format!("kubernetesVersion: {version}"),
        )]);
        let found = errors(&text);
        assert_eq!(
            found
                .iter()
                .any(|f| f.check == "cluster.kubernetes-version"),
            bad,
            "{version}: {found:#?}"
        );
    }
}

#[test]
fn network_rules() {
    assert_errors(
        &mutate(&[("      - 10.1.0.0/16", "      - 10.96.0.0/16")]),
        &[(
            "cluster.network-cidr",
            "Cluster/edge",
            "spec.clusterNetwork.services.cidrBlocks[0]",
        )],
    );
    assert_errors(
        &mutate(&[("      - 10.1.0.0/16", "      - 10.1.0.0/33")]),
        &[(
            "cluster.network-cidr",
            "Cluster/edge",
            "spec.clusterNetwork.pods.cidrBlocks[0]",
        )],
    );
    assert_errors(
        &mutate(&[("      cilium: {}", "      kindnetd: {}")]),
        &[(
            "cluster.cni",
            "Cluster/edge",
            "spec.clusterNetwork.cniConfig.kindnetd",
        )],
    );
    assert_errors(
        &mutate(&[(
            "  clusterNetwork:\n",
            "  clusterNetwork:\n    nodes: {cidrMaskSize: 12}\n",
        )]),
        &[(
            "cluster.node-cidr-mask",
            "Cluster/edge",
            "spec.clusterNetwork.nodes.cidrMaskSize",
        )],
    );
}

#[test]
fn machine_config_rules() {
    assert_errors(
        &mutate(&[(
            "  - 192.168.1.11\n  - 192.168.1.12\n",
            "  - 192.168.1.11\n  - 192.168.1.11\n  - snowball-1\n",
        )]),
        &[
            (
                "machine-config.devices",
                "SnowMachineConfig/edge-cp",
                "spec.devices[1]",
            ),
            (
                "machine-config.devices",
                "SnowMachineConfig/edge-cp",
                "spec.devices[2]",
            ),
        ],
    );
    assert_errors(
        &mutate(&[(
            "    - index: 2\n      dhcp: true",
            "    - index: 1\n      dhcp: true",
        )]),
        &[(
            "machine-config.dni-index",
            "SnowMachineConfig/edge-cp",
            "spec.network.directNetworkInterfaces[1].index",
        )],
    );
    assert_errors(
        &mutate(&[(
            "    - index: 2\n      dhcp: true\n",
            "    - index: 2\n      dhcp: true\n      ipPoolRef: {kind: SnowIPPool, name: edge-pool}\n",
        )]),
        &[(
            "machine-config.dni-dhcp-pool",
            "SnowMachineConfig/edge-cp",
            "spec.network.directNetworkInterfaces[1].ipPoolRef",
        )],
    );
    assert_errors(
        &mutate(&[("        name: edge-pool\n", "        name: other-pool\n")]),
        &[(
            "machine-config.dni-pool-ref",
            "SnowMachineConfig/edge-cp",
            "spec.network.directNetworkInterfaces[0].ipPoolRef.name",
        )],
    );
    assert_errors(
        &mutate(&[("      vlanID: 20", "      primary: true")]),
        &[(
            "machine-config.network",
            "SnowMachineConfig/edge-cp",
            "spec.network.directNetworkInterfaces",
        )],
    );
    assert_errors(
        &mutate(&[("      vlanID: 20", "      vlanID: 5000")]),
        &[(
            "schema.range",
            "SnowMachineConfig/edge-cp",
            "spec.network.directNetworkInterfaces[1].vlanID",
        )],
    );
    assert_errors(
        &mutate(&[(
            "  osFamily: ubuntu\n  physicalNetworkConnector",
            "  osFamily: windows\n  physicalNetworkConnector",
        )]),
        &[(
            "machine-config.os-family",
            "SnowMachineConfig/edge-cp",
            "spec.osFamily",
        )],
    );
    assert_errors(
        &mutate(&[("    size: 50\n", "    size: 20\n")]),
        &[(
            "machine-config.containers-volume",
            "SnowMachineConfig/edge-md",
            "spec.containersVolume.size",
        )],
    );
    assert_errors(
        &mutate(&[("  - deviceName: /dev/sdc", "  - deviceName: /dev/sda2")]),
        &[(
            "machine-config.non-root-volume",
            "SnowMachineConfig/edge-md",
            "spec.nonRootVolumes[0].deviceName",
        )],
    );
    assert_errors(
        &mutate(&[("  osFamily: bottlerocket", "  osFamily: ubuntu")]),
        &[(
            "machine-config.host-os",
            "SnowMachineConfig/edge-md",
            "spec.hostOSConfiguration.bottlerocketConfiguration",
        )],
    );
}

#[test]
fn ip_pool_rules() {
    assert_errors(
        &mutate(&[(
            "  - ipStart: 192.168.1.20\n    ipEnd: 192.168.1.40",
            "  - ipStart: 192.168.1.50\n    ipEnd: 192.168.1.40",
        )]),
        &[(
            "ip-pool.range",
            "SnowIPPool/edge-pool",
            "spec.pools[0].ipStart",
        )],
    );
    assert_errors(
        &mutate(&[("    ipEnd: 192.168.1.40", "    ipEnd: 192.168.2.40")]),
        &[(
            "ip-pool.subnet",
            "SnowIPPool/edge-pool",
            "spec.pools[0].ipEnd",
        )],
    );
    assert_errors(
        &mutate(&[("host: 192.168.1.100", "host: 192.168.1.30")]),
        &[(
            "ip-pool.endpoint-in-range",
            "SnowIPPool/edge-pool",
            "spec.pools[0]",
        )],
    );
    let overlapping = mutate(&[(
        "    gateway: 192.168.1.1\n",
        "    gateway: 192.168.1.1\n  - {ipStart: 192.168.1.35, ipEnd: 192.168.1.60, subnet: 192.168.1.0/24, gateway: 192.168.1.1}\n",
    )]);
    assert_errors(
        &overlapping,
        &[("ip-pool.overlap", "SnowIPPool/edge-pool", "spec.pools[1]")],
    );
}

/// The valid spec with `pools` (one YAML line each, after the fixture's pool) added.
fn with_pools(pools: &str) -> String {
    mutate(&[(
        "    gateway: 192.168.1.1\n",
        &format!("    gateway: 192.168.1.1\n{pools}"),
    )])
}

fn overlap_findings(text: &str) -> Vec<Finding> {
    errors(text)
        .into_iter()
        .filter(|f| f.check == "ip-pool.overlap")
        .collect()
}

#[test]
fn every_overlapping_range_is_reported_once_against_one_earlier_range() {
    // pools[2] overlaps pools[0] (which reaches furthest) but not pools[1]; pools[3] is clear.
    let text = with_pools(
        "  - {ipStart: 192.168.1.25, ipEnd: 192.168.1.30, subnet: 192.168.1.0/24, gateway: 192.168.1.1}\n\
         \x20 - {ipStart: 192.168.1.35, ipEnd: 192.168.1.50, subnet: 192.168.1.0/24, gateway: 192.168.1.1}\n\
         \x20 - {ipStart: 192.168.1.60, ipEnd: 192.168.1.70, subnet: 192.168.1.0/24, gateway: 192.168.1.1}\n",
    );
    let found = overlap_findings(&text);
    let fields: Vec<&str> = found.iter().filter_map(|f| f.field.as_deref()).collect();
    assert_eq!(fields, ["spec.pools[1]", "spec.pools[2]"], "{found:#?}");
    assert!(
        found[1].message.contains("pools[0]"),
        "{}",
        found[1].message
    );
}

/// 1,000 identical pools (a few KB through an anchor) once gave 499,500 findings, one per pair;
/// 1,500 overlapping pools took seconds and gigabytes. Now: one finding per pool, the first
/// `MAX_FINDINGS_PER_CHECK` shown and the rest counted.
#[test]
fn many_overlapping_pools_give_a_bounded_report() {
    let max = snow_api::limits::MAX_FINDINGS_PER_CHECK;
    let anchored = format!(
        "  - &p {{ipStart: 192.168.1.20, ipEnd: 192.168.1.40, subnet: 192.168.1.0/24, gateway: 192.168.1.1}}\n{}",
        "  - *p\n".repeat(998)
    );
    let plain: String = (0..1_500)
        .map(|i| {
            format!(
                "  - {{ipStart: 10.0.{}.{}, ipEnd: 10.200.0.1, subnet: 10.0.0.0/8, gateway: 10.0.0.1}}\n",
                i / 200,
                i % 200 + 2
            )
        })
        .collect();
    for (pools, overlapping) in [(anchored, 999), (plain, 1_499)] {
        let found = overlap_findings(&with_pools(&pools));
        assert_eq!(found.len(), max + 1, "{:#?}", &found[max..]);
        let more = found.last().unwrap();
        assert_eq!(
            more.message,
            format!(
                "… and {} more `ip-pool.overlap` finding(s) not shown",
                overlapping - max
            )
        );
        assert!(more.hint.is_some());
    }
}

#[test]
fn datacenter_and_namespace_rules() {
    assert_errors(
        &mutate(&[(
            "kind: SnowDatacenterConfig\nmetadata:\n  name: edge\nspec: {}",
            "kind: SnowDatacenterConfig\nmetadata:\n  name: edge\nspec: {identityRef: {kind: ConfigMap, name: x}}",
        )]),
        &[(
            "datacenter.identity-ref",
            "SnowDatacenterConfig/edge",
            "spec.identityRef.kind",
        )],
    );
    assert_errors(
        &mutate(&[(
            "kind: SnowIPPool\nmetadata:\n  name: edge-pool\n",
            "kind: SnowIPPool\nmetadata:\n  name: edge-pool\n  namespace: other\n",
        )]),
        &[(
            "namespace.mismatch",
            "SnowIPPool/edge-pool",
            "metadata.namespace",
        )],
    );
    assert_errors(
        &mutate(&[(
            "    kind: SnowDatacenterConfig\n    name: edge\n",
            "    kind: VSphereDatacenterConfig\n    name: edge\n",
        )]),
        &[(
            "cluster.datacenter-ref",
            "Cluster/edge",
            "spec.datacenterRef.kind",
        )],
    );
}

#[test]
fn wrong_types_do_not_cascade() {
    // `count: three` is one type error, not also "count must be > 0".
    let text = mutate(&[(
        "    count: 3\n    endpoint",
        "    count: three\n    endpoint",
    )]);
    assert_errors(
        &text,
        &[(
            "schema.type",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.count",
        )],
    );
    let text = mutate(&[("  - count: 1\n", "  - count: 99999999999999999999999\n")]);
    assert_errors(
        &text,
        &[(
            "schema.range",
            "Cluster/edge",
            "spec.workerNodeGroupConfigurations[1].count",
        )],
    );
}

#[test]
fn impossible_counts_are_caught() {
    let text = mutate(&[("  - count: 1\n", "  - count: 1000000\n")]);
    let found = errors(&text);
    assert!(
        found.iter().any(|f| f.check == "machine-config.capacity"
            && f.object.as_deref() == Some("SnowMachineConfig/edge-md")),
        "{found:#?}"
    );
}

/// The valid spec with `n` one-machine worker groups named `<prefix><i>` instead of its own.
fn with_worker_groups(n: usize, prefix: &str) -> String {
    let mut groups = String::from("  workerNodeGroupConfigurations:\n");
    for i in 0..n {
        groups.push_str(&format!("  - {{count: 1, name: {prefix}{i}, machineGroupRef: {{kind: SnowMachineConfig, name: edge-md}}}}\n"));
    }
    let start = VALID.find("  workerNodeGroupConfigurations:").unwrap();
    let end = VALID
        .find("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowDatacenterConfig")
        .unwrap();
    format!("{}{}{}", &VALID[..start], groups, &VALID[end..])
}

#[test]
fn ten_thousand_worker_groups_are_read_and_checked() {
    let text = with_worker_groups(10_000, "g-");
    let report = check(&text).unwrap();
    let spec = report.spec.as_ref().unwrap();
    assert_eq!(
        spec.cluster
            .spec
            .worker_node_group_configurations
            .as_ref()
            .unwrap()
            .len(),
        10_000
    );
    // 10,000 sbe-c.2xlarge machines cannot fit on two devices.
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.check == "machine-config.capacity")
    );
}

#[test]
fn ten_thousand_findings_are_capped_and_located() {
    let text = with_worker_groups(10_000, "g_");
    let report = check(&text).unwrap();
    let names: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.check == "workers.name")
        .collect();
    // The first MAX_FINDINGS_PER_CHECK are shown, located; one more finding counts the rest.
    let max = snow_api::limits::MAX_FINDINGS_PER_CHECK;
    assert_eq!(names.len(), max + 1);
    assert!(names[..max].iter().all(|f| f.line.is_some()));
    let last = format!("name: g_{}", max - 1);
    assert_eq!(names[max - 1].line, Some(start_line(&text, &last)));
    assert_eq!(
        names[max].message,
        format!(
            "… and {} more `workers.name` finding(s) not shown",
            10_000 - max
        )
    );
}

fn start_line(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].lines().count()
}

const IDENTITY: &str = "---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: OIDCConfig
metadata:
  name: edge-oidc
spec:
  clientId: snowctl
  issuerUrl: https://issuer.example.com
  groupsClaim: groups
  requiredClaims:
  - {claim: aud, value: snowctl}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: AWSIamConfig
metadata:
  name: edge-iam
spec:
  awsRegion: us-west-2
  backendMode: [EKSConfigMap]
  mapRoles:
  - {roleARN: \"arn:aws:iam::111122223333:role/admin\", username: admin, groups: [system:masters]}
";

fn with_identity(extra: &[(&str, &str)]) -> String {
    let refs = "  datacenterRef:\n    kind: SnowDatacenterConfig\n    name: edge\n  identityProviderRefs:\n  - {kind: OIDCConfig, name: edge-oidc}\n  - {kind: AWSIamConfig, name: edge-iam}\n";
    let mut text = mutate(&[(
        "  datacenterRef:\n    kind: SnowDatacenterConfig\n    name: edge\n",
        refs,
    )]) + IDENTITY;
    for (from, to) in extra {
        assert!(text.contains(from), "fixture lacks {from:?}");
        text = text.replacen(from, to, 1);
    }
    text
}

#[test]
fn identity_providers_are_read_and_checked() {
    let report = check(&with_identity(&[])).unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let spec = report.spec.unwrap();
    assert_eq!(
        spec.oidc_configs["edge-oidc"].spec.client_id.as_deref(),
        Some("snowctl")
    );
    assert_eq!(
        spec.aws_iam_configs["edge-iam"].spec.aws_region.as_deref(),
        Some("us-west-2")
    );

    assert_errors(
        &with_identity(&[
            (
                "issuerUrl: https://issuer.example.com",
                "issuerUrl: http://issuer.example.com",
            ),
            ("  awsRegion: us-west-2\n", ""),
        ]),
        &[
            ("oidc.issuer-url", "OIDCConfig/edge-oidc", "spec.issuerUrl"),
            ("aws-iam.region", "AWSIamConfig/edge-iam", "spec.awsRegion"),
        ],
    );
    assert_errors(
        &with_identity(&[(
            "  - {kind: OIDCConfig, name: edge-oidc}",
            "  - {kind: OIDCConfig, name: other}",
        )]),
        &[(
            "cluster.identity-provider-ref",
            "Cluster/edge",
            "spec.identityProviderRefs[0].name",
        )],
    );
    assert_errors(
        &with_identity(&[(
            "    count: 3\n    endpoint",
            "    count: 3\n    apiServerExtraArgs: {oidc-issuer-url: \"https://x\"}\n    endpoint",
        )]),
        &[(
            "control-plane.api-server-extra-args",
            "Cluster/edge",
            "spec.controlPlaneConfiguration.apiServerExtraArgs.oidc-issuer-url",
        )],
    );
    let unknown = with_identity(&[(
        "  clientId: snowctl\n",
        "  clientId: snowctl\n  clientSecret: x\n",
    )]);
    assert!(
        errors(&unknown)
            .iter()
            .any(|f| f.check == "schema.unknown-field"
                && f.object.as_deref() == Some("OIDCConfig/edge-oidc"))
    );
}

#[test]
fn cilium_rules_are_eks_anywheres_and_report_their_fields() {
    let field = |f: &str| format!("spec.clusterNetwork.cniConfig.cilium.{f}");
    let cilium = |body: &str| mutate(&[("      cilium: {}", &format!("      cilium: {body}"))]);
    assert_errors(
        &cilium("{policyEnforcementMode: strict}"),
        &[(
            "cluster.cni",
            "Cluster/edge",
            &field("policyEnforcementMode"),
        )],
    );
    assert_errors(
        &cilium("{policyEnforcementMode: always, skipUpgrade: true}"),
        &[(
            "cluster.cni",
            "Cluster/edge",
            &field("policyEnforcementMode"),
        )],
    );
    assert_errors(
        &cilium("{routingMode: direct}"),
        &[(
            "cluster.cni",
            "Cluster/edge",
            &field("ipv4NativeRoutingCIDR"),
        )],
    );
    assert_errors(
        &cilium("{routingMode: Direct}"),
        &[("cluster.cni", "Cluster/edge", &field("routingMode"))],
    );
    assert_errors(
        &cilium(
            "{routingMode: direct, ipv4NativeRoutingCIDR: 'fd00::/8', ipv6NativeRoutingCIDR: 10.0.0.0/8}",
        ),
        &[
            (
                "cluster.cni",
                "Cluster/edge",
                &field("ipv4NativeRoutingCIDR"),
            ),
            (
                "cluster.cni",
                "Cluster/edge",
                &field("ipv6NativeRoutingCIDR"),
            ),
        ],
    );
    assert_errors(
        &cilium("{helmValues: [a, b]}"),
        &[("cluster.cni", "Cluster/edge", &field("helmValues"))],
    );
    assert_errors(
        &mutate(&[("      cilium: {}", "      cilium: {}\n      kindnetd: {}")]),
        &[
            (
                "cluster.cni",
                "Cluster/edge",
                "spec.clusterNetwork.cniConfig",
            ),
            (
                "cluster.cni",
                "Cluster/edge",
                "spec.clusterNetwork.cniConfig.kindnetd",
            ),
        ],
    );
    // Valid settings: no finding at all.
    for ok in [
        "{policyEnforcementMode: always, egressMasqueradeInterfaces: eth0, cniExclusive: false}",
        "{routingMode: direct, ipv4NativeRoutingCIDR: 10.0.0.0/16, ipv6NativeRoutingCIDR: 'fd00::/104'}",
        "{skipUpgrade: true}",
        "{helmValues: {ipam: {mode: kubernetes}}}",
    ] {
        let report = check(&cilium(ok)).unwrap();
        assert!(report.findings.is_empty(), "{ok}: {:#?}", report.findings);
        let valid = report.into_valid().unwrap();
        let _ = valid.cilium();
    }
    // What EKS Anywhere ignores is said, as a warning.
    let report = check(&cilium("{helmValues: {}, policyEnforcementMode: never}")).unwrap();
    let warnings: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.severity, f.field.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        warnings,
        [(Severity::Warning, field("policyEnforcementMode"))]
    );
    assert!(report.findings[0].line.is_some());
}

#[test]
fn a_valid_spec_gives_its_typed_cilium_settings() {
    use snow_api::cni::{PolicyEnforcementMode, Routing};
    let text = mutate(&[(
        "      cilium: {}",
        "      cilium:\n        policyEnforcementMode: always\n        routingMode: direct\n        ipv4NativeRoutingCIDR: 10.0.0.0/16\n        skipUpgrade: false",
    )]);
    let cilium = check(&text).unwrap().into_valid().unwrap().cilium();
    assert_eq!(
        cilium.policy_enforcement_mode,
        Some(PolicyEnforcementMode::Always)
    );
    assert_eq!(
        cilium.routing,
        Routing::Direct {
            ipv4: "10.0.0.0/16".parse().unwrap(),
            ipv6: None
        }
    );
    assert!(cilium.is_managed());
}

#[test]
fn health_check_timeouts_are_exact_whole_seconds_go_durations() {
    let with = |startup: &str, unhealthy: &str| {
        mutate(&[(
            "  kubernetesVersion: 1.33\n",
            &format!(
                "  kubernetesVersion: 1.33\n  machineHealthCheck:\n    nodeStartupTimeout: \"{startup}\"\n    unhealthyMachineTimeout: \"{unhealthy}\"\n"
            ),
        )])
    };
    // Go reads both, and both are whole seconds: valid.
    assert_errors(&with("10m0s", "420000000us"), &[]);
    assert_errors(&with("0", "1.5h"), &[]);
    // A sign, a fraction of a second, a unit Go lacks, a bare number, more than int32 seconds,
    // and a startup timeout Cluster API's own webhook refuses: each is said, none is replaced.
    for (startup, unhealthy) in [("-5m", "1500ms"), ("10", "1d"), ("20s", "3000000000s")] {
        assert_errors(
            &with(startup, unhealthy),
            &[
                (
                    "machine-health-check",
                    "Cluster/edge",
                    "spec.machineHealthCheck.nodeStartupTimeout",
                ),
                (
                    "machine-health-check",
                    "Cluster/edge",
                    "spec.machineHealthCheck.unhealthyMachineTimeout",
                ),
            ],
        );
    }
    let negative = errors(&with("-5m", "5m"));
    assert!(
        negative[0].message.contains("cannot be negative"),
        "{negative:#?}"
    );
}

#[test]
fn a_mirrored_registry_is_host_and_port_not_a_path() {
    let with = |registry: &str| {
        mutate(&[(
            "  kubernetesVersion: 1.33\n",
            &format!(
                "  kubernetesVersion: 1.33\n  registryMirrorConfiguration:\n    endpoint: 10.0.0.5\n    port: \"443\"\n    ociNamespaces:\n    - registry: public.ecr.aws\n      namespace: ecr\n    - registry: {registry:?}\n      namespace: other\n"
            ),
        )])
    };
    assert_errors(&with("registry.example:5000"), &[]);
    for bad in ["../../../../x", "/abs/dir", "https://quay.io", "quay.io/x"] {
        assert_errors(
            &with(bad),
            &[(
                "registry-mirror",
                "Cluster/edge",
                "spec.registryMirrorConfiguration.ociNamespaces[1].registry",
            )],
        );
    }
}
