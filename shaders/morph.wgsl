// The morph pre-pass: adds one morph target in use, times its weight, into each vertex's delta
// (read by `morph_vertex` in skinning.wgsl). One dispatch per target in use, in target order,
// after the deltas are cleared: WebGPU orders the dispatches of a pass, and a target lists each
// vertex once, so no two invocations of a dispatch touch the same delta and no atomics are
// needed. Composed after MORPH_WORKGROUP, which `render::morph::morph_wgsl` writes from Rust.

// Every target of the primitive, sparse: entry e is elements s·e (position offset in xyz, the
// vertex in w as its u32 bits), s·e + 1 (normal offset in xyz) and, when s is 3, s·e + 2
// (tangent offset in xyz), where s is the target's `stride`.
@group(0) @binding(0) var<storage, read> entries: array<vec4<f32>>;

struct Target {
    // The target's first entry and its entry count.
    first: u32,
    count: u32,
    weight: f32,
    // vec4s per entry and per vertex delta: 2, or 3 where the primitive's targets move tangents.
    stride: u32,
}

@group(0) @binding(1) var<uniform> morph_target: Target;
// Per vertex, `stride` vec4s: position delta, normal delta, tangent delta (w unused).
@group(0) @binding(2) var<storage, read_write> deltas: array<vec4<f32>>;

@compute @workgroup_size(MORPH_WORKGROUP)
fn cs_main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= morph_target.count) {
        return;
    }
    let stride = morph_target.stride;
    let e = stride * (morph_target.first + id.x);
    let position = entries[e];
    let v = stride * bitcast<u32>(position.w);
    if (v + stride > arrayLength(&deltas)) {
        return;
    }
    deltas[v] += vec4<f32>(morph_target.weight * position.xyz, 0.0);
    deltas[v + 1u] += vec4<f32>(morph_target.weight * entries[e + 1u].xyz, 0.0);
    if (stride == 3u) {
        deltas[v + 2u] += vec4<f32>(morph_target.weight * entries[e + 2u].xyz, 0.0);
    }
}
