//! The Snow cluster spec the tests and examples create, `edge` (EKS Anywhere's
//! `anywhere.eks.amazonaws.com/v1alpha1` kinds): one builder, so each crate's tests do not keep a
//! copy of it that differs in a count or a device.

/// A worker group: its name, machine count and SnowMachineConfig.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerGroup<'a> {
    /// `workerNodeGroupConfigurations[].name`.
    pub name: &'a str,
    /// Its machine count.
    pub count: u32,
    /// The SnowMachineConfig it uses (`edge` is the workers' own; `edge-cp` the control plane's).
    pub machine_config: &'a str,
}

/// Cluster `edge` with SnowDatacenterConfig `edge` and SnowMachineConfigs `edge-cp` (control
/// plane) and `edge` (workers), Kubernetes 1.33, Cilium, DHCP on one primary DNI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeSpec<'a> {
    /// The control-plane endpoint (kube-vip's address).
    pub endpoint: &'a str,
    /// Control-plane machines.
    pub control_planes: u32,
    /// The worker groups, in order.
    pub groups: &'a [WorkerGroup<'a>],
    /// The workers' instance type (the control plane's is `sbe-c.large`).
    pub worker_type: &'a str,
    /// The devices of both machine configs.
    pub devices: &'a [&'a str],
    /// `sshKeyName` of both machine configs; `None` leaves it out (create's default key).
    pub ssh_key_name: Option<&'a str>,
}

/// One group `md-0` of two workers on machine config `edge`.
pub const MD_0: [WorkerGroup<'static>; 1] = [WorkerGroup {
    name: "md-0",
    count: 2,
    machine_config: "edge",
}];

impl Default for EdgeSpec<'static> {
    /// Three control-plane machines and [`MD_0`] on 192.168.1.11 and .12, endpoint
    /// 192.168.1.100, key pair `edge-key`.
    fn default() -> Self {
        EdgeSpec {
            endpoint: "192.168.1.100",
            control_planes: 3,
            groups: &MD_0,
            worker_type: "sbe-c.large",
            devices: &["192.168.1.11", "192.168.1.12"],
            ssh_key_name: Some("edge-key"),
        }
    }
}

impl EdgeSpec<'_> {
    /// The spec as a user writes it: multi-document YAML.
    pub fn yaml(&self) -> String {
        let mut text = format!(
            r#"apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: edge
spec:
  clusterNetwork:
    cniConfig:
      cilium: {{}}
    pods:
      cidrBlocks: [10.244.0.0/16]
    services:
      cidrBlocks: [10.96.0.0/12]
  controlPlaneConfiguration:
    count: {}
    endpoint:
      host: "{}"
    machineGroupRef: {{kind: SnowMachineConfig, name: edge-cp}}
  datacenterRef: {{kind: SnowDatacenterConfig, name: edge}}
  kubernetesVersion: "1.33"
  workerNodeGroupConfigurations:
"#,
            self.control_planes, self.endpoint
        );
        for g in self.groups {
            text.push_str(&format!(
                "  - name: {}\n    count: {}\n    machineGroupRef: {{kind: SnowMachineConfig, name: {}}}\n",
                g.name, g.count, g.machine_config
            ));
        }
        text.push_str("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowDatacenterConfig\nmetadata:\n  name: edge\nspec: {}\n");
        let devices: Vec<String> = self.devices.iter().map(|d| format!("\"{d}\"")).collect();
        let key = self
            .ssh_key_name
            .map(|k| format!("  sshKeyName: {k}\n"))
            .unwrap_or_default();
        for (name, instance_type) in [("edge-cp", "sbe-c.large"), ("edge", self.worker_type)] {
            text.push_str(&format!(
                r#"---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata:
  name: {name}
spec:
  devices: [{}]
  instanceType: {instance_type}
  network:
    directNetworkInterfaces:
    - {{index: 1, dhcp: true, primary: true}}
  osFamily: ubuntu
  physicalNetworkConnector: SFP_PLUS
{key}"#,
                devices.join(", ")
            ));
        }
        text
    }
}
