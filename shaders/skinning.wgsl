// Linear blend skinning, shared by every pipeline that skins (the mesh pipeline and the
// compute pass that checks it against the CPU). A pipeline that includes this file binds its
// joint palette at group 1, binding 0.

@group(1) @binding(0) var<storage, read> palette: array<mat4x4<f32>>;

struct SkinnedVertex {
    position: vec3<f32>,
    normal: vec3<f32>,
}

// Weighted sum of the palette matrices of up to eight influences. Joint indices outside the
// palette are ignored; a vertex with no weight at all keeps its bind position.
fn skin_matrix(j0: vec4<u32>, w0: vec4<f32>, j1: vec4<u32>, w1: vec4<f32>) -> mat4x4<f32> {
    let count = arrayLength(&palette);
    var m = mat4x4<f32>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    var total = 0.0;
    for (var i = 0u; i < 4u; i++) {
        if (w0[i] != 0.0 && j0[i] < count) {
            m += palette[j0[i]] * w0[i];
            total += w0[i];
        }
    }
    for (var i = 0u; i < 4u; i++) {
        if (w1[i] != 0.0 && j1[i] < count) {
            m += palette[j1[i]] * w1[i];
            total += w1[i];
        }
    }
    if (total == 0.0) {
        return mat4x4<f32>(
            vec4<f32>(1.0, 0.0, 0.0, 0.0),
            vec4<f32>(0.0, 1.0, 0.0, 0.0),
            vec4<f32>(0.0, 0.0, 1.0, 0.0),
            vec4<f32>(0.0, 0.0, 0.0, 1.0),
        );
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

fn skin_vertex(
    position: vec3<f32>,
    normal: vec3<f32>,
    j0: vec4<u32>,
    w0: vec4<f32>,
    j1: vec4<u32>,
    w1: vec4<f32>,
) -> SkinnedVertex {
    let m = skin_matrix(j0, w0, j1, w1);
    var out: SkinnedVertex;
    out.position = (m * vec4<f32>(position, 1.0)).xyz;
    let n = normal_matrix(m) * normal;
    out.normal = select(vec3<f32>(0.0), normalize(n), dot(n, n) > 0.0);
    return out;
}
