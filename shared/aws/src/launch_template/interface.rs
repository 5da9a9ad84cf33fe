//! The launch template's network interfaces, as Karpenter's templates describe them:
//!
//! - the class lists `networkInterfaces`: each of them, with the security groups on every
//!   one, and the prefixes, IPv6 addresses, public IP and connection tracking only on those
//!   that are not `efa-only` (EC2 refuses them there);
//! - else the NodeClaim asks for `vpc.amazonaws.com/efa`: one `efa` interface per EFA the
//!   instance type has, on network card i, device 0 for the first and 1 for the others;
//! - else the primary interface when the class sets one of its options (public IP, prefixes,
//!   the cluster's IPv6, connection tracking), or none: the template then names its
//!   security groups at the top level and EC2 makes the default interface.
//!
//! The top-level `SecurityGroupIds` is never set when interfaces are.

use aws_sdk_ec2::types::{
    ConnectionTrackingSpecificationRequest,
    LaunchTemplateInstanceNetworkInterfaceSpecificationRequest as Request,
};
use kerf_catalog::network::{InterfaceType, NetworkInterface};
use serde::Serialize;

/// The primary network interface's options (`associatePublicIPAddress`, `ipPrefixCount`,
/// and the cluster's IP family); they apply to every interface that carries IP traffic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PrimaryInterface {
    pub associate_public_ip: Option<bool>,
    /// Prefixes per interface: IPv4 ones, or IPv6 ones on an IPv6 cluster.
    pub prefix_count: Option<i32>,
    /// An IPv6 cluster: the interface gets a primary IPv6 address.
    pub ipv6: bool,
}

/// Which interfaces the template describes beyond the primary one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Interfaces {
    /// Only the primary interface (or EC2's default one).
    #[default]
    Primary,
    /// This many `efa` interfaces (the NodeClaim asked for EFA; the type's count).
    Efa(u32),
    /// The class's `networkInterfaces`.
    Listed(Vec<NetworkInterface>),
}

impl Interfaces {
    pub(super) fn is_primary(&self) -> bool {
        *self == Interfaces::Primary
    }
}

/// `spec.connectionTracking`: idle timeouts (seconds) of tracked connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConnectionTracking {
    pub tcp_established_timeout: Option<i32>,
    pub udp_stream_timeout: Option<i32>,
    pub udp_timeout: Option<i32>,
}

impl ConnectionTracking {
    fn request(&self) -> ConnectionTrackingSpecificationRequest {
        ConnectionTrackingSpecificationRequest::builder()
            .set_tcp_established_timeout(self.tcp_established_timeout)
            .set_udp_stream_timeout(self.udp_stream_timeout)
            .set_udp_timeout(self.udp_timeout)
            .build()
    }
}

impl PrimaryInterface {
    pub(super) fn is_default(&self) -> bool {
        *self == PrimaryInterface::default()
    }

    /// An interface carrying IP traffic: the groups, public IP, prefixes, IPv6 address and
    /// connection tracking.
    fn ip_interface(&self, groups: &[String], ct: Option<&ConnectionTracking>) -> Request {
        let (v4, v6) = if self.ipv6 {
            (None, self.prefix_count)
        } else {
            (self.prefix_count, None)
        };
        Request::builder()
            .set_groups(Some(groups.to_vec()))
            .set_associate_public_ip_address(self.associate_public_ip)
            .set_ipv4_prefix_count(v4)
            .set_ipv6_prefix_count(v6)
            .set_primary_ipv6(self.ipv6.then_some(true))
            .set_ipv6_address_count(self.ipv6.then_some(1))
            .set_connection_tracking_specification(ct.map(ConnectionTracking::request))
            .build()
    }
}

/// The template's `NetworkInterfaces`; `None` when it describes none (the groups then go
/// at the top level).
pub(super) fn requests(
    primary: &PrimaryInterface,
    interfaces: &Interfaces,
    ct: Option<&ConnectionTracking>,
    groups: &[String],
) -> Option<Vec<Request>> {
    match interfaces {
        Interfaces::Listed(list) => Some(
            list.iter()
                .map(|n| listed(primary, n, ct, groups))
                .collect(),
        ),
        Interfaces::Efa(n) => Some((0..*n).map(|i| efa(primary, i, ct, groups)).collect()),
        Interfaces::Primary if primary.is_default() && ct.is_none() => None,
        Interfaces::Primary => {
            let mut r = primary.ip_interface(groups, ct);
            r.device_index = Some(0);
            Some(vec![r])
        }
    }
}

fn index(n: u32) -> Option<i32> {
    i32::try_from(n).ok()
}

fn listed(
    primary: &PrimaryInterface,
    n: &NetworkInterface,
    ct: Option<&ConnectionTracking>,
    groups: &[String],
) -> Request {
    let mut r = match n.interface_type {
        InterfaceType::Interface => primary.ip_interface(groups, ct),
        InterfaceType::EfaOnly => Request::builder().set_groups(Some(groups.to_vec())).build(),
    };
    r.network_card_index = index(n.network_card_index);
    r.device_index = index(n.device_index);
    r.interface_type = Some(n.interface_type.as_str().to_string());
    r
}

fn efa(
    primary: &PrimaryInterface,
    card: u32,
    ct: Option<&ConnectionTracking>,
    groups: &[String],
) -> Request {
    let mut r = primary.ip_interface(groups, ct);
    r.network_card_index = index(card);
    r.device_index = Some(if card == 0 { 0 } else { 1 });
    r.interface_type = Some("efa".to_string());
    r
}

#[cfg(test)]
#[path = "interface_tests.rs"]
mod tests;
