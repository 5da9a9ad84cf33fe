//! `networkInterfaces` and `connectionTracking` on the bundled catalog: which types stay
//! available, how much EFA they advertise and how many pods they hold.

use kerf_catalog::network::{InterfaceType, NetworkInterface};
use kerf_catalog::{Catalog, InstanceType, NodeClassSettings, bundled};

fn nic(card: u32, device: u32, t: InterfaceType) -> NetworkInterface {
    NetworkInterface {
        network_card_index: card,
        device_index: device,
        interface_type: t,
    }
}

fn primary() -> NetworkInterface {
    nic(0, 0, InterfaceType::Interface)
}

fn with_interfaces(interfaces: Vec<NetworkInterface>) -> NodeClassSettings {
    NodeClassSettings {
        network_interfaces: interfaces,
        ..NodeClassSettings::default()
    }
}

fn find<'a>(c: &'a Catalog, name: &str) -> &'a InstanceType {
    c.instance_types
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} missing"))
}

fn available(c: &Catalog, name: &str) -> bool {
    find(c, name).offerings.iter().any(|o| o.available)
}

#[test]
fn efa_is_the_type_maximum_unless_the_class_lists_interfaces() {
    let plain = bundled("us-east-1", &NodeClassSettings::default()).unwrap();
    let efa = |c: &Catalog, n: &str| find(c, n).capacity.get("vpc.amazonaws.com/efa") / 1000;
    assert_eq!(efa(&plain, "p5.48xlarge"), 32);
    assert_eq!(efa(&plain, "c5n.18xlarge"), 1);
    assert_eq!(efa(&plain, "m5.large"), 0);
    let two = with_interfaces(vec![
        primary(),
        nic(0, 1, InterfaceType::EfaOnly),
        nic(1, 0, InterfaceType::EfaOnly),
    ]);
    let c = bundled("us-east-1", &two).unwrap();
    assert_eq!(efa(&c, "p5.48xlarge"), 2, "the listed efa-only interfaces");
    let only_primary = bundled("us-east-1", &with_interfaces(vec![primary()])).unwrap();
    assert_eq!(efa(&only_primary, "p5.48xlarge"), 0);
}

#[test]
fn efa_only_interfaces_on_card_zero_take_eni_limited_pods() {
    let pods = |c: &Catalog, n: &str| find(c, n).capacity.get("pods") / 1000;
    let plain = bundled("us-east-1", &NodeClassSettings::default()).unwrap();
    // p5.48xlarge: 2 ENIs on card 0, 50 IPv4 addresses each: 2 * 49 + 2.
    assert_eq!(pods(&plain, "p5.48xlarge"), 100);
    let card0 = with_interfaces(vec![primary(), nic(0, 1, InterfaceType::EfaOnly)]);
    let c = bundled("us-east-1", &card0).unwrap();
    assert_eq!(pods(&c, "p5.48xlarge"), 51, "one ENI left for pods");
    let elsewhere = with_interfaces(vec![primary(), nic(1, 0, InterfaceType::EfaOnly)]);
    let c = bundled("us-east-1", &elsewhere).unwrap();
    assert_eq!(pods(&c, "p5.48xlarge"), 100, "card 1 is not the pods' card");
    assert!(
        find(&c, "p5.48xlarge").allocatable.get("memory")
            == find(&plain, "p5.48xlarge").allocatable.get("memory")
    );
    let c = bundled("us-east-1", &card0).unwrap();
    assert!(
        find(&c, "p5.48xlarge").allocatable.get("memory")
            > find(&plain, "p5.48xlarge").allocatable.get("memory"),
        "kube-reserved memory follows the ENI-limited pods"
    );
}

#[test]
fn types_that_cannot_hold_the_interfaces_are_unavailable() {
    let plain = bundled("us-east-1", &NodeClassSettings::default()).unwrap();
    for name in ["m5.large", "t2.micro", "p5.48xlarge", "c5n.18xlarge"] {
        assert!(available(&plain, name), "{name} without interfaces");
    }
    let c = bundled("us-east-1", &with_interfaces(vec![primary()])).unwrap();
    assert!(available(&c, "m5.large"));
    assert!(!available(&c, "t2.micro"), "no ENA");
    let efa = with_interfaces(vec![primary(), nic(0, 1, InterfaceType::EfaOnly)]);
    let c = bundled("us-east-1", &efa).unwrap();
    assert!(!available(&c, "m5.large"), "no EFA");
    assert!(available(&c, "c5n.18xlarge"));
    assert!(available(&c, "p5.48xlarge"));
    let card1 = with_interfaces(vec![primary(), nic(1, 0, InterfaceType::EfaOnly)]);
    let c = bundled("us-east-1", &card1).unwrap();
    assert!(!available(&c, "c5n.18xlarge"), "one network card");
    assert!(available(&c, "p5.48xlarge"));
    let device2 = with_interfaces(vec![primary(), nic(0, 2, InterfaceType::Interface)]);
    let c = bundled("us-east-1", &device2).unwrap();
    assert!(!available(&c, "p5.48xlarge"), "two interfaces per card");
    assert!(available(&c, "m5.large"), "three on m5.large's");
    let types = c.instance_types.len();
    assert_eq!(types, plain.instance_types.len(), "kept, not dropped");
}

#[test]
fn connection_tracking_keeps_only_nitro_types() {
    let ct = NodeClassSettings {
        connection_tracking: true,
        ..NodeClassSettings::default()
    };
    let c = bundled("us-east-1", &ct).unwrap();
    assert!(available(&c, "m5.large"));
    assert!(!available(&c, "t2.micro"), "xen");
    assert!(!available(&c, "m5.metal"), "bare metal has no hypervisor");
}
