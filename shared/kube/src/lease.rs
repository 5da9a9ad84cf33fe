//! Leader lease on coordination.k8s.io/v1 Lease: take, renew and release with optimistic
//! concurrency (create, or replace with the read resourceVersion; a 409 is `Conflict`).

use crate::error::{ClusterError, KubeResult};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kerf_control::ports::{LeaseOutcome, LeaseRequest};
use kube::Client;
use kube::api::{Api, PostParams};

fn expiry(spec: &LeaseSpec) -> jiff::Timestamp {
    let renew = spec
        .renew_time
        .as_ref()
        .map(|t| t.0)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let secs = i64::from(spec.lease_duration_seconds.unwrap_or(0));
    renew
        .checked_add(jiff::SignedDuration::from_secs(secs))
        .unwrap_or(renew)
}

fn duration_secs(req: &LeaseRequest) -> i32 {
    i32::try_from(req.duration.as_secs()).unwrap_or(i32::MAX)
}

/// What the Lease spec becomes when `req.holder` takes or renews it.
pub fn next_spec(current: Option<&LeaseSpec>, req: &LeaseRequest) -> LeaseSpec {
    let now = MicroTime(req.now);
    let mut spec = current.cloned().unwrap_or_default();
    let same_holder = spec.holder_identity.as_deref() == Some(req.holder.as_str());
    if !same_holder {
        if spec
            .holder_identity
            .as_deref()
            .is_some_and(|h| !h.is_empty())
        {
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.acquire_time = Some(now.clone());
        spec.holder_identity = Some(req.holder.clone());
    }
    spec.lease_transitions.get_or_insert(0);
    spec.lease_duration_seconds = Some(duration_secs(req));
    spec.renew_time = Some(now);
    spec
}

fn held(spec: &LeaseSpec) -> LeaseOutcome {
    LeaseOutcome::Held {
        expires: expiry(spec),
        transitions: spec.lease_transitions.unwrap_or(0),
    }
}

/// Takes the Lease if it is free, expired or ours; renews it if ours.
pub async fn acquire(client: &Client, req: &LeaseRequest) -> Result<LeaseOutcome, ClusterError> {
    let api: Api<Lease> = Api::namespaced(client.clone(), &req.namespace);
    let Some(mut lease) = api.get_opt(&req.name).await.kube()? else {
        let spec = next_spec(None, req);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(req.name.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec.clone()),
        };
        api.create(&PostParams::default(), &lease).await.kube()?;
        return Ok(held(&spec));
    };
    let current = lease.spec.clone().unwrap_or_default();
    let holder = current.holder_identity.clone().unwrap_or_default();
    if !holder.is_empty() && holder != req.holder && expiry(&current) > req.now {
        return Ok(LeaseOutcome::HeldByOther {
            holder,
            expires: expiry(&current),
        });
    }
    let spec = next_spec(Some(&current), req);
    lease.spec = Some(spec.clone());
    api.replace(&req.name, &PostParams::default(), &lease)
        .await
        .kube()?;
    Ok(held(&spec))
}

/// Releases the Lease if `req.holder` holds it, so the next caller need not wait it out.
pub async fn release(client: &Client, req: &LeaseRequest) -> Result<(), ClusterError> {
    let api: Api<Lease> = Api::namespaced(client.clone(), &req.namespace);
    let Some(mut lease) = api.get_opt(&req.name).await.kube()? else {
        return Ok(());
    };
    let mut spec = lease.spec.clone().unwrap_or_default();
    if spec.holder_identity.as_deref() != Some(req.holder.as_str()) {
        return Ok(());
    }
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.renew_time = Some(MicroTime(req.now));
    lease.spec = Some(spec);
    api.replace(&req.name, &PostParams::default(), &lease)
        .await
        .kube()?;
    Ok(())
}
