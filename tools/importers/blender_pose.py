"""Run inside Blender: imports a glTF file, poses its first animation at a time in seconds, and
writes every mesh vertex as Blender's armature deform places it, in glTF's axes (Y up), to a
.npy file.

    blender -b --factory-startup --python blender_pose.py -- IN.glb TIME OUT.npy
"""
import sys

import numpy

# Blender 3.4's add-ons still use the alias numpy 1.24 removed.
numpy.bool = bool

import bpy  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1:]
path, seconds, out = args[0], float(args[1]), args[2]

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps, scene.render.fps_base = 1000, 1.0  # a key every millisecond: no rounding of TIME
bpy.ops.import_scene.gltf(filepath=path)

# The importer keys glTF time t at frame t * fps: a clip whose first key is later than 0 keeps
# its delay.
frame = seconds * scene.render.fps
scene.frame_set(int(frame), subframe=frame - int(frame))

depsgraph = bpy.context.evaluated_depsgraph_get()
points = []
for obj in scene.objects:
    if obj.type != "MESH":
        continue
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    world = evaluated.matrix_world
    for vertex in mesh.vertices:
        p = world @ vertex.co
        # Blender's Z up back to glTF's Y up.
        points.append((p.x, p.z, -p.y))
    evaluated.to_mesh_clear()
numpy.save(out, numpy.array(points, dtype=numpy.float64))
print(f"{len(points)} vertices posed at {seconds} s (frame {frame:.3f})")
