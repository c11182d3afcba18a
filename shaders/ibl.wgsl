// Image-based light, computed once per environment: the equirectangular map turned into a cube
// with mips, the specular cube prefiltered by roughness (GGX importance sampling, reading the
// source's mips by each sample's solid angle so that a few samples do not alias), the diffuse
// irradiance (cosine-weighted), and the split-sum BRDF table. Composed after the constants
// `render::ibl::wgsl_constants` writes. The f64 twins of the integrals are in `render::ibl`.

const PI: f32 = 3.141592653589793;

struct Params {
    // x: the output's size (texels per side), y: the number of samples, z: the source cube's
    // size, w: the source cube's mip count
    sizes: vec4<u32>,
    // x: the roughness of a specular level
    values: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: Params;

// The unit direction through texel `texel` (pixel centre) of cube face `face` of a cube of
// `size` texels: the face order and orientation of Vulkan, D3D and WebGPU.
fn cube_direction(face: u32, texel: vec2<f32>, size: f32) -> vec3<f32> {
    let uv = texel / size * 2.0 - 1.0;
    var d: vec3<f32>;
    switch face {
        case 0u: { d = vec3<f32>(1.0, -uv.y, -uv.x); }
        case 1u: { d = vec3<f32>(-1.0, -uv.y, uv.x); }
        case 2u: { d = vec3<f32>(uv.x, 1.0, uv.y); }
        case 3u: { d = vec3<f32>(uv.x, -1.0, -uv.y); }
        case 4u: { d = vec3<f32>(uv.x, -uv.y, 1.0); }
        default: { d = vec3<f32>(-uv.x, -uv.y, -1.0); }
    }
    return normalize(d);
}

// The i-th of n points of the Hammersley set.
fn hammersley(i: u32, n: u32) -> vec2<f32> {
    return vec2<f32>(f32(i) / f32(n), f32(reverseBits(i)) * 2.3283064365386963e-10);
}

// An orthonormal frame around unit `n`, as columns (tangent, bitangent, n).
fn frame_around(n: vec3<f32>) -> mat3x3<f32> {
    let up = select(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), abs(n.z) < 0.999);
    let t = normalize(cross(up, n));
    return mat3x3<f32>(t, cross(n, t), n);
}

// A half vector around +z drawn with GGX's density D(h)·(n·h) for α² `a2`.
fn ggx_half_vector(xi: vec2<f32>, a2: f32) -> vec3<f32> {
    let cos_theta = sqrt((1.0 - xi.y) / (1.0 + (a2 - 1.0) * xi.y));
    let sin_theta = sqrt(max(1.0 - cos_theta * cos_theta, 0.0));
    let phi = 2.0 * PI * xi.x;
    return vec3<f32>(sin_theta * cos(phi), sin_theta * sin(phi), cos_theta);
}

fn ggx_d(a2: f32, n_dot_h: f32) -> f32 {
    let q = n_dot_h * n_dot_h * (a2 - 1.0) + 1.0;
    return a2 / (PI * q * q);
}

// The mip of the source cube whose texels subtend `sample_solid_angle`.
fn source_lod(sample_solid_angle: f32) -> f32 {
    let size = f32(params.sizes.z);
    let texel_solid_angle = 4.0 * PI / (6.0 * size * size);
    let lod = 0.5 * log2(max(sample_solid_angle / texel_solid_angle, 1.0));
    return min(lod, f32(params.sizes.w - 1u));
}

// ---- equirectangular map to cube --------------------------------------------------------

@group(0) @binding(1) var equirect: texture_2d<f32>;
@group(0) @binding(2) var cube_out: texture_storage_2d_array<rgba16float, write>;

// Where direction `d` lands on the equirectangular map, in texels: u runs with the azimuth
// atan2(x, −z) from the left edge (azimuth −π) and v with the polar angle from +Y at the top.
fn equirect_texel(d: vec3<f32>, size: vec2<f32>) -> vec2<f32> {
    let u = 0.5 + atan2(d.x, -d.z) / (2.0 * PI);
    let v = acos(clamp(d.y, -1.0, 1.0)) / PI;
    return vec2<f32>(u, v) * size;
}

// Bilinear between the texel centres, wrapping around in azimuth and clamped at the poles.
fn equirect_bilinear(position: vec2<f32>) -> vec3<f32> {
    let size = vec2<i32>(textureDimensions(equirect));
    let p = position - 0.5;
    let base = vec2<i32>(floor(p));
    let f = p - floor(p);
    var sum = vec3<f32>(0.0);
    for (var k = 0; k < 4; k++) {
        let offset = vec2<i32>(k & 1, k >> 1u);
        var texel = base + offset;
        texel.x = ((texel.x % size.x) + size.x) % size.x;
        texel.y = clamp(texel.y, 0, size.y - 1);
        let w = select(1.0 - f.x, f.x, offset.x == 1) * select(1.0 - f.y, f.y, offset.y == 1);
        sum += w * textureLoad(equirect, texel, 0).rgb;
    }
    return sum;
}

@compute @workgroup_size(8, 8, 1)
fn to_cube(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = params.sizes.x;
    if (id.x >= size || id.y >= size) {
        return;
    }
    let dims = vec2<f32>(textureDimensions(equirect));
    // A texel of the cube's first level covers several of a large map's: averaged over a grid
    // of points within it.
    let grid = params.sizes.y;
    var sum = vec3<f32>(0.0);
    for (var i = 0u; i < grid; i++) {
        for (var j = 0u; j < grid; j++) {
            let at = vec2<f32>(id.xy) + (vec2<f32>(f32(i), f32(j)) + 0.5) / f32(grid);
            sum += equirect_bilinear(equirect_texel(cube_direction(id.z, at, f32(size)), dims));
        }
    }
    textureStore(cube_out, id.xy, id.z, vec4<f32>(sum / f32(grid * grid), 1.0));
}

// ---- a cube's next mip: the mean of each 2×2 ----------------------------------------------

@group(0) @binding(3) var finer: texture_2d_array<f32>;

@compute @workgroup_size(8, 8, 1)
fn downsample(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = params.sizes.x;
    if (id.x >= size || id.y >= size) {
        return;
    }
    let at = vec2<i32>(id.xy) * 2;
    let face = i32(id.z);
    let sum = textureLoad(finer, at, face, 0) + textureLoad(finer, at + vec2<i32>(1, 0), face, 0)
        + textureLoad(finer, at + vec2<i32>(0, 1), face, 0) + textureLoad(finer, at + vec2<i32>(1, 1), face, 0);
    textureStore(cube_out, id.xy, id.z, vec4<f32>(sum.rgb * 0.25, 1.0));
}

// ---- specular prefilter and irradiance ------------------------------------------------------

@group(0) @binding(4) var source: texture_cube<f32>;
@group(0) @binding(5) var source_sampler: sampler;

// One level of the specular cube: the environment seen through GGX lobes of the level's
// roughness around each texel's direction, with n = v = r (the split sum's assumption),
// weighted by n·l.
@compute @workgroup_size(8, 8, 1)
fn prefilter(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = params.sizes.x;
    if (id.x >= size || id.y >= size) {
        return;
    }
    let n = cube_direction(id.z, vec2<f32>(id.xy) + 0.5, f32(size));
    let roughness = params.values.x;
    if (roughness <= 0.0) {
        // A mirror: the source as it is, at the level of the same texel size.
        let lod = log2(f32(params.sizes.z) / f32(size));
        textureStore(cube_out, id.xy, id.z, vec4<f32>(textureSampleLevel(source, source_sampler, n, lod).rgb, 1.0));
        return;
    }
    let alpha = roughness * roughness;
    let a2 = alpha * alpha;
    let frame = frame_around(n);
    let count = params.sizes.y;
    var sum = vec3<f32>(0.0);
    var weight = 0.0;
    for (var i = 0u; i < count; i++) {
        let h_local = ggx_half_vector(hammersley(i, count), a2);
        let h = frame * h_local;
        let l = 2.0 * dot(n, h) * h - n;
        let n_dot_l = dot(n, l);
        if (n_dot_l > 0.0) {
            // With n = v, pdf(l) = D(h)(n·h) / (4 v·h) = D / 4.
            let pdf = ggx_d(a2, h_local.z) * 0.25;
            let lod = source_lod(1.0 / (f32(count) * pdf + 1e-6)) + 1.0;
            sum += textureSampleLevel(source, source_sampler, l, min(lod, f32(params.sizes.w - 1u))).rgb * n_dot_l;
            weight += n_dot_l;
        }
    }
    textureStore(cube_out, id.xy, id.z, vec4<f32>(sum / max(weight, 1e-6), 1.0));
}

// The irradiance cube, divided by π: the cosine-weighted mean of the environment over the
// hemisphere around each texel's direction, which a white Lambertian surface facing that way
// reflects.
@compute @workgroup_size(8, 8, 1)
fn irradiance(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = params.sizes.x;
    if (id.x >= size || id.y >= size) {
        return;
    }
    let n = cube_direction(id.z, vec2<f32>(id.xy) + 0.5, f32(size));
    let frame = frame_around(n);
    let count = params.sizes.y;
    var sum = vec3<f32>(0.0);
    for (var i = 0u; i < count; i++) {
        let xi = hammersley(i, count);
        let cos_theta = sqrt(1.0 - xi.y);
        let sin_theta = sqrt(xi.y);
        let phi = 2.0 * PI * xi.x;
        let l = frame * vec3<f32>(sin_theta * cos(phi), sin_theta * sin(phi), cos_theta);
        let pdf = max(cos_theta, 1e-3) / PI;
        let lod = source_lod(1.0 / (f32(count) * pdf));
        sum += textureSampleLevel(source, source_sampler, l, lod).rgb;
    }
    textureStore(cube_out, id.xy, id.z, vec4<f32>(sum / f32(count), 1.0));
}

// ---- the split-sum BRDF table ---------------------------------------------------------------

@group(0) @binding(6) var table_out: texture_storage_2d<rgba16float, write>;

// V = G / (4 |n·l| |n·v|) for the height-correlated Smith G of GGX (as `pbr.wgsl`).
fn lut_visibility(a2: f32, n_dot_l: f32, n_dot_v: f32) -> f32 {
    let ggx_v = n_dot_l * sqrt(n_dot_v * n_dot_v * (1.0 - a2) + a2);
    let ggx_l = n_dot_v * sqrt(n_dot_l * n_dot_l * (1.0 - a2) + a2);
    let sum = ggx_v + ggx_l;
    return select(0.0, 0.5 / sum, sum > 0.0);
}

// Texel (i, j) holds, for n·v = (i + ½)/size and perceptual roughness (j + ½)/size, the scale A
// and bias B of F0 in ∫ f_spec(v, l) (n·l) dl = F0·A + B, Schlick's Fresnel split out of the
// GGX specular lobe.
@compute @workgroup_size(8, 8, 1)
fn brdf_lut(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = params.sizes.x;
    if (id.x >= size || id.y >= size) {
        return;
    }
    let n_dot_v = (f32(id.x) + 0.5) / f32(size);
    let roughness = (f32(id.y) + 0.5) / f32(size);
    let alpha = roughness * roughness;
    let a2 = alpha * alpha;
    let v = vec3<f32>(sqrt(1.0 - n_dot_v * n_dot_v), 0.0, n_dot_v);
    let count = params.sizes.y;
    var a = 0.0;
    var b = 0.0;
    for (var i = 0u; i < count; i++) {
        let h = ggx_half_vector(hammersley(i, count), a2);
        let v_dot_h = dot(v, h);
        let l = 2.0 * v_dot_h * h - v;
        let n_dot_l = l.z;
        if (n_dot_l > 0.0 && v_dot_h > 0.0) {
            // f·(n·l)/pdf with pdf(l) = D (n·h) / (4 v·h): the D cancels.
            let g = lut_visibility(a2, n_dot_l, n_dot_v) * n_dot_l * 4.0 * v_dot_h / h.z;
            let t = 1.0 - v_dot_h;
            let fc = t * t * t * t * t;
            a += (1.0 - fc) * g;
            b += fc * g;
        }
    }
    textureStore(table_out, id.xy, vec4<f32>(a / f32(count), b / f32(count), 0.0, 1.0));
}

// ---- reading a cube back through the sampler (the tests' probe) -----------------------------

struct Lookup {
    // xyz: the direction, w: the level of detail
    at: vec4<f32>,
}

@group(0) @binding(7) var<storage, read> lookups: array<Lookup>;
@group(0) @binding(8) var<storage, read_write> found: array<vec4<f32>>;

@compute @workgroup_size(64, 1, 1)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= arrayLength(&lookups)) {
        return;
    }
    let at = lookups[id.x].at;
    found[id.x] = textureSampleLevel(source, source_sampler, at.xyz, at.w);
}
