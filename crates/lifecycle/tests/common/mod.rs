//! What the lifecycle tests share: the Snow cluster spec they create.

/// A Snow cluster `edge` on devices 192.168.1.11 and .12 (endpoint 192.168.1.100, Kubernetes
/// 1.33, Cilium) with `control_planes` control-plane machines and one worker group of `workers`.
pub(crate) fn edge_spec(control_planes: u32, workers: u32) -> String {
    format!(
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
    count: {control_planes}
    endpoint:
      host: "192.168.1.100"
    machineGroupRef: {{kind: SnowMachineConfig, name: edge-cp}}
  datacenterRef: {{kind: SnowDatacenterConfig, name: edge}}
  kubernetesVersion: "1.33"
  workerNodeGroupConfigurations:
  - name: md-0
    count: {workers}
    machineGroupRef: {{kind: SnowMachineConfig, name: edge}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowDatacenterConfig
metadata:
  name: edge
spec: {{}}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata:
  name: edge-cp
spec:
  devices: ["192.168.1.11", "192.168.1.12"]
  instanceType: sbe-c.large
  network:
    directNetworkInterfaces:
    - {{index: 1, dhcp: true, primary: true}}
  osFamily: ubuntu
  physicalNetworkConnector: SFP_PLUS
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata:
  name: edge
spec:
  devices: ["192.168.1.11", "192.168.1.12"]
  instanceType: sbe-c.large
  network:
    directNetworkInterfaces:
    - {{index: 1, dhcp: true, primary: true}}
  osFamily: ubuntu
  physicalNetworkConnector: SFP_PLUS
"#
    )
}
