//! A scoped IAM user on every device: the user, exactly the policy EKS Anywhere's Snow provider
//! needs, an access key, and a credentials file of one profile per device for
//! `EKSA_AWS_CREDENTIALS_FILE` — so the cluster never holds a device's root keys.
//!
//! Devices are handled concurrently; one device down or refusing is that device's
//! [`ScopedUserError`], and the others go on. Re-runs are idempotent:
//!
//! - the user is looked up first (`GetUser`) and created only when missing;
//! - its inline policy [`POLICY_NAME`] is read (`GetUserPolicy`) and compared with [`POLICY`] as
//!   JSON (statement and action order, a lone string for a one-item list and action case do not
//!   matter); a different or missing policy is put back ([`PolicyStep::Fixed`]);
//! - a key is made only when the output file has no profile for the device, its profile's key is
//!   no longer one of the user's, or [`ScopedUserOptions::rotate`] is set.
//!
//! A key's secret can be read once, in `CreateAccessKey`'s answer. Each key is therefore written
//! to the file as soon as it is made (the whole file, atomically), before any other device call;
//! if that write fails the key is deleted at once. A run killed between `CreateAccessKey` and the
//! write leaves a key nobody can read: the user's keys are the ones in the output file, and any
//! other key of the user is deleted before a new key is made (IAM allows two keys per user), and
//! reported as left otherwise ([`DeviceDone::other_keys`]). With `rotate`, the old key is deleted
//! only after the file holding the new one is written.

use crate::client::{ClientConfig, Trust};
use crate::error::DeviceError;
use crate::iam::{AccessKeyMetadata, IamClient};
use snow_api::DeviceIp;
use snow_credentials::{CredentialsFile, CredentialsWriter, WriteError};
use std::fmt;
use std::sync::Mutex;

/// The name of the user's inline policy.
pub const POLICY_NAME: &str = "eksa-snow-provider";

/// The policy of the scoped user: the Snowball Device API and EC2 actions EKS Anywhere's Snow
/// provider calls, as its documentation's IAM policy for a Snow device user lists them (the Device
/// API actions for DNIs and the device checks, the EC2 actions CAPAS uses for machines, key pairs
/// and tags). Nothing else: no IAM, no other EC2 action.
pub const POLICY: &str = r#"{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": [
        "snowballdevice:DescribeDevice",
        "snowballdevice:CreateDirectNetworkInterface",
        "snowballdevice:DeleteDirectNetworkInterface",
        "snowballdevice:DescribeDirectNetworkInterfaces",
        "snowballdevice:DescribeDeviceSoftware"
      ],
      "Resource": ["*"]
    },
    {
      "Effect": "Allow",
      "Action": [
        "ec2:RunInstances",
        "ec2:DescribeInstances",
        "ec2:TerminateInstances",
        "ec2:ImportKeyPair",
        "ec2:DescribeKeyPairs",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeImages",
        "ec2:CreateTags",
        "ec2:DeleteTags"
      ],
      "Resource": ["*"]
    }
  ]
}"#;

/// The inline policy of a read-only user ([`Policy::ReadOnly`]).
pub const READ_ONLY_POLICY_NAME: &str = "snowctl-read-only";

/// The policy of a read-only user: exactly the calls of `snowctl devices describe` and
/// `snowctl import cluster` ([`crate::inventory::describe`]): DescribeDevice,
/// DescribeDeviceSoftware and DescribeDirectNetworkInterfaces on the Device API,
/// DescribeInstances, DescribeImages and DescribeKeyPairs on EC2. No action that writes.
pub const READ_ONLY_POLICY: &str = r#"{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": [
        "snowballdevice:DescribeDevice",
        "snowballdevice:DescribeDirectNetworkInterfaces",
        "snowballdevice:DescribeDeviceSoftware"
      ],
      "Resource": ["*"]
    },
    {
      "Effect": "Allow",
      "Action": [
        "ec2:DescribeInstances",
        "ec2:DescribeKeyPairs",
        "ec2:DescribeImages"
      ],
      "Resource": ["*"]
    }
  ]
}"#;

/// Which policy the user gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// [`POLICY`], named [`POLICY_NAME`]: what EKS Anywhere's Snow provider needs.
    #[default]
    Provider,
    /// [`READ_ONLY_POLICY`], named [`READ_ONLY_POLICY_NAME`]: Describe calls only.
    ReadOnly,
}

impl Policy {
    /// The inline policy's name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Provider => POLICY_NAME,
            Policy::ReadOnly => READ_ONLY_POLICY_NAME,
        }
    }

    /// The policy document.
    pub fn document(self) -> &'static str {
        match self {
            Policy::Provider => POLICY,
            Policy::ReadOnly => READ_ONLY_POLICY,
        }
    }
}

/// An IAM user name: 1 to 64 of `A-Z a-z 0-9 + = , . @ _ -` (IAM's rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserName(String);

impl UserName {
    /// Checks `name` against IAM's rule.
    pub fn parse(name: &str) -> Result<UserName, String> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c);
        if name.is_empty() || name.len() > 64 {
            return Err(format!(
                "an IAM user name has 1 to 64 characters, not {}",
                name.len()
            ));
        }
        if let Some(bad) = name.chars().find(|c| !allowed(*c)) {
            return Err(format!(
                "an IAM user name has only letters, digits and + = , . @ _ - (not {bad:?})"
            ));
        }
        Ok(UserName(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UserName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What to do.
#[derive(Debug, Clone)]
pub struct ScopedUserOptions {
    /// The user to create or check on every device.
    pub user: UserName,
    /// Make a new key even where the file has a working one; the old key is deleted after the
    /// file holding the new one is written.
    pub rotate: bool,
    /// The policy the user gets (and whose name is compared on a re-run).
    pub policy: Policy,
    /// Timeouts, retries and ports ([`ClientConfig::iam_port`]: 6078 on a device).
    pub config: ClientConfig,
}

/// The user on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserStep {
    /// It was created.
    Created,
    /// It existed.
    Existed,
}

/// The user's policy on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyStep {
    /// Put on a new user.
    Set,
    /// Already [`POLICY`].
    Unchanged,
    /// Missing or different on an existing user, and put back.
    Fixed,
}

/// The access key on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStep {
    /// A new key, written to the file (the file had no profile for the device).
    Created,
    /// The file's key is one of the user's keys: kept.
    Kept,
    /// The file's profile held a key the user no longer has: a new key replaced it.
    Replaced,
    /// `rotate`: a new key was written, then the old one deleted (`false`: it was already gone).
    Rotated {
        /// Whether the old key was deleted by this run.
        old_deleted: bool,
    },
}

/// What was done on one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceDone {
    /// The user.
    pub user: UserStep,
    /// Its policy.
    pub policy: PolicyStep,
    /// Its key.
    pub key: KeyStep,
    /// Keys of the user that were not in the output file and were deleted before a new key was
    /// made (a key of an interrupted run, or one written to another file).
    pub deleted_other_keys: usize,
    /// Keys of the user not in the output file and left alone (no key was made this run).
    pub other_keys: usize,
    /// The user's other inline policies, left alone (they may grant more than [`POLICY`]).
    pub other_policies: Vec<String>,
}

impl fmt::Display for DeviceDone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user = match self.user {
            UserStep::Created => "created",
            UserStep::Existed => "found",
        };
        let policy = match self.policy {
            PolicyStep::Set => "policy set",
            PolicyStep::Unchanged => "policy unchanged",
            PolicyStep::Fixed => "policy differed and was fixed",
        };
        let key = match self.key {
            KeyStep::Created => "new access key written",
            KeyStep::Kept => "access key kept",
            KeyStep::Replaced => {
                "the file's access key is gone from the device; new access key written"
            }
            KeyStep::Rotated { old_deleted: true } => {
                "new access key written, old access key deleted"
            }
            KeyStep::Rotated { old_deleted: false } => {
                "new access key written (the old one was already gone)"
            }
        };
        write!(f, "{user}; {policy}; {key}")?;
        if self.deleted_other_keys > 0 {
            write!(
                f,
                "; {} access key(s) not in the file deleted",
                self.deleted_other_keys
            )?;
        }
        if self.other_keys > 0 {
            write!(
                f,
                "; {} access key(s) not in the file left (deleted when a key is next made)",
                self.other_keys
            )?;
        }
        if !self.other_policies.is_empty() {
            write!(
                f,
                "; other inline policies left: {}",
                self.other_policies.join(", ")
            )?;
        }
        Ok(())
    }
}

/// Why one device's scoped user could not be made or checked. Never holds a secret.
#[derive(Debug, thiserror::Error)]
pub enum ScopedUserError {
    /// The root credentials file has no complete profile for the device.
    #[error("the root credentials file has no complete profile for {0}")]
    NoRootCredentials(DeviceIp),
    /// The output file's profile for the device holds the device's root key: it is the root
    /// credentials file (or a copy), and would be overwritten.
    #[error(
        "the output file's profile [{0}] holds the device's root access key; write the scoped credentials to another file"
    )]
    OutputHoldsRootKey(DeviceIp),
    /// A call to the device failed.
    #[error("{step}: {source}")]
    Call {
        /// The IAM action.
        step: &'static str,
        /// The classified error (device, port, reason).
        source: DeviceError,
    },
    /// The new key could not be written; it was deleted from the device again (`deleted`), or
    /// is left there, unreadable, to be deleted by the next run.
    #[error("{source}; the new access key was {}", if *.deleted { "deleted again" } else { "left on the device (the next run deletes it)" })]
    Write {
        /// The write error.
        source: WriteError,
        /// Whether the key was deleted again.
        deleted: bool,
    },
}

impl ScopedUserError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            ScopedUserError::NoRootCredentials(ip) => format!(
                "add a profile [{ip}] with the device's root access key to the credentials file"
            ),
            ScopedUserError::OutputHoldsRootKey(_) => {
                "give -o a new file, not the root credentials file".to_owned()
            }
            ScopedUserError::Call { source, .. } => source.hint(),
            ScopedUserError::Write { .. } => {
                "check the output file and its directory, then run the command again".to_owned()
            }
        }
    }
}

/// One device's outcome.
#[derive(Debug)]
pub struct DeviceOutcome {
    /// The device.
    pub device: DeviceIp,
    /// What was done, or why not.
    pub result: Result<DeviceDone, ScopedUserError>,
}

/// Every device's outcome, in the order the devices were given.
#[derive(Debug)]
pub struct ScopedUserReport {
    /// The user.
    pub user: UserName,
    /// Per device.
    pub devices: Vec<DeviceOutcome>,
}

impl ScopedUserReport {
    /// Whether any device failed.
    pub fn has_failures(&self) -> bool {
        self.devices.iter().any(|d| d.result.is_err())
    }
}

impl fmt::Display for ScopedUserReport {
    /// One line per device, `IP: what was done` or `IP: failed: why` with a hint line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for outcome in &self.devices {
            match &outcome.result {
                Ok(done) => writeln!(f, "{}: user {}: {done}", outcome.device, self.user)?,
                Err(err) => {
                    writeln!(f, "{}: failed: {err}", outcome.device)?;
                    writeln!(f, "  hint: {}", err.hint())?;
                }
            }
        }
        Ok(())
    }
}

/// Whether two policy documents grant the same: equal as JSON once every statement's
/// `Action`/`NotAction`/`Resource`/`NotResource` is a sorted list (actions lowercased: IAM
/// action names ignore case) and the statements are sorted. A document that is not JSON is
/// equal to nothing.
pub fn same_policy(a: &str, b: &str) -> bool {
    match (canonical_policy(a), canonical_policy(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn canonical_policy(document: &str) -> Option<serde_json::Value> {
    use serde_json::Value;
    let mut doc: Value = serde_json::from_str(document).ok()?;
    let object = doc.as_object_mut()?;
    let statements = match object.remove("Statement")? {
        Value::Array(list) => list,
        one @ Value::Object(_) => vec![one],
        _ => return None,
    };
    let mut canonical = Vec::new();
    for mut statement in statements {
        let fields = statement.as_object_mut()?;
        for key in ["Action", "NotAction", "Resource", "NotResource"] {
            let Some(value) = fields.remove(key) else {
                continue;
            };
            let mut items: Vec<String> = match value {
                Value::String(s) => vec![s],
                Value::Array(list) => list
                    .into_iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<_>>()?,
                _ => return None,
            };
            if key.ends_with("Action") {
                items.iter_mut().for_each(|a| *a = a.to_ascii_lowercase());
            }
            items.sort();
            items.dedup();
            fields.insert(key.to_owned(), Value::from(items));
        }
        canonical.push(statement);
    }
    canonical.sort_by_key(|s| s.to_string());
    object.insert("Statement".to_owned(), Value::Array(canonical));
    Some(doc)
}

/// On every device of `devices`: the user, its policy and a key, each new key written to
/// `output` as soon as it is made. `root` signs the IAM calls (the devices' root keys).
pub async fn create_scoped_users(
    root: &CredentialsFile,
    trust: &Trust,
    devices: &[DeviceIp],
    output: &mut CredentialsWriter,
    options: &ScopedUserOptions,
) -> ScopedUserReport {
    let output = Mutex::new(output);
    let work = devices.iter().map(|&device| {
        let output = &output;
        async move {
            DeviceOutcome {
                device,
                result: on_device(root, trust, device, output, options).await,
            }
        }
    });
    ScopedUserReport {
        user: options.user.clone(),
        devices: futures_util::future::join_all(work).await,
    }
}

fn call(step: &'static str) -> impl Fn(DeviceError) -> ScopedUserError {
    move |source| ScopedUserError::Call { step, source }
}

async fn on_device(
    root: &CredentialsFile,
    trust: &Trust,
    device: DeviceIp,
    output: &Mutex<&mut CredentialsWriter>,
    options: &ScopedUserOptions,
) -> Result<DeviceDone, ScopedUserError> {
    let root_profile = root
        .device(device)
        .filter(|d| d.is_complete())
        .ok_or(ScopedUserError::NoRootCredentials(device))?;
    let provider = root_profile
        .provider()
        .ok_or(ScopedUserError::NoRootCredentials(device))?;
    {
        let out = lock(output);
        if out.key(device).is_some_and(|k| k.is_key_of(root_profile)) {
            return Err(ScopedUserError::OutputHoldsRootKey(device));
        }
    }
    let iam = IamClient::new(provider, trust, options.config);
    let user = options.user.as_str();

    let user_step = match iam.get_user(user).await.map_err(call("GetUser"))? {
        Some(_) => UserStep::Existed,
        None => match iam.create_user(user).await {
            Ok(_) => UserStep::Created,
            // Made meanwhile (a concurrent run): it exists, which is what was asked.
            Err(err) if crate::client::is_not_found(&err, &["EntityAlreadyExists"]) => {
                UserStep::Existed
            }
            Err(err) => return Err(call("CreateUser")(err)),
        },
    };

    let current = match user_step {
        UserStep::Created => None,
        UserStep::Existed => iam
            .get_user_policy(user, options.policy.name())
            .await
            .map_err(call("GetUserPolicy"))?,
    };
    let policy_step = match (user_step, current) {
        (_, Some(doc)) if same_policy(&doc, options.policy.document()) => PolicyStep::Unchanged,
        (UserStep::Created, _) => PolicyStep::Set,
        (UserStep::Existed, _) => PolicyStep::Fixed,
    };
    if policy_step != PolicyStep::Unchanged {
        iam.put_user_policy(user, options.policy.name(), options.policy.document())
            .await
            .map_err(call("PutUserPolicy"))?;
    }
    let other_policies = match user_step {
        UserStep::Created => Vec::new(),
        UserStep::Existed => iam
            .list_user_policies(user)
            .await
            .map_err(call("ListUserPolicies"))?
            .into_iter()
            .filter(|p| p != options.policy.name())
            .collect(),
    };

    let keys = iam
        .list_access_keys(user)
        .await
        .map_err(call("ListAccessKeys"))?;
    let (in_file, others): (Vec<AccessKeyMetadata>, Vec<AccessKeyMetadata>) = {
        let out = lock(output);
        let file_key = out.key(device);
        keys.into_iter()
            .partition(|k| file_key.is_some_and(|f| f.id_is(&k.id)))
    };
    let had_profile = lock(output).key(device).is_some();
    let old = in_file.into_iter().next();
    if old.is_some() && !options.rotate {
        return Ok(DeviceDone {
            user: user_step,
            policy: policy_step,
            key: KeyStep::Kept,
            deleted_other_keys: 0,
            other_keys: others.len(),
            other_policies,
        });
    }

    // A new key: first make room (IAM allows two) by deleting the keys no file of ours holds.
    let mut deleted_other_keys = 0;
    for other in &others {
        if iam
            .delete_access_key(user, &other.id)
            .await
            .map_err(call("DeleteAccessKey"))?
        {
            deleted_other_keys += 1;
        }
    }
    let key = iam
        .create_access_key(user)
        .await
        .map_err(call("CreateAccessKey"))?;
    let new_key = key.clone();
    let written = lock(output).set(device, key);
    if let Err(source) = written {
        // The secret is in no file: the key is useless, delete it now.
        let deleted = match iam.list_access_keys(user).await {
            Ok(keys) => match keys.iter().find(|k| new_key.id_is(&k.id)) {
                Some(k) => iam.delete_access_key(user, &k.id).await.unwrap_or(false),
                None => false,
            },
            Err(_) => false,
        };
        return Err(ScopedUserError::Write { source, deleted });
    }
    let key_step = match old {
        Some(old) => KeyStep::Rotated {
            old_deleted: iam
                .delete_access_key(user, &old.id)
                .await
                .map_err(call("DeleteAccessKey"))?,
        },
        None if had_profile => KeyStep::Replaced,
        None => KeyStep::Created,
    };
    Ok(DeviceDone {
        user: user_step,
        policy: policy_step,
        key: key_step,
        deleted_other_keys,
        other_keys: 0,
        other_policies,
    })
}

fn lock<'a, 'w>(
    output: &'a Mutex<&'w mut CredentialsWriter>,
) -> std::sync::MutexGuard<'a, &'w mut CredentialsWriter> {
    // A panic while holding the lock cannot leave the writer half-updated (`set` restores it).
    output.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_follow_iam() {
        assert!(UserName::parse("eksa-snow_user.1@site+a=b,c").is_ok());
        assert!(UserName::parse("").is_err());
        assert!(UserName::parse(&"a".repeat(65)).is_err());
        assert!(UserName::parse("has space").is_err());
        assert!(UserName::parse("slash/").is_err());
    }

    #[test]
    fn policies_compare_by_what_they_grant() {
        assert!(same_policy(POLICY, POLICY));
        let reordered = r#"{"Version":"2012-10-17","Statement":[
            {"Effect":"Allow","Action":["EC2:DeleteTags","ec2:CreateTags","ec2:DescribeImages","ec2:DescribeInstanceTypes","ec2:DescribeKeyPairs","ec2:ImportKeyPair","ec2:TerminateInstances","ec2:DescribeInstances","ec2:RunInstances"],"Resource":"*"},
            {"Effect":"Allow","Action":["snowballdevice:DescribeDeviceSoftware","snowballdevice:DescribeDirectNetworkInterfaces","snowballdevice:DeleteDirectNetworkInterface","snowballdevice:CreateDirectNetworkInterface","snowballdevice:DescribeDevice"],"Resource":["*"]}]}"#;
        assert!(same_policy(reordered, POLICY));
        let wider = reordered.replace("ec2:CreateTags", "ec2:*");
        assert!(!same_policy(&wider, POLICY));
        let fewer = reordered.replace("\"ec2:CreateTags\",", "");
        assert!(!same_policy(&fewer, POLICY));
        assert!(!same_policy("not json", POLICY));
        assert!(!same_policy(r#"{"Statement": 3}"#, POLICY));
    }

    #[test]
    fn the_policy_lists_exactly_the_issue_actions() {
        let doc: serde_json::Value = serde_json::from_str(POLICY).unwrap();
        let mut actions: Vec<&str> = doc["Statement"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["Action"].as_array().unwrap())
            .map(|a| a.as_str().unwrap())
            .collect();
        actions.sort();
        assert_eq!(actions.len(), 14);
        assert!(actions.iter().all(|a| !a.contains('*')));
        assert!(
            actions
                .iter()
                .all(|a| a.starts_with("ec2:") || a.starts_with("snowballdevice:"))
        );
    }
}
