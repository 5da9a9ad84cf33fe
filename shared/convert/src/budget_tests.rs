//! The `kerf.dev/max-cost-per-hour` annotation: accepted amounts and the errors for the rest.

use super::*;

fn pool(value: Option<&str>) -> NodePool {
    let mut np: NodePool = serde_json::from_value(serde_json::json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
        "spec": {"template": {"spec": {"requirements": [],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "d"}}}}
    }))
    .unwrap();
    if let Some(v) = value {
        np.metadata.annotations = Some([(MAX_COST_PER_HOUR.to_string(), v.to_string())].into());
    }
    np
}

#[test]
fn amounts_parse_and_no_annotation_is_no_limit() {
    assert_eq!(max_cost_per_hour(&pool(None)), Ok(None));
    assert_eq!(max_cost_per_hour(&pool(Some("25.00"))), Ok(Some(25.0)));
    assert_eq!(max_cost_per_hour(&pool(Some(" 0.5 "))), Ok(Some(0.5)));
    assert_eq!(max_cost_per_hour(&pool(Some("0"))), Ok(Some(0.0)));
}

#[test]
fn bad_values_name_the_pool_the_annotation_and_the_problem() {
    for (raw, want) in [
        ("25,00", "is not a number"),
        ("$25", "is not a number"),
        ("1e3", "is not a number"),
        ("", "is not a number"),
        ("NaN", "is not a number"),
        ("1.2.3", "is not a number"),
        ("-3", "is negative"),
    ] {
        let e = max_cost_per_hour(&pool(Some(raw))).unwrap_err();
        assert_eq!(e.field, "metadata.annotations[kerf.dev/max-cost-per-hour]");
        assert!(
            e.message
                .starts_with("NodePool \"gpu\": kerf.dev/max-cost-per-hour ")
                && e.message.contains(want),
            "{raw}: {}",
            e.message
        );
    }
}
