// Morph targets and skinning shared by every pipeline that skins (the mesh pipeline and the compute pass that
// checks it against the CPU). A pipeline that includes this file binds the joint palette at
// group 1: binding 0 as matrices (linear blend skinning), binding 1 as unit dual quaternions
// (dual quaternion skinning); and the per-vertex data at group 3: the morph targets in use, and each
// vertex's blend toward dual quaternion skinning (weight blended skinning). Composed after the skinning method codes SKIN_* that
// `render::gpu_data::skinning_wgsl` writes from the Rust ones.

// A scale along the mesh's axes (scale.xyz), then a rigid transform as a unit dual quaternion.
struct DualQuat {
    real: vec4<f32>,
    dual: vec4<f32>,
    scale: vec4<f32>,
}

@group(1) @binding(0) var<storage, read> palette: array<mat4x4<f32>>;
@group(1) @binding(1) var<storage, read> palette_dq: array<DualQuat>;

// The sum of the morph targets in use, weighted, per vertex, `stride` elements each (2, or 3
// where the targets move tangents): element stride·v is vertex v's position offset, the next one
// its normal offset, then its tangent offset (made by the pre-pass in morph.wgsl).
@group(3) @binding(0) var<storage, read> morph_deltas: array<vec4<f32>>;
// Per vertex, its blend from linear (0) to dual quaternion (1) skinning; vertices past its end
// read 0.
@group(3) @binding(1) var<storage, read> dqs_blend: array<f32>;

struct SkinnedVertex {
    position: vec3<f32>,
    normal: vec3<f32>,
}

const IDENTITY: mat4x4<f32> = mat4x4<f32>(
    vec4<f32>(1.0, 0.0, 0.0, 0.0),
    vec4<f32>(0.0, 1.0, 0.0, 0.0),
    vec4<f32>(0.0, 0.0, 1.0, 0.0),
    vec4<f32>(0.0, 0.0, 0.0, 1.0),
);

// Influence k (0..8) of a vertex: joint index and weight, with weight 0 for joints outside the
// palette (such influences are ignored).
fn influence(k: u32, j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> vec2<f32> {
    var j: u32;
    var w: f32;
    if (k < 4u) {
        j = j0[k];
        w = w0[k];
    } else {
        j = j1[k - 4u];
        w = w1[k - 4u];
    }
    if (j >= arrayLength(&palette)) {
        w = 0.0;
    }
    return vec2<f32>(bitcast<f32>(j), w);
}

// Weighted sum of the palette matrices of up to eight influences. A vertex with no weight at
// all keeps its bind position.
fn skin_matrix(j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> mat4x4<f32> {
    var m = mat4x4<f32>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    var total = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let jw = influence(k, j0, w0, j1, w1);
        if (jw.y != 0.0) {
            m += palette[bitcast<u32>(jw.x)] * jw.y;
            total += jw.y;
        }
    }
    if (total == 0.0) {
        return IDENTITY;
    }
    return m;
}

// Inverse transpose of the 3x3 part up to a positive factor (the cofactor matrix, sign-corrected
// for mirroring matrices): correct for non-uniform scale, no division. Normalize the result.
fn normal_matrix(m: mat4x4<f32>) -> mat3x3<f32> {
    let c0 = m[0].xyz;
    let c1 = m[1].xyz;
    let c2 = m[2].xyz;
    let cofactor = mat3x3<f32>(cross(c1, c2), cross(c2, c0), cross(c0, c1));
    let det_sign = select(1.0, -1.0, dot(c0, cross(c1, c2)) < 0.0);
    return cofactor * det_sign;
}

fn safe_normalize(v: vec3<f32>) -> vec3<f32> {
    return select(vec3<f32>(0.0), normalize(v), dot(v, v) > 0.0);
}

fn skin_lbs(position: vec3<f32>, normal: vec3<f32>, j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> SkinnedVertex {
    let m = skin_matrix(j0, w0, j1, w1);
    var out: SkinnedVertex;
    out.position = (m * vec4<f32>(position, 1.0)).xyz;
    out.normal = safe_normalize(normal_matrix(m) * normal);
    return out;
}

fn rotate_by(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v);
}

// Dual quaternion skinning. Each joint's quaternion is flipped into the hemisphere of the
// vertex's first influencing joint before blending, so that q and -q (the same rotation) do not
// cancel out. The joints' scales along the mesh's axes are blended linearly and applied first
// (normals divided by them: R S^-1 is the inverse transpose of R S).
fn skin_dqs(position: vec3<f32>, normal: vec3<f32>, j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> SkinnedVertex {
    var real = vec4<f32>(0.0);
    var dual = vec4<f32>(0.0);
    var scale = vec3<f32>(0.0);
    var total = 0.0;
    var pivot = vec4<f32>(0.0);
    var has_pivot = false;
    for (var k = 0u; k < 8u; k++) {
        let jw = influence(k, j0, w0, j1, w1);
        if (jw.y != 0.0) {
            let dq = palette_dq[bitcast<u32>(jw.x)];
            if (!has_pivot) {
                pivot = dq.real;
                has_pivot = true;
            }
            let w = select(jw.y, -jw.y, dot(dq.real, pivot) < 0.0);
            real += dq.real * w;
            dual += dq.dual * w;
            scale += dq.scale.xyz * jw.y;
            total += jw.y;
        }
    }
    var out: SkinnedVertex;
    let len = length(real);
    if (!has_pivot || len == 0.0) {
        out.position = position;
        out.normal = safe_normalize(normal);
        return out;
    }
    real /= len;
    dual /= len;
    let translation = 2.0 * (real.w * dual.xyz - dual.w * real.xyz + cross(real.xyz, dual.xyz));
    let s = select(vec3<f32>(1.0), scale / total, total != 0.0);
    out.position = rotate_by(real, position * s) + translation;
    out.normal = safe_normalize(rotate_by(real, normal / s));
    return out;
}

// Vertex `v`'s blend toward dual quaternion skinning (0 past the buffer's end).
fn dqs_blend_of(v: u32) -> f32 {
    if (v < arrayLength(&dqs_blend)) {
        return dqs_blend[v];
    }
    return 0.0;
}

// Weight blended skinning (`skin::blend`): the vertex's transform is (1 - b) LBS + b DQS, so
// the position is the lerp of the two; the normal the normalized lerp of the two normals.
fn skin_blended(v: u32, position: vec3<f32>, normal: vec3<f32>, j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> SkinnedVertex {
    var out = skin_lbs(position, normal, j0, w0, j1, w1);
    let b = dqs_blend_of(v);
    if (b > 0.0) {
        let dq = skin_dqs(position, normal, j0, w0, j1, w1);
        out.position = mix(out.position, dq.position, b);
        out.normal = safe_normalize(mix(out.normal, dq.normal, b));
    }
    return out;
}

// Vertex `v`, skinned by `method` (SKIN_*).
fn skin_vertex(method: u32, v: u32, position: vec3<f32>, normal: vec3<f32>, j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> SkinnedVertex {
    if (method == SKIN_LBS) {
        return skin_lbs(position, normal, j0, w0, j1, w1);
    }
    if (method == SKIN_DQS) {
        return skin_dqs(position, normal, j0, w0, j1, w1);
    }
    if (method == SKIN_BLENDED) {
        return skin_blended(v, position, normal, j0, w0, j1, w1);
    }
    var out: SkinnedVertex;
    out.position = position;
    out.normal = normal;
    return out;
}

// The tangent `tangent` of vertex `v` at `position` (skinned to `skinned`), moved as a direction
// under the vertex's own blended transform. That transform is affine in the position for every
// method (LBS, DQS and their blend), so skinning the point one tangent away and taking the
// skinned vertex off gives it exactly; the tangent is stretched to the position's size so that
// the difference keeps f32's precision (the CPU path's `TangentTips` does the same).
fn skin_tangent(method: u32, v: u32, position: vec3<f32>, skinned: vec3<f32>, tangent: vec3<f32>, normal: vec3<f32>, j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> vec3<f32> {
    let reach = max(length(position), 1.0);
    let tip = skin_vertex(method, v, position + tangent * reach, normal, j0, w0, j1, w1);
    return (tip.position - skinned) / reach;
}

// The bind-pose vertex `v` with its morph targets applied (before skinning), from deltas of
// `stride` elements a vertex; called only when a target is in use.
fn morph_vertex(v: u32, position: vec3<f32>, normal: vec3<f32>, stride: u32) -> SkinnedVertex {
    var out: SkinnedVertex;
    out.position = position;
    out.normal = normal;
    if (v >= arrayLength(&morph_deltas) / stride) {
        return out;
    }
    out.position += morph_deltas[stride * v].xyz;
    out.normal = safe_normalize(normal + morph_deltas[stride * v + 1u].xyz);
    return out;
}

// The bind tangent (xyz) of vertex `v` with its morph targets applied, where the deltas carry
// tangents (`stride` 3; as it is otherwise); normalized, as the CPU path's.
fn morph_tangent(v: u32, tangent: vec3<f32>, stride: u32) -> vec3<f32> {
    if (stride < 3u || v >= arrayLength(&morph_deltas) / stride) {
        return tangent;
    }
    return safe_normalize(tangent + morph_deltas[stride * v + 2u].xyz);
}
