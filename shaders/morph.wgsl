// The morph pre-pass: adds one morph target in use, times its weight, into each vertex's delta
// (read by `morph_vertex` in skinning.wgsl). One dispatch per target in use, in target order,
// after the deltas are cleared: WebGPU orders the dispatches of a pass, and a target lists each
// vertex once, so no two invocations of a dispatch touch the same delta and no atomics are
// needed. Composed after MORPH_WORKGROUP, which `render::morph::morph_wgsl` writes from Rust.

// Every target of the primitive, sparse: entry e is elements 2e (position offset in xyz, the
// vertex in w as its u32 bits) and 2e + 1 (normal offset in xyz).
@group(0) @binding(0) var<storage, read> entries: array<vec4<f32>>;

struct Target {
    // The target's first entry and its entry count.
    first: u32,
    count: u32,
    weight: f32,
    pad: u32,
}

@group(0) @binding(1) var<uniform> morph_target: Target;
// Per vertex: position delta, normal delta (w unused).
@group(0) @binding(2) var<storage, read_write> deltas: array<vec4<f32>>;

@compute @workgroup_size(MORPH_WORKGROUP)
fn cs_main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= morph_target.count) {
        return;
    }
    let e = 2u * (morph_target.first + id.x);
    let position = entries[e];
    let v = 2u * bitcast<u32>(position.w);
    if (v + 1u >= arrayLength(&deltas)) {
        return;
    }
    deltas[v] += vec4<f32>(morph_target.weight * position.xyz, 0.0);
    deltas[v + 1u] += vec4<f32>(morph_target.weight * entries[e + 1u].xyz, 0.0);
}
