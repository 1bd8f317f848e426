//! The SnowMachineConfig part (EKS Anywhere's Snow reconcilers): check the config statically, then that its AMI and
//! SSH key exist on each of its devices, and record the verdict in `status.specValid` and
//! `status.failureMessage`, which the cluster part waits for.

use super::{Outcome, sources::EKSA_API_VERSION};
use base64::Engine as _;
use serde_json::{Value, json};
use snow_api::DeviceIp;
use snow_api::redact::redact_userinfo;
use snow_kube::Management;
use snow_lifecycle::LifecycleError;
use snow_validate::{ClientConfig, Device, SnowDevice, Trust};
use std::{future::Future, time::Duration};

/// The CAPAS bootstrap Secret the devices' credentials come from (EKS Anywhere's `pkg/aws` and Snow credentials Secret).
pub const BOOTSTRAP_SECRET: (&str, &str) = (
    snow_credentials::encode::CAPAS_NAMESPACE,
    snow_credentials::encode::CAPAS_BOOTSTRAP_SECRET,
);

/// How long to wait before checking a config again whose devices could not be asked.
const RETRY: Duration = Duration::from_secs(60);

/// Where the controller gets device clients.
pub trait DeviceSource: Send + Sync + 'static {
    /// The client type.
    type Device: Device + 'static;
    /// Clients for `ips` and the IPs that have no credentials; `Err` says why none can be made.
    fn devices(
        &self,
        mgmt: &Management,
        ips: &[DeviceIp],
    ) -> impl Future<Output = Result<(Vec<Self::Device>, Vec<DeviceIp>), String>> + Send;
}

/// Devices from the CAPAS bootstrap Secret, read on every reconcile as EKS Anywhere does (the
/// Secret may be rotated at any time).
#[derive(Debug, Clone, Copy, Default)]
pub struct BootstrapCredentials {
    /// Timeouts and retries of the device clients.
    pub config: ClientConfig,
}

impl DeviceSource for BootstrapCredentials {
    type Device = SnowDevice;

    async fn devices(
        &self,
        mgmt: &Management,
        ips: &[DeviceIp],
    ) -> Result<(Vec<SnowDevice>, Vec<DeviceIp>), String> {
        let (ns, name) = BOOTSTRAP_SECRET;
        let secret = mgmt
            .get("v1", "Secret", Some(ns), name)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!("the CAPAS bootstrap credentials Secret {ns}/{name} is missing (install CAPAS with clusterctl init --infrastructure snow)")
            })?;
        let field = |key: &str| {
            let encoded = secret["data"][key]
                .as_str()
                .ok_or_else(|| format!("Secret {ns}/{name} has no `{key}`"))?;
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("`{key}` of Secret {ns}/{name} is not base64: {e}"))
        };
        let (credentials, findings) = snow_credentials::CredentialsFile::parse(
            format!("Secret {ns}/{name} credentials"),
            field("credentials")?,
        );
        if let Some(f) = findings.iter().find(|f| f.is_error()) {
            return Err(f.message.clone());
        }
        let (bundle, _) = snow_credentials::CaBundle::parse(
            format!("Secret {ns}/{name} ca-bundle"),
            field("ca-bundle")?,
        );
        let trust = Trust::from_bundle(&bundle).map_err(|e| e.to_string())?;
        Ok(SnowDevice::fleet(
            &credentials,
            &trust,
            self.config,
            ips.iter().copied(),
        ))
    }
}

/// The static findings about this one config (typing, devices, network, volumes): the admission
/// webhook's rules (`snow_api::admission::object_findings`), but for its SSH key rule, which the
/// Cluster's reconcile reports (SpecInvalid) for the configs it uses.
fn static_errors(config: &Value) -> Vec<String> {
    snow_api::admission::object_findings(config)
        .iter()
        .filter(|f| f.is_error() && f.check != "machine-config.ssh-key-name")
        .map(|f| match &f.field {
            Some(field) => format!("{field}: {}", f.message),
            None => f.message.clone(),
        })
        .collect()
}

/// Checks one SnowMachineConfig and records the verdict when it changed.
pub async fn reconcile<S: DeviceSource>(
    mgmt: &Management,
    devices: &S,
    manager: &str,
    config: &Value,
) -> Result<Outcome, LifecycleError> {
    if !config["metadata"]["deletionTimestamp"].is_null() {
        return Ok(Outcome::default());
    }
    let mut problems = static_errors(config);
    let mut retry = None;
    if problems.is_empty() {
        let spec = &config["spec"];
        let ips: Vec<DeviceIp> = spec["devices"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str()?.trim().parse().ok())
            .collect();
        let ami = spec["amiID"].as_str().filter(|s| !s.is_empty());
        let key = spec["sshKeyName"].as_str().filter(|s| !s.is_empty());
        match devices.devices(mgmt, &ips).await {
            Err(why) => {
                problems.push(why);
                retry = Some(RETRY);
            }
            Ok((clients, without)) => {
                for ip in without {
                    problems.push(format!("device {ip} has no profile in the credentials"));
                }
                // One device's answers at a time, all devices at once.
                let answers = futures_util::future::join_all(clients.iter().map(|d| async move {
                    let mut found = Vec::new();
                    if let Some(ami) = ami {
                        match d.describe_image(ami).await {
                            Ok(Some(_)) => {}
                            Ok(None) => found
                                .push((false, format!("AMI {ami} is not on device {}", d.ip()))),
                            Err(e) => found.push((true, e.describe())),
                        }
                    }
                    if let Some(key) = key {
                        match d.key_pair_exists(key).await {
                            Ok(true) => {}
                            Ok(false) => found.push((
                                false,
                                format!("SSH key pair {key} is not on device {}", d.ip()),
                            )),
                            Err(e) => found.push((true, e.describe())),
                        }
                    }
                    found
                }))
                .await;
                for (transient, problem) in answers.into_iter().flatten() {
                    if transient {
                        retry = Some(RETRY);
                    }
                    problems.push(problem);
                }
            }
        }
    }
    let status = if problems.is_empty() {
        json!({"specValid": true, "failureMessage": null})
    } else {
        json!({"specValid": false, "failureMessage": redact_userinfo(&problems.join("; "))})
    };
    let current = &config["status"];
    let same = current["specValid"] == status["specValid"]
        && current["failureMessage"].as_str() == status["failureMessage"].as_str();
    let mut outcome = Outcome {
        requeue_after: retry,
        writes: 0,
    };
    if !same {
        let mut target = config.clone();
        target["apiVersion"] = json!(EKSA_API_VERSION);
        mgmt.patch_status(&target, &status, manager).await?;
        outcome.writes += 1;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_device_list_is_a_static_error_of_the_config() {
        let config = json!({
            "apiVersion": EKSA_API_VERSION, "kind": "SnowMachineConfig",
            "metadata": {"name": "m", "namespace": "default"},
            "spec": {"devices": ["not-an-ip"], "instanceType": "sbe-c.large", "osFamily": "ubuntu",
                     "physicalNetworkConnector": "SFP_PLUS",
                     "network": {"directNetworkInterfaces": [{"index": 1, "dhcp": true, "primary": true}]}}
        });
        let errors = static_errors(&config);
        assert!(errors.iter().any(|e| e.contains("devices")), "{errors:?}");
        let mut good = config.clone();
        good["spec"]["devices"] = json!(["192.168.1.11"]);
        assert_eq!(static_errors(&good), Vec::<String>::new());
        // A pool reference is not an error here: the pool is not part of this check.
        good["spec"]["network"]["directNetworkInterfaces"][0] = json!({"index": 1, "primary": true, "ipPoolRef": {"kind": "SnowIPPool", "name": "pool"}});
        assert_eq!(static_errors(&good), Vec::<String>::new());
    }
}
