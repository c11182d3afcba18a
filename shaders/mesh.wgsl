// Lit, textured mesh, skinned in the vertex shader, with debug views that color fragments by
// skinning data. Composed after the constants written from Rust (`render::views::wgsl_prelude`:
// VIEW_*, FLAG_*, colors and scales; the `render::material` DRAW_* flags; the `render::pbr`
// MAP_*, TONEMAP_* and shading constants), skinning.wgsl, ramps.wgsl and pbr.wgsl.

struct Frame {
    view_proj: mat4x4<f32>,
    camera_position: vec4<f32>,
    light_direction: vec4<f32>,
    // x: view flags (FLAG_*), y: the shaded view's tone curve (TONEMAP_*), z: what lights
    // the shaded view (LIGHT_*)
    view: vec4<u32>,
    // x: the shaded view's exposure as a factor (2^EV)
    tone: vec4<f32>,
}

struct Draw {
    model: mat4x4<f32>,
    base_color: vec4<f32>,
    // xyz: emitted color, w: alpha cutoff (with DRAW_ALPHA_MASK)
    material: vec4<f32>,
    // x: 1 to skin here with the pipeline's `skinning` method (0 for a rigid draw, or when the
    // vertices arrive skinned), y: the selected joint's index in this mesh's skin (or none),
    // z: the morph deltas' elements per vertex, to apply morph targets here (2, or 3 with
    // tangents; 0 when none is in use or the vertices arrive morphed and skinned),
    // w: DRAW_* flags
    skin: vec4<u32>,
    // x: the uniform scale the skin's palette has in the rest pose, which the deformation view
    // divides out (1 for unskinned draws)
    bind: vec4<f32>,
    // An onion-skin ghost's tint (xyz) and opacity (w), read with DRAW_GHOST
    ghost: vec4<f32>,
    // x metallic, y roughness, z normal scale, w occlusion strength
    pbr: vec4<f32>,
    // x: the MAP_* textures sampled, and (<< MAP_SET1_SHIFT) those that read TEXCOORD_1
    maps: vec4<u32>,
    // The dielectric's specular layer before its textures: xyz its F0 colour, w its strength
    specular: vec4<f32>,
    // Each texture's KHR_texture_transform as the two rows of a 3×2 matrix (xyz), in the order
    // metallic-roughness, normal, occlusion, emissive, specular, specular colour
    uv_rows: array<vec4<f32>, MAP_UV_ROWS>,
}

// The view mode (VIEW_*), fixed per pipeline: the driver then compiles only the mode's own
// code, which on a software adapter takes a fraction of the time of all modes together.
override view_mode: u32 = VIEW_SHADED;

// The skinning method (SKIN_*) of the draws that skin here, fixed per pipeline for the same
// reason: the other methods' code is left out (SKIN_NONE leaves out all of it).
override skinning: u32 = SKIN_LBS;

// Any value no log2 of a ratio reaches.
const NO_DEFORMATION: f32 = -1e30;

@group(0) @binding(0) var<uniform> frame: Frame;
// The prefiltered environment (`render::ibl`): specular radiance by roughness in its levels,
// irradiance over π, and the split-sum table (n·v across, roughness down).
@group(0) @binding(1) var specular_map: texture_cube<f32>;
@group(0) @binding(2) var irradiance_map: texture_cube<f32>;
@group(0) @binding(3) var brdf_table: texture_2d<f32>;
@group(0) @binding(4) var environment_sampler: sampler;
@group(2) @binding(0) var<uniform> draw: Draw;
@group(2) @binding(1) var base_color_texture: texture_2d<f32>;
@group(2) @binding(2) var base_color_sampler: sampler;
@group(2) @binding(3) var metallic_roughness_texture: texture_2d<f32>;
@group(2) @binding(4) var normal_texture: texture_2d<f32>;
@group(2) @binding(5) var occlusion_texture: texture_2d<f32>;
@group(2) @binding(6) var emissive_texture: texture_2d<f32>;
// Per vertex two entries, read when `draw.maps.x` is not 0: TEXCOORD_0 (xy) and TEXCOORD_1 (zw)
// as stored, then the tangent (w: the bitangent's sign).
@group(2) @binding(7) var<storage, read> surface: array<vec4<f32>>;
@group(2) @binding(8) var specular_texture: texture_2d<f32>;
@group(2) @binding(9) var specular_color_texture: texture_2d<f32>;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) joints0: vec4<u32>,
    @location(4) weights0: vec4<f32>,
    @location(5) joints1: vec4<u32>,
    @location(6) weights1: vec4<f32>,
    @location(7) color: vec4<f32>,
    // The bind-pose position (the same as `position` unless the vertices arrive skinned).
    @location(8) rest_position: vec3<f32>,
    // The symmetry and weight-difference views' per-vertex value: a weight difference or a
    // SYMMETRY_* marker.
    @location(9) symmetry: f32,
    // The bind-pose normal (read by the deformation view).
    @location(10) rest_normal: vec3<f32>,
    @builtin(vertex_index) index: u32,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) world_normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    // Per-vertex debug value: a weight, a color, a count, an error, the bind position in world
    // units or a symmetry value, by view mode.
    @location(3) debug: vec3<f32>,
    @location(4) color: vec4<f32>,
    // The bind-pose normal in world space (the deformation view).
    @location(5) rest_normal: vec3<f32>,
    // TEXCOORD_0 (xy) and TEXCOORD_1 (zw), for the textures other than the base color.
    @location(6) uv_sets: vec4<f32>,
    // The tangent in world space, and the bitangent's sign there.
    @location(7) tangent: vec4<f32>,
}

fn debug_value(v: VertexIn) -> vec3<f32> {
    let mode = view_mode;
    if (mode == VIEW_DEFORMATION) {
        return (draw.model * vec4<f32>(v.rest_position * draw.bind.x, 1.0)).xyz;
    }
    if (mode == VIEW_SYMMETRY || mode == VIEW_WEIGHT_DIFFERENCE || mode == VIEW_ENGINE_DISTANCE) {
        return vec3<f32>(v.symmetry, 0.0, 0.0);
    }
    if (mode == VIEW_DQS_BLEND) {
        return vec3<f32>(dqs_blend_of(v.index), 0.0, 0.0);
    }
    var selected = 0.0;
    var blended = vec3<f32>(0.0);
    var count = 0.0;
    var total = 0.0;
    var strongest = -1.0;
    var dominant = vec3<f32>(0.0);
    for (var k = 0u; k < 8u; k++) {
        var j: u32;
        var w: f32;
        if (k < 4u) {
            j = v.joints0[k];
            w = v.weights0[k];
        } else {
            j = v.joints1[k - 4u];
            w = v.weights1[k - 4u];
        }
        total += w;
        if (w != 0.0) {
            count += 1.0;
            blended += joint_color(j) * w;
            if (w > strongest) {
                strongest = w;
                dominant = joint_color(j);
            }
            if (j == draw.skin.y) {
                selected += w;
            }
        }
    }
    if (mode == VIEW_WEIGHTS) {
        return vec3<f32>(selected, 0.0, 0.0);
    }
    if (mode == VIEW_JOINTS) {
        return select(blended, dominant, (frame.view.x & FLAG_DOMINANT_JOINT) != 0u);
    }
    if (mode == VIEW_INFLUENCES) {
        return vec3<f32>(count, 0.0, 0.0);
    }
    if (mode == VIEW_WEIGHT_ERROR) {
        let rigid = (draw.skin.w & DRAW_RIGID) != 0u;
        return vec3<f32>(select(abs(total - 1.0), 0.0, rigid), 0.0, 0.0);
    }
    return vec3<f32>(0.0);
}

fn transform_vertex(v: VertexIn) -> VertexOut {
    var base: SkinnedVertex;
    base.position = v.position;
    base.normal = v.normal;
    if (draw.skin.z != 0u) {
        base = morph_vertex(v.index, v.position, v.normal, draw.skin.z);
    }
    var skinned = base;
    if (draw.skin.x != 0u) {
        skinned = skin_vertex(skinning, v.index, base.position, base.normal, v.joints0, v.weights0, v.joints1, v.weights1);
    }
    let world = draw.model * vec4<f32>(skinned.position, 1.0);
    var out: VertexOut;
    out.clip = frame.view_proj * world;
    out.world_position = world.xyz;
    out.world_normal = normal_matrix(draw.model) * skinned.normal;
    out.uv = v.uv;
    out.debug = debug_value(v);
    out.color = v.color;
    out.rest_normal = normal_matrix(draw.model) * v.rest_normal;
    out.uv_sets = vec4<f32>(0.0);
    out.tangent = vec4<f32>(0.0);
    let tangent_frame = (frame.view.x & (FLAG_TANGENT | FLAG_BITANGENT)) != 0u;
    if ((view_mode == VIEW_SHADED || (view_mode == VIEW_NORMALS && tangent_frame)) && draw.maps.x != 0u) {
        out.uv_sets = surface[2u * v.index];
        var t = surface[2u * v.index + 1u];
        if (draw.skin.z != 0u) {
            t = vec4<f32>(morph_tangent(v.index, t.xyz, draw.skin.z), t.w);
        }
        if (draw.skin.x != 0u && (draw.maps.x & MAP_NORMAL) != 0u) {
            let moved = skin_tangent(skinning, v.index, base.position, skinned.position, t.xyz, base.normal, v.joints0, v.weights0, v.joints1, v.weights1);
            t = vec4<f32>(moved, t.w);
        }
        let m = mat3x3<f32>(draw.model[0].xyz, draw.model[1].xyz, draw.model[2].xyz);
        // A mirroring model turns the bitangent's side: cross(M n, M t) = −M (n × t) there.
        out.tangent = vec4<f32>(m * t.xyz, t.w * select(1.0, -1.0, determinant(m) < 0.0));
    }
    return out;
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    return transform_vertex(v);
}

// log2 of posed over bind, of the triangle under the fragment: its area ratio, or with
// `stretch` its principal stretch farther from 1; from the screen-space derivatives of its posed
// and bind positions (both linear across the triangle, so the ratio is the triangle's own).
// NO_DEFORMATION where the bind triangle is too thin to measure. Must run in uniform control
// flow.
fn log2_deformation(posed: vec3<f32>, bind: vec3<f32>, stretch: bool) -> f32 {
    let a = dpdx(posed);
    let b = dpdy(posed);
    let c = dpdx(bind);
    let d = dpdy(bind);
    let bind_normal = cross(c, d);
    let gb = vec3<f32>(dot(c, c), dot(c, d), dot(d, d));
    // |c × d|² = |c|²|d|² sin²: under 1e-8 the triangle is a sliver edge-on to the screen.
    let bind_area_sq = dot(bind_normal, bind_normal);
    if (!(bind_area_sq > 1e-8 * gb.x * gb.z)) {
        return NO_DEFORMATION;
    }
    let posed_normal = cross(a, b);
    let area_sq = dot(posed_normal, posed_normal) / bind_area_sq;
    if (!stretch) {
        return 0.5 * log2(area_sq);
    }
    // The stretches squared are the eigenvalues of Gb⁻¹·Gp, Gb and Gp the Gram matrices of the
    // two derivative vectors; their product is the area ratio squared.
    let gp = vec3<f32>(dot(a, a), dot(a, b), dot(b, b));
    let half_trace = 0.5 * (gb.z * gp.x - 2.0 * gb.y * gp.y + gb.x * gp.z) / bind_area_sq;
    let root = sqrt(max(half_trace * half_trace - area_sq, 0.0));
    let largest_sq = half_trace + root;
    let smallest_sq = max(half_trace - root, 0.0);
    return 0.5 * log2(select(smallest_sq, largest_sq, largest_sq * smallest_sq >= 1.0));
}

// Whether the triangle under the fragment is turned inside out: its posed geometric normal and
// its vertices' skinned normals disagree in side while its bind ones agree. Both geometric
// normals come from the same screen-space derivatives, so the screen's handedness cancels
// out. Must run in uniform control flow.
fn is_flipped(posed: vec3<f32>, bind: vec3<f32>, posed_normal: vec3<f32>, bind_normal: vec3<f32>) -> bool {
    let posed_side = dot(cross(dpdx(posed), dpdy(posed)), posed_normal);
    let bind_side = dot(cross(dpdx(bind), dpdy(bind)), bind_normal);
    return posed_side * bind_side < 0.0;
}

// The coordinates texture `map` (MAP_*; `slot` its place in `draw.uv_rows`) reads: its set,
// moved by its transform.
fn map_uv(in: VertexOut, map: u32, slot: u32) -> vec2<f32> {
    let set1 = ((draw.maps.x >> MAP_SET1_SHIFT) & map) != 0u;
    let uv = vec3<f32>(select(in.uv_sets.xy, in.uv_sets.zw, set1), 1.0);
    return vec2<f32>(dot(draw.uv_rows[2u * slot].xyz, uv), dot(draw.uv_rows[2u * slot + 1u].xyz, uv));
}

// What the material's textures say at the fragment, sampled where the draw has them: x
// metallic, y roughness, z occlusion (1 none), and the emitted color.
struct MaterialSample {
    pbr: vec3<f32>,
    emissive: vec3<f32>,
    // The tangent-space normal (unit z where there is no normal map).
    normal: vec3<f32>,
    // The dielectric's specular layer: F0 (xyz) and F90 (w).
    dielectric: vec4<f32>,
}

fn sample_material(in: VertexOut) -> MaterialSample {
    let maps = draw.maps.x;
    var out: MaterialSample;
    out.pbr = vec3<f32>(draw.pbr.x, draw.pbr.y, 1.0);
    out.emissive = draw.material.xyz;
    out.normal = vec3<f32>(0.0, 0.0, 1.0);
    if ((maps & MAP_METALLIC_ROUGHNESS) != 0u) {
        let mr = textureSample(metallic_roughness_texture, base_color_sampler, map_uv(in, MAP_METALLIC_ROUGHNESS, 0u));
        out.pbr.x *= mr.b;
        out.pbr.y *= mr.g;
    }
    if ((maps & MAP_NORMAL) != 0u) {
        let t = textureSample(normal_texture, base_color_sampler, map_uv(in, MAP_NORMAL, 1u)).xyz * 2.0 - 1.0;
        out.normal = vec3<f32>(t.xy * draw.pbr.z, t.z);
    }
    if ((maps & MAP_OCCLUSION) != 0u) {
        let ao = textureSample(occlusion_texture, base_color_sampler, map_uv(in, MAP_OCCLUSION, 2u)).r;
        out.pbr.z = 1.0 + draw.pbr.w * (ao - 1.0);
    }
    if ((maps & MAP_EMISSIVE) != 0u) {
        out.emissive *= textureSample(emissive_texture, base_color_sampler, map_uv(in, MAP_EMISSIVE, 3u)).rgb;
    }
    var strength = draw.specular.w;
    var color = draw.specular.xyz;
    if ((maps & MAP_SPECULAR) != 0u) {
        strength *= textureSample(specular_texture, base_color_sampler, map_uv(in, MAP_SPECULAR, 4u)).a;
    }
    if ((maps & MAP_SPECULAR_COLOR) != 0u) {
        color *= textureSample(specular_color_texture, base_color_sampler, map_uv(in, MAP_SPECULAR_COLOR, 5u)).rgb;
    }
    out.dielectric = vec4<f32>(min(color, vec3<f32>(1.0)) * strength, strength);
    return out;
}

// `n` turned by the tangent-space normal `mapped` in the fragment's tangent frame.
fn perturb_normal(in: VertexOut, n: vec3<f32>, mapped: vec3<f32>) -> vec3<f32> {
    if ((draw.maps.x & MAP_NORMAL) == 0u) {
        return n;
    }
    let t = safe_normalize(in.tangent.xyz - n * dot(n, in.tangent.xyz));
    let b = cross(n, t) * select(1.0, -1.0, in.tangent.w < 0.0);
    return safe_normalize(t * mapped.x + b * mapped.y + n * mapped.z);
}

// The radiance towards the eye (`v`) of a surface with normal `n` lit by the environment map.
fn environment_radiance(base: vec3<f32>, metallic: f32, roughness: f32, occlusion: f32, emissive: vec3<f32>, dielectric: vec4<f32>, n: vec3<f32>, v: vec3<f32>) -> vec3<f32> {
    let r = max(roughness, MIN_ROUGHNESS);
    let n_dot_v = clamp(dot(n, v), 0.0, 1.0);
    let reflected = reflect(-v, n);
    let prefiltered = textureSampleLevel(specular_map, environment_sampler, reflected, r * SPECULAR_MAX_LOD).rgb;
    let irradiance = textureSampleLevel(irradiance_map, environment_sampler, n, 0.0).rgb;
    let ab = textureSampleLevel(brdf_table, environment_sampler, vec2<f32>(n_dot_v, r), 0.0).rg;
    return ibl_radiance(base, metallic, occlusion, emissive, dielectric, prefiltered, irradiance, ab);
}

// The normals view's axis of the surface frame at the fragment: the normal `n`, or the tangent or
// bitangent a normal map reads (unset where none reads one: grey, off the unit sphere's colors).
fn surface_axis(in: VertexOut, n: vec3<f32>) -> vec3<f32> {
    if ((frame.view.x & (FLAG_TANGENT | FLAG_BITANGENT)) == 0u) {
        return n;
    }
    if ((draw.maps.x & MAP_NORMAL) == 0u || dot(in.tangent.xyz, in.tangent.xyz) == 0.0) {
        return NO_VALUE_COLOR * 2.0 - 1.0;
    }
    let t = safe_normalize(in.tangent.xyz - n * dot(n, in.tangent.xyz));
    if ((frame.view.x & FLAG_TANGENT) != 0u) {
        return t;
    }
    return cross(n, t) * select(1.0, -1.0, in.tangent.w < 0.0);
}

// The fragment's color with the alpha its material gives it; masked-out fragments are discarded.
fn shade(in: VertexOut, front: bool) -> vec4<f32> {
    let mode = view_mode;
    var deformation = 0.0;
    var flipped = false;
    if (mode == VIEW_DEFORMATION) {
        deformation = log2_deformation(in.world_position, in.debug, (frame.view.x & FLAG_STRETCH) != 0u);
        flipped = is_flipped(in.world_position, in.debug, in.world_normal, in.rest_normal);
    }
    let base = draw.base_color * textureSample(base_color_texture, base_color_sampler, in.uv) * in.color;
    var material: MaterialSample;
    if (mode == VIEW_SHADED) {
        // Sampled before any discard, where control flow is still uniform.
        material = sample_material(in);
    }
    let flags = draw.skin.w;
    if ((flags & DRAW_ALPHA_MASK) != 0u && base.a < draw.material.w) {
        discard;
    }
    var n = normalize(in.world_normal);
    if (mode == VIEW_SHADED && (flags & DRAW_UNLIT) == 0u) {
        n = perturb_normal(in, n, material.normal);
    }
    // Shade the side facing the camera; a mirrored draw's outside is what the rasterizer calls
    // its back.
    if (front == ((flags & DRAW_MIRRORED) != 0u)) {
        n = -n;
    }
    let l = normalize(-frame.light_direction.xyz);
    let diffuse = max(dot(n, l), 0.0);
    if (mode == VIEW_SHADED) {
        if ((flags & DRAW_UNLIT) != 0u) {
            return vec4<f32>(base.rgb + draw.material.xyz, base.a);
        }
        let v = normalize(frame.camera_position.xyz - in.world_position);
        let p = material.pbr;
        let metallic = clamp(p.x, 0.0, 1.0);
        let roughness = clamp(p.y, 0.0, 1.0);
        var radiance: vec3<f32>;
        if (frame.view.z == LIGHT_DIRECTIONAL) {
            radiance = pbr_radiance(base.rgb, metallic, roughness, p.z, material.emissive, material.dielectric, n, v, l);
        } else {
            radiance = environment_radiance(base.rgb, metallic, roughness, p.z, material.emissive, material.dielectric, n, v);
        }
        return vec4<f32>(tone_map(radiance, frame.tone.x, frame.view.y), base.a);
    }
    // Debug colors get only a little shading, so that the colors stay readable as values.
    let shade = 0.8 + 0.2 * diffuse;
    var color: vec3<f32>;
    if (mode == VIEW_WEIGHTS) {
        let w = in.debug.x;
        if (w == 0.0 && (frame.view.x & FLAG_ZERO_DISTINCT) != 0u) {
            color = ZERO_WEIGHT_COLOR;
        } else {
            color = heat(w);
        }
    } else if (mode == VIEW_JOINTS) {
        color = in.debug;
    } else if (mode == VIEW_INFLUENCES) {
        color = count_color(in.debug.x);
    } else if (mode == VIEW_WEIGHT_ERROR) {
        color = weight_error_color(in.debug.x);
    } else if (mode == VIEW_DEFORMATION) {
        color = select(deformation_color(deformation), NO_VALUE_COLOR, deformation == NO_DEFORMATION);
        color = select(color, FLIPPED_COLOR, flipped);
    } else if (mode == VIEW_SYMMETRY || mode == VIEW_WEIGHT_DIFFERENCE) {
        color = symmetry_color(in.debug.x);
    } else if (mode == VIEW_DQS_BLEND) {
        color = heat(in.debug.x);
    } else if (mode == VIEW_ENGINE_DISTANCE) {
        color = engine_distance_color(in.debug.x);
    } else {
        return vec4<f32>(surface_axis(in, n) * 0.5 + 0.5, 1.0);
    }
    return vec4<f32>(color * shade, 1.0);
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    return vec4<f32>(shade(in, front).rgb, 1.0);
}

// Alpha-blended materials (hair cards, visors): the base color's alpha covers what is behind.
// An onion-skin ghost is its view's color pulled towards its tint, at its own opacity.
@fragment
fn fs_blend(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let color = shade(in, front);
    if ((draw.skin.w & DRAW_GHOST) != 0u) {
        return vec4<f32>(mix(color.rgb, draw.ghost.rgb, GHOST_TINT_SHARE), draw.ghost.a * color.a);
    }
    return color;
}

// Wireframe overlay: the same skinned vertices, nudged towards the camera so that the edges win
// the depth test against their own triangles.
@vertex
fn vs_wire(v: VertexIn) -> VertexOut {
    var out = transform_vertex(v);
    out.clip.z -= 2e-4 * out.clip.w;
    return out;
}

@fragment
fn fs_wire(in: VertexOut) -> @location(0) vec4<f32> {
    return vec4<f32>(0.05, 0.05, 0.06, 1.0);
}
