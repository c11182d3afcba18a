#!/usr/bin/env python3
"""Writes the generated fidelity models as self-contained .gltf files (buffers and images as
data URIs), so that nothing binary is committed:

    python3 tools/fidelity/make_spheres.py OUT_DIR

- spheres.gltf: a 3x3 grid of UV spheres (radius 0.4, 1 apart in x and y, centred on the
  origin, facing +Z) with factors only: rows from the top are a grey dielectric, a blue
  dielectric and a gold metal; columns from the left have roughness 0.15, 0.45 and 0.8.
- bumps.gltf: one sphere (radius 1 at the origin) with a base colour texture (two-tone
  stripes), a metallic-roughness texture (metal bands of roughness 0.3 between rough
  dielectric ones) and a normal texture of round dimples (scale 1), no TANGENT (both renderers
  generate MikkTSpace tangents).
- glow.gltf: one sphere (radius 1 at the origin), a rough dielectric with a base colour texture
  of soft checks on TEXCOORD_0 and an emissive texture of soft dots on TEXCOORD_1 (a second
  mapping, twice around) through KHR_texture_transform (offset, rotation, scale), emissive
  factor (1, 0.55, 0.2) and KHR_materials_emissive_strength 3.
"""
import base64
import json
import os
import struct
import sys
import zlib

import numpy as np


def uv_sphere(radius, segments=96, rings=48):
    """Positions, normals, texture coordinates (u around from +Z toward +X... as glTF: v down
    from the north pole) and triangle indices; a seam column is duplicated."""
    lon = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    lat = np.linspace(0.0, np.pi, rings + 1)
    la, lo = np.meshgrid(lat, lon, indexing="ij")
    n = np.stack([np.sin(la) * np.sin(lo), np.cos(la), np.sin(la) * np.cos(lo)], axis=-1)
    uv = np.stack([lo / (2.0 * np.pi), la / np.pi], axis=-1)
    pos = radius * n
    idx = []
    w = segments + 1
    for r in range(rings):
        for s in range(segments):
            a, b, c, d = r * w + s, r * w + s + 1, (r + 1) * w + s, (r + 1) * w + s + 1
            if r != 0:
                idx += [a, c, b]
            if r != rings - 1:
                idx += [b, c, d]
    return (pos.reshape(-1, 3).astype(np.float32), n.reshape(-1, 3).astype(np.float32),
            uv.reshape(-1, 2).astype(np.float32), np.array(idx, dtype=np.uint32))


def png(rgb):
    """An 8-bit RGB PNG of an (H, W, 3) uint8 array."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


class Builder:
    def __init__(self):
        self.blob = bytearray()
        self.shared = {}
        self.doc = {"asset": {"version": "2.0", "generator": "Rigscope tools/fidelity/make_spheres.py"},
                    "scene": 0, "scenes": [{"nodes": []}], "nodes": [], "meshes": [], "materials": [],
                    "accessors": [], "bufferViews": [], "buffers": []}

    def accessor(self, array, kind, target):
        while len(self.blob) % 4:
            self.blob.append(0)
        view = {"buffer": 0, "byteOffset": len(self.blob), "byteLength": array.nbytes, "target": target}
        self.blob += array.tobytes()
        self.doc["bufferViews"].append(view)
        acc = {"bufferView": len(self.doc["bufferViews"]) - 1, "count": int(array.shape[0]), "type": kind,
               "componentType": 5125 if array.dtype == np.uint32 else 5126}
        if kind == "VEC3" and array.dtype == np.float32:
            acc["min"] = array.min(axis=0).tolist()
            acc["max"] = array.max(axis=0).tolist()
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def mesh(self, sphere, material, extra=None):
        # The spheres' meshes share one set of accessors, each with its own material.
        key = id(sphere)
        if key not in self.shared:
            pos, nrm, uv, idx = sphere
            self.shared[key] = ({"POSITION": self.accessor(pos, "VEC3", 34962),
                                 "NORMAL": self.accessor(nrm, "VEC3", 34962),
                                 "TEXCOORD_0": self.accessor(uv, "VEC2", 34962)},
                                self.accessor(idx, "SCALAR", 34963))
        attributes, indices = self.shared[key]
        prim = {"attributes": dict(attributes), "indices": indices, "material": material}
        for name, (array, kind) in (extra or {}).items():
            prim["attributes"][name] = self.accessor(array, kind, 34962)
        self.doc["meshes"].append({"primitives": [prim]})
        return len(self.doc["meshes"]) - 1

    def node(self, mesh, translation, name):
        self.doc["nodes"].append({"mesh": mesh, "translation": list(translation), "name": name})
        self.doc["scenes"][0]["nodes"].append(len(self.doc["nodes"]) - 1)

    def texture(self, rgb):
        doc = self.doc
        doc.setdefault("images", []).append({"uri": "data:image/png;base64," + base64.b64encode(png(rgb)).decode()})
        doc.setdefault("samplers", [{"magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497}])
        doc.setdefault("textures", []).append({"source": len(doc["images"]) - 1, "sampler": 0})
        return len(doc["textures"]) - 1

    def write(self, path):
        self.doc["buffers"] = [{"byteLength": len(self.blob),
                                "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(self.blob)).decode()}]
        with open(path, "w") as f:
            json.dump(self.doc, f)


def spheres(path):
    b = Builder()
    sphere = uv_sphere(0.4)
    rows = [((0.75, 0.75, 0.75, 1.0), 0.0, "grey"), ((0.10, 0.25, 0.70, 1.0), 0.0, "blue"),
            ((1.00, 0.78, 0.34, 1.0), 1.0, "gold")]
    for r, (colour, metal, name) in enumerate(rows):
        for c, rough in enumerate((0.15, 0.45, 0.8)):
            b.doc["materials"].append({"name": f"{name}_r{rough}", "pbrMetallicRoughness": {
                "baseColorFactor": list(colour), "metallicFactor": metal, "roughnessFactor": rough}})
            mesh = b.mesh(sphere, len(b.doc["materials"]) - 1)
            b.node(mesh, (c - 1.0, 1.0 - r, 0.0), f"{name}_{c}")
    b.write(path)


def bumps(path, size=512):
    b = Builder()
    u = (np.arange(2 * size) + 0.5) / (2 * size)
    v = (np.arange(size) + 0.5) / size
    U, V = np.meshgrid(u, v)
    # Base colour: warm and cool stripes along v (latitude), softened at their edges.
    band = 0.5 + 0.5 * np.tanh(6.0 * np.sin(2.0 * np.pi * 6.0 * V))
    colour = (1 - band)[..., None] * np.array([0.80, 0.45, 0.25]) + band[..., None] * np.array([0.55, 0.60, 0.65])
    srgb = np.where(colour <= 0.0031308, 12.92 * colour, 1.055 * colour ** (1 / 2.4) - 0.055)
    base = np.round(255 * srgb).astype(np.uint8)
    # Metallic-roughness: metal (B) where the cool stripes are, roughness (G) 0.3 there, 0.8 elsewhere.
    mr = np.zeros((size, 2 * size, 3), np.uint8)
    mr[..., 1] = np.round(255 * (0.8 - 0.5 * band)).astype(np.uint8)
    mr[..., 2] = np.round(255 * band).astype(np.uint8)
    # Normal map: round dimples on a 16 x 8 grid in (u, v), from a height field's slopes.
    cu, cv = 16, 8
    fu, fv = (U * cu) % 1.0 - 0.5, (V * cv) % 1.0 - 0.5
    r2 = (fu ** 2 + fv ** 2) / 0.35 ** 2
    height = -np.where(r2 < 1.0, (1.0 - r2) ** 2, 0.0)
    # Slopes per unit of texture space, scaled to a depth that tilts the normals about 30 degrees.
    dh_du = np.gradient(height, axis=1) * (2 * size)
    dh_dv = np.gradient(height, axis=0) * size
    depth = 0.02
    # Tangent space: x along +u; y along -v (glTF's v runs down the image, the bitangent up).
    n = np.stack([-depth * dh_du, depth * dh_dv, np.ones_like(height)], axis=-1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    normal = np.round(255 * (0.5 * n + 0.5)).astype(np.uint8)
    b.doc["materials"].append({"name": "bumps", "pbrMetallicRoughness": {
        "baseColorTexture": {"index": b.texture(base)},
        "metallicRoughnessTexture": {"index": b.texture(mr)}},
        "normalTexture": {"index": b.texture(normal), "scale": 1.0}})
    b.node(b.mesh(uv_sphere(1.0), 0), (0.0, 0.0, 0.0), "bumps")
    b.write(path)


def glow(path, size=256):
    b = Builder()
    u = (np.arange(2 * size) + 0.5) / (2 * size)
    v = (np.arange(size) + 0.5) / size
    U, V = np.meshgrid(u, v)

    def srgb8(linear):
        s = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * np.clip(linear, 0, None) ** (1 / 2.4) - 0.055)
        return np.round(255 * np.clip(s, 0, 1)).astype(np.uint8)

    # Soft checks, 12 x 6, between two colours.
    check = 0.5 + 0.5 * np.tanh(4.0 * np.sin(2 * np.pi * 6 * U) * np.sin(2 * np.pi * 3 * V))
    base = (1 - check)[..., None] * np.array([0.15, 0.35, 0.30]) + check[..., None] * np.array([0.60, 0.58, 0.52])
    # Soft dots on an 8 x 4 grid, white on black (the factor colours them).
    fu, fv = (U * 8) % 1.0 - 0.5, (V * 4) % 1.0 - 0.5
    dots = np.exp(-(fu ** 2 + fv ** 2) / (2 * 0.12 ** 2))
    emissive = np.repeat(dots[..., None], 3, axis=-1)
    b.doc["extensionsUsed"] = ["KHR_texture_transform", "KHR_materials_emissive_strength"]
    b.doc["materials"].append({
        "name": "glow",
        "pbrMetallicRoughness": {"baseColorTexture": {"index": b.texture(srgb8(base))},
                                 "metallicFactor": 0.0, "roughnessFactor": 0.6},
        "emissiveTexture": {"index": b.texture(srgb8(emissive)), "texCoord": 1, "extensions": {
            "KHR_texture_transform": {"offset": [0.1, 0.05], "rotation": 0.2, "scale": [1.5, 1.5]}}},
        "emissiveFactor": [1.0, 0.55, 0.2],
        "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 3.0}}})
    sphere = uv_sphere(1.0)
    uv1 = sphere[2] * np.array([2.0, 1.0], np.float32)
    b.node(b.mesh(sphere, 0, {"TEXCOORD_1": (uv1.astype(np.float32), "VEC2")}), (0.0, 0.0, 0.0), "glow")
    b.write(path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    spheres(os.path.join(out, "spheres.gltf"))
    bumps(os.path.join(out, "bumps.gltf"))
    glow(os.path.join(out, "glow.gltf"))
    print(f"{out}/spheres.gltf, {out}/bumps.gltf, {out}/glow.gltf")


if __name__ == "__main__":
    main()
