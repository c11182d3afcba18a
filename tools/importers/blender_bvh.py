"""Run inside Blender: imports a BVH file with Blender's own importer (file units, no scaling)
and writes, for every frame of the file, every bone's head and the tail of every bone without
children (the file's end sites), in the file's axes (Y up), as JSON: {"names": [...], "positions":
[frame][point][xyz]}. A leaf's tail is named NAME_End, as Rigscope names end sites.

    blender -b --factory-startup --python blender_bvh.py -- IN.bvh OUT.json
"""
import json
import sys

import numpy

# Blender 3.4's add-ons still use the alias numpy 1.24 removed.
numpy.bool = bool

import bpy  # noqa: E402
import io_anim_bvh.import_bvh as importer  # noqa: E402

# Blender 3.4's BVH importer opens files with mode 'rU', which Python 3.11 refuses.
_open = open
importer.open = lambda path, mode="r", *rest, **named: _open(path, mode.replace("U", ""), *rest, **named)

args = sys.argv[sys.argv.index("--") + 1:]
path, out = args[0], args[1]

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
bpy.ops.import_anim.bvh(
    filepath=path,
    global_scale=1.0,
    frame_start=1,
    use_fps_scale=False,
    update_scene_fps=True,
    update_scene_duration=True,
    rotate_mode="NATIVE",
    axis_forward="-Z",
    axis_up="Y",
)
armature = next(o for o in scene.objects if o.type == "ARMATURE")
bones = list(armature.pose.bones)
names = [b.name for b in bones] + [b.name + "_End" for b in bones if not b.children]
# The file's own frame count: the importer only ever lengthens the scene to fit the clip.
with open(path) as file:
    count = next(int(line.split(":")[1]) for line in file if line.strip().lower().startswith("frames:"))
frames = []
# The importer keys the file's frame k at scene frame 1 + k.
for frame in range(1, 1 + count):
    scene.frame_set(frame)
    world = armature.matrix_world
    heads = [world @ b.head for b in bones]
    tails = [world @ b.tail for b in bones if not b.children]
    # Blender's Z up back to the file's Y up.
    frames.append([(p.x, p.z, -p.y) for p in heads + tails])
with open(out, "w") as file:
    json.dump({"names": names, "positions": frames}, file)
print(f"{len(bones)} bones over {len(frames)} frames")
