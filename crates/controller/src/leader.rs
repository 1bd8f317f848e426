//! Leader election on a `coordination.k8s.io/v1` Lease, so that of several replicas exactly one
//! reconciles. The holder renews the Lease; a replica takes it over only once it has expired,
//! through a replace that carries the Lease's resourceVersion (two contenders: one wins, the
//! other gets a conflict).

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::{SignedDuration, Timestamp},
};
use kube::{Api, api::PostParams};
use snow_kube::Management;
use snow_lifecycle::LifecycleError;
use std::time::Duration;

/// Who competes for which Lease, and how long a lease lasts.
#[derive(Debug, Clone)]
pub struct LeaderElection {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
    /// This replica's identity (host name and process id).
    pub identity: String,
    /// How long a lease holds without renewal.
    pub lease_duration: Duration,
}

impl LeaderElection {
    /// The default Lease `snowctl-controller`, 15 s.
    pub fn new(namespace: &str, identity: String) -> LeaderElection {
        LeaderElection {
            namespace: namespace.to_owned(),
            name: "snowctl-controller".into(),
            identity,
            lease_duration: Duration::from_secs(15),
        }
    }

    /// How often the holder renews (a third of the lease).
    pub fn renew_every(&self) -> Duration {
        self.lease_duration / 3
    }

    /// Takes or renews the Lease; `true` when this replica holds it now.
    pub async fn try_acquire(&self, mgmt: &Management) -> Result<bool, LifecycleError> {
        let api: Api<Lease> = Api::namespaced(mgmt.client().clone(), &self.namespace);
        let now = Timestamp::now();
        let seconds = i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let object = format!("Lease/{}", self.name);
        let existing = api
            .get_opt(&self.name)
            .await
            .map_err(|e| mgmt.error("get", object.clone(), e))?;
        let Some(mut lease) = existing else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    namespace: Some(self.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(MicroTime(now)),
                    renew_time: Some(MicroTime(now)),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(e) => Err(mgmt.error("create", object, e).into()),
            };
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let mine = spec.holder_identity.as_deref() == Some(self.identity.as_str());
        let held_for = spec
            .lease_duration_seconds
            .map_or(SignedDuration::ZERO, |s| {
                SignedDuration::from_secs(i64::from(s))
            });
        // The times come from the server: a renewTime so far ahead that adding the duration
        // overflows is treated as held (not expired), never as a panic.
        let expired = spec
            .renew_time
            .as_ref()
            .is_none_or(|t| t.0.checked_add(held_for).is_ok_and(|until| until < now));
        if !mine && !expired && spec.holder_identity.is_some() {
            return Ok(false);
        }
        if !mine {
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(seconds);
        // The resourceVersion read above makes this conditional: a contender that replaced the
        // Lease first wins, this replace gets a conflict.
        match api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(mgmt.error("replace", object, e).into()),
        }
    }

    /// Gives the Lease up at shutdown, so another replica takes over at once.
    pub async fn release(&self, mgmt: &Management) -> Result<(), LifecycleError> {
        let api: Api<Lease> = Api::namespaced(mgmt.client().clone(), &self.namespace);
        let object = format!("Lease/{}", self.name);
        let Some(mut lease) = api
            .get_opt(&self.name)
            .await
            .map_err(|e| mgmt.error("get", object.clone(), e))?
        else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.renew_time = None;
        match api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) | Err(kube::Error::Api(_)) => Ok(()),
            Err(e) => Err(mgmt.error("replace", object, e).into()),
        }
    }
}
