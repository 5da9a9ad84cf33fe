//! `DisruptOptions::karpenter_search` (what `kerf sim --compare karpenter` runs): Karpenter's
//! multi-node consolidation looks at its first 100 candidates only, where Kerf's searches
//! them all; on the same generated cluster Kerf's command removes more nodes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kerf_cli::benchcluster::{Mix, NOW, cluster};
use kerf_cli::benchdress::Fields;
use kerf_cli::input::{Inputs, parse_into};
use kerf_cli::snapshot::{CatalogSource, build};
use kerf_engine::DisruptOptions;
use kerf_engine::plan::Method;

#[test]
fn karpenters_multi_node_consolidation_stops_at_100_candidates() {
    let list = cluster(2_000, 30_000, 42, Mix::Consolidation, Fields::Bare).unwrap();
    let mut inputs = Inputs::default();
    parse_into(&mut inputs, "cluster.json", &list.to_string()).unwrap();
    let source = CatalogSource::Bundled {
        region: "us-west-2".into(),
    };
    let now = kerf_engine::time::parse_rfc3339(NOW).unwrap();
    let built = build(inputs.docs, &source, now).unwrap();
    let multi = |karpenter_search: bool| {
        let o = DisruptOptions {
            karpenter_search,
            ..DisruptOptions::default()
        };
        let plan = kerf_engine::disrupt(&built.snapshot, &o);
        plan.disruptions
            .iter()
            .filter(|d| d.method == Method::MultiNodeConsolidation)
            .map(|d| d.node_claims.len())
            .max()
            .unwrap_or(0)
    };
    let kerf = multi(false);
    let karpenter = multi(true);
    assert!(
        kerf > 100,
        "Kerf's search takes every candidate it can: {kerf}"
    );
    assert!(
        (2..=100).contains(&karpenter),
        "Karpenter's looks at 100 at most: {karpenter}"
    );
}
