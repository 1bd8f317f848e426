//! A Snow cluster as a user declares it on a management cluster (`kubectl apply` of a spec plus
//! the identity Secret): the EKS Anywhere objects the controller reconciles.

use serde_json::{Value, json};
use snow_test_devices::TestCa;
use std::net::IpAddr;

/// The EKS Anywhere API version.
pub const EKSA: &str = "anywhere.eks.amazonaws.com/v1alpha1";

/// One declared cluster: a Cluster, its SnowDatacenterConfig, a control-plane and a worker
/// SnowMachineConfig on `devices`, and the identity Secret `<name>-snow-credentials`.
#[derive(Debug, Clone)]
pub struct DeclaredCluster {
    /// Cluster name (also the datacenter's and the worker machine config's).
    pub name: String,
    /// Namespace of every object.
    pub namespace: String,
    /// Control-plane endpoint.
    pub endpoint: String,
    /// Control-plane machines.
    pub control_plane: u32,
    /// Worker groups: name and count (all on the worker machine config).
    pub workers: Vec<(String, u32)>,
    /// The worker machine config's instance type.
    pub worker_type: String,
    /// `amiID` of both machine configs.
    pub ami: String,
    /// Device IPs.
    pub devices: Vec<String>,
    /// External etcd: one machine on `<name>-etcd`, static addresses from SnowIPPool
    /// `<name>-pool`.
    pub external_etcd: bool,
}

impl DeclaredCluster {
    /// `name` in `default`, one control-plane machine and group `md-0` of `workers` machines on
    /// two devices, AMI `ami-good`, endpoint 192.168.1.100.
    pub fn new(name: &str, workers: u32) -> DeclaredCluster {
        DeclaredCluster {
            name: name.into(),
            namespace: "default".into(),
            endpoint: "192.168.1.100".into(),
            control_plane: 1,
            workers: vec![("md-0".into(), workers)],
            worker_type: "sbe-c.large".into(),
            ami: "ami-good".into(),
            devices: vec!["192.168.1.11".into(), "192.168.1.12".into()],
            external_etcd: false,
        }
    }

    /// The Cluster (with the skip-ip-check annotation: tests never dial the endpoint).
    pub fn cluster(&self) -> Value {
        let groups: Vec<Value> = self
            .workers
            .iter()
            .map(|(g, n)| {
                json!({"name": g, "count": n,
                    "machineGroupRef": {"kind": "SnowMachineConfig", "name": self.name}})
            })
            .collect();
        let mut cluster = json!({"apiVersion": EKSA, "kind": "Cluster",
            "metadata": {"name": self.name, "namespace": self.namespace,
                "annotations": {"anywhere.eks.amazonaws.com/skip-ip-check": "true"}},
            "spec": {
                "kubernetesVersion": "1.33",
                "clusterNetwork": {"cniConfig": {"cilium": {}},
                    "pods": {"cidrBlocks": ["10.244.0.0/16"]},
                    "services": {"cidrBlocks": ["10.96.0.0/12"]}},
                "controlPlaneConfiguration": {"count": self.control_plane,
                    "endpoint": {"host": self.endpoint},
                    "machineGroupRef": {"kind": "SnowMachineConfig", "name": format!("{}-cp", self.name)}},
                "datacenterRef": {"kind": "SnowDatacenterConfig", "name": self.name},
                "workerNodeGroupConfigurations": groups}});
        if self.external_etcd {
            cluster["spec"]["externalEtcdConfiguration"] = json!({"count": 1,
                "machineGroupRef": {"kind": "SnowMachineConfig", "name": format!("{}-etcd", self.name)}});
        }
        cluster
    }

    /// The etcd machine config (static addresses from the pool) with `instance_type`.
    pub fn etcd_machine_config(&self, instance_type: &str) -> Value {
        let mut config = self.machine_config(&format!("{}-etcd", self.name), instance_type);
        config["spec"]["network"]["directNetworkInterfaces"] = json!([{"index": 1, "primary": true,
            "dhcp": false, "ipPoolRef": {"kind": "SnowIPPool", "name": format!("{}-pool", self.name)}}]);
        config
    }

    /// The SnowIPPool of the etcd machines.
    pub fn pool(&self) -> Value {
        json!({"apiVersion": EKSA, "kind": "SnowIPPool",
            "metadata": {"name": format!("{}-pool", self.name), "namespace": self.namespace},
            "spec": {"pools": [{"ipStart": "192.168.1.20", "ipEnd": "192.168.1.40",
                "subnet": "192.168.1.0/24", "gateway": "192.168.1.1"}]}})
    }

    /// A SnowMachineConfig of this cluster.
    pub fn machine_config(&self, name: &str, instance_type: &str) -> Value {
        json!({"apiVersion": EKSA, "kind": "SnowMachineConfig",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"devices": self.devices, "instanceType": instance_type, "amiID": self.ami,
                     "sshKeyName": "edge-key", "osFamily": "ubuntu",
                     "physicalNetworkConnector": "SFP_PLUS",
                     "network": {"directNetworkInterfaces": [{"index": 1, "dhcp": true, "primary": true}]}}})
    }

    /// The control-plane, worker and (with external etcd) etcd machine configs.
    pub fn machine_configs(&self) -> Vec<Value> {
        let mut configs = vec![
            self.machine_config(&format!("{}-cp", self.name), "sbe-c.large"),
            self.machine_config(&self.name, &self.worker_type),
        ];
        if self.external_etcd {
            configs.push(self.etcd_machine_config("sbe-c.large"));
        }
        configs
    }

    /// The identity Secret `<name>-snow-credentials` (EKS Anywhere's encoding: base64 text of
    /// the credentials INI and of a bundle with a certificate per device).
    pub fn identity_secret(&self) -> Value {
        let ca = TestCa::new("devices").expect("a test CA");
        let mut ini = String::new();
        let mut pem = String::new();
        for (i, ip) in self.devices.iter().enumerate() {
            ini.push_str(&format!(
                "[{ip}]\naws_access_key_id = AKIDDECLARED{i}\naws_secret_access_key = declaredsecret{i}\nregion = snow\n"
            ));
            if let Ok(ip) = ip.parse::<IpAddr>()
                && let Ok(cert) = ca.server_certificate(ip)
            {
                pem.push_str(&cert.cert_pem);
            }
        }
        let (creds, _) = snow_credentials::CredentialsFile::parse("credentials", ini.into_bytes());
        let (bundle, _) = snow_credentials::CaBundle::parse("ca-bundle", pem.into_bytes());
        let mut secret = snow_credentials::encode::eksa_identity_secret(
            &format!("{}-snow-credentials", self.name),
            &self.namespace,
            &creds,
            &bundle,
        )
        .to_json();
        secret["apiVersion"] = json!("v1");
        secret["kind"] = json!("Secret");
        secret
    }

    /// Everything, in the order a user would apply it.
    pub fn objects(&self) -> Vec<Value> {
        let mut objects = vec![
            self.identity_secret(),
            json!({"apiVersion": EKSA, "kind": "SnowDatacenterConfig",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": {}}),
        ];
        if self.external_etcd {
            objects.push(self.pool());
        }
        objects.extend(self.machine_configs());
        objects.push(self.cluster());
        objects
    }
}
