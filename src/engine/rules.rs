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
