//! The legends drawn over the viewport: the color key of the current view, laid out so that
//! no part overlaps another.

use crate::render::views::{
    DEFORMATION_RANGE, ENGINE_DISTANCE_FULL_SCALE, SYMMETRY_FULL_SCALE, SYMMETRY_UNCHECKED, SYMMETRY_UNMATCHED,
    ViewMode, WEIGHT_ERROR_FULL_SCALE, deformation_color, heat, influence_color, joint_color, symmetry_color,
};
use crate::viewer::Viewer;
use egui::Color32;

/// A linear RGB color as egui's (sRGB) color, so legends match the shaded pixels.
pub(crate) fn color32(rgb: [f32; 3]) -> Color32 {
    Color32::from(egui::Rgba::from_rgb(rgb[0], rgb[1], rgb[2]))
}

/// Space between the viewport's edges and the legend, and between the legend's parts.
const LEGEND_MARGIN: f32 = 12.0;
const LEGEND_GAP: f32 = 10.0;
/// A color ramp's bar, at least this wide.
const RAMP_SIZE: egui::Vec2 = egui::vec2(160.0, 12.0);
/// Between a ramp's title, its end labels and its bar.
const LINE_GAP: f32 = 2.0;

/// One part of a legend.
enum LegendItem<'a> {
    /// A color ramp from 0 to 1 with its two end labels and its title.
    Ramp {
        color: &'a dyn Fn(f32) -> [f32; 3],
        ends: [String; 2],
        title: String,
    },
    Text(String),
    /// A square of a color and its label to the right.
    Swatch {
        color: Color32,
        label: String,
    },
    /// A small box of a color with its label inside.
    Chip {
        color: Color32,
        label: String,
    },
}

const SWATCH: f32 = 12.0;
const CHIP: egui::Vec2 = egui::vec2(20.0, 14.0);

/// Where a ramp's parts go inside its box: the title on top, the end labels under it at either
/// end, the bar at the bottom; stacked, so none overlaps another whatever the texts' widths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RampLayout {
    pub title: egui::Rect,
    pub ends: [egui::Rect; 2],
    pub bar: egui::Rect,
}

impl RampLayout {
    fn bar_width(ends: [egui::Vec2; 2]) -> f32 {
        RAMP_SIZE.x.max(ends[0].x + ends[1].x + LEGEND_GAP)
    }

    /// The size of the whole ramp for a title and end labels of these sizes.
    pub(crate) fn size(title: egui::Vec2, ends: [egui::Vec2; 2]) -> egui::Vec2 {
        let ends_height = ends[0].y.max(ends[1].y);
        egui::vec2(
            Self::bar_width(ends).max(title.x),
            title.y + LINE_GAP + ends_height + LINE_GAP + RAMP_SIZE.y,
        )
    }

    pub(crate) fn within(rect: egui::Rect, title: egui::Vec2, ends: [egui::Vec2; 2]) -> RampLayout {
        let width = Self::bar_width(ends);
        let ends_height = ends[0].y.max(ends[1].y);
        let left = rect.left() + (rect.width() - width) * 0.5;
        let title_rect = egui::Rect::from_min_size(egui::pos2(rect.center().x - title.x * 0.5, rect.top()), title);
        let ends_top = rect.top() + title.y + LINE_GAP;
        RampLayout {
            title: title_rect,
            ends: [
                egui::Rect::from_min_size(egui::pos2(left, ends_top), ends[0]),
                egui::Rect::from_min_size(egui::pos2(left + width - ends[1].x, ends_top), ends[1]),
            ],
            bar: egui::Rect::from_min_size(
                egui::pos2(left, ends_top + ends_height + LINE_GAP),
                egui::vec2(width, RAMP_SIZE.y),
            ),
        }
    }
}

/// Boxes of `sizes` placed left to right from the viewport's bottom-left corner (inside its
/// margin), bottoms aligned, a new row started above when the next box would pass the right
/// edge; `None` for a box that does not fit in the viewport (it is not drawn). Boxes never
/// overlap.
pub(crate) fn flow_layout(viewport: egui::Rect, sizes: &[egui::Vec2]) -> Vec<Option<egui::Rect>> {
    let right = viewport.right() - LEGEND_MARGIN;
    let mut x = viewport.left() + LEGEND_MARGIN;
    let mut bottom = viewport.bottom() - LEGEND_MARGIN;
    let mut row_height: f32 = 0.0;
    let mut rects = Vec::with_capacity(sizes.len());
    for &size in sizes {
        let row_start = x <= viewport.left() + LEGEND_MARGIN;
        if !row_start && x + size.x > right {
            x = viewport.left() + LEGEND_MARGIN;
            bottom -= row_height + LEGEND_GAP;
            row_height = 0.0;
        }
        let rect = egui::Rect::from_min_size(egui::pos2(x, bottom - size.y), size);
        rects.push(viewport.contains_rect(rect).then_some(rect));
        x += size.x + LEGEND_GAP;
        row_height = row_height.max(size.y);
    }
    rects
}

/// The color key of the current view, in the viewport's bottom-left corner.
pub fn legend(ui: &egui::Ui, viewport: egui::Rect, viewer: &Viewer) {
    let painter = ui.painter_at(viewport);
    let text_color = Color32::from_gray(220);
    let font = egui::FontId::proportional(12.0);
    let measure = |text: &str| painter.layout_no_wrap(text.to_owned(), font.clone(), text_color).size();
    let mut items = Vec::new();
    view_mode_items(viewer, &mut items);
    comparison_items(viewer, &mut items);
    let sizes: Vec<egui::Vec2> = items.iter().map(|item| item_size(item, &measure)).collect();
    for (item, rect) in items.iter().zip(flow_layout(viewport, &sizes)) {
        let Some(rect) = rect else { continue };
        paint_item(&painter, item, rect, &font, text_color, &measure);
    }
}

/// The weights view's ramp, 0 to 1.
fn heat_ramp(t: f32) -> [f32; 3] {
    heat(t)
}

/// The deformation view's ramp, from 1/`DEFORMATION_RANGE` to `DEFORMATION_RANGE` (log scale).
fn deformation_ramp(t: f32) -> [f32; 3] {
    deformation_color(DEFORMATION_RANGE.powf(2.0 * t - 1.0))
}

/// The symmetry and weight-difference views' ramp, 0 to full scale.
fn symmetry_ramp(t: f32) -> [f32; 3] {
    symmetry_color(t * SYMMETRY_FULL_SCALE)
}

/// What the colors of the view mode mean.
fn view_mode_items(viewer: &Viewer, items: &mut Vec<LegendItem>) {
    match viewer.view.options.mode {
        ViewMode::Weights => {
            let name = viewer
                .view
                .selected_joint
                .map_or("no joint selected", |j| viewer.rig().nodes[j].name.as_str());
            items.push(LegendItem::Ramp {
                color: &heat_ramp,
                ends: ["0".to_owned(), "1".to_owned()],
                title: format!("weight of {name}"),
            });
            if viewer.view.options.zero_distinct {
                items.push(LegendItem::Text("grey: exactly 0".to_owned()));
            }
        }
        ViewMode::Deformation => {
            let range = DEFORMATION_RANGE;
            items.push(LegendItem::Ramp {
                color: &deformation_ramp,
                ends: [format!("1/{range}"), format!("{range}")],
                title: format!(
                    "{} posed / bind",
                    viewer.view.options.deformation.label().to_lowercase()
                ),
            });
            items.push(LegendItem::Text(
                "green: as bound; magenta: turned inside out".to_owned(),
            ));
        }
        ViewMode::Symmetry => difference_legend(
            items,
            &symmetry_ramp,
            ["weight difference from the mirror", "no mirror vertex", "not compared"],
        ),
        ViewMode::WeightDifference => {
            difference_legend(
                items,
                &symmetry_ramp,
                [
                    "weight difference from the other file",
                    "no vertex there in the other file",
                    "not compared (no file to compare with)",
                ],
            );
            if viewer
                .comparison()
                .is_some_and(|c| c.layout == crate::viewer::CompareLayout::Side)
            {
                items.push(LegendItem::Text(
                    "each side against the other, its vertices matched from its side".to_owned(),
                ));
            }
        }
        ViewMode::Influences => {
            items.extend((1..=8u32).map(|n| LegendItem::Chip {
                color: color32(influence_color(n)),
                label: n.to_string(),
            }));
        }
        ViewMode::EngineDistance => engine_distance_items(viewer, items),
        ViewMode::DqsBlend => {
            items.push(LegendItem::Ramp {
                color: &heat_ramp,
                ends: ["0 LBS".to_owned(), "1 DQS".to_owned()],
                title: "blend toward dual quaternions".to_owned(),
            });
        }
        ViewMode::WeightError => {
            let full = WEIGHT_ERROR_FULL_SCALE;
            items.push(LegendItem::Text(format!(
                "green: Σw = 1   yellow: |Σw − 1| = {}   magenta: ≥ {full}",
                0.5 * full
            )));
        }
        ViewMode::Joints => {
            if let Some(node) = viewer.view.selected_joint
                && let Some(slot) = viewer.rig().hierarchy().joint_slot(node)
            {
                items.push(LegendItem::Swatch {
                    color: color32(joint_color(slot as u32)),
                    label: viewer.rig().nodes[node].name.clone(),
                });
            }
        }
        _ => {}
    }
}

/// The engine distance view's ramp and scale, and the vertex drawn farthest from the file's
/// drawing with its joints in the file and in the engine.
fn engine_distance_items(viewer: &Viewer, items: &mut Vec<LegendItem>) {
    let Some(engine) = viewer.view.engine else {
        items.push(LegendItem::Text(
            "no engine chosen: every vertex at 0; pick one in View ▸ Engine".to_owned(),
        ));
        return;
    };
    let height = viewer.engine_distance_height().unwrap_or(0.0);
    let full = f64::from(ENGINE_DISTANCE_FULL_SCALE);
    items.push(LegendItem::Ramp {
        color: &heat_ramp,
        ends: [
            "0".to_owned(),
            format!("≥ {full} of the height ({:.3e} units)", full * height),
        ],
        title: format!("distance from the file's drawing in {}", engine.label()),
    });
    let document = viewer.document();
    let (drawn, drawn_generation) = document.shown_rig();
    if drawn_generation == document.generation {
        items.push(LegendItem::Text(format!("making {}'s drawing…", engine.label())));
        return;
    }
    let Some(farthest) = viewer.engine_distances().and_then(|(_, d)| d.farthest()) else {
        return;
    };
    if farthest.distance == 0.0 {
        items.push(LegendItem::Text("every vertex where the file draws it".to_owned()));
        return;
    }
    let rig = &document.rig;
    let Some((instance, mesh)) =
        (rig.instances.get(farthest.instance)).and_then(|instance| Some((instance, rig.meshes.get(instance.mesh)?)))
    else {
        return;
    };
    items.push(LegendItem::Text(format!(
        "farthest: vertex {} of {} (primitive {}), {:.3e} of the height, {:.3e} units",
        farthest.vertex, mesh.name, farthest.primitive, farthest.fraction, farthest.distance
    )));
    for (label, rig) in [("file", rig), (engine.label(), drawn)] {
        let primitive = (rig.meshes.get(instance.mesh)).and_then(|mesh| mesh.primitives.get(farthest.primitive));
        let Some(influences) = primitive
            .and_then(|p| p.influences.as_ref())
            .filter(|_| primitive.is_some_and(|p| farthest.vertex < p.vertex_count()))
        else {
            continue;
        };
        let joints = crate::engine::check::named_joints(rig, instance.skin, influences, farthest.vertex);
        let joints: Vec<String> = joints.iter().map(|(name, w)| format!("{name} {w:.3}")).collect();
        items.push(LegendItem::Text(format!("{label}: {}", joints.join(", "))));
    }
}

/// The joint error colors of the skeleton while comparing.
fn comparison_items(viewer: &Viewer, items: &mut Vec<LegendItem>) {
    if viewer.comparison().is_some() && viewer.view.options.skeleton.show {
        let position = crate::render::skeleton::JOINT_ERROR_FULL_SCALE * 100.0;
        let degrees = crate::viewer::JOINT_ROTATION_FULL_SCALE_DEGREES;
        items.push(LegendItem::Ramp {
            color: &heat_ramp,
            ends: ["0".to_owned(), format!("≥ {position} % of size or {degrees}°")],
            title: "joint error against the other file (position or rotation)".to_owned(),
        });
        items.push(LegendItem::Text(
            "red joint: none of that name in the other file".to_owned(),
        ));
    }
}

/// Paints `item` in `rect`.
fn paint_item(
    painter: &egui::Painter,
    item: &LegendItem,
    rect: egui::Rect,
    font: &egui::FontId,
    text_color: Color32,
    measure: &dyn Fn(&str) -> egui::Vec2,
) {
    let text = |pos: egui::Pos2, align: egui::Align2, label: &str, color: Color32| {
        painter.text(pos, align, label, font.clone(), color);
    };
    match item {
        LegendItem::Ramp { color, ends, title } => {
            let layout = RampLayout::within(rect, measure(title), [measure(&ends[0]), measure(&ends[1])]);
            let bar = layout.bar;
            for i in 0..bar.width() as usize {
                let x = bar.left() + i as f32;
                let t = i as f32 / (bar.width() - 1.0);
                painter.line_segment(
                    [egui::pos2(x, bar.top()), egui::pos2(x, bar.bottom())],
                    (1.0, color32(color(t))),
                );
            }
            text(layout.title.min, egui::Align2::LEFT_TOP, title, text_color);
            for (end, label) in layout.ends.iter().zip(ends) {
                text(end.min, egui::Align2::LEFT_TOP, label, text_color);
            }
        }
        LegendItem::Text(label) => text(rect.min, egui::Align2::LEFT_TOP, label, text_color),
        LegendItem::Swatch { color, label } => {
            let square = egui::Rect::from_min_size(
                egui::pos2(rect.left(), rect.center().y - SWATCH * 0.5),
                egui::vec2(SWATCH, SWATCH),
            );
            painter.rect_filled(square, 2.0, *color);
            text(
                egui::pos2(square.right() + 4.0, rect.center().y),
                egui::Align2::LEFT_CENTER,
                label,
                text_color,
            );
        }
        LegendItem::Chip { color, label } => {
            painter.rect_filled(rect, 2.0, *color);
            text(rect.center(), egui::Align2::CENTER_CENTER, label, Color32::BLACK);
        }
    }
}

/// The size of a legend item whose texts measure `measure(text)`.
fn item_size(item: &LegendItem, measure: &dyn Fn(&str) -> egui::Vec2) -> egui::Vec2 {
    match item {
        LegendItem::Ramp { ends, title, .. } => {
            RampLayout::size(measure(title), [measure(&ends[0]), measure(&ends[1])])
        }
        LegendItem::Text(label) => measure(label),
        LegendItem::Swatch { label, .. } => {
            let text = measure(label);
            egui::vec2(SWATCH + 4.0 + text.x, SWATCH.max(text.y))
        }
        LegendItem::Chip { .. } => CHIP,
    }
}

/// The legend of a view of weight differences on the symmetry ramp (the weight symmetry and
/// weight difference views): the ramp titled `labels[0]`, the unmatched and unchecked markers'
/// swatches labelled `labels[1]` and `labels[2]`.
fn difference_legend<'a>(
    items: &mut Vec<LegendItem<'a>>,
    ramp: &'a dyn Fn(f32) -> [f32; 3],
    [title, unmatched, unchecked]: [&str; 3],
) {
    items.push(LegendItem::Ramp {
        color: ramp,
        ends: ["0".to_owned(), format!("≥ {SYMMETRY_FULL_SCALE}")],
        title: title.to_owned(),
    });
    for (value, label) in [(SYMMETRY_UNMATCHED, unmatched), (SYMMETRY_UNCHECKED, unchecked)] {
        items.push(LegendItem::Swatch {
            color: color32(symmetry_color(value)),
            label: label.to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether two rects share area (touching edges do not count).
    fn overlap(a: egui::Rect, b: egui::Rect) -> bool {
        a.intersect(b).is_positive()
    }

    /// Every rect a legend of `items` draws in `viewport`: each item's box, and for a ramp its
    /// title, end labels and bar instead.
    fn drawn_rects(
        viewport: egui::Rect,
        items: &[LegendItem],
        measure: &dyn Fn(&str) -> egui::Vec2,
    ) -> Vec<egui::Rect> {
        let sizes: Vec<egui::Vec2> = items.iter().map(|item| item_size(item, measure)).collect();
        let boxes = flow_layout(viewport, &sizes);
        let mut rects = Vec::new();
        for (item, rect) in items.iter().zip(boxes) {
            let Some(rect) = rect else { continue };
            if let LegendItem::Ramp { ends, title, .. } = item {
                let layout = RampLayout::within(rect, measure(title), [measure(&ends[0]), measure(&ends[1])]);
                for part in [layout.title, layout.ends[0], layout.ends[1], layout.bar] {
                    assert!(
                        rect.expand(0.01).contains_rect(part),
                        "{part:?} outside its box {rect:?}"
                    );
                    rects.push(part);
                }
            } else {
                rects.push(rect);
            }
        }
        rects
    }

    fn legends(ramp: &dyn Fn(f32) -> [f32; 3]) -> Vec<Vec<LegendItem<'_>>> {
        let text = |s: &str| s.to_owned();
        vec![
            // The symmetry view's legend, whose title was drawn over its end labels.
            vec![
                LegendItem::Ramp {
                    color: ramp,
                    ends: [text("0"), format!("≥ {SYMMETRY_FULL_SCALE}")],
                    title: text("weight difference from the mirror"),
                },
                LegendItem::Swatch {
                    color: Color32::RED,
                    label: text("no mirror vertex"),
                },
                LegendItem::Swatch {
                    color: Color32::GRAY,
                    label: text("not compared"),
                },
            ],
            vec![
                LegendItem::Ramp {
                    color: ramp,
                    ends: [text("1/4"), text("4")],
                    title: text("edge length posed / bind"),
                },
                LegendItem::Text(text("green: as bound; magenta: turned inside out")),
            ],
            vec![
                LegendItem::Ramp {
                    color: ramp,
                    ends: [text("0"), text("1")],
                    title: text("weight of mixamorig:LeftHandMiddle3"),
                },
                LegendItem::Text(text("grey: exactly 0")),
            ],
            (1..=8)
                .map(|n| LegendItem::Chip {
                    color: Color32::WHITE,
                    label: n.to_string(),
                })
                .collect(),
        ]
    }

    fn check_sizes(measure: &dyn Fn(&str) -> egui::Vec2) {
        let ramp = |t: f32| [t; 3];
        for items in legends(&ramp) {
            for (w, h) in [
                (1280.0, 720.0),
                (800.0, 600.0),
                (400.0, 300.0),
                (240.0, 500.0),
                (120.0, 400.0),
            ] {
                let viewport = egui::Rect::from_min_size(egui::pos2(30.0, 20.0), egui::vec2(w, h));
                let rects = drawn_rects(viewport, &items, measure);
                for (i, a) in rects.iter().enumerate() {
                    for b in &rects[i + 1..] {
                        assert!(!overlap(*a, *b), "{w}×{h}: {a:?} overlaps {b:?}");
                    }
                }
                // What is drawn is inside the viewport; in a roomy one, everything is drawn.
                for r in &rects {
                    assert!(viewport.contains_rect(*r), "{w}×{h}: {r:?} outside");
                }
                let drawn = flow_layout(
                    viewport,
                    &items.iter().map(|i| item_size(i, measure)).collect::<Vec<_>>(),
                );
                if w >= 800.0 {
                    assert!(drawn.iter().all(Option::is_some), "{w}×{h}: {drawn:?}");
                }
            }
        }
    }

    #[test]
    fn legend_parts_never_overlap_at_any_size_with_the_real_font() {
        let ctx = egui::Context::default();
        let _ = ctx.run_ui(egui::RawInput::default(), |ui| {
            let font = egui::FontId::proportional(12.0);
            let measure = |text: &str| {
                ui.ctx()
                    .fonts_mut(|f| f.layout_no_wrap(text.to_owned(), font.clone(), Color32::WHITE).size())
            };
            // The fix is for text wider than the bar: the symmetry title is.
            assert!(measure("weight difference from the mirror").x > RAMP_SIZE.x * 0.5);
            check_sizes(&measure);
        });
    }

    #[test]
    fn legend_parts_never_overlap_with_wide_text() {
        // Any font: a wide one, 11 points a character.
        check_sizes(&|text: &str| egui::vec2(11.0 * text.chars().count() as f32, 16.0));
    }

    #[test]
    fn flowing_boxes_wrap_upward_when_the_row_is_full() {
        let viewport = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(200.0, 200.0));
        let rects = flow_layout(viewport, &[egui::vec2(100.0, 20.0), egui::vec2(100.0, 10.0)]);
        // 12 + 100 + 10 + 100 > 188: the second box starts a row above the first.
        assert_eq!(
            rects[0],
            Some(egui::Rect::from_min_max(
                egui::pos2(12.0, 168.0),
                egui::pos2(112.0, 188.0)
            ))
        );
        assert_eq!(
            rects[1],
            Some(egui::Rect::from_min_max(
                egui::pos2(12.0, 148.0),
                egui::pos2(112.0, 158.0)
            ))
        );
        // A box wider than the viewport is not drawn.
        assert_eq!(flow_layout(viewport, &[egui::vec2(190.0, 10.0)]), [None]);
    }
}
