//! Renders a catalog as a text table (like Karpenter's instance-types reference page) for
//! `kerf catalog`: one row per type, sorted by name.

use crate::quantity::{self, Format};
use crate::{CapacityType, Catalog, InstanceType};

const HEADER: [&str; 8] = [
    "TYPE",
    "VCPU",
    "MEMORY",
    "ALLOC CPU",
    "ALLOC MEMORY",
    "PODS",
    "OD PRICE",
    "SPOT PRICE",
];

/// The table as a string: a header row, then one row per instance type sorted by name.
/// Prices are the cheapest available offering of each capacity type (`-` when none).
pub fn render(catalog: &Catalog) -> String {
    let mut types: Vec<&InstanceType> = catalog.instance_types.iter().collect();
    types.sort_by(|a, b| a.name.cmp(&b.name));
    let mut rows = vec![HEADER.map(str::to_string).to_vec()];
    rows.extend(types.into_iter().map(row));
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn row(it: &InstanceType) -> Vec<String> {
    vec![
        it.name.clone(),
        quantity::format(it.capacity.get("cpu"), Format::DecimalMilli),
        quantity::format(it.capacity.get("memory"), Format::Binary),
        quantity::format(it.allocatable.get("cpu"), Format::DecimalMilli),
        quantity::format(it.allocatable.get("memory"), Format::Binary),
        quantity::format(it.allocatable.get("pods"), Format::DecimalMilli),
        cheapest(it, CapacityType::OnDemand),
        cheapest(it, CapacityType::Spot),
    ]
}

/// The cheapest available price of one capacity type, as `$0.0960`, or `-`.
fn cheapest(it: &InstanceType, ct: CapacityType) -> String {
    it.offerings
        .iter()
        .filter(|o| o.available && o.capacity_type == ct)
        .map(|o| o.price)
        .min_by(f64::total_cmp)
        .map_or_else(|| "-".to_string(), |p| format!("${p:.4}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file;

    #[test]
    fn renders_sorted_rows_with_cheapest_prices() {
        let c = file::from_json(
            r#"{"region":"r","instanceTypes":[
              {"name":"z.large","allocatable":{"cpu":"1930m","memory":"6903Mi","pods":"29"},
               "capacity":{"cpu":"2","memory":"7577Mi","pods":"29"},
               "offerings":[{"zone":"a","capacityType":"on-demand","price":0.096,"available":true},
                            {"zone":"a","capacityType":"spot","price":0.04,"available":true},
                            {"zone":"b","capacityType":"spot","price":0.03,"available":false}]},
              {"name":"a.small","allocatable":{"cpu":"1","memory":"1Gi","pods":"8"},"offerings":[]}]}"#,
        )
        .unwrap();
        let t = render(&c);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("TYPE") && lines[0].ends_with("SPOT PRICE"),
            "{t}"
        );
        assert!(
            lines[1].starts_with("a.small") && lines[1].ends_with("-"),
            "{t}"
        );
        assert!(lines[2].starts_with("z.large"), "{t}");
        for cell in ["7577Mi", "1930m", "6903Mi", "29", "$0.0960", "$0.0400"] {
            assert!(lines[2].contains(cell), "{cell} in {t}");
        }
    }
}
