//! Materials and textures changed or not, and the rig report's findings that appear or
//! disappear.

use crate::report::{Finding, RigReport, Severity};
use crate::rig::{Material, Rig, Texture};
use serde::Serialize;
use std::collections::HashMap;

/// A material that differs, or that only one file has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaterialChange {
    pub name: String,
    pub material_a: Option<usize>,
    pub material_b: Option<usize>,
    /// What differs, for people to read (`base color`, `added`, …).
    pub changes: Vec<String>,
}

/// The base color textures of a pair of matched materials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextureChange {
    pub material: String,
    pub texture_a: usize,
    pub texture_b: usize,
    pub size_a: [u32; 2],
    pub size_b: [u32; 2],
    /// Mean difference of the RGBA bytes as a fraction of full scale (`None`: sizes differ).
    pub mean_difference: Option<f32>,
    pub changed: bool,
}

/// A report finding only one file has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingChange {
    #[serde(skip)]
    pub severity: Severity,
    #[serde(rename = "severity")]
    pub level: &'static str,
    pub code: &'static str,
    pub message: String,
}

/// Smallest base color or emissive component change counted (one 8-bit step).
const COLOR_STEP: f32 = 1.0 / 255.0;

pub(super) fn compare_materials(
    a: &Rig,
    b: &Rig,
    thresholds: &super::Thresholds,
) -> (Vec<MaterialChange>, Vec<TextureChange>) {
    let pairs = match_materials(&a.materials, &b.materials);
    let mut changes = Vec::new();
    let mut textures = Vec::new();
    for (ma, mb) in pairs {
        let name = ma.map_or_else(
            || b.materials[mb.unwrap_or(0)].name.clone(),
            |m| a.materials[m].name.clone(),
        );
        let (Some(ia), Some(ib)) = (ma, mb) else {
            let changes_text = if ma.is_some() { "removed" } else { "added" };
            changes.push(MaterialChange {
                name,
                material_a: ma,
                material_b: mb,
                changes: vec![changes_text.to_string()],
            });
            continue;
        };
        let (x, y) = (&a.materials[ia], &b.materials[ib]);
        let what = material_changes(x, y);
        if let (Some(ta), Some(tb)) = (x.base_color_texture, y.base_color_texture)
            && let (Some(texture_a), Some(texture_b)) = (a.textures.get(ta), b.textures.get(tb))
        {
            let mean_difference = mean_difference(texture_a, texture_b);
            textures.push(TextureChange {
                material: name.clone(),
                texture_a: ta,
                texture_b: tb,
                size_a: [texture_a.width, texture_a.height],
                size_b: [texture_b.width, texture_b.height],
                mean_difference,
                changed: mean_difference.is_none_or(|d| d > thresholds.texture),
            });
        }
        if !what.is_empty() {
            changes.push(MaterialChange {
                name,
                material_a: ma,
                material_b: mb,
                changes: what,
            });
        }
    }
    (changes, textures)
}

/// Pairs of materials: by name when the name is unique in both files, then the rest by index.
fn match_materials(a: &[Material], b: &[Material]) -> Vec<(Option<usize>, Option<usize>)> {
    let unique = |list: &[Material], name: &str| list.iter().filter(|m| m.name == name).count() == 1;
    let mut b_of_a: Vec<Option<usize>> = a
        .iter()
        .map(|m| {
            (unique(a, &m.name) && unique(b, &m.name))
                .then(|| b.iter().position(|n| n.name == m.name))
                .flatten()
        })
        .collect();
    let mut taken = vec![false; b.len()];
    b_of_a.iter().flatten().for_each(|&j| taken[j] = true);
    for (i, found) in b_of_a.iter_mut().enumerate() {
        if found.is_none() && i < b.len() && !taken[i] {
            *found = Some(i);
            taken[i] = true;
        }
    }
    let mut pairs: Vec<_> = b_of_a.into_iter().enumerate().map(|(i, j)| (Some(i), j)).collect();
    pairs.extend((0..b.len()).filter(|&j| !taken[j]).map(|j| (None, Some(j))));
    pairs
}

/// What differs between two materials. Not the texture transform: the importer has applied it
/// to the texture coordinates, and encoders add one to dequantize them.
fn material_changes(x: &Material, y: &Material) -> Vec<String> {
    let mut what = Vec::new();
    let mut check = |differs: bool, label: &str| {
        if differs {
            what.push(label.to_string());
        }
    };
    check(
        (x.base_color - y.base_color).abs().max_element() > COLOR_STEP,
        "base color",
    );
    check(
        x.base_color_texture.is_some() != y.base_color_texture.is_some(),
        "base color texture",
    );
    check(x.double_sided != y.double_sided, "double sided");
    check(x.alpha_mode != y.alpha_mode, "alpha mode");
    check((x.alpha_cutoff - y.alpha_cutoff).abs() > COLOR_STEP, "alpha cutoff");
    check((x.emissive - y.emissive).abs().max_element() > COLOR_STEP, "emissive");
    check(x.unlit != y.unlit, "unlit");
    what
}

/// Mean absolute difference of two images' RGBA bytes, as a fraction of 255; `None` when their
/// sizes differ.
fn mean_difference(a: &Texture, b: &Texture) -> Option<f32> {
    if (a.width, a.height) != (b.width, b.height) {
        return None;
    }
    let (a, b) = (a.rgba8(), b.rgba8());
    if a.len() != b.len() {
        return None;
    }
    if a.is_empty() {
        return Some(0.0);
    }
    let total: u64 = a.iter().zip(b.iter()).map(|(&x, &y)| u64::from(x.abs_diff(y))).sum();
    Some(total as f32 / (a.len() as f32 * 255.0))
}

/// Findings of B's report that A's lacks, and the reverse. Findings are told apart by code,
/// the names of their nodes and their clip's name (not by message: vertex indices and counts
/// in it change when an encoder reorders vertices).
pub(super) fn compare_findings(a: &Rig, b: &Rig) -> (Vec<FindingChange>, Vec<FindingChange>) {
    let (report_a, report_b) = (RigReport::new(a), RigReport::new(b));
    let key = |rig: &Rig, f: &Finding| {
        let nodes: Vec<&str> = f
            .nodes
            .iter()
            .filter_map(|&n| rig.nodes.get(n))
            .map(|n| n.name.as_str())
            .collect();
        let clip = f.clip.and_then(|c| rig.clips.get(c)).map(|c| c.name.as_str());
        (f.code, nodes.join("\u{1f}"), clip.map(str::to_owned))
    };
    let only = |of: &RigReport, of_rig: &Rig, other: &RigReport, other_rig: &Rig| {
        let mut counts: HashMap<_, usize> = HashMap::new();
        for f in &other.findings {
            *counts.entry(key(other_rig, f)).or_insert(0) += 1;
        }
        of.findings
            .iter()
            .filter(|f| match counts.get_mut(&key(of_rig, f)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .map(|f| FindingChange {
                severity: f.severity,
                level: f.severity.label(),
                code: f.code.as_str(),
                message: f.message.clone(),
            })
            .collect::<Vec<_>>()
    };
    (only(&report_b, b, &report_a, a), only(&report_a, a, &report_b, b))
}
