// Lit, textured mesh skinned in the vertex shader (prepend skinning.wgsl).

struct Frame {
    view_proj: mat4x4<f32>,
    camera_position: vec4<f32>,
    light_direction: vec4<f32>,
}

struct Draw {
    model: mat4x4<f32>,
    base_color: vec4<f32>,
}

@group(0) @binding(0) var<uniform> frame: Frame;
@group(2) @binding(0) var<uniform> draw: Draw;
@group(2) @binding(1) var base_color_texture: texture_2d<f32>;
@group(2) @binding(2) var base_color_sampler: sampler;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) joints0: vec4<u32>,
    @location(4) weights0: vec4<f32>,
    @location(5) joints1: vec4<u32>,
    @location(6) weights1: vec4<f32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) world_normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    let skinned = skin_vertex(v.position, v.normal, v.joints0, v.weights0, v.joints1, v.weights1);
    let world = draw.model * vec4<f32>(skinned.position, 1.0);
    var out: VertexOut;
    out.clip = frame.view_proj * world;
    out.world_position = world.xyz;
    out.world_normal = normal_matrix(draw.model) * skinned.normal;
    out.uv = v.uv;
    return out;
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = normalize(in.world_normal);
    if (!front) {
        n = -n;
    }
    let base = draw.base_color * textureSample(base_color_texture, base_color_sampler, in.uv);
    let l = normalize(-frame.light_direction.xyz);
    let diffuse = max(dot(n, l), 0.0);
    // Sky/ground hemisphere ambient keeps the unlit side readable.
    let ambient = mix(0.18, 0.38, n.y * 0.5 + 0.5);
    let v = normalize(frame.camera_position.xyz - in.world_position);
    let rim = pow(1.0 - max(dot(n, v), 0.0), 3.0) * 0.15;
    return vec4<f32>(base.rgb * (ambient + 0.75 * diffuse) + rim, 1.0);
}
