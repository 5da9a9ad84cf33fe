//! NodeOverlay conversion: fields as Karpenter validates them.

use super::*;
use serde_json::json;

fn overlay(spec: serde_json::Value) -> NodeOverlay {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "discount"}, "spec": spec
    }))
    .unwrap()
}

#[test]
fn a_valid_overlay_converts() {
    let o = node_overlay(&overlay(json!({
        "weight": 10, "priceAdjustment": "-10%", "capacity": {"smarter-devices/fuse": "1"},
        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]
    })))
    .unwrap();
    assert_eq!(o.name, "discount");
    assert_eq!(o.weight, 10);
    assert_eq!(o.price, Some(PriceChange::Percent(-10.0)));
    assert_eq!(o.capacity.get("smarter-devices/fuse"), 1000);
    assert!(o.requirements.get("karpenter.sh/capacity-type").is_some());
}

#[test]
fn bad_fields_are_named() {
    for (spec, field, part) in [
        (
            json!({"price": "1", "priceAdjustment": "+1"}),
            "spec",
            "mutually exclusive",
        ),
        (
            json!({"priceAdjustment": "ten%"}),
            "spec",
            "priceAdjustment",
        ),
        (
            json!({"capacity": {"cpu": "1"}}),
            "spec.capacity.cpu",
            "extended",
        ),
        (json!({"weight": 10001}), "spec.weight", "10000"),
    ] {
        let e = node_overlay(&overlay(spec.clone())).unwrap_err();
        assert_eq!(e.field, field, "{spec}");
        assert!(e.message.contains(part), "{spec}: {}", e.message);
    }
}
