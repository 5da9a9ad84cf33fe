//! The launch template's primary network interface, when the class sets its options.

use aws_sdk_ec2::types::LaunchTemplateInstanceNetworkInterfaceSpecificationRequest;
use serde::Serialize;

/// The primary network interface's options (`associatePublicIPAddress`, `ipPrefixCount`,
/// and the cluster's IP family). With none set the template names its security groups at the
/// top level and EC2 makes the default interface; otherwise it describes interface 0 with
/// them, as Karpenter's templates do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PrimaryInterface {
    pub associate_public_ip: Option<bool>,
    /// Prefixes per interface: IPv4 ones, or IPv6 ones on an IPv6 cluster.
    pub prefix_count: Option<i32>,
    /// An IPv6 cluster: the interface gets a primary IPv6 address.
    pub ipv6: bool,
}

impl PrimaryInterface {
    pub(super) fn is_default(&self) -> bool {
        *self == PrimaryInterface::default()
    }

    pub(super) fn request(
        &self,
        groups: &[String],
    ) -> LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
        let (v4, v6) = if self.ipv6 {
            (None, self.prefix_count)
        } else {
            (self.prefix_count, None)
        };
        LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
            .device_index(0)
            .set_groups(Some(groups.to_vec()))
            .set_associate_public_ip_address(self.associate_public_ip)
            .set_ipv4_prefix_count(v4)
            .set_ipv6_prefix_count(v6)
            .set_primary_ipv6(self.ipv6.then_some(true))
            .set_ipv6_address_count(self.ipv6.then_some(1))
            .build()
    }
}
