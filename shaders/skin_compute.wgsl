// Skins every vertex with the shared skinning function and writes the results for readback
// (prepend skinning.wgsl). vec3 data travels as vec4: array<vec3> would have a 16-byte stride.

struct SkinInfluences {
    joints0: vec4<u32>,
    joints1: vec4<u32>,
    weights0: vec4<f32>,
    weights1: vec4<f32>,
}

struct Params {
    // x: skinning method (SKIN_*), y: the morph deltas' elements per vertex, to apply morph
    // targets first (0: none)
    method: vec4<u32>,
}

@group(0) @binding(0) var<storage, read> in_positions: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> in_normals: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> influences: array<SkinInfluences>;
@group(0) @binding(3) var<storage, read_write> out_positions: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out_normals: array<vec4<f32>>;
@group(0) @binding(5) var<uniform> params: Params;
// The bind pose's tangents (zero where the primitive has none) and where they are moved.
@group(0) @binding(6) var<storage, read> in_tangents: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> out_tangents: array<vec4<f32>>;

@compute @workgroup_size(64)
fn cs_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&in_positions)) {
        return;
    }
    let s = influences[i];
    var base: SkinnedVertex;
    base.position = in_positions[i].xyz;
    base.normal = in_normals[i].xyz;
    if (params.method.y != 0u) {
        base = morph_vertex(i, base.position, base.normal, params.method.y);
    }
    let skinned = skin_vertex(params.method.x, i, base.position, base.normal, s.joints0, s.weights0, s.joints1, s.weights1);
    out_positions[i] = vec4<f32>(skinned.position, 1.0);
    out_normals[i] = vec4<f32>(skinned.normal, 0.0);
    var t = in_tangents[i];
    if (params.method.y != 0u) {
        t = vec4<f32>(morph_tangent(i, t.xyz, params.method.y), t.w);
    }
    let moved = skin_tangent(params.method.x, i, base.position, skinned.position, t.xyz, base.normal, s.joints0, s.weights0, s.joints1, s.weights1);
    out_tangents[i] = vec4<f32>(moved, t.w);
}
