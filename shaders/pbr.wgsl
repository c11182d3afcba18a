// Metallic-roughness shading (glTF 2.0, Appendix B) and the tone curves, for the shaded view.
// Composed after the constants `render::pbr::wgsl_constants` writes from the Rust ones; every
// function here has its f64 twin in `src/render/pbr.rs`, which the tests compare it with.

const PI: f32 = 3.141592653589793;

// V = G / (4 |n·l| |n·v|) for the height-correlated Smith G of GGX.
fn smith_visibility(a2: f32, n_dot_l: f32, n_dot_v: f32) -> f32 {
    let ggx_v = n_dot_l * sqrt(n_dot_v * n_dot_v * (1.0 - a2) + a2);
    let ggx_l = n_dot_v * sqrt(n_dot_l * n_dot_l * (1.0 - a2) + a2);
    let sum = ggx_v + ggx_l;
    return select(0.0, 0.5 / sum, sum > 0.0);
}

// The specification's BRDF with KHR_materials_specular's Fresnel: a dielectric (Lambert under a
// GGX layer, mixed by Schlick's Fresnel from the layer's F0 `dielectric.xyz` to its F90
// `dielectric.w`, the diffuse part keeping what the strongest channel leaves) and a metal (the
// layer tinted by Schlick's Fresnel from the base colour), mixed by `metallic`.
fn pbr_brdf(base: vec3<f32>, metallic: f32, roughness: f32, dielectric: vec4<f32>, n: vec3<f32>, v: vec3<f32>, l: vec3<f32>) -> vec3<f32> {
    let h = normalize(l + v);
    let r = max(roughness, MIN_ROUGHNESS);
    let alpha = r * r;
    let a2 = alpha * alpha;
    let n_dot_l = max(dot(n, l), 0.0);
    let n_dot_v = max(dot(n, v), 0.0);
    let n_dot_h = max(dot(n, h), 0.0);
    let v_dot_h = max(dot(v, h), 0.0);
    let q = n_dot_h * n_dot_h * (a2 - 1.0) + 1.0;
    let d = a2 / (PI * q * q);
    let specular = d * smith_visibility(a2, n_dot_l, n_dot_v);
    let t = 1.0 - v_dot_h;
    let schlick = t * t * t * t * t;
    let fresnel = dielectric.xyz + (vec3<f32>(dielectric.w) - dielectric.xyz) * schlick;
    let strongest = max(fresnel.r, max(fresnel.g, fresnel.b));
    let layered = base / PI * (1.0 - strongest) + fresnel * specular;
    let metal = specular * (base + (vec3<f32>(1.0) - base) * schlick);
    return mix(layered, metal, metallic);
}

// The share of a uniform environment reflected specularly (Karis's analytic fit of the
// split-sum scale and bias).
fn ambient_specular(f0: vec3<f32>, f90: f32, roughness: f32, n_dot_v: f32) -> vec3<f32> {
    let r = roughness * vec3<f32>(-1.0, -0.0275, -0.572) + vec3<f32>(1.0, 0.0425, 1.04);
    let r_w = roughness * 0.022 - 0.04;
    let a004 = min(r.x * r.x, exp2(-9.28 * n_dot_v)) * r.x + r.y;
    let scale = -1.04 * a004 + r.z;
    let bias = 1.04 * a004 + r_w;
    return f0 * scale + vec3<f32>(f90 * bias);
}

// F0 (xyz) and F90 (w) of the specular layer of a surface `metallic` between the dielectric
// `dielectric` and a metal of colour `base`.
fn specular_layer(base: vec3<f32>, metallic: f32, dielectric: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(mix(dielectric.xyz, base, metallic), dielectric.w + (1.0 - dielectric.w) * metallic);
}

// The radiance towards the eye: the directional light through the BRDF, the sky/ground ambient
// (diffuse and specular, scaled by `occlusion`) and `emissive`. `n`, `v` (to the eye) and `l`
// (to the light) are unit vectors; `dielectric` the dielectric's specular layer, F0 and F90.
fn pbr_radiance(base: vec3<f32>, metallic: f32, roughness: f32, occlusion: f32, emissive: vec3<f32>, dielectric: vec4<f32>, n: vec3<f32>, v: vec3<f32>, l: vec3<f32>) -> vec3<f32> {
    let direct = pbr_brdf(base, metallic, roughness, dielectric, n, v, l) * LIGHT_IRRADIANCE * max(dot(n, l), 0.0);
    let sky = clamp(n.y * 0.5 + 0.5, 0.0, 1.0);
    let ambient_light = GROUND_AMBIENT + (SKY_AMBIENT - GROUND_AMBIENT) * sky;
    let layer = specular_layer(base, metallic, dielectric);
    let ambient = base * (1.0 - metallic) + ambient_specular(layer.xyz, layer.w, max(roughness, MIN_ROUGHNESS), max(dot(n, v), 0.0));
    return direct + ambient * ambient_light * occlusion + emissive;
}

// The radiance towards the eye under an environment map, by the split sum: `prefiltered` the
// specular cube along the reflected ray at the surface's roughness, `irradiance` the irradiance
// cube (over π) along the normal, `ab` the BRDF table's scale and bias of F0 at (n·v, roughness),
// F90 scaling the bias.
fn ibl_radiance(base: vec3<f32>, metallic: f32, occlusion: f32, emissive: vec3<f32>, dielectric: vec4<f32>, prefiltered: vec3<f32>, irradiance: vec3<f32>, ab: vec2<f32>) -> vec3<f32> {
    let layer = specular_layer(base, metallic, dielectric);
    let specular = prefiltered * (layer.xyz * ab.x + layer.w * ab.y);
    let diffuse = irradiance * base * (1.0 - metallic);
    return (diffuse + specular) * occlusion + emissive;
}

// Khronos PBR Neutral.
fn tonemap_neutral(color: vec3<f32>) -> vec3<f32> {
    let x = min(color.r, min(color.g, color.b));
    let offset = select(DIELECTRIC_F0, x - x * x / (4.0 * DIELECTRIC_F0), x <= 2.0 * DIELECTRIC_F0);
    let c = color - offset;
    let p = max(c.r, max(c.g, c.b));
    if (p <= NEUTRAL_START_COMPRESSION) {
        return c;
    }
    let d = 1.0 - NEUTRAL_START_COMPRESSION;
    let pn = 1.0 - d * d / (p + 1.0 - 2.0 * NEUTRAL_START_COMPRESSION);
    let g = 1.0 / (NEUTRAL_DESATURATION * (p - pn) + 1.0);
    return c * (pn / p) * g + vec3<f32>(pn) * (1.0 - g);
}

// Narkowicz's ACES fit.
fn tonemap_aces(x: vec3<f32>) -> vec3<f32> {
    let num = x * (ACES_FIT[0] * x + ACES_FIT[1]);
    let den = x * (ACES_FIT[2] * x + ACES_FIT[3]) + ACES_FIT[4];
    return clamp(num / den, vec3<f32>(0.0), vec3<f32>(1.0));
}

// Linear radiance exposed by `exposure` (a factor) and mapped by curve `curve` (TONEMAP_*).
fn tone_map(color: vec3<f32>, exposure: f32, curve: u32) -> vec3<f32> {
    let exposed = max(color, vec3<f32>(0.0)) * exposure;
    if (curve == TONEMAP_ACES) {
        return tonemap_aces(exposed);
    }
    if (curve == TONEMAP_NONE) {
        return min(exposed, vec3<f32>(1.0));
    }
    return tonemap_neutral(exposed);
}
