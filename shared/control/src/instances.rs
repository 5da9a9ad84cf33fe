//! What EC2 says about the cluster's instances in one pass: listed once (one paginated
//! DescribeInstances by the cluster tag) and read by provider id. Drift compares each
//! NodeClaim's instance with its node class (subnet, security groups, capacity reservation),
//! and the capacity-type sync relabels NodeClaims whose reservation ended. When EC2 does not
//! answer, both wait for the next pass: nothing is decided from a guess.

use std::collections::BTreeMap;

use serde_json::json;

use crate::ctx::Ctx;
use crate::log::controllers::DISRUPTION;
use crate::ports::{Cloud, Cluster, Instance, Publisher};

/// The cluster's live instances by provider id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Instances {
    by_provider_id: BTreeMap<String, Instance>,
}

impl Instances {
    /// Lists the cluster's instances; `None` (logged) when EC2 did not answer.
    pub async fn read<C: Cluster, K: Cloud, P: Publisher>(ctx: &Ctx<C, K, P>) -> Option<Instances> {
        match ctx.cloud.list().await {
            Ok(list) => Some(Instances::of(list)),
            Err(e) => {
                ctx.log.warn(
                    DISRUPTION,
                    "could not list instances; instance drift waits for the next pass",
                    json!({"error": e.to_string()}),
                );
                None
            }
        }
    }

    /// The instances of `list` that are not terminated.
    pub fn of(list: Vec<Instance>) -> Instances {
        Instances {
            by_provider_id: list
                .into_iter()
                .filter(|i| i.state != "terminated")
                .map(|i| (i.provider_id.clone(), i))
                .collect(),
        }
    }

    /// The instance with `provider_id`.
    pub fn get(&self, provider_id: &str) -> Option<&Instance> {
        self.by_provider_id.get(provider_id)
    }

    /// Gives each claim of `snapshot` its instance's subnet and security groups, and (with
    /// reserved capacity on) the reservation it runs in, for drift.
    pub fn describe_claims(&self, snapshot: &mut kerf_engine::Snapshot, reserved_capacity: bool) {
        for c in &mut snapshot.node_claims {
            let Some(i) = self.get(&c.provider_id) else {
                continue;
            };
            c.subnet_id = i.subnet_id.clone();
            c.security_group_ids =
                (!i.security_group_ids.is_empty()).then(|| i.security_group_ids.clone());
            if reserved_capacity {
                c.capacity_reservation = i.capacity_reservation.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerf_catalog::CapacityType;

    fn instance(id: &str, state: &str, reservation: Option<&str>) -> Instance {
        Instance {
            id: id.into(),
            provider_id: format!("aws:///us-west-2a/{id}"),
            instance_type: "m5.large".into(),
            zone: "us-west-2a".into(),
            state: state.into(),
            capacity_type: CapacityType::OnDemand,
            launch_time: None,
            image_id: None,
            tags: BTreeMap::new(),
            private_dns_name: None,
            partition: None,
            capacity_reservation: reservation.map(str::to_string),
            subnet_id: Some(format!("subnet-{id}")),
            security_group_ids: vec!["sg-1".into()],
        }
    }

    fn claim(name: &str, id: &str) -> kerf_engine::model::NodeClaim {
        kerf_engine::model::NodeClaim {
            name: name.into(),
            provider_id: format!("aws:///us-west-2a/{id}"),
            ..Default::default()
        }
    }

    #[test]
    fn claims_get_their_instance_facts_and_terminated_instances_are_ignored() {
        let found = Instances::of(vec![
            instance("i-1", "running", Some("cr-1")),
            instance("i-2", "terminated", None),
        ]);
        let mut snap = kerf_engine::Snapshot {
            node_claims: vec![claim("a", "i-1"), claim("b", "i-2")],
            ..Default::default()
        };
        found.describe_claims(&mut snap, true);
        let a = &snap.node_claims[0];
        assert_eq!(a.subnet_id.as_deref(), Some("subnet-i-1"));
        assert_eq!(a.security_group_ids, Some(vec!["sg-1".to_string()]));
        assert_eq!(a.capacity_reservation.as_deref(), Some("cr-1"));
        let b = &snap.node_claims[1];
        assert_eq!(
            (b.subnet_id.as_ref(), b.capacity_reservation.as_ref()),
            (None, None)
        );

        let mut snap = kerf_engine::Snapshot {
            node_claims: vec![claim("a", "i-1")],
            ..Default::default()
        };
        found.describe_claims(&mut snap, false);
        assert_eq!(
            snap.node_claims[0].capacity_reservation, None,
            "no reservation drift with the gate off"
        );
    }
}
