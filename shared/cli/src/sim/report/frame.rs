//! A chart's frame: light gridlines at every tick, the time axis (ticks labelled m:ss or h:mm,
//! its title below) and the value axis (ticks labelled with their unit, the top one marked
//! `max`, its title along the left edge).

use std::fmt::Write;

use super::chart::{HEIGHT, LEFT, Plot, TOP};

/// Light lines at every tick of both axes, and a darker one at zero when values go below it.
pub(super) fn grid(p: &Plot<'_>) -> String {
    let mut g = String::from("<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">");
    for t in p.x.ticks() {
        let x = p.px(t);
        let _ = write!(
            g,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>",
            p.bottom()
        );
    }
    for v in p.y.ticks() {
        let y = p.py(v);
        let _ = write!(
            g,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
            p.right()
        );
    }
    if p.y.min < 0.0 {
        let y = p.py(0.0);
        let _ = write!(
            g,
            "<line class=\"zero\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" \
             stroke=\"#777\"/>",
            p.right()
        );
    }
    g.push_str("</g>");
    g
}

/// The time axis: its line, ticks, m:ss (or h:mm) labels and title.
pub(super) fn x_axis(p: &Plot<'_>) -> String {
    let b = p.bottom();
    let mut g = format!(
        "<g class=\"axis x\" font-size=\"11\" fill=\"#333\"><line x1=\"{LEFT}\" y1=\"{b}\" \
         x2=\"{:.1}\" y2=\"{b}\" stroke=\"#666\"/>",
        p.right()
    );
    for t in p.x.ticks() {
        let x = p.px(t);
        let _ = write!(
            g,
            "<line x1=\"{x:.1}\" y1=\"{b}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#666\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            b + 4.0,
            b + 16.0,
            p.x.label(t)
        );
    }
    let _ = write!(
        g,
        "<text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" \
         fill=\"#666\">{}</text></g>",
        (LEFT + p.right()) / 2.0,
        HEIGHT - 6.0,
        p.x.title()
    );
    g
}

/// The value axis: its line, ticks, labels with their unit (the top one marked `max`) and
/// its title along the left edge.
pub(super) fn y_axis(p: &Plot<'_>) -> String {
    let mut g = format!(
        "<g class=\"axis y\" font-size=\"11\" fill=\"#333\"><line x1=\"{LEFT}\" y1=\"{TOP}\" \
         x2=\"{LEFT}\" y2=\"{:.1}\" stroke=\"#666\"/>",
        p.bottom()
    );
    let ticks = p.y.ticks();
    for (i, v) in ticks.iter().enumerate() {
        let y = p.py(*v);
        let class = if i + 1 == ticks.len() {
            "tick max"
        } else {
            "tick"
        };
        let _ = write!(
            g,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{LEFT}\" y2=\"{y:.1}\" stroke=\"#666\"/>\
             <text class=\"{class}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 4.0,
            LEFT - 6.0,
            y + 4.0,
            p.y.label(*v)
        );
    }
    let middle = (TOP + p.bottom()) / 2.0;
    let _ = write!(
        g,
        "<text class=\"axis-title\" x=\"14\" y=\"{middle:.1}\" text-anchor=\"middle\" \
         fill=\"#666\" transform=\"rotate(-90 14 {middle:.1})\">{}</text></g>",
        p.y.title()
    );
    g
}
