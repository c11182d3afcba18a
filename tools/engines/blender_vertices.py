"""Run inside Blender: imports a glTF file, poses its first animation at TIME seconds and prints
each vertex of each mesh, in the file's order and glTF's axes (Y up), as "v INDEX X Y Z".

    blender -b --factory-startup --python blender_vertices.py -- IN.gltf TIME
"""
import sys

import numpy

# Blender 3.4's add-ons still use the alias numpy 1.24 removed.
numpy.bool = bool

import bpy  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1:]
path, seconds = args[0], float(args[1])
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps, scene.render.fps_base = 1000, 1.0
bpy.ops.import_scene.gltf(filepath=path)
# The importer keys glTF time t at frame t * fps (a clip starting later keeps its delay).
frame = seconds * scene.render.fps
scene.frame_set(int(frame), subframe=frame - int(frame))
depsgraph = bpy.context.evaluated_depsgraph_get()
for obj in scene.objects:
    if obj.type != "MESH":
        continue
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    for vertex in mesh.vertices:
        p = evaluated.matrix_world @ vertex.co
        print(f"v {vertex.index} {p.x:.6f} {p.z:.6f} {-p.y:.6f}")
    evaluated.to_mesh_clear()
