//! Network interfaces (`EC2NodeClass.spec.networkInterfaces`) and connection tracking
//! (`spec.connectionTracking`) as pure data, and what they do to a node class's catalog, as
//! Karpenter's AWS provider does it:
//!
//! - a type that cannot hold the listed interfaces is incompatible with the class (its
//!   offerings are unavailable): it has no known network cards, does not support ENA, has
//!   fewer cards than an interface's card index, fewer interfaces on that card than a device
//!   index, or fewer EFA interfaces than the list has `efa-only` ones;
//! - with connection tracking set, only Nitro types are compatible;
//! - `vpc.amazonaws.com/efa` is the number of `efa-only` interfaces when the list is set,
//!   else the type's `MaximumEfaInterfaces`;
//! - ENI-limited max pods lose the `efa-only` interfaces on network card 0 (they take an ENI
//!   slot but carry no IP traffic).

use serde::{Deserialize, Serialize};

use crate::spec::Ec2Spec;

/// `networkInterfaces[].interfaceType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InterfaceType {
    /// An ENA interface (IP traffic).
    #[serde(rename = "interface")]
    Interface,
    /// An EFA-only interface (no IP address, OS-bypass traffic only).
    #[serde(rename = "efa-only")]
    EfaOnly,
}

impl InterfaceType {
    /// EC2's spelling: `interface`, `efa-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            InterfaceType::Interface => "interface",
            InterfaceType::EfaOnly => "efa-only",
        }
    }

    pub fn parse(s: &str) -> Option<InterfaceType> {
        match s {
            "interface" => Some(InterfaceType::Interface),
            "efa-only" => Some(InterfaceType::EfaOnly),
            _ => None,
        }
    }
}

/// One `spec.networkInterfaces[]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterface {
    pub network_card_index: u32,
    pub device_index: u32,
    pub interface_type: InterfaceType,
}

/// `NetworkInfo.EnaSupport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnaSupport {
    Unsupported,
    Supported,
    Required,
}

/// The number of `efa-only` interfaces in the list.
pub fn efa_only(interfaces: &[NetworkInterface]) -> u32 {
    count(interfaces, |i| i.interface_type == InterfaceType::EfaOnly)
}

/// The number of `efa-only` interfaces on network card `card`.
pub fn efa_only_on_card(interfaces: &[NetworkInterface], card: u32) -> u32 {
    count(interfaces, |i| {
        i.interface_type == InterfaceType::EfaOnly && i.network_card_index == card
    })
}

fn count(interfaces: &[NetworkInterface], f: impl Fn(&NetworkInterface) -> bool) -> u32 {
    u32::try_from(interfaces.iter().filter(|i| f(i)).count()).unwrap_or(u32::MAX)
}

/// `vpc.amazonaws.com/efa`: the list's `efa-only` interfaces when it is set, else the
/// type's maximum.
pub fn efa_capacity(spec: &Ec2Spec, interfaces: &[NetworkInterface]) -> u32 {
    if interfaces.is_empty() {
        spec.efa_max_interfaces
    } else {
        efa_only(interfaces)
    }
}

/// Whether the type can launch with the listed interfaces (always, with none listed).
pub fn supports_interfaces(spec: &Ec2Spec, interfaces: &[NetworkInterface]) -> bool {
    if interfaces.is_empty() {
        return true;
    }
    if spec.network_cards.is_empty() || spec.ena_support == Some(EnaSupport::Unsupported) {
        return false;
    }
    let fits = |i: &NetworkInterface| {
        usize::try_from(i.network_card_index)
            .ok()
            .and_then(|card| spec.network_cards.get(card))
            .is_some_and(|max| i.device_index < *max)
    };
    interfaces.iter().all(fits) && efa_only(interfaces) <= spec.efa_max_interfaces
}

/// Whether the type can take connection-tracking timeouts (Nitro types only).
pub fn supports_connection_tracking(spec: &Ec2Spec) -> bool {
    spec.hypervisor.as_deref() == Some("nitro")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nic(card: u32, device: u32, t: InterfaceType) -> NetworkInterface {
        NetworkInterface {
            network_card_index: card,
            device_index: device,
            interface_type: t,
        }
    }

    /// p5.48xlarge-like: 32 cards of 2 interfaces, 32 EFA interfaces.
    fn p5() -> Ec2Spec {
        Ec2Spec {
            name: "p5.48xlarge".into(),
            hypervisor: Some("nitro".into()),
            network_cards: vec![2; 32],
            ena_support: Some(EnaSupport::Required),
            efa_max_interfaces: 32,
            ..Ec2Spec::default()
        }
    }

    fn primary() -> NetworkInterface {
        nic(0, 0, InterfaceType::Interface)
    }

    #[test]
    fn interface_types_read_and_write_as_ec2_spells_them() {
        for t in [InterfaceType::Interface, InterfaceType::EfaOnly] {
            assert_eq!(InterfaceType::parse(t.as_str()), Some(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.as_str()));
        }
        assert_eq!(InterfaceType::parse("efa"), None);
    }

    #[test]
    fn efa_capacity_counts_efa_only_interfaces_when_listed() {
        assert_eq!(efa_capacity(&p5(), &[]), 32);
        let listed = [
            primary(),
            nic(0, 1, InterfaceType::EfaOnly),
            nic(1, 0, InterfaceType::EfaOnly),
        ];
        assert_eq!(efa_capacity(&p5(), &listed), 2);
        assert_eq!(efa_capacity(&p5(), &[primary()]), 0);
        assert_eq!(efa_only_on_card(&listed, 0), 1);
        assert_eq!(efa_only_on_card(&listed, 1), 1);
        assert_eq!(efa_only_on_card(&listed, 2), 0);
    }

    #[test]
    fn a_type_must_hold_every_listed_interface() {
        let ok = [primary(), nic(31, 1, InterfaceType::EfaOnly)];
        assert!(supports_interfaces(&p5(), &ok));
        assert!(
            !supports_interfaces(&p5(), &[primary(), nic(32, 0, InterfaceType::EfaOnly)]),
            "no card 32"
        );
        assert!(
            !supports_interfaces(&p5(), &[primary(), nic(1, 2, InterfaceType::Interface)]),
            "card 1 holds devices 0 and 1"
        );
        let one_efa = Ec2Spec {
            efa_max_interfaces: 1,
            ..p5()
        };
        let two = [
            primary(),
            nic(0, 1, InterfaceType::EfaOnly),
            nic(1, 0, InterfaceType::EfaOnly),
        ];
        assert!(supports_interfaces(&p5(), &two));
        assert!(
            !supports_interfaces(&one_efa, &two),
            "more EFAs than the type has"
        );
        let no_ena = Ec2Spec {
            ena_support: Some(EnaSupport::Unsupported),
            ..p5()
        };
        assert!(!supports_interfaces(&no_ena, &[primary()]));
        let unknown_cards = Ec2Spec {
            network_cards: Vec::new(),
            ..p5()
        };
        assert!(!supports_interfaces(&unknown_cards, &[primary()]));
        assert!(supports_interfaces(&unknown_cards, &[]), "nothing listed");
    }

    #[test]
    fn connection_tracking_needs_nitro() {
        assert!(supports_connection_tracking(&p5()));
        let xen = Ec2Spec {
            hypervisor: Some("xen".into()),
            ..p5()
        };
        assert!(!supports_connection_tracking(&xen));
        let metal = Ec2Spec {
            hypervisor: None,
            ..p5()
        };
        assert!(!supports_connection_tracking(&metal));
    }
}
