//! Tests of the launch template's network interfaces: the request bodies and the names.

use kerf_catalog::network::{InterfaceType, NetworkInterface};

use super::super::{LaunchTemplateSpec, template_data, tests};
use super::*;

fn nic(card: u32, device: u32, t: InterfaceType) -> NetworkInterface {
    NetworkInterface {
        network_card_index: card,
        device_index: device,
        interface_type: t,
    }
}

fn ct() -> ConnectionTracking {
    ConnectionTracking {
        tcp_established_timeout: Some(60),
        udp_stream_timeout: None,
        udp_timeout: Some(30),
    }
}

fn options() -> PrimaryInterface {
    PrimaryInterface {
        associate_public_ip: Some(false),
        prefix_count: Some(2),
        ipv6: false,
    }
}

fn spec(interfaces: Interfaces, ct: Option<ConnectionTracking>) -> LaunchTemplateSpec {
    LaunchTemplateSpec {
        network: options(),
        interfaces,
        connection_tracking: ct,
        ..tests::spec()
    }
}

/// (card, device, type) of each interface.
fn layout(r: &[Request]) -> Vec<(Option<i32>, Option<i32>, Option<&str>)> {
    r.iter()
        .map(|n| (n.network_card_index(), n.device_index(), n.interface_type()))
        .collect()
}

#[test]
fn listed_interfaces_carry_ip_settings_only_where_they_carry_ip_traffic() {
    let list = vec![
        nic(0, 0, InterfaceType::Interface),
        nic(0, 1, InterfaceType::EfaOnly),
        nic(1, 0, InterfaceType::Interface),
    ];
    let data = template_data(&spec(Interfaces::Listed(list), Some(ct())));
    assert!(
        data.security_group_ids().is_empty(),
        "groups go on the interfaces"
    );
    let nis = data.network_interfaces();
    assert_eq!(
        layout(nis),
        [
            (Some(0), Some(0), Some("interface")),
            (Some(0), Some(1), Some("efa-only")),
            (Some(1), Some(0), Some("interface")),
        ]
    );
    for n in nis {
        assert_eq!(
            n.groups(),
            ["sg-b", "sg-a"],
            "every interface has the groups"
        );
    }
    for n in [&nis[0], &nis[2]] {
        assert_eq!(n.associate_public_ip_address(), Some(false));
        assert_eq!(n.ipv4_prefix_count(), Some(2));
        let t = n.connection_tracking_specification().expect("tracking");
        assert_eq!(
            (
                t.tcp_established_timeout(),
                t.udp_stream_timeout(),
                t.udp_timeout()
            ),
            (Some(60), None, Some(30))
        );
    }
    let efa_only = &nis[1];
    assert_eq!(efa_only.associate_public_ip_address(), None);
    assert_eq!(efa_only.ipv4_prefix_count(), None);
    assert_eq!(efa_only.ipv6_prefix_count(), None);
    assert_eq!(efa_only.primary_ipv6(), None);
    assert!(efa_only.connection_tracking_specification().is_none());
}

#[test]
fn listed_interfaces_on_an_ipv6_cluster_get_ipv6_prefixes_and_address() {
    let list = vec![
        nic(0, 0, InterfaceType::Interface),
        nic(1, 0, InterfaceType::EfaOnly),
    ];
    let mut s = spec(Interfaces::Listed(list), None);
    s.network.ipv6 = true;
    let data = template_data(&s);
    let nis = data.network_interfaces();
    assert_eq!(
        (
            nis[0].ipv4_prefix_count(),
            nis[0].ipv6_prefix_count(),
            nis[0].primary_ipv6(),
            nis[0].ipv6_address_count()
        ),
        (None, Some(2), Some(true), Some(1))
    );
    assert_eq!(
        (nis[1].ipv6_prefix_count(), nis[1].ipv6_address_count()),
        (None, None)
    );
}

#[test]
fn requested_efa_makes_one_efa_interface_per_card() {
    let data = template_data(&spec(Interfaces::Efa(3), Some(ct())));
    assert!(data.security_group_ids().is_empty());
    let nis = data.network_interfaces();
    assert_eq!(
        layout(nis),
        [
            (Some(0), Some(0), Some("efa")),
            (Some(1), Some(1), Some("efa")),
            (Some(2), Some(1), Some("efa")),
        ]
    );
    for n in nis {
        assert_eq!(n.groups(), ["sg-b", "sg-a"]);
        assert_eq!(n.ipv4_prefix_count(), Some(2));
        assert_eq!(n.associate_public_ip_address(), Some(false));
        assert!(n.connection_tracking_specification().is_some());
    }
}

#[test]
fn connection_tracking_alone_describes_the_primary_interface() {
    let plain = LaunchTemplateSpec {
        connection_tracking: Some(ct()),
        ..tests::spec()
    };
    let data = template_data(&plain);
    assert!(data.security_group_ids().is_empty());
    let nis = data.network_interfaces();
    assert_eq!(layout(nis), [(None, Some(0), None)]);
    assert!(nis[0].connection_tracking_specification().is_some());
    let none = template_data(&tests::spec());
    assert!(none.network_interfaces().is_empty());
    assert_eq!(none.security_group_ids(), ["sg-b", "sg-a"]);
}

#[test]
fn each_interface_layout_has_its_own_template() {
    let names = [
        tests::spec().name(),
        spec(Interfaces::Primary, None).name(),
        spec(Interfaces::Primary, Some(ct())).name(),
        spec(Interfaces::Efa(1), None).name(),
        spec(Interfaces::Efa(2), None).name(),
        spec(
            Interfaces::Listed(vec![nic(0, 0, InterfaceType::Interface)]),
            None,
        )
        .name(),
        spec(
            Interfaces::Listed(vec![
                nic(0, 0, InterfaceType::Interface),
                nic(1, 0, InterfaceType::EfaOnly),
            ]),
            None,
        )
        .name(),
    ];
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert_eq!(
        spec(Interfaces::Efa(2), None).name(),
        spec(Interfaces::Efa(2), None).name()
    );
}
