//! `kerf sim --report`: the page renders in headless Chromium with every series, a time and a
//! value axis on every chart, the scenario's steps marked, legends and the nodes stacked with
//! their total; a compared run's charts share their scales and the page charts the
//! difference; a draining node is charted and costed until its instance is gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use kerf_cli::sim::{report, simulate_with};
use kerf_sim::scenario::{Decisions, Kind, Outcome, Scenario};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(test: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test)
}

fn scenario(name: &str) -> Scenario {
    Scenario::load(&repo().join(format!("examples/{name}.yaml"))).unwrap()
}

fn run(s: &Scenario, decisions: Decisions) -> Outcome {
    let mut out = Vec::new();
    simulate_with(s, decisions, &mut out, false, true)
        .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out)))
}

fn chromium(args: &[&str]) -> std::process::Output {
    let bin = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok())
        .expect("Chromium is needed for this test (`make test` installs Debian's chromium)");
    let mut all = vec!["--headless", "--no-sandbox", "--disable-gpu"];
    all.extend_from_slice(args);
    Command::new(bin).args(&all).output().unwrap()
}

/// Writes `html` to `dir/report.html` and returns its URL and the DOM Chromium rendered.
fn rendered(dir: &str, html: &str) -> (String, String) {
    let dir = tmp(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, html).unwrap();
    let url = format!("file://{}", page.display());
    let dom = chromium(&["--dump-dom", &url]);
    (url, String::from_utf8_lossy(&dom.stdout).into_owned())
}

/// The rendered chart whose id is `id`, up to the next chart.
fn chart<'d>(dom: &'d str, id: &str) -> &'d str {
    let from = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let rest = &dom[from..];
    let end = rest[1..]
        .find("class=\"chart\"")
        .map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The tick labels of a chart's `axis` (`x` or `y`), in order.
fn ticks(chart: &str, axis: &str) -> Vec<String> {
    let from = chart
        .find(&format!("class=\"axis {axis}\""))
        .unwrap_or_else(|| panic!("no {axis} axis: {chart}"));
    let group = &chart[from..];
    let group = &group[..group.find("</g>").unwrap()];
    group
        .split("<text class=\"tick")
        .skip(1)
        .map(|t| {
            let t = &t[t.find('>').unwrap() + 1..];
            t[..t.find('<').unwrap()].to_string()
        })
        .collect()
}

/// The label of the top tick of a chart's value axis.
fn y_max(chart: &str) -> String {
    let from = chart.find("class=\"tick max\"").expect("a top tick");
    let t = &chart[from..];
    let t = &t[t.find('>').unwrap() + 1..];
    t[..t.find('<').unwrap()].to_string()
}

/// The values of every `attr="…"` in `html`.
fn attrs<'h>(html: &'h str, attr: &str) -> Vec<&'h str> {
    html.split(&format!("{attr}=\""))
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect()
}

/// The step numbers the marks carry (`2–4` is 2, 3 and 4).
fn step_numbers(chart: &str) -> BTreeSet<usize> {
    attrs(chart, "data-steps")
        .iter()
        .flat_map(|m| {
            let mut ends = m.split('\u{2013}').map(|n| n.parse::<usize>().unwrap());
            let first = ends.next().unwrap();
            first..=ends.next().unwrap_or(first)
        })
        .collect()
}

#[test]
fn the_report_renders_in_headless_chromium_with_every_series() {
    let s = scenario("spot-interruption");
    let o = run(&s, Decisions::Kerf);
    let html = report::page(&s.name, &[("Kerf", &o)]);
    for outside in ["src=", "<link", "<script", "@import", "url("] {
        assert!(!html.contains(outside), "self-contained: {outside} found");
    }
    let (url, dom) = rendered("sim-report", &html);
    let mut shapes: Vec<&String> = o.samples.iter().flat_map(|s| s.nodes.keys()).collect();
    shapes.sort();
    shapes.dedup();
    assert!(
        shapes.len() >= 2,
        "the interruption brought a new shape: {shapes:?}"
    );
    for want in shapes
        .iter()
        .map(|s| s.as_str())
        .chain(["pending pods", "USD per hour"])
    {
        assert!(
            dom.contains(&format!("data-series=\"{want}\"")),
            "series {want} missing from the rendered page"
        );
    }
    assert!(
        dom.contains("class=\"marker interruption\""),
        "the interruption is marked"
    );

    // The nodes stacked by shape, their total along the top, each in the legend.
    let nodes = chart(&dom, "kerf-nodes");
    for shape in &shapes {
        assert!(
            nodes.contains(&format!("class=\"series stacked\" data-series=\"{shape}\"")),
            "{shape} stacked"
        );
        assert!(nodes.contains(&format!("data-legend=\"{shape}\"")));
    }
    assert!(nodes.contains("class=\"series total\""));
    assert!(nodes.contains("data-legend=\"total\""));
    let peak = o
        .samples
        .iter()
        .map(|s| s.nodes.values().sum::<usize>())
        .max()
        .unwrap();
    assert_eq!(y_max(nodes), peak.to_string(), "the axis reaches the total");

    // Every chart: both axes with their tick labels, each step marked, the markers' legend.
    let steps = o.timeline.iter().filter(|e| e.kind == Kind::Step).count();
    assert_eq!(steps, s.steps.len());
    for id in ["kerf-nodes", "kerf-pending", "kerf-cost"] {
        let c = chart(&dom, id);
        let x = ticks(c, "x");
        assert_eq!(x.first().map(String::as_str), Some("0:00"), "{id}: {x:?}");
        assert!(x.contains(&"1:00".to_string()), "{id}: {x:?}");
        assert!(c.contains("m:ss"), "{id}: the time axis says how it reads");
        let y = ticks(c, "y");
        assert!(y.len() >= 2, "{id}: {y:?}");
        assert!(y[0] == "0" || y[0] == "$0.00/h", "{id}: from zero: {y:?}");
        assert_eq!(
            step_numbers(c),
            (1..=steps).collect(),
            "{id}: every step marked"
        );
        for legend in ["a step starts (numbered as listed)", "interruption"] {
            assert!(
                c.contains(&format!("data-legend=\"{legend}\"")),
                "{id}: {legend}"
            );
        }
        assert!(c.contains("data-legend=\"disruption (none)\""), "{id}");
    }
    assert!(
        ticks(chart(&dom, "kerf-cost"), "y")
            .iter()
            .all(|t| t.ends_with("/h"))
    );
    assert_eq!(dom.matches("<li value=").count(), steps, "the steps listed");

    let png = tmp("sim-report").join("report.png");
    let shot = chromium(&[
        &format!("--screenshot={}", png.display()),
        "--window-size=1000,1400",
        &url,
    ]);
    let bytes = std::fs::read(&png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&shot.stderr)
        )
    });
    assert_eq!(&bytes[1..4], b"PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1000, 1400));
    assert!(
        bytes.len() > 20_000,
        "a page with charts, not a blank one: {} bytes",
        bytes.len()
    );
}

#[test]
fn the_compare_report_draws_both_runs_on_one_scale_in_chromium() {
    // First-fit packs the pods onto fewer, dearer nodes: the runs peak apart.
    let s = scenario("weights-limits");
    let kerf = run(&s, Decisions::Kerf);
    let karpenter = run(&s, Decisions::Karpenter);
    let peak = |o: &Outcome, f: fn(&kerf_sim::scenario::Sample) -> f64| {
        o.samples.iter().map(f).fold(0.0, f64::max)
    };
    let nodes = |s: &kerf_sim::scenario::Sample| s.nodes.values().sum::<usize>() as f64;
    let cost = |s: &kerf_sim::scenario::Sample| s.cost_per_hour;
    assert!(peak(&karpenter, cost) > 1.5 * peak(&kerf, cost));
    assert_ne!(peak(&karpenter, nodes), peak(&kerf, nodes));
    let html = report::page(&s.name, &[("Kerf", &kerf), ("Karpenter", &karpenter)]);
    let (_, dom) = rendered("sim-report-compare", &html);
    for name in ["nodes", "pending", "cost"] {
        let (a, b) = (
            chart(&dom, &format!("kerf-{name}")),
            chart(&dom, &format!("karpenter-{name}")),
        );
        assert_eq!(y_max(a), y_max(b), "{name}: one value scale");
        assert_eq!(ticks(a, "y"), ticks(b, "y"), "{name}");
        assert_eq!(ticks(a, "x"), ticks(b, "x"), "{name}: one time scale");
    }
    let top = |name: &str| -> f64 {
        let label = y_max(chart(&dom, name));
        label
            .trim_start_matches('$')
            .trim_end_matches("/h")
            .parse()
            .unwrap()
    };
    let highest = peak(&kerf, nodes).max(peak(&karpenter, nodes));
    assert!(top("kerf-nodes") >= highest, "the scale holds both runs");
    assert!(top("kerf-cost") >= peak(&karpenter, cost));
    assert!(y_max(chart(&dom, "kerf-cost")).ends_with("/h"));
    // The run that ended sooner has the rest of the shared time shaded.
    let shorter = if kerf.simulated < karpenter.simulated {
        "kerf-nodes"
    } else {
        "karpenter-nodes"
    };
    if kerf.simulated != karpenter.simulated {
        assert!(
            chart(&dom, shorter).contains("class=\"ended\""),
            "{shorter}"
        );
    }
    assert!(dom.contains("id=\"difference\""));
    for name in ["nodes", "cost"] {
        let d = chart(&dom, &format!("difference-{name}"));
        assert!(d.contains("data-series=\"Kerf minus Karpenter\""), "{name}");
        assert!(ticks(d, "x") == ticks(chart(&dom, "kerf-nodes"), "x"));
        assert!(!ticks(d, "y").is_empty());
    }
    assert!(
        ticks(chart(&dom, "difference-cost"), "y")
            .iter()
            .any(|t| t.starts_with('+') || t.starts_with('\u{2212}')),
        "a difference reads signed"
    );
}

#[test]
fn a_draining_node_is_charted_and_costed_until_its_instance_is_gone() {
    let s = scenario("spot-interruption");
    let o = run(&s, Decisions::Kerf);
    let deleted = o
        .timeline
        .iter()
        .find(|e| e.text.starts_with("deleted nodeclaim"))
        .expect("the interrupted node's NodeClaim goes")
        .at;
    // While the interrupted node drains, its replacements run: two at the start, two
    // replacements, and the drained one still billed until its NodeClaim goes.
    let during = o
        .samples
        .iter()
        .filter(|s| s.at < deleted)
        .map(|s| s.nodes.values().sum::<usize>())
        .max();
    assert_eq!(during, Some(4), "{:?}", o.samples);
    assert_eq!(o.last.claims.len(), 3);
    // Every sample costs what its instances cost: the chart of nodes and of cost agree.
    let price = |shape: &str| {
        o.last
            .claims
            .iter()
            .find(|c| format!("{}/{}", c.instance_type, c.capacity_type) == shape)
            .map(|c| c.price)
            .unwrap_or_else(|| panic!("no price for {shape}"))
    };
    for sample in &o.samples {
        let cost: f64 = sample.nodes.iter().map(|(k, n)| price(k) * *n as f64).sum();
        assert!(
            (cost - sample.cost_per_hour).abs() < 1e-9,
            "{sample:?}: {cost} per hour"
        );
    }
}
