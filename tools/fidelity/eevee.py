"""Renders a glTF file with Blender's Eevee as Rigscope's `render` would frame and light it.

    xvfb-run -a blender -b --factory-startup --python tools/fidelity/eevee.py -- \
        --model FILE.glb --environment SKY.hdr --out OUT.png \
        --orbit THETA,PHI,RADIUS --target X,Y,Z --fov DEG --size WxH \
        [--clip NAME|INDEX --time SECONDS] [--samples 64] [--background]

The scene holds the imported file and nothing else: lights and cameras that came with it are
deleted, and the World is the equirectangular .hdr alone (an Environment Texture at strength 1).
The camera is Rigscope's orbit camera (`--orbit`, `--target`, `--fov` as `rigscope render
--help` defines them, in glTF's axes with +Y up; Blender's importer turns a glTF point (x, y, z)
into (x, -z, y), and so does this script).  Colour management is Standard with no look and
exposure 0 (a clipped sRGB encoding, as Rigscope's `--tonemap none`), the film is transparent,
and the PNG is 8-bit RGBA with straight alpha.

Eevee (Blender 3.4) needs an OpenGL context: run it under Xvfb.
"""
import argparse
import json
import math
import struct
import sys

import numpy

# Blender 3.4's glTF importer uses numpy.bool, removed in numpy 1.24.
if not hasattr(numpy, "bool"):
    numpy.bool = bool

import bpy  # noqa: E402
import mathutils  # noqa: E402

# Keyframes of the files we compare are at 30 per second; importing at 30 fps puts them on
# whole frames, so that a --time on a key needs no interpolation by Blender.
FPS = 30


def numbers(text, count, name):
    values = [float(v) for v in text.split(",")]
    if len(values) != count:
        raise SystemExit(f"--{name} takes {count} numbers, got '{text}'")
    return values


def parse_args():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    p = argparse.ArgumentParser(prog="eevee.py", description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--environment", required=True, help="equirectangular Radiance .hdr")
    p.add_argument("--out", required=True)
    p.add_argument("--orbit", required=True, help="THETA,PHI,RADIUS in degrees and scene units")
    p.add_argument("--target", required=True, help="X,Y,Z in glTF's axes")
    p.add_argument("--fov", type=float, default=40.0, help="vertical field of view, degrees")
    p.add_argument("--size", default="960x720")
    p.add_argument("--clip", help="animation name or index (default: the first, as Rigscope)")
    p.add_argument("--time", type=float, default=0.0, help="seconds into the clip")
    p.add_argument("--samples", type=int, default=64, help="Eevee render samples")
    p.add_argument("--filter-size", type=float, default=1.5,
                   help="the film's pixel filter width in pixels (Blender's default 1.5)")
    p.add_argument("--plain-specular", action="store_true",
                   help="undo KHR_materials_specular and _ior: every Principled BSDF at Specular 0.5 "
                        "(F0 0.04, IOR 1.5), untinted, as a renderer without those extensions shades")
    p.add_argument("--background", action="store_true",
                   help="draw the environment behind the model (to check its orientation)")
    return p.parse_args(argv)


def gltf_json(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"glTF":
        length = struct.unpack("<I", data[12:16])[0]
        return json.loads(data[20:20 + length])
    return json.loads(data)


def track_name(doc, clip):
    """The NLA track Blender's importer gives animation `clip` (name or index)."""
    animations = doc.get("animations", [])
    if not animations:
        return None
    names, used = [], set()
    for i, anim in enumerate(animations):
        # As the importer's find_unused_name: "Anim_<i>" for unnamed ones, ".001" on clashes.
        name = anim.get("name") or f"Anim_{i}"
        unique, n = name, 0
        while unique in used:
            n += 1
            unique = f"{name}.{n:03d}"
        used.add(unique)
        names.append(unique)
    if clip is None:
        return names[0]
    if clip.isdigit() and int(clip) < len(names):
        return names[int(clip)]
    for anim, name in zip(animations, names):
        if anim.get("name") == clip:
            return name
    raise SystemExit(f"no animation '{clip}' in the file: {names}")


def pose(track):
    """Plays `track` on every object (and shape keys) that has it, as the importer restores one."""
    owners = list(bpy.data.objects) + [k for k in bpy.data.shape_keys]
    for owner in owners:
        data = getattr(owner, "animation_data", None)
        if not data:
            continue
        data.action = None
        for t in data.nla_tracks:
            if t.name == track and t.strips:
                data.action = t.strips[0].action


def to_blender(p):
    """A glTF point (+Y up) in Blender's axes (+Z up), as the importer converts."""
    return mathutils.Vector((p[0], -p[2], p[1]))


def main():
    args = parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    theta, phi, radius = numbers(args.orbit, 3, "orbit")
    target = numbers(args.target, 3, "target")

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.render.fps_base = 1.0

    bpy.ops.import_scene.gltf(filepath=args.model)
    for obj in list(scene.objects):
        if obj.type in {"LIGHT", "CAMERA"}:
            bpy.data.objects.remove(obj, do_unlink=True)

    # Blender 3.4's importer multiplies an emissive texture by its factor in a Mix node and links
    # the node's float Result (hidden when the node mixes colours) to Emission: Eevee then draws
    # the whole material black.  Each link from a hidden output is moved to the visible output
    # of the same name.
    for material in bpy.data.materials:
        tree = material.node_tree if material.use_nodes else None
        for link in list(tree.links if tree else []):
            socket = link.from_socket
            if socket.enabled:
                continue
            twin = next((o for o in link.from_node.outputs if o.enabled and o.name == socket.name), None)
            if twin is not None:
                node, to_socket = link.from_node, link.to_socket
                tree.links.remove(link)
                tree.links.new(twin, to_socket)
                print(f"eevee.py: {material.name}: {node.name} linked from its {twin.identifier} output")

    if args.plain_specular:
        for material in bpy.data.materials:
            for node in (material.node_tree.nodes if material.use_nodes else []):
                if node.type == "BSDF_PRINCIPLED":
                    for name, value in (("Specular", 0.5), ("Specular Tint", 0.0), ("IOR", 1.5)):
                        socket = node.inputs[name]
                        for link in list(socket.links):
                            material.node_tree.links.remove(link)
                        socket.default_value = value

    doc = gltf_json(args.model)
    track = track_name(doc, args.clip)
    if track is not None:
        pose(track)
    frame = args.time * FPS
    scene.frame_set(int(math.floor(frame)), subframe=frame - math.floor(frame))

    # The world: the panorama alone.  Eevee's equirectangular lookup puts u = 0.5 along
    # Blender's +X and u grows clockwise seen from above; Rigscope's puts u = 0.5 along glTF's
    # -Z (Blender +Y) and u = 0.75 along +X.  Turning the lookup direction by -90 degrees about
    # Z before the texture makes the two agree.
    world = bpy.data.worlds.new("Environment")
    scene.world = world
    world.use_nodes = True
    nodes, links = world.node_tree.nodes, world.node_tree.links
    nodes.clear()
    coords = nodes.new("ShaderNodeTexCoord")
    mapping = nodes.new("ShaderNodeMapping")
    mapping.vector_type = "POINT"
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, math.radians(-90.0))
    texture = nodes.new("ShaderNodeTexEnvironment")
    texture.image = bpy.data.images.load(args.environment)
    texture.image.colorspace_settings.name = "Linear"
    texture.interpolation = "Linear"
    texture.projection = "EQUIRECTANGULAR"
    background = nodes.new("ShaderNodeBackground")
    background.inputs["Strength"].default_value = 1.0
    output = nodes.new("ShaderNodeOutputWorld")
    links.new(coords.outputs["Generated"], mapping.inputs["Vector"])
    links.new(mapping.outputs["Vector"], texture.inputs["Vector"])
    links.new(texture.outputs["Color"], background.inputs["Color"])
    links.new(background.outputs["Background"], output.inputs["Surface"])

    # The camera: Rigscope's orbit, eye = target + r (sin(phi) sin(theta), cos(phi), sin(phi) cos(theta)).
    t, p = math.radians(theta), math.radians(phi)
    offset = (radius * math.sin(p) * math.sin(t), radius * math.cos(p), radius * math.sin(p) * math.cos(t))
    eye = to_blender([target[i] + offset[i] for i in range(3)])
    look = to_blender(target)
    camera_data = bpy.data.cameras.new("Camera")
    camera_data.sensor_fit = "VERTICAL"
    camera_data.angle_y = math.radians(args.fov)
    # Rigscope's near and far planes.
    camera_data.clip_start = max(radius * 0.01, 1e-4)
    camera_data.clip_end = radius * 100.0 + camera_data.clip_start
    camera = bpy.data.objects.new("Camera", camera_data)
    scene.collection.objects.link(camera)
    camera.location = eye
    camera.rotation_mode = "QUATERNION"
    camera.rotation_quaternion = (look - eye).to_track_quat("-Z", "Y")
    scene.camera = camera

    render = scene.render
    render.engine = "BLENDER_EEVEE"
    render.resolution_x, render.resolution_y = width, height
    render.resolution_percentage = 100
    render.pixel_aspect_x = render.pixel_aspect_y = 1.0
    render.film_transparent = not args.background
    render.filter_size = args.filter_size
    render.image_settings.file_format = "PNG"
    render.image_settings.color_mode = "RGBA"
    render.image_settings.color_depth = "8"
    render.filepath = args.out

    eevee = scene.eevee
    eevee.taa_render_samples = args.samples
    # Nothing but the environment's light on the materials: no screen-space effects.
    eevee.use_gtao = False
    eevee.use_ssr = False
    eevee.use_bloom = False
    eevee.use_motion_blur = False
    eevee.use_volumetric_lights = False
    eevee.gi_cubemap_resolution = "1024"
    eevee.gi_filter_quality = 4.0

    view = scene.view_settings
    scene.display_settings.display_device = "sRGB"
    view.view_transform = "Standard"
    view.look = "None"
    view.exposure = 0.0
    view.gamma = 1.0
    scene.sequencer_colorspace_settings.name = "sRGB"

    bpy.ops.render.render(write_still=True)
    print(f"eevee.py: wrote {args.out} ({width}x{height}, {args.samples} samples, "
          f"clip {track!r} at frame {frame:g})")


main()
