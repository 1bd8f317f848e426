//! Removing what a cluster left on the devices (`snowctl devices cleanup`): its instances (found
//! by the `sigs.k8s.io/cluster-api-provider-aws-snow/cluster/<name>` tag) and the direct network
//! interfaces attached to them.
//!
//! [`plan`] reads every device at once. [`execute`] works on every device at once and, on each
//! device, in this order: delete the DNIs of the cluster's instances; then, per instance whose
//! DNIs are all gone, delete its cluster tags and terminate it; then wait until those instances
//! are `terminated` or no longer listed. An instance whose DNI could not be deleted is neither
//! untagged nor terminated (it is reported as skipped). Every failure names the device and the
//! resource; the other resources and devices go on. What is already gone is skipped, so a run
//! can be repeated — except that an instance whose tags were deleted but whose termination did
//! not happen (the run was killed between the two calls) has no cluster tag any more and is not
//! found by the next run.

use crate::device::DirectNetworkInterface;
use crate::error::DeviceError;
use crate::inventory::{FleetDevice, Instance};
use serde::Serialize;
use snow_api::DeviceIp;
use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::future::Future;
use std::time::{Duration, Instant};

/// The writes of cleanup.
pub trait CleanupDevice: FleetDevice {
    /// Device API `DeleteDirectNetworkInterface`: `Ok(false)` when it is already gone.
    fn delete_direct_network_interface(
        &self,
        arn: &str,
    ) -> impl Future<Output = Result<bool, DeviceError>> + Send;
    /// EC2 `DeleteTags` of these keys on one instance.
    fn delete_tags(
        &self,
        instance_id: &str,
        keys: &[String],
    ) -> impl Future<Output = Result<(), DeviceError>> + Send;
    /// EC2 `TerminateInstances` of one instance.
    fn terminate_instance(
        &self,
        instance_id: &str,
    ) -> impl Future<Output = Result<(), DeviceError>> + Send;
}

/// What cleanup will do on one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DevicePlan {
    /// The device IP.
    pub device: String,
    /// The cluster's instances that are not terminated yet.
    pub instances: Vec<Instance>,
    /// The DNIs attached to them.
    pub direct_network_interfaces: Vec<DirectNetworkInterface>,
    /// Why the device could not be read (nothing is done there).
    pub error: Option<String>,
}

/// What cleanup will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CleanupPlan {
    /// The cluster name.
    pub cluster: String,
    /// Per device, in the order listed.
    pub devices: Vec<DevicePlan>,
}

impl CleanupPlan {
    /// Whether there is nothing to delete.
    pub fn is_empty(&self) -> bool {
        self.devices
            .iter()
            .all(|d| d.instances.is_empty() && d.direct_network_interfaces.is_empty())
    }

    /// Whether a device could not be read.
    pub fn has_errors(&self) -> bool {
        self.devices.iter().any(|d| d.error.is_some())
    }
}

impl fmt::Display for CleanupPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for d in &self.devices {
            if let Some(e) = &d.error {
                let _ = writeln!(out, "{}: cannot be read: {e}", d.device);
                continue;
            }
            if d.instances.is_empty() {
                let _ = writeln!(out, "{}: nothing of cluster {}", d.device, self.cluster);
                continue;
            }
            let _ = writeln!(out, "{}:", d.device);
            for dni in &d.direct_network_interfaces {
                let _ = writeln!(
                    out,
                    "  delete direct network interface {} (attached to {})",
                    dni.arn,
                    dni.instance_id.as_deref().unwrap_or("-")
                );
            }
            for i in &d.instances {
                let _ = writeln!(
                    out,
                    "  untag and terminate instance {} ({}, {})",
                    i.id,
                    i.name.as_deref().unwrap_or("-"),
                    i.state
                );
            }
        }
        f.write_str(&out)
    }
}

async fn plan_device<D: CleanupDevice>(device: &D, cluster: &str) -> DevicePlan {
    let mut plan = DevicePlan {
        device: device.ip().to_string(),
        instances: Vec::new(),
        direct_network_interfaces: Vec::new(),
        error: None,
    };
    let (instances, dnis) = tokio::join!(device.instances(), device.direct_network_interfaces());
    let (instances, dnis) = match (instances, dnis) {
        (Ok(i), Ok(d)) => (i, d),
        (Err(e), _) | (_, Err(e)) => {
            plan.error = Some(e.to_string());
            return plan;
        }
    };
    plan.instances = instances
        .into_iter()
        .filter(|i| i.cluster.as_deref() == Some(cluster) && i.state != "terminated")
        .collect();
    let ids: BTreeSet<&str> = plan.instances.iter().map(|i| i.id.as_str()).collect();
    plan.direct_network_interfaces = dnis
        .into_iter()
        .filter(|d| d.instance_id.as_deref().is_some_and(|i| ids.contains(i)))
        .collect();
    plan
}

/// Finds the cluster's instances and their DNIs on every device at once; `without_credentials`
/// are listed with that error.
pub async fn plan<D: CleanupDevice>(
    devices: &[D],
    without_credentials: &[DeviceIp],
    cluster: &str,
) -> CleanupPlan {
    let mut all =
        futures_util::future::join_all(devices.iter().map(|d| plan_device(d, cluster))).await;
    for ip in without_credentials {
        all.push(DevicePlan {
            device: ip.to_string(),
            instances: Vec::new(),
            direct_network_interfaces: Vec::new(),
            error: Some(format!(
                "no credentials for device {ip} in the credentials file"
            )),
        });
    }
    CleanupPlan {
        cluster: cluster.to_owned(),
        devices: all,
    }
}

/// How long to wait for terminated instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// Time between two `DescribeInstances` (default 2 s).
    pub poll: Duration,
    /// Give up waiting after this long (default 10 min).
    pub timeout: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            poll: Duration::from_secs(2),
            timeout: Duration::from_secs(600),
        }
    }
}

/// The outcome of one action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome", content = "error")]
pub enum Outcome {
    /// Done.
    Done,
    /// Already gone: nothing to do.
    AlreadyGone,
    /// Not attempted, for the reason given.
    Skipped(String),
    /// Failed with this error.
    Failed(String),
}

/// One action on one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Action {
    /// e.g. `delete DNI`, `delete tags`, `terminate`, `wait`.
    pub action: String,
    /// The DNI ARN or instance id.
    pub resource: String,
    /// What happened.
    pub outcome: Outcome,
}

/// What cleanup did on one device, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceCleanup {
    /// The device IP.
    pub device: String,
    /// The actions in the order made.
    pub actions: Vec<Action>,
    /// Why the device was not cleaned at all.
    pub error: Option<String>,
}

/// What cleanup did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CleanupReport {
    /// The cluster name.
    pub cluster: String,
    /// Per device.
    pub devices: Vec<DeviceCleanup>,
}

impl CleanupReport {
    /// Whether anything failed or was skipped.
    pub fn has_failures(&self) -> bool {
        self.devices.iter().any(|d| {
            d.error.is_some()
                || d.actions
                    .iter()
                    .any(|a| matches!(a.outcome, Outcome::Failed(_) | Outcome::Skipped(_)))
        })
    }
}

impl fmt::Display for CleanupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for d in &self.devices {
            if let Some(e) = &d.error {
                let _ = writeln!(out, "{}: not cleaned: {e}", d.device);
                continue;
            }
            for a in &d.actions {
                let outcome = match &a.outcome {
                    Outcome::Done => "done".to_owned(),
                    Outcome::AlreadyGone => "already gone".to_owned(),
                    Outcome::Skipped(why) => format!("skipped: {why}"),
                    Outcome::Failed(e) => format!("failed: {e}"),
                };
                let _ = writeln!(out, "{}: {} {}: {outcome}", d.device, a.action, a.resource);
            }
        }
        f.write_str(&out)
    }
}

fn action(action: &str, resource: &str, outcome: Outcome) -> Action {
    Action {
        action: action.to_owned(),
        resource: resource.to_owned(),
        outcome,
    }
}

async fn execute_device<D: CleanupDevice>(
    device: &D,
    plan: &DevicePlan,
    wait: WaitOptions,
) -> DeviceCleanup {
    let mut done = DeviceCleanup {
        device: plan.device.clone(),
        actions: Vec::new(),
        error: plan.error.clone(),
    };
    if plan.error.is_some() {
        return done;
    }
    let mut blocked = BTreeSet::new();
    for dni in &plan.direct_network_interfaces {
        let outcome = match device.delete_direct_network_interface(&dni.arn).await {
            Ok(true) => Outcome::Done,
            Ok(false) => Outcome::AlreadyGone,
            Err(e) => {
                blocked.extend(dni.instance_id.clone());
                Outcome::Failed(e.to_string())
            }
        };
        done.actions.push(action("delete DNI", &dni.arn, outcome));
    }
    let mut terminated = Vec::new();
    for i in &plan.instances {
        if blocked.contains(&i.id) {
            let why = "a direct network interface attached to it could not be deleted";
            done.actions
                .push(action("terminate", &i.id, Outcome::Skipped(why.to_owned())));
            continue;
        }
        let tags = match device.delete_tags(&i.id, &i.cluster_tag_keys).await {
            Ok(()) => Outcome::Done,
            Err(e) => Outcome::Failed(e.to_string()),
        };
        done.actions.push(action("delete tags", &i.id, tags));
        let outcome = match device.terminate_instance(&i.id).await {
            Ok(()) => {
                terminated.push(i.id.clone());
                Outcome::Done
            }
            Err(e) => Outcome::Failed(e.to_string()),
        };
        done.actions.push(action("terminate", &i.id, outcome));
    }
    if !terminated.is_empty() {
        done.actions
            .extend(wait_gone(device, &terminated, wait).await);
    }
    done
}

/// Polls `DescribeInstances` until every id is `terminated` or no longer listed.
async fn wait_gone<D: CleanupDevice>(device: &D, ids: &[String], wait: WaitOptions) -> Vec<Action> {
    let started = Instant::now();
    loop {
        let last_error = match device.instances().await {
            Ok(instances) => {
                let left: Vec<&Instance> = instances
                    .iter()
                    .filter(|i| ids.contains(&i.id) && i.state != "terminated")
                    .collect();
                if left.is_empty() {
                    return ids
                        .iter()
                        .map(|id| action("wait until terminated", id, Outcome::Done))
                        .collect();
                }
                left.iter()
                    .map(|i| format!("{} is {}", i.id, i.state))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            Err(e) => e.to_string(),
        };
        if started.elapsed() >= wait.timeout {
            let why = format!("not terminated after {:?}: {}", wait.timeout, last_error);
            return ids
                .iter()
                .map(|id| action("wait until terminated", id, Outcome::Failed(why.clone())))
                .collect();
        }
        tokio::time::sleep(wait.poll).await;
    }
}

/// Carries out `plan` on every device at once (see the module documentation for the order).
pub async fn execute<D: CleanupDevice>(
    devices: &[D],
    plan: &CleanupPlan,
    wait: WaitOptions,
) -> CleanupReport {
    let work = plan.devices.iter().map(|p| async move {
        match devices.iter().find(|d| d.ip().to_string() == p.device) {
            Some(d) => execute_device(d, p, wait).await,
            None => DeviceCleanup {
                device: p.device.clone(),
                actions: Vec::new(),
                error: p
                    .error
                    .clone()
                    .or_else(|| Some("no client for this device".to_owned())),
            },
        }
    });
    CleanupReport {
        cluster: plan.cluster.clone(),
        devices: futures_util::future::join_all(work).await,
    }
}
