//! Rendering across the case matrix: every object validates against the real CRD schemas (with
//! only the EKS-A fork additions allowed), output is deterministic, values round-trip, and the
//! EKS-A behaviours (and non-bugs) hold. Snapshots keep the whole output reviewable.

mod common;

use capi_render::{
    Contract, RenderError, RenderOptions, RenderedObject, SecretInputs, render, to_yaml,
};
use serde_json::Value;
use snow_api::{ValidSpec, release::ReleaseInputs};

#[derive(Clone, Copy, Debug)]
struct Case {
    bottlerocket: bool,
    external_etcd: bool,
    proxy: bool,
    mirror: bool,
    version: &'static str,
}

fn spec_text(c: Case) -> String {
    let os = if c.bottlerocket {
        "bottlerocket"
    } else {
        "ubuntu"
    };
    let mut s = format!(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: snow-test
  namespace: test-namespace
spec:
  clusterNetwork:
    cniConfig: {{cilium: {{}}}}
    pods: {{cidrBlocks: [10.1.0.0/16]}}
    services: {{cidrBlocks: [10.96.0.0/12]}}
  controlPlaneConfiguration:
    count: 3
    endpoint: {{host: 1.2.3.4}}
    machineGroupRef: {{kind: SnowMachineConfig, name: test-cp}}
    certSans: [api.example.com, 10.0.0.9]
    labels: {{tier: cp, zone: a}}
    upgradeRolloutStrategy: {{rollingUpdate: {{maxSurge: 1}}}}
    apiServerExtraArgs: {{audit-log-maxage: \"30\"}}
  datacenterRef: {{kind: SnowDatacenterConfig, name: test}}
  kubernetesVersion: \"{version}\"
  workerNodeGroupConfigurations:
  - name: md-0
    count: 3
    machineGroupRef: {{kind: SnowMachineConfig, name: test-md}}
    labels: {{role: app}}
    taints: [{{key: dedicated, value: app, effect: PreferNoSchedule}}]
    upgradeRolloutStrategy: {{rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}}}
  - name: md-1
    count: 2
    autoscalingConfiguration: {{minCount: 1, maxCount: 5}}
    machineGroupRef: {{kind: SnowMachineConfig, name: test-md}}
    taints: []
",
        version = c.version
    );
    if c.external_etcd {
        s.push_str("  externalEtcdConfiguration: {count: 3, machineGroupRef: {kind: SnowMachineConfig, name: test-etcd}}\n");
    }
    if c.proxy {
        s.push_str("  proxyConfiguration: {httpProxy: \"http://10.0.0.5:3128\", httpsProxy: \"http://10.0.0.5:3128\", noProxy: [internal.example.com]}\n");
    }
    if c.mirror {
        s.push_str("  registryMirrorConfiguration:\n    endpoint: 1.2.3.5\n    port: \"443\"\n    ociNamespaces:\n    - {registry: public.ecr.aws, namespace: eks-anywhere}\n    - {registry: 783794618700.dkr.ecr.us-west-2.amazonaws.com, namespace: curated-packages}\n    caCertContent: |\n      -----BEGIN CERTIFICATE-----\n      MIIBkTCB+wIJAKHHIG...: \"quoted\" *star &amp\n      -----END CERTIFICATE-----\n");
    }
    s.push_str("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowDatacenterConfig\nmetadata: {name: test, namespace: test-namespace}\nspec: {}\n");
    let machine = |name: &str, extra: &str, dni: &str| {
        let volume = if c.bottlerocket {
            "  containersVolume: {size: 25}\n"
        } else {
            ""
        };
        format!(
            "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowMachineConfig\nmetadata: {{name: {name}, namespace: test-namespace}}\nspec:\n  amiID: eks-d-v1-21-5-ubuntu-ami-02833ca9a8f29c2ea\n  devices: [1.2.3.4, 1.2.3.5]\n  instanceType: sbe-c.large\n  osFamily: {os}\n  sshKeyName: default\n  physicalNetworkConnector: SFP_PLUS\n{volume}{extra}  network:\n    directNetworkInterfaces:\n{dni}"
        )
    };
    let static_dni = "    - {index: 1, primary: true, ipPoolRef: {kind: SnowIPPool, name: ip-pool-1}}\n    - {index: 2, vlanID: 20, ipPoolRef: {kind: SnowIPPool, name: ip-pool-2}}\n";
    let br = if c.bottlerocket {
        "  hostOSConfiguration:\n    bottlerocketConfiguration:\n      kernel: {sysctlSettings: {vm.max_map_count: \"262144\"}}\n      boot: {bootKernelParameters: {console: [tty0, ttyS0]}}\n"
    } else {
        ""
    };
    s.push_str(&machine("test-cp", br, static_dni));
    s.push_str(&machine(
        "test-md",
        "  nonRootVolumes: [{deviceName: /dev/sdc, size: 50, type: sbp1}]\n",
        "    - {index: 1, primary: true, dhcp: true}\n",
    ));
    if c.external_etcd {
        s.push_str(&machine(
            "test-etcd",
            "",
            "    - {index: 1, primary: true, ipPoolRef: {kind: SnowIPPool, name: ip-pool-1}}\n",
        ));
    }
    for (pool, third) in [("ip-pool-1", 1), ("ip-pool-2", 2)] {
        s.push_str(&format!(
            "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowIPPool\nmetadata: {{name: {pool}, namespace: test-namespace}}\nspec:\n  pools:\n  - {{ipStart: 10.0.{third}.10, ipEnd: 10.0.{third}.50, subnet: 10.0.{third}.0/24, gateway: 10.0.{third}.1}}\n"
        ));
    }
    s
}

fn spec(c: Case) -> ValidSpec {
    snow_api::check(&spec_text(c))
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{c:?}: {:#?}", r.findings))
}

/// Renders `spec` with its release resolved from `inputs`, the contract forced when given.
fn render_as(
    spec: &ValidSpec,
    inputs: &ReleaseInputs,
    contract: Option<Contract>,
) -> Result<Vec<RenderedObject>, RenderError> {
    let release = inputs.resolve(spec, contract)?;
    render(spec, &release, &RenderOptions::default())
}

fn docs(yaml: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(yaml).unwrap()
}

fn matrix(versions: &[&'static str], network: &[(bool, bool)]) -> Vec<Case> {
    let mut cases = Vec::new();
    for bottlerocket in [false, true] {
        for external_etcd in [false, true] {
            for &(proxy, mirror) in network {
                for &version in versions {
                    cases.push(Case {
                        bottlerocket,
                        external_etcd,
                        proxy,
                        mirror,
                        version,
                    });
                }
            }
        }
    }
    cases
}

/// The embedded catalog plus 1.28 and 1.29, made from its 1.30 entry, so the matrix covers both
/// sides of the 1.29 and 1.33 rules.
fn inputs() -> ReleaseInputs {
    let mut inputs = ReleaseInputs::embedded().unwrap();
    let (vb, distro) = inputs
        .for_version("1.30")
        .map(|(v, d)| (v.clone(), d.clone()))
        .unwrap();
    for minor in [28, 29] {
        let mut vb = vb.clone();
        vb.kube_version = format!("1.{minor}");
        vb.eks_d.name = format!("kubernetes-1-{minor}-eks-1");
        vb.eks_d.channel = format!("1-{minor}");
        let mut distro = distro.clone();
        distro.kubernetes.tag = format!("v1.{minor}.0-eks-1-{minor}-1");
        inputs.bundles.spec.versions_bundles.push(vb);
        inputs
            .distros
            .insert(format!("kubernetes-1-{minor}-eks-1"), distro);
    }
    inputs
}

fn case_name(c: Case, contract: Contract) -> String {
    format!(
        "{}-{}-{}-{}-{}",
        if c.bottlerocket {
            "bottlerocket"
        } else {
            "ubuntu"
        },
        if c.external_etcd {
            "external"
        } else {
            "stacked"
        },
        match (c.proxy, c.mirror) {
            (true, true) => "proxy-mirror",
            (true, false) => "proxy",
            (false, true) => "mirror",
            (false, false) => "plain",
        },
        c.version.replace('.', "-"),
        contract
    )
}

#[test]
fn every_object_of_the_matrix_is_schema_valid_for_both_contracts() {
    let inputs = inputs();
    let mut problems = Vec::new();
    let all = [(false, false), (true, false), (false, true), (true, true)];
    let (credentials, ca_bundle) = common::secret_files();
    let secrets = SecretInputs {
        credentials: &credentials,
        ca_bundle: &ca_bundle,
    };
    for c in matrix(&["1.28", "1.29", "1.30", "1.33", "1.36"], &all) {
        let spec = spec(c);
        for contract in [Contract::V1Beta1, Contract::V1Beta2] {
            let release = inputs.resolve(&spec, Some(contract)).unwrap();
            let options = RenderOptions {
                secrets: Some(secrets),
                ..Default::default()
            };
            let objects = render(&spec, &release, &options).unwrap();
            assert!(objects.iter().any(|o| o.kind == "Secret"));
            for o in &objects {
                for p in common::schema_problems(&o.yaml) {
                    problems.push(format!(
                        "{}: {}/{}: {p}",
                        case_name(c, contract),
                        o.kind,
                        o.name
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn output_is_deterministic_and_snapshotted() {
    let inputs = inputs();
    for c in matrix(&["1.28", "1.29", "1.33"], &[(true, false), (false, true)]) {
        let spec = spec(c);
        for contract in [Contract::V1Beta1, Contract::V1Beta2] {
            let a = to_yaml(&render_as(&spec, &inputs, Some(contract)).unwrap());
            let b = to_yaml(&render_as(&spec, &inputs, Some(contract)).unwrap());
            assert_eq!(a, b);
            insta::assert_snapshot!(case_name(c, contract), a);
        }
    }
}

#[test]
fn object_order_and_names() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let c = Case {
        bottlerocket: false,
        external_etcd: true,
        proxy: false,
        mirror: false,
        version: "1.33",
    };
    let objects = render_as(&spec(c), &inputs, None).unwrap();
    let got: Vec<String> = objects
        .iter()
        .map(|o| format!("{}/{}", o.kind, o.name))
        .collect();
    assert_eq!(
        got,
        [
            "Cluster/snow-test",
            "KubeadmControlPlane/snow-test",
            "AWSSnowCluster/snow-test",
            "AWSSnowMachineTemplate/snow-test-control-plane-1",
            "EtcdadmCluster/snow-test-etcd",
            "AWSSnowMachineTemplate/snow-test-etcd-1",
            "AWSSnowIPPool/ip-pool-1",
            "AWSSnowIPPool/ip-pool-2",
            "KubeadmConfigTemplate/snow-test-md-0-1",
            "MachineDeployment/snow-test-md-0",
            "AWSSnowMachineTemplate/snow-test-md-0-1",
            "KubeadmConfigTemplate/snow-test-md-1-1",
            "MachineDeployment/snow-test-md-1",
            "AWSSnowMachineTemplate/snow-test-md-1-1",
            "MachineHealthCheck/snow-test-kcp-unhealthy",
            "MachineHealthCheck/snow-test-md-0-worker-unhealthy",
            "MachineHealthCheck/snow-test-md-1-worker-unhealthy",
        ]
    );
    // The release bundle's CAPAS is v0.3.x: the v1beta2 contract by default.
    assert!(objects[0].api_version.ends_with("/v1beta2"));
}

fn kcp(c: Case, contract: Contract) -> Value {
    let inputs = inputs();
    let objects = render_as(&spec(c), &inputs, Some(contract)).unwrap();
    docs(
        &objects
            .iter()
            .find(|o| o.kind == "KubeadmControlPlane")
            .unwrap()
            .yaml,
    )
    .remove(0)
}

#[test]
fn control_plane_details_follow_eksa() {
    let ubuntu = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: true,
        mirror: false,
        version: "1.30",
    };
    let k = kcp(ubuntu, Contract::V1Beta1);
    let kcs = &k["spec"]["kubeadmConfigSpec"];
    // EtcdLearnerMode off for 1.29 ≤ v < 1.33, and the Ubuntu super-admin edit for ≥ 1.29.
    assert_eq!(
        kcs["clusterConfiguration"]["featureGates"]["EtcdLearnerMode"],
        false
    );
    let pre: Vec<&str> = kcs["preKubeadmCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(pre[0], "/etc/eks/bootstrap.sh");
    assert!(pre[1].contains("super-admin.conf"));
    assert_eq!(
        &pre[2..],
        [
            "sudo systemctl daemon-reload",
            "sudo systemctl restart containerd"
        ]
    );
    // Stacked etcd args in EKS-A's order.
    let etcd_args = kcs["clusterConfiguration"]["etcd"]["local"]["extraArgs"]
        .as_object()
        .unwrap();
    assert_eq!(etcd_args.len(), 3);
    // kube-vip first, then the proxy file with noProxy in EKS-A's order.
    let files = kcs["files"].as_array().unwrap();
    assert_eq!(files[0]["path"], "/etc/kubernetes/manifests/kube-vip.yaml");
    let vip: Value = serde_saphyr::from_str(files[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(vip["spec"]["containers"][0]["env"][10]["value"], "1.2.3.4");
    assert_eq!(
        files[1]["content"],
        "[Service]\nEnvironment=\"HTTP_PROXY=http://10.0.0.5:3128\"\nEnvironment=\"HTTPS_PROXY=http://10.0.0.5:3128\"\nEnvironment=\"NO_PROXY=10.1.0.0/16,10.96.0.0/12,internal.example.com,localhost,127.0.0.1,.svc,1.2.3.4\""
    );
    // Kubelet args: sorted, provider id last; the default control-plane taint for nil taints.
    let kubelet = &kcs["initConfiguration"]["nodeRegistration"]["kubeletExtraArgs"];
    assert_eq!(kubelet["node-labels"], "tier=cp,zone=a");
    let keys: Vec<&String> = kubelet.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "tls-cipher-suites");
    assert_eq!(
        kcs["initConfiguration"]["nodeRegistration"]["taints"][0]["key"],
        "node-role.kubernetes.io/control-plane"
    );
    assert_eq!(
        kcs["joinConfiguration"]["nodeRegistration"]["ignorePreflightErrors"][0],
        "DirAvailable--etc-kubernetes-manifests"
    );
    assert_eq!(k["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"], 1);

    // v1beta2: lists of {name, value}, provider id last, rollout.strategy.
    let k2 = kcp(ubuntu, Contract::V1Beta2);
    let args = k2["spec"]["kubeadmConfigSpec"]["initConfiguration"]["nodeRegistration"]["kubeletExtraArgs"].as_array().unwrap();
    assert_eq!(args.last().unwrap()["name"], "provider-id");
    assert_eq!(
        k2["spec"]["rollout"]["strategy"]["rollingUpdate"]["maxSurge"],
        1
    );
    assert!(
        k2["spec"]["kubeadmConfigSpec"]["postKubeadmCommands"].is_null(),
        "empty lists are left out in v1beta2"
    );

    // 1.33: no learner-mode gate.
    let k33 = kcp(
        Case {
            version: "1.33",
            ..ubuntu
        },
        Contract::V1Beta2,
    );
    assert!(k33["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["featureGates"].is_null());
}

#[test]
fn the_control_plane_rolls_before_its_certificates_expire() {
    let case = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: false,
        version: "1.33",
    };
    let days = capi_render::CERTIFICATES_EXPIRY_DAYS;
    // Cluster API's webhook refuses fewer than 7 days.
    assert!(days >= 7);
    // With the spec's rollout strategy (the matrix) and without one: the days are always set,
    // beside the strategy in v1beta2's `rollout`.
    let with = kcp(case, Contract::V1Beta1);
    assert_eq!(
        with["spec"]["rolloutBefore"]["certificatesExpiryDays"],
        days
    );
    let with = kcp(case, Contract::V1Beta2);
    assert_eq!(
        with["spec"]["rollout"]["before"]["certificatesExpiryDays"],
        days
    );
    assert_eq!(with["spec"]["rollout"]["strategy"]["type"], "RollingUpdate");
    let text = spec_text(case).replace(
        "    upgradeRolloutStrategy: {rollingUpdate: {maxSurge: 1}}\n",
        "",
    );
    assert_ne!(text, spec_text(case), "the strategy is taken out");
    let spec = snow_api::check(&text).unwrap().into_valid().unwrap();
    for contract in [Contract::V1Beta1, Contract::V1Beta2] {
        let objects = render_as(&spec, &inputs(), Some(contract)).unwrap();
        let k = docs(
            &objects
                .iter()
                .find(|o| o.kind == "KubeadmControlPlane")
                .unwrap()
                .yaml,
        )
        .remove(0);
        match contract {
            Contract::V1Beta1 => {
                assert!(k["spec"]["rolloutStrategy"].is_null());
                assert_eq!(k["spec"]["rolloutBefore"]["certificatesExpiryDays"], days);
            }
            Contract::V1Beta2 => {
                assert!(k["spec"]["rollout"]["strategy"].is_null());
                assert_eq!(
                    k["spec"]["rollout"]["before"]["certificatesExpiryDays"],
                    days
                );
            }
        }
    }
}

#[test]
fn bottlerocket_and_external_etcd() {
    let br = Case {
        bottlerocket: true,
        external_etcd: true,
        proxy: true,
        mirror: false,
        version: "1.33",
    };
    let k = kcp(br, Contract::V1Beta2);
    let kcs = &k["spec"]["kubeadmConfigSpec"];
    assert_eq!(kcs["format"], "bottlerocket");
    assert_eq!(
        kcs["clusterConfiguration"]["certificatesDir"],
        "/var/lib/kubeadm/pki"
    );
    assert_eq!(
        kcs["joinConfiguration"]["bottlerocketCustomBootstrapContainers"][0]["name"],
        "bottlerocket-bootstrap-snow"
    );
    assert!(
        kcs["joinConfiguration"]["proxy"]["httpProxy"].is_null(),
        "Bottlerocket gets no httpProxy"
    );
    assert_eq!(
        kcs["clusterConfiguration"]["bottlerocket"]["kernel"]["sysctlSettings"]["vm.max_map_count"],
        "262144"
    );
    assert_eq!(
        kcs["clusterConfiguration"]["etcd"]["external"]["keyFile"],
        "/var/lib/kubeadm/pki/apiserver-etcd-client.key"
    );
    assert_eq!(
        k["metadata"]["annotations"]["cluster.x-k8s.io/skip-pause-cp-managed-etcd"],
        "true"
    );
}

#[test]
fn registry_mirror_files_are_sorted_and_values_round_trip() {
    let c = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: true,
        version: "1.33",
    };
    let k = kcp(c, Contract::V1Beta1);
    let files = k["spec"]["kubeadmConfigSpec"]["files"].as_array().unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "/etc/kubernetes/manifests/kube-vip.yaml",
            "/etc/containerd/config_append.toml",
            "/etc/containerd/certs.d/1.2.3.5:443/ca.crt",
            "/etc/containerd/certs.d/1.2.3.5:443/hosts.toml",
            "/etc/containerd/certs.d/783794618700.dkr.ecr.us-west-2.amazonaws.com/hosts.toml",
            "/etc/containerd/certs.d/public.ecr.aws/hosts.toml",
        ]
    );
    // The CA (with quotes, colons, `*` and `&`) comes back byte for byte.
    assert_eq!(
        files[2]["content"],
        "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG...: \"quoted\" *star &amp\n-----END CERTIFICATE-----\n"
    );
    assert!(
        files[5]["content"]
            .as_str()
            .unwrap()
            .contains("[host.\"https://1.2.3.5:443/v2/eks-anywhere\"]")
    );
}

/// The matrix spec with an OIDCConfig and an AWSIamConfig referenced.
fn identity_spec(c: Case) -> ValidSpec {
    let text = spec_text(c).replacen(
        "  datacenterRef: {kind: SnowDatacenterConfig, name: test}\n",
        "  datacenterRef: {kind: SnowDatacenterConfig, name: test}\n  identityProviderRefs: [{kind: OIDCConfig, name: oidc}, {kind: AWSIamConfig, name: iam}]\n",
        1,
    ) + "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: OIDCConfig\nmetadata: {name: oidc, namespace: test-namespace}\nspec: {clientId: snowctl, issuerUrl: \"https://issuer.example.com\", groupsClaim: groups, usernamePrefix: \"oidc:\", requiredClaims: [{claim: aud, value: snowctl}]}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: AWSIamConfig\nmetadata: {name: iam, namespace: test-namespace}\nspec: {awsRegion: us-west-2, backendMode: [EKSConfigMap]}\n";
    snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

#[test]
fn oidc_and_aws_iam_are_rendered_and_schema_valid() {
    let inputs = inputs();
    for bottlerocket in [false, true] {
        let c = Case {
            bottlerocket,
            external_etcd: false,
            proxy: false,
            mirror: false,
            version: "1.33",
        };
        for contract in [Contract::V1Beta1, Contract::V1Beta2] {
            let objects = render_as(&identity_spec(c), &inputs, Some(contract)).unwrap();
            for o in &objects {
                let problems = common::schema_problems(&o.yaml);
                assert!(problems.is_empty(), "{contract} {}: {problems:?}", o.kind);
            }
        }
    }
    let c = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: false,
        version: "1.33",
    };
    // v1beta2 keeps the argument order (a list): OIDC first (empty values skipped), then AWS IAM,
    // then the user's arguments. (v1beta1 writes a map, which has no order.)
    let objects = render_as(&identity_spec(c), &inputs, Some(Contract::V1Beta2)).unwrap();
    let k = docs(
        &objects
            .iter()
            .find(|o| o.kind == "KubeadmControlPlane")
            .unwrap()
            .yaml,
    )
    .remove(0);
    let api = &k["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"];
    let args = api["extraArgs"].as_array().unwrap();
    let names: Vec<&str> = args.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "oidc-client-id",
            "oidc-groups-claim",
            "oidc-issuer-url",
            "oidc-required-claim",
            "oidc-username-prefix",
            "authentication-token-webhook-config-file",
            "audit-log-maxage"
        ]
    );
    assert_eq!(args[3]["value"], "aud=snowctl");
    assert_eq!(api["extraVolumes"].as_array().unwrap().len(), 2);
    let files = k["spec"]["kubeadmConfigSpec"]["files"].as_array().unwrap();
    assert_eq!(files[0]["path"], "/etc/kubernetes/manifests/kube-vip.yaml");
    assert_eq!(
        files[2]["contentFrom"]["secret"]["name"],
        "snow-test-aws-iam-authenticator-ca"
    );
}

#[test]
fn eksa_bugs_are_not_copied() {
    // An EKS Anywhere bug we do not copy: it names the AWS IAM authenticator CA Secret `test-cluster-…` literally;
    // snowctl derives it from the cluster.
    let inputs = inputs();
    let c = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: true,
        version: "1.33",
    };
    let yaml = to_yaml(&render_as(&identity_spec(c), &inputs, None).unwrap());
    assert!(!yaml.contains("test-cluster"));
    assert!(yaml.contains("snow-test-aws-iam-authenticator-ca"));
    // EKS Anywhere writes these in Go map order; here registry hosts files and IP pools come in sorted order, not Go map order, so
    // two renders of the same spec are byte-identical (and see the mirror test for the order).
    let again = to_yaml(&render_as(&identity_spec(c), &inputs, None).unwrap());
    assert_eq!(yaml, again);
    // EKS Anywhere validates hostOSConfiguration.bottlerocketConfiguration.kubernetes is validated but was
    // silently dropped; snowctl renders the kernel and boot settings it supports (see the
    // Bottlerocket test) and never emits settings it cannot apply.
    assert!(!yaml.contains("maxPods"));
}

#[test]
fn invalid_specs_never_reach_rendering() {
    // render takes a ValidSpec only; a spec with errors stays a report with its findings.
    let c = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: false,
        version: "1.33",
    };
    let text = spec_text(c).replace("host: 1.2.3.4", "host: \"\"");
    let refused = snow_api::check(&text).unwrap().into_valid().unwrap_err();
    assert!(
        refused
            .findings
            .iter()
            .any(|f| f.check == "control-plane.endpoint")
    );
    assert!(refused.spec.is_some(), "the spec is handed back with them");
}

#[test]
fn a_version_the_bundle_lacks_lists_the_available_ones() {
    let inputs = ReleaseInputs::embedded().unwrap();
    let c = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: false,
        version: "1.28",
    };
    let err = render_as(&spec(c), &inputs, None).unwrap_err();
    assert!(err.to_string().contains("1.30, 1.31"), "{err}");
}

/// A Bottlerocket cluster with external etcd on 1.33, v1beta2, with the identity Secrets.
fn bottlerocket_v1beta2_with_secrets() -> Vec<capi_render::RenderedObject> {
    let inputs = ReleaseInputs::embedded().unwrap();
    let c = Case {
        bottlerocket: true,
        external_etcd: true,
        proxy: false,
        mirror: false,
        version: "1.33",
    };
    let (credentials, ca_bundle) = common::secret_files();
    let spec = spec(c);
    let release = inputs.resolve(&spec, Some(Contract::V1Beta2)).unwrap();
    let options = RenderOptions {
        secrets: Some(SecretInputs {
            credentials: &credentials,
            ca_bundle: &ca_bundle,
        }),
        ..Default::default()
    };
    render(&spec, &release, &options).unwrap()
}

#[test]
fn the_schema_check_can_fail() {
    // The conformance check is only worth something if it rejects what an API server would.
    let objects = bottlerocket_v1beta2_with_secrets();
    let kcp = objects
        .iter()
        .find(|o| o.kind == "KubeadmControlPlane")
        .unwrap();
    let broken = kcp
        .yaml
        .replace("  replicas: 3\n", "  replicas: 3\n  replicaz: 3\n");
    assert!(
        common::schema_problems(&broken)
            .iter()
            .any(|p| p.contains("replicaz"))
    );
    // A fork field outside the places the fork adds it is rejected too.
    let misplaced = kcp.yaml.replace(
        "  replicas: 3\n",
        "  replicas: 3\n  bottlerocketAdmin: {}\n",
    );
    assert!(!common::schema_problems(&misplaced).is_empty());
    // An empty list where v1beta2 requires items is rejected.
    let md = objects
        .iter()
        .find(|o| o.kind == "KubeadmConfigTemplate")
        .unwrap();
    let empty = md.yaml.replace(
        "      format: bottlerocket\n",
        "      format: bottlerocket\n      preKubeadmCommands: []\n",
    );
    assert!(
        common::schema_problems(&empty)
            .iter()
            .any(|p| p.contains("preKubeadmCommands")),
        "{:?}",
        common::schema_problems(&empty)
    );
    let machine = objects
        .iter()
        .find(|o| o.kind == "AWSSnowMachineTemplate")
        .unwrap();
    let bad_enum = machine
        .yaml
        .replace("osFamily: bottlerocket", "osFamily: windows");
    assert!(!common::schema_problems(&bad_enum).is_empty());
}

/// What the project's typing code does not check, the independent checks do: CEL rules, JSON
/// Schema keywords, and Secrets.
#[test]
fn the_independent_checks_catch_what_typing_ignores() {
    let objects = bottlerocket_v1beta2_with_secrets();
    let yaml = |kind: &str| {
        objects
            .iter()
            .find(|o| o.kind == kind)
            .unwrap_or_else(|| panic!("no {kind}"))
            .yaml
            .clone()
    };
    // CEL: extraArgs names must be unique (v1beta2).
    let kcp = yaml("KubeadmControlPlane");
    let twice = kcp.replacen(
        "        - name: audit-log-maxage\n          value: \"30\"\n",
        "        - name: audit-log-maxage\n          value: \"30\"\n        - name: audit-log-maxage\n          value: \"31\"\n",
        1,
    );
    assert_ne!(twice, kcp, "the fixture has audit-log-maxage");
    let problems = common::schema_problems(&twice);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("(CEL)") && p.contains("must be unique")),
        "{problems:?}"
    );
    // Secrets: an unknown field, and data that is not base64.
    let secret = objects
        .iter()
        .find(|o| o.kind == "Secret")
        .expect("a Secret")
        .yaml
        .clone();
    assert_eq!(common::schema_problems(&secret), Vec::<String>::new());
    let unknown = format!("{secret}extra: field\n");
    assert!(
        common::schema_problems(&unknown)
            .iter()
            .any(|p| p.contains("jsonschema") && p.contains("extra")),
        "{:?}",
        common::schema_problems(&unknown)
    );
    let not_base64 = secret.replacen("\ndata:\n  ", "\ndata:\n  bad: \"not base64!\"\n  ", 1);
    assert_ne!(not_base64, secret, "the Secret has data");
    assert!(
        common::schema_problems(&not_base64)
            .iter()
            .any(|p| p.contains("jsonschema") && p.contains("/data/bad")),
        "{:?}",
        common::schema_problems(&not_base64)
    );
}

/// Every CEL rule of the reference CRDs compiles and evaluates with `cel-interpreter`, so the
/// conformance check leaves none unchecked. Should one ever not, this test names it (and the
/// conformance test reports it as "not evaluated" wherever a rendered object reaches it).
#[test]
fn every_cel_rule_of_the_crds_is_evaluated() {
    let rules = common::cel_rules();
    assert!(rules.len() >= 20, "{} rules", rules.len());
    let unchecked: Vec<String> = rules
        .iter()
        .filter(|(_, rule)| {
            rule.contains("oldSelf") || cel_interpreter::Program::compile(rule).is_err()
        })
        .map(|(owner, rule)| format!("{owner}: {rule}"))
        .collect();
    assert!(
        unchecked.is_empty(),
        "CEL rules not checked:\n{}",
        unchecked.join("\n")
    );
}

#[test]
fn version_gates_for_learner_mode_and_super_admin() {
    let base = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: false,
        version: "1.28",
    };
    for (version, gate, super_admin) in [
        ("1.28", false, false),
        ("1.29", true, true),
        ("1.32", true, true),
        ("1.33", false, true),
    ] {
        let k = kcp(Case { version, ..base }, Contract::V1Beta2);
        let kcs = &k["spec"]["kubeadmConfigSpec"];
        assert_eq!(
            kcs["clusterConfiguration"]["featureGates"]["EtcdLearnerMode"] == false,
            gate,
            "{version}"
        );
        let pre = kcs["preKubeadmCommands"].to_string();
        assert_eq!(pre.contains("super-admin.conf"), super_admin, "{version}");
        // Bottlerocket never gets the Ubuntu edit, but does get the learner-mode gate.
        let br = kcp(
            Case {
                version,
                bottlerocket: true,
                ..base
            },
            Contract::V1Beta2,
        );
        assert!(!br.to_string().contains("super-admin.conf"));
        assert_eq!(
            br["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["featureGates"]["EtcdLearnerMode"]
                == false,
            gate
        );
    }
}

/// A health-check timeout is rendered exactly in both contracts: the Go string as written for
/// v1beta1's `metav1.Duration`, its whole seconds for v1beta2 (never a default in its place).
#[test]
fn health_check_timeouts_render_exactly() {
    let c = Case {
        bottlerocket: false,
        external_etcd: false,
        proxy: false,
        mirror: false,
        version: "1.33",
    };
    let text = spec_text(c).replacen(
        "  kubernetesVersion: \"1.33\"\n",
        "  kubernetesVersion: \"1.33\"\n  machineHealthCheck: {nodeStartupTimeout: \"1h0.5m\", unhealthyMachineTimeout: \"420000000us\"}\n",
        1,
    );
    assert!(text.contains("420000000us"), "the fixture changed");
    let spec = snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings));
    let mhc = |contract| {
        let objects = render_as(&spec, &inputs(), Some(contract)).unwrap();
        docs(
            &objects
                .iter()
                .find(|o| o.kind == "MachineHealthCheck")
                .unwrap()
                .yaml,
        )
        .remove(0)
    };
    let v2 = mhc(Contract::V1Beta2);
    assert_eq!(v2["spec"]["checks"]["nodeStartupTimeoutSeconds"], 3630);
    for condition in v2["spec"]["checks"]["unhealthyNodeConditions"]
        .as_array()
        .unwrap()
    {
        assert_eq!(condition["timeoutSeconds"], 420);
    }
    let v1 = mhc(Contract::V1Beta1);
    assert_eq!(v1["spec"]["nodeStartupTimeout"], "1h0.5m");
    assert_eq!(
        v1["spec"]["unhealthyConditions"][0]["timeout"],
        "420000000us"
    );
}
