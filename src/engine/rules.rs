//! The rules engines apply to a vertex's influences when they read a skinned glTF, one named
//! function each, with where the engine does it. A vertex's influences are a [`Row`]: up to
//! eight (joint, weight) slots, `JOINTS_0`/`WEIGHTS_0` then `JOINTS_1`/`WEIGHTS_1`, as the file
//! has them (Rigscope reads no later set; see [`crate::rig::Influences`]).
//!
//! The engines' sources were read at the versions listed in the research note the profiles
//! come from; "(inf)" marks a rule inferred from code that was not run, "(doc)" one taken from
//! the engine's documentation.

/// One vertex's influences, slot by slot: set 0 in slots 0–3, set 1 in slots 4–7.
pub type Row = [(u16, f32); 8];

/// The weight an emptied slot keeps.
const EMPTY: (u16, f32) = (0, 0.0);

/// A weight so small that a vertex holding only it is skinned by a matrix that is all but zero:
/// drawn at the world origin, as an engine that sums no matrix draws it. Rigscope's skinning
/// takes a row of zero weights as the identity (the Sample Renderer's rule), so a true zero
/// cannot say "at the origin".
pub const AT_ORIGIN: f32 = 1e-30;

/// The sum of the row's weights.
pub fn weight_sum(row: &Row) -> f32 {
    row.iter().map(|&(_, w)| w).sum()
}

/// Only `JOINTS_0`/`WEIGHTS_0` are read; set 1 is dropped.
///
/// - Unity glTFast: the schema has only `JOINTS_0`/`WEIGHTS_0`
///   (Runtime/Scripts/Schema/MeshPrimitive.cs:229-232).
/// - Unreal Engine 5: `FPrimitive::GetJointInfluences` reads set 0 into `FJointInfluence`
///   (GLTFCore Private/GLTFMesh.cpp).
/// - three.js: `ATTRIBUTES` maps only `WEIGHTS_0`/`JOINTS_0` (examples/jsm/loaders/GLTFLoader.js).
/// - Bevy: vertex_attributes.rs:310-319 maps only `Joints(0)`/`Weights(0)`.
/// - Filament: AssetLoader.cpp `createPrimitive` logs "Too many bone weights" for index > 0 and
///   skips it.
pub fn first_set_only(row: &mut Row) {
    row[4..].fill(EMPTY);
}

/// The `count` largest weights of set 0, sorted largest first, the others dropped.
///
/// Unity glTFast at run time when the Quality setting "Skin Weights" is below 4, and on editor
/// import with `count` 4: Jobs.cs:2049-2130 selection-sorts the top N (VertexBufferBones.cs:103-131).
/// Unreal: weights "sorted and re-normalized after culling to max influences" (GLTFMesh.cpp).
pub fn top_weights_sorted(row: &mut Row, count: usize) {
    // A stable sort by weight, largest first: equal weights keep the file's slot order, as a
    // selection sort that swaps only on a strictly larger weight does.
    let mut slots = [row[0], row[1], row[2], row[3]];
    slots.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (k, slot) in row[..4].iter_mut().enumerate() {
        *slot = if k < count { slots[k] } else { EMPTY };
    }
}

/// Each weight divided by the row's sum, where the sum is above zero; a zero row is left as it is.
///
/// Unity glTFast (`weightSum > 0` guard, Jobs.cs:2109); Godot 4 `_parse_meshes` ("if (total > 0)");
/// Unreal (GLTFMesh.cpp); Filament's `normalizeSkinningWeights` (ResourceLoader.h), which its
/// viewer turns on.
pub fn renormalize(row: &mut Row) {
    let sum = weight_sum(row);
    if sum > 0.0 {
        for slot in row.iter_mut() {
            slot.1 /= sum;
        }
    }
}

/// three.js `SkinnedMesh.normalizeSkinWeights`: divided by the Manhattan length (the sum of the
/// absolute weights); a zero row becomes (1, 0, 0, 0), the vertex following the joint in slot 0
/// "to do something reasonable".
pub fn renormalize_manhattan_or_first_joint(row: &mut Row) {
    let length: f32 = row.iter().map(|&(_, w)| w.abs()).sum();
    if length > 0.0 {
        for slot in row.iter_mut() {
            slot.1 /= length;
        }
    } else {
        row[0].1 = 1.0;
    }
}

/// A row of zero weights sums no matrix: the vertex is drawn at the world origin.
///
/// Bevy: skinning.wesl:21-38 sums four weighted matrices with no zero guard (bevy#22235: a
/// 12-influence rig with vertices stuck at (0,0,0)). Unity glTFast leaves zero rows as they are
/// (Jobs.cs:2109) and Unity's skinning then sums none (inf). Godot leaves them (inf: collapses).
/// Babylon.js gives NaN on its CPU path and a degenerate vertex on the GPU
/// (KhronosGroup/glTF-Blender-IO#308): drawn at the origin here.
pub fn zero_row_at_origin(row: &mut Row) {
    if weight_sum(row) == 0.0 {
        row[0] = (row[0].0, AT_ORIGIN);
    }
}

/// A joint named twice keeps the larger weight, not the sum.
///
/// Unreal: `GetJointInfluences` keeps the maximum for a repeated joint (GLTFCore GLTFMesh.cpp).
pub fn merge_repeated_joints_by_max(row: &mut Row) {
    for i in 0..row.len() {
        if row[i].1 == 0.0 {
            continue;
        }
        for j in i + 1..row.len() {
            if row[j].1 != 0.0 && row[j].0 == row[i].0 {
                row[i].1 = row[i].1.max(row[j].1);
                row[j] = EMPTY;
            }
        }
    }
}

/// A joint named twice keeps the weight of its last slot: each weight is written into the
/// joint's vertex group, replacing the one before.
///
/// Blender 3.4: io_scene_gltf2 blender/imp/gltf2_blender_mesh.py:328-331,
/// `vgs[j].add((vi,), w, 'REPLACE')` for each non-zero weight in slot order (run: a vertex
/// bound to j4 at .3 then .2 and j0 at .5 follows j4 at .2/.7; tools/engines).
pub fn repeated_joint_keeps_last(row: &mut Row) {
    for i in (0..row.len()).rev() {
        if row[i].1 == 0.0 {
            continue;
        }
        for j in 0..i {
            if row[j].1 != 0.0 && row[j].0 == row[i].0 {
                row[j] = EMPTY;
            }
        }
    }
}

/// The total weight below which Blender's armature leaves a vertex undeformed.
pub const BLENDER_LEAST_WEIGHT: f32 = 1e-4;

/// Blender's armature modifier divides a vertex's deformation by its total weight when that is
/// above 1e-4, and leaves the vertex where the import put it otherwise: at its bind position,
/// or at the origin for a vertex of no weight at all, which the importer's skinning into the
/// bind pose divides by a zero weight sum.
///
/// Blender 3.4: armature_deform.c `if (contrib > 0.0001f)`; io_scene_gltf2
/// gltf2_blender_mesh.py:535-564 `skin_into_bind_pose`, `skinning_mats /= weight_sums` (run:
/// both checked on tools/engines/fixture.py's vertices).
pub fn blender_armature_weights(row: &mut Row) {
    let sum = weight_sum(row);
    if sum == 0.0 {
        zero_row_at_origin(row);
    } else if sum <= BLENDER_LEAST_WEIGHT {
        row.iter_mut().for_each(|slot| slot.1 = 0.0);
    } else {
        renormalize(row);
    }
}

/// Weights stored in 8 bits: each rounded to a multiple of 1/255, the rounding's remainder
/// given to the largest so that they still sum to 255/255.
///
/// Unreal: "Use High Precision Skin Weights" (16-bit) defaults to false (doc,
/// SkeletalMeshBuildSettings); how the remainder is spread is not public (inf).
pub fn quantize_to_8_bits(row: &mut Row) {
    let sum = weight_sum(row);
    if sum <= 0.0 {
        return;
    }
    let mut units = [0i32; 8];
    for (unit, slot) in units.iter_mut().zip(row.iter()) {
        *unit = (slot.1 * 255.0).round() as i32;
    }
    let target = (sum * 255.0).round() as i32;
    // The first of equal largest weights, in slot order.
    let largest = (0..8).fold(0, |best, k| if row[k].1 > row[best].1 { k } else { best });
    units[largest] += target - units.iter().sum::<i32>();
    for (slot, unit) in row.iter_mut().zip(units) {
        slot.1 = unit.max(0) as f32 / 255.0;
    }
}

/// Joints at or past `limit` in the skin fall outside the engine's matrix array: their
/// influences add nothing (inf).
///
/// Bevy on WebGL2 binds `array<mat4x4<f32>, 256u>` (bevy_pbr render/mesh_types.wesl:30-31).
pub fn joints_past_cap_add_nothing(row: &mut Row, limit: usize) {
    for slot in row.iter_mut() {
        if usize::from(slot.0) >= limit {
            *slot = EMPTY;
        }
    }
}

/// A node given as a `matrix`, as the Sample Renderer reads it: the scale is the length of each
/// axis (never negative), the rotation the quaternion of the axes divided by it, found by
/// gl-matrix's `mat4.getRotation` and normalized. A mirror (a negative determinant) has no
/// positive-scale rotation, so the quaternion comes from an improper matrix and the mirror is
/// lost.
///
/// Sample Renderer: source/gltf/node.js `applyMatrix` (`mat4.getScaling`, the columns divided
/// by it, `mat4.getRotation`, `quat.normalize`); gl-matrix mat4.js `getRotation`.
pub fn sample_renderer_matrix_trs(matrix: glam::Mat4) -> crate::rig::Trs {
    let axes = [
        matrix.x_axis.truncate(),
        matrix.y_axis.truncate(),
        matrix.z_axis.truncate(),
    ];
    let scale = glam::Vec3::new(axes[0].length(), axes[1].length(), axes[2].length());
    // `m[c][r]`: column c, row r of the unit-axis matrix, as gl-matrix indexes `mat[4c + r]`.
    let unit = |c: usize| if scale[c] > 0.0 { axes[c] / scale[c] } else { axes[c] };
    let m = [unit(0), unit(1), unit(2)];
    let trace = m[0].x + m[1].y + m[2].z;
    let (x, y, z, w);
    if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        (w, x, y, z) = (
            0.25 * s,
            (m[1].z - m[2].y) / s,
            (m[2].x - m[0].z) / s,
            (m[0].y - m[1].x) / s,
        );
    } else if m[0].x > m[1].y && m[0].x > m[2].z {
        let s = (1.0 + m[0].x - m[1].y - m[2].z).sqrt() * 2.0;
        (w, x, y, z) = (
            (m[1].z - m[2].y) / s,
            0.25 * s,
            (m[0].y + m[1].x) / s,
            (m[2].x + m[0].z) / s,
        );
    } else if m[1].y > m[2].z {
        let s = (1.0 + m[1].y - m[0].x - m[2].z).sqrt() * 2.0;
        (w, x, y, z) = (
            (m[2].x - m[0].z) / s,
            (m[0].y + m[1].x) / s,
            0.25 * s,
            (m[1].z + m[2].y) / s,
        );
    } else {
        let s = (1.0 + m[2].z - m[0].x - m[1].y).sqrt() * 2.0;
        (w, x, y, z) = (
            (m[0].y - m[1].x) / s,
            (m[2].x + m[0].z) / s,
            (m[1].z + m[2].y) / s,
            0.25 * s,
        );
    }
    crate::rig::Trs {
        translation: matrix.w_axis.truncate(),
        rotation: glam::Quat::from_vec4(glam::Vec4::new(x, y, z, w).normalize_or(glam::Vec4::W)),
        scale,
    }
}

/// A node whose transform mirrors (an odd number of negative scale factors), as Filament's
/// animator keeps it: each tick it decomposes the node's matrix with all three scales negated
/// when the determinant is negative, then writes the channels it has over that. The rest matrix
/// is unchanged, but a clip that turns the node without scaling it combines its rotation with
/// the negated scale: a joint scaled (-1, 1, 1) is drawn turned 180° about X (inf).
///
/// Filament: libs/gltfio/src/Animator.cpp `applyAnimation` with `decomposeMatrix`
/// (libs/gltfio/src/math.h), which negates the scale when the determinant is below zero.
pub fn filament_mirror_as_negated_scale(rest: &mut crate::rig::Trs) {
    let s = rest.scale;
    if s.x * s.y * s.z >= 0.0 {
        return;
    }
    // R · diag(s) = (R · Rx(180°)) · diag(-|s|) when exactly one factor is negative; with
    // three negative ones the scale is already -|s|.
    let negative = s.cmplt(glam::Vec3::ZERO);
    if negative.bitmask().count_ones() == 1 {
        let turn_axis = glam::Vec3::select(negative, glam::Vec3::ONE, glam::Vec3::ZERO);
        rest.rotation = (rest.rotation * glam::Quat::from_axis_angle(turn_axis, std::f32::consts::PI)).normalize();
    }
    rest.scale = -s.abs();
}

/// Morph target offsets stored as 16-bit floats: each rounded to the nearest `f16`, so that
/// large offsets move in steps (4 units at 5000).
///
/// Sample Renderer: primitive.js `_createDataTextureArray` uploads targets as RGBA16F
/// ("16-bit half-precision").
pub fn morph_offsets_in_half_floats(target: &mut crate::rig::MorphTarget) {
    let round = |v: &mut glam::Vec3| {
        *v = glam::Vec3::from(v.to_array().map(|c| half::f16::from_f32(c).to_f32()));
    };
    target.position_offsets.iter_mut().for_each(round);
    target.normal_offsets.iter_mut().for_each(round);
    target.tangent_offsets.iter_mut().for_each(round);
}

/// Targets past the engine's cap are left out: they move nothing whatever their weight.
///
/// Filament: `targetsCount > MAX_MORPH_TARGETS` (256) warns and truncates (AssetLoader.cpp).
/// Sample Renderer: primitive.js `initGl` uses only the targets whose attributes fit
/// `MAX_ARRAY_TEXTURE_LAYERS` ("Only N of M are used").
pub fn morph_targets_past_cap_left_out(targets: &mut [crate::rig::MorphTarget], limit: usize) {
    for target in targets.iter_mut().skip(limit) {
        *target = crate::rig::MorphTarget::default();
    }
}

/// The largest turn between two keys written for [`rotation_keys_blended_by_component`]: keys
/// 1° apart follow the normalized straight blend of a 90° turn within 1e-5 rad (measured: the
/// slerp between them is timed differently along the same arc).
const COMPONENT_BLEND_STEP_RADIANS: f32 = std::f32::consts::PI / 180.0;

/// Linear rotation keys blended component by component and normalized (nlerp), not along the
/// arc (slerp): between keys 90° apart the two part by up to 0.92°. Written as keys close
/// enough that Rigscope's slerp between them follows the normalized blend.
///
/// Blender 3.4: io_scene_gltf2 gltf2_blender_animation_node.py makes one F-curve per quaternion
/// component with the sampler's interpolation, after flipping antipodal neighbours; the pose
/// normalizes the quaternion (run: SimpleSkin at 0.4 s, 1.06e-3 of the height off under slerp).
pub fn rotation_keys_blended_by_component(channel: &mut crate::rig::Channel) {
    use crate::rig::{Interpolation, Property};
    if channel.property != Property::Rotation
        || channel.interpolation != Interpolation::Linear
        || channel.times.len() != channel.values.len()
    {
        return;
    }
    let mut times = Vec::with_capacity(channel.times.len());
    let mut values = Vec::with_capacity(channel.values.len());
    let mut previous: Option<glam::Vec4> = None;
    for k in 0..channel.times.len() {
        // Each key on the side of the one before, as the importer flips them.
        let mut key = channel.values[k];
        if let Some(before) = previous
            && before.dot(key) < 0.0
        {
            key = -key;
        }
        if let Some(before) = previous {
            let (t0, t1) = (channel.times[k - 1], channel.times[k]);
            let turn = 2.0 * before.normalize().dot(key.normalize()).abs().min(1.0).acos();
            let steps = ((turn / COMPONENT_BLEND_STEP_RADIANS).ceil() as usize).clamp(1, 512);
            for step in 1..steps {
                let s = step as f32 / steps as f32;
                times.push(t0 + (t1 - t0) * s);
                values.push(before.lerp(key, s).normalize_or(glam::Vec4::W));
            }
        }
        times.push(channel.times[k]);
        values.push(key);
        previous = Some(key);
    }
    channel.times = times;
    channel.values = values;
}
