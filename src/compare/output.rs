//! A comparison as text for a terminal (`rigscope diff`; its JSON is the serialized
//! [`RigDiff`] and [`PoseDiff`]).

use super::{ClipDiff, ClipStatus, JointChange, PoseDiff, RigDiff, SkeletonDiff, Thresholds, VertexRef, WeightsDiff};
use crate::rig::Rig;
use std::fmt::Write;
use std::path::Path;

fn vertex_label(v: &VertexRef) -> String {
    format!("{}:{}:{}", v.mesh, v.primitive, v.vertex)
}

/// Up to `top` items, then how many more there are.
fn listed(items: &[String], top: usize) -> String {
    let mut text = items.iter().take(top).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > top {
        let _ = write!(text, ", … ({} more)", items.len() - top);
    }
    text
}

impl RigDiff {
    /// The differences for a terminal: the files `a` and `b` (each its path and rig), then the
    /// skeleton, vertices, clips, materials and findings, at most `top` entries per list.
    pub fn to_text(&self, a: (&Path, &Rig), b: (&Path, &Rig), thresholds: &Thresholds, top: usize) -> String {
        let mut out = String::new();
        files_text(&mut out, self, a, b);
        skeleton_text(&mut out, &self.skeleton, top);
        vertices_text(&mut out, &self.weights, thresholds, top);
        clips_text(&mut out, &self.clips, top);
        materials_text(&mut out, self);
        findings_text(&mut out, self, top);
        out
    }
}

/// The two files, and the verdict with the sizes that positions are fractions of.
fn files_text(out: &mut String, diff: &RigDiff, (path_a, a): (&Path, &Rig), (path_b, b): (&Path, &Rig)) {
    let verdict = if diff.identical {
        "the same within the thresholds"
    } else {
        "different"
    };
    let _ = writeln!(
        out,
        "A: {} ({} joints, {} vertices, {} clips)",
        path_a.display(),
        a.joint_count(),
        a.vertex_count(),
        a.clips.len()
    );
    let _ = writeln!(
        out,
        "B: {} ({} joints, {} vertices, {} clips)",
        path_b.display(),
        b.joint_count(),
        b.vertex_count(),
        b.clips.len()
    );
    let _ = writeln!(
        out,
        "A and B are {verdict} (positions below are fractions of the rest pose's size {:.4}, of the bind pose's {:.4} for binds and vertices)",
        diff.size, diff.bind_size
    );
}

/// Joints added, removed, changed and re-parented, skins rebased, and the most changed joints.
fn skeleton_text(out: &mut String, s: &SkeletonDiff, top: usize) {
    let _ = writeln!(out, "\nSkeleton: {} joints matched", s.joints.len());
    for (label, names) in [
        ("added", &s.added),
        ("removed", &s.removed),
        ("bind changed", &s.bind_changed),
        ("rest changed", &s.rest_changed),
    ] {
        if !names.is_empty() {
            let _ = writeln!(out, "  {label} ({}): {}", names.len(), listed(names, top));
        }
    }
    for r in s.reparented.iter().take(top) {
        let name = |p: &Option<String>| p.clone().unwrap_or_else(|| "(root)".into());
        let _ = writeln!(
            out,
            "  re-parented: {} from {} to {}",
            r.joint,
            name(&r.from),
            name(&r.to)
        );
    }
    for r in &s.rebases {
        let _ = writeln!(
            out,
            "  B's skin {} carries one extra transform in {} of {} inverse bind matrices (scale {:.3e}): taken out",
            r.skin_b, r.agreeing, r.shared, r.scale
        );
    }
    let _ = writeln!(
        out,
        "  {:<28} {:>10} {:>9} {:>10} {:>9}",
        "most changed joints", "bind pos", "bind deg", "rest pos", "rest deg"
    );
    let moved = |j: &&JointChange| j.severity(1.0, 1.0) > 0.0;
    for j in s.joints.iter().filter(moved).take(top) {
        let _ = writeln!(
            out,
            "  {:<28} {:>10.2e} {:>9.3} {:>10.2e} {:>9.3}",
            j.joint, j.bind_position, j.bind_rotation_deg, j.rest_position, j.rest_rotation_deg
        );
    }
}

/// Vertices without a match, and those whose bind position or weights changed.
fn vertices_text(out: &mut String, w: &WeightsDiff, thresholds: &Thresholds, top: usize) {
    let _ = writeln!(
        out,
        "\nVertices: {} matched, {} without a match; largest bind position change {:.2e} ({} over {})",
        w.compared_vertices, w.unmatched_vertices, w.max_position_change, w.moved_count, thresholds.position
    );
    if !w.unmatched.is_empty() {
        let names: Vec<String> = w
            .unmatched
            .iter()
            .map(|u| format!("{} {}", u.file, vertex_label(&u.vertex)))
            .collect();
        let _ = writeln!(out, "  unmatched (file mesh:primitive:vertex): {}", listed(&names, top));
    }
    let _ = writeln!(
        out,
        "  weights: largest difference {:.4}, {} vertices over {}",
        w.max_difference, w.changed_count, thresholds.weight
    );
    for v in w.changed_vertices.iter().take(top) {
        let _ = writeln!(
            out,
            "    {} (B {}): {:.4}",
            vertex_label(&v.a),
            vertex_label(&v.b),
            v.difference
        );
    }
}

/// Each clip: whether it changed, by how much and where, and channels added or dropped.
fn clips_text(out: &mut String, clips: &[ClipDiff], top: usize) {
    let _ = writeln!(out, "\nClips:");
    for c in clips {
        let status = match c.status {
            ClipStatus::Same => "same",
            ClipStatus::Changed => "changed",
            ClipStatus::Added => "added (only in B)",
            ClipStatus::Removed => "removed (only in A)",
        };
        let _ = write!(out, "  {:<24} {status}", c.name);
        if let (Some(da), Some(db)) = (c.duration_a, c.duration_b) {
            let _ = write!(
                out,
                ": position {:.2e}, rotation {:.3}°",
                c.max_position_error, c.max_rotation_error_deg
            );
            let moved = c.max_position_error > 0.0 || c.max_rotation_error_deg > 0.0;
            if let (Some(joint), Some(time), true) = (&c.worst_joint, c.worst_time, moved) {
                let _ = write!(out, ", worst {joint} at {time:.3} s");
            }
            if da != db {
                let _ = write!(out, ", duration {da:.3} → {db:.3} s");
            }
        }
        let _ = writeln!(out);
        for (label, names) in [
            ("channels added", &c.channels_added),
            ("channels dropped", &c.channels_dropped),
        ] {
            if !names.is_empty() {
                let _ = writeln!(out, "    {label} ({}): {}", names.len(), listed(names, top));
            }
        }
    }
}

/// Changed materials and textures, when any.
fn materials_text(out: &mut String, diff: &RigDiff) {
    if !diff.materials.is_empty() || !diff.textures.is_empty() {
        let _ = writeln!(out, "\nMaterials:");
        for m in &diff.materials {
            let _ = writeln!(out, "  {}: {}", m.name, m.changes.join(", "));
        }
        for t in &diff.textures {
            let state = if t.changed { "changed" } else { "same" };
            let detail = match t.mean_difference {
                Some(d) => format!("mean pixel difference {d:.4}"),
                None => format!("size {}x{} → {}x{}", t.size_a[0], t.size_a[1], t.size_b[0], t.size_b[1]),
            };
            let _ = writeln!(out, "  texture of {}: {state} ({detail})", t.material);
        }
    }
}

/// Audit findings that only one of the files has.
fn findings_text(out: &mut String, diff: &RigDiff, top: usize) {
    for (label, findings) in [
        ("appear in B", &diff.findings_appeared),
        ("disappear from A", &diff.findings_disappeared),
    ] {
        if !findings.is_empty() {
            let _ = writeln!(out, "\nFindings that {label}:");
            for f in findings.iter().take(top) {
                let _ = writeln!(out, "  {} {}: {}", f.level, f.code, f.message);
            }
        }
    }
}

impl PoseDiff {
    /// The poses compared, a line per time, for a terminal; distances over `threshold` (a
    /// fraction of the rest pose's size) are marked.
    pub fn to_text(&self, threshold: f32) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nPoses of A's clip '{}' ({:.3} s) and B's '{}' ({:.3} s, posed {:+.3} s later): {} vertex pairs ({} of them matched at the clips' start; {} vertices in none), {} joints (distances in the files' units, then as fractions of the rest pose's size; over {threshold} marked *)",
            self.clip_a,
            self.duration_a,
            self.clip_b,
            self.duration_b,
            self.shift_b,
            self.compared_vertices,
            self.matched_at_start,
            self.unpaired_vertices,
            self.compared_joints
        );
        let mark = |relative: f32| if relative > threshold { "*" } else { "" };
        for at in &self.times {
            let vertex = match (&at.worst_vertex_a, &at.worst_vertex_b) {
                (Some(va), Some(vb)) => format!(" at {} (B {})", vertex_label(va), vertex_label(vb)),
                _ => String::new(),
            };
            let joint = at
                .worst_joint
                .as_deref()
                .map(|j| format!(" at {j}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:>8.3} s: vertices {:.3e} ({:.2e}){}{vertex}; joints {:.3e} ({:.2e}){}{joint}",
                at.time,
                at.vertex_distance,
                at.vertex_relative,
                mark(at.vertex_relative),
                at.joint_distance,
                at.joint_relative,
                mark(at.joint_relative),
            );
        }
        out
    }
}
