//! glTF 2.0 (`.gltf`, `.glb`) → [`Rig`].
//!
//! Buffers and images are resolved here rather than by `gltf::import`, so that a missing texture
//! is a warning instead of a failed load, and so that URIs are held to one rule: a file may only
//! reference files inside its own folder (no absolute paths, no `..` that climbs out of it).

use super::*;
use base64::Engine;
use gltf::animation::util::ReadOutputs;
use std::path::{Component, Path, PathBuf};

/// Largest file or buffer the importer reads; anything bigger is refused before allocating.
const MAX_BYTES: u64 = 1 << 30;

fn err(message: impl Into<String>) -> RigError {
    RigError(message.into())
}

/// Loads a `.gltf` or `.glb` file; external buffers and images are looked up next to it.
pub fn load_file(path: &Path) -> Result<Rig, RigError> {
    let size = std::fs::metadata(path)
        .map_err(|e| err(format!("cannot open {}: {e}", path.display())))?
        .len();
    if size > MAX_BYTES {
        return Err(err(format!(
            "{} is {size} bytes, more than the {MAX_BYTES}-byte limit",
            path.display()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read {}: {e}", path.display())))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    load_slice(&bytes, path.parent(), &name)
}

/// Loads glTF JSON or GLB bytes. `base_dir` is where relative URIs point; `None` allows only
/// embedded data (GLB chunks and data URIs).
pub fn load_slice(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, RigError> {
    let gltf = gltf::Gltf::from_slice(bytes).map_err(|e| err(format!("not a valid glTF file: {e}")))?;
    let mut warnings = Vec::new();
    let buffers = load_buffers(&gltf, base_dir)?;
    let textures = load_textures(&gltf.document, &buffers, base_dir, &mut warnings);

    let (order, parents) = sort_nodes(&gltf.document)?;
    // `slot[i]` is where glTF node i lives in the sorted node array.
    let mut slot = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        slot[old] = new;
    }
    let gltf_nodes: Vec<gltf::Node> = gltf.document.nodes().collect();
    let nodes = order
        .iter()
        .map(|&old| {
            let node = &gltf_nodes[old];
            let (t, r, s) = node.transform().decomposed();
            Node {
                name: node.name().map(str::to_owned).unwrap_or_else(|| format!("node {old}")),
                parent: parents[old].map(|p| slot[p]),
                rest: Trs {
                    translation: Vec3::from(t),
                    rotation: Quat::from_array(r).normalize(),
                    scale: Vec3::from(s),
                },
            }
        })
        .collect();

    let get = |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice);
    let skins = gltf
        .document
        .skins()
        .map(|skin| read_skin(&skin, &slot, get))
        .collect::<Result<Vec<_>, _>>()?;
    let meshes = gltf
        .document
        .meshes()
        .map(|mesh| read_mesh(&mesh, get))
        .collect::<Result<Vec<_>, _>>()?;
    let materials = gltf
        .document
        .materials()
        .map(|m| read_material(&m, textures.len()))
        .collect();
    let clips = gltf
        .document
        .animations()
        .map(|a| read_clip(&a, &slot, get))
        .collect::<Result<Vec<_>, _>>()?;

    let mut instances: Vec<MeshInstance> = gltf_nodes
        .iter()
        .filter_map(|node| {
            node.mesh().map(|mesh| MeshInstance {
                node: slot[node.index()],
                mesh: mesh.index(),
                skin: node.skin().map(|s| s.index()),
            })
        })
        .collect();
    instances.sort_by_key(|i| i.node);

    Ok(Rig {
        name: name.to_owned(),
        nodes,
        skins,
        meshes,
        instances,
        materials,
        textures: textures
            .into_iter()
            .map(|t| t.unwrap_or_else(missing_texture))
            .collect(),
        clips,
        warnings,
    })
}

/// Stand-in for an image that could not be loaded, so texture indices stay valid.
fn missing_texture() -> Texture {
    Texture {
        name: "missing".into(),
        width: 1,
        height: 1,
        rgba8: vec![255, 255, 255, 255],
    }
}

fn load_buffers(gltf: &gltf::Gltf, base_dir: Option<&Path>) -> Result<Vec<Vec<u8>>, RigError> {
    gltf.document
        .buffers()
        .map(|buffer| {
            let data = match buffer.source() {
                gltf::buffer::Source::Bin => gltf.blob.clone().ok_or_else(|| {
                    err(format!(
                        "buffer {} refers to a missing GLB binary chunk",
                        buffer.index()
                    ))
                })?,
                gltf::buffer::Source::Uri(uri) => {
                    read_uri(uri, base_dir).map_err(|e| err(format!("buffer {}: {e}", buffer.index())))?
                }
            };
            if data.len() < buffer.length() {
                return Err(err(format!(
                    "buffer {} declares {} bytes but holds only {}",
                    buffer.index(),
                    buffer.length(),
                    data.len()
                )));
            }
            Ok(data)
        })
        .collect()
}

/// Bytes behind a URI: a base64 data URI, or a file inside `base_dir`.
fn read_uri(uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, String> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let (_, payload) = rest
            .split_once(";base64,")
            .ok_or_else(|| "data URI is not base64".to_string())?;
        if payload.len() as u64 > MAX_BYTES * 4 / 3 {
            return Err("data URI is larger than the size limit".into());
        }
        return base64::engine::general_purpose::STANDARD
            .decode(payload)
            .map_err(|e| format!("data URI is not valid base64: {e}"));
    }
    let path = resolve_uri(uri, base_dir)?;
    let size = std::fs::metadata(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?
        .len();
    if size > MAX_BYTES {
        return Err(format!("{} is larger than the {MAX_BYTES}-byte limit", path.display()));
    }
    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Applies the URI rule: relative paths that stay inside `base_dir`, nothing else.
fn resolve_uri(uri: &str, base_dir: Option<&Path>) -> Result<PathBuf, String> {
    let base = base_dir
        .ok_or_else(|| format!("'{uri}' refers to an external file, but the data was not opened from a folder"))?;
    if uri.contains("://") {
        return Err(format!(
            "'{uri}' is a remote URI; only files next to the model are read"
        ));
    }
    let decoded = percent_decode(uri);
    let relative = Path::new(&decoded);
    let mut depth = 0i32;
    for component in relative.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => depth -= 1,
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "'{uri}' is an absolute path; only files inside the model's folder are read"
                ));
            }
        }
        if depth < 0 {
            return Err(format!(
                "'{uri}' points outside the model's folder; only files inside it are read"
            ));
        }
    }
    Ok(base.join(relative))
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(hi << 4 | lo);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn load_textures(
    document: &gltf::Document,
    buffers: &[Vec<u8>],
    base_dir: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Vec<Option<Texture>> {
    document
        .textures()
        .map(|texture| {
            let image = texture.source();
            let label = image
                .name()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("image {}", image.index()));
            let bytes = match image.source() {
                gltf::image::Source::View { view, .. } => buffers
                    .get(view.buffer().index())
                    .and_then(|b| b.get(view.offset()..view.offset() + view.length()))
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| "its buffer view is out of range".to_string()),
                gltf::image::Source::Uri { uri, .. } => read_uri(uri, base_dir),
            };
            let decoded = bytes.and_then(|b| image::load_from_memory(&b).map_err(|e| format!("cannot decode it: {e}")));
            match decoded {
                Ok(img) => {
                    let rgba = img.to_rgba8();
                    Some(Texture {
                        name: label,
                        width: rgba.width(),
                        height: rgba.height(),
                        rgba8: rgba.into_raw(),
                    })
                }
                Err(e) => {
                    warnings.push(format!(
                        "texture {} ({label}) not loaded: {e}; drawn untextured",
                        texture.index()
                    ));
                    None
                }
            }
        })
        .collect()
}

/// Orders nodes parents-first. Returns the order (glTF indices) and each glTF node's parent.
fn sort_nodes(document: &gltf::Document) -> Result<(Vec<usize>, Vec<Option<usize>>), RigError> {
    let count = document.nodes().len();
    let mut parents: Vec<Option<usize>> = vec![None; count];
    for node in document.nodes() {
        for child in node.children() {
            if child.index() == node.index() {
                return Err(err(format!("node {} lists itself as its child", node.index())));
            }
            if let Some(other) = parents[child.index()] {
                return Err(err(format!(
                    "node {} has two parents (nodes {other} and {}); glTF nodes form a tree",
                    child.index(),
                    node.index()
                )));
            }
            parents[child.index()] = Some(node.index());
        }
    }
    let children: Vec<Vec<usize>> = document
        .nodes()
        .map(|n| n.children().map(|c| c.index()).collect())
        .collect();
    let mut order: Vec<usize> = (0..count).filter(|&i| parents[i].is_none()).collect();
    let mut next = 0;
    while next < order.len() {
        let node = order[next];
        order.extend(&children[node]);
        next += 1;
    }
    if order.len() != count {
        let in_cycle = (0..count).find(|i| !order.contains(i)).unwrap_or(0);
        return Err(err(format!("the node hierarchy has a cycle (through node {in_cycle})")));
    }
    Ok((order, parents))
}

fn read_skin<'s>(
    skin: &gltf::Skin,
    slot: &[usize],
    get: impl Clone + for<'b> Fn(gltf::Buffer<'b>) -> Option<&'s [u8]>,
) -> Result<Skin, RigError> {
    let joints: Vec<usize> = skin.joints().map(|j| slot[j.index()]).collect();
    if joints.is_empty() {
        return Err(err(format!("skin {} has no joints", skin.index())));
    }
    let inverse_binds = match skin.inverse_bind_matrices() {
        None => vec![Mat4::IDENTITY; joints.len()],
        Some(_) => {
            let read: Vec<Mat4> = skin
                .reader(get)
                .read_inverse_bind_matrices()
                .ok_or_else(|| {
                    err(format!(
                        "skin {}: inverse bind matrices lie outside their buffer",
                        skin.index()
                    ))
                })?
                .map(|m| Mat4::from_cols_array_2d(&m))
                .collect();
            if read.len() != joints.len() {
                return Err(err(format!(
                    "skin {} has {} joints but {} inverse bind matrices",
                    skin.index(),
                    joints.len(),
                    read.len()
                )));
            }
            if let Some(j) = read.iter().position(|m| !m.is_finite()) {
                return Err(err(format!(
                    "skin {}: inverse bind matrix {j} is not finite",
                    skin.index()
                )));
            }
            read
        }
    };
    Ok(Skin {
        name: skin
            .name()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("skin {}", skin.index())),
        joints,
        inverse_binds,
    })
}

fn read_mesh<'s>(
    mesh: &gltf::Mesh,
    get: impl Clone + for<'b> Fn(gltf::Buffer<'b>) -> Option<&'s [u8]>,
) -> Result<Mesh, RigError> {
    let name = mesh
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("mesh {}", mesh.index()));
    let mut primitives = Vec::new();
    for primitive in mesh.primitives() {
        let at = |what: &str| format!("mesh '{name}' primitive {}: {what}", primitive.index());
        if primitive.mode() != gltf::mesh::Mode::Triangles {
            // Points and lines carry no surface to skin; they are skipped, not fatal.
            continue;
        }
        let reader = primitive.reader(get.clone());
        let positions: Vec<Vec3> = reader
            .read_positions()
            .ok_or_else(|| err(at("POSITION is missing or outside its buffer")))?
            .map(Vec3::from)
            .collect();
        let n = positions.len();
        let indices: Vec<u32> = match primitive.indices() {
            Some(_) => reader
                .read_indices()
                .ok_or_else(|| err(at("indices lie outside their buffer")))?
                .into_u32()
                .collect(),
            None => (0..n as u32).collect(),
        };
        if let Some(bad) = indices.iter().find(|&&i| i as usize >= n) {
            return Err(err(at(&format!("index {bad} is out of range for {n} vertices"))));
        }
        let normals = match reader.read_normals() {
            Some(iter) => iter.map(Vec3::from).collect(),
            None => smooth_normals(&positions, &indices),
        };
        let uvs = match reader.read_tex_coords(0) {
            Some(iter) => iter.into_f32().map(Vec2::from).collect(),
            None => vec![Vec2::ZERO; n],
        };
        let influences = read_influences(&reader, n).map_err(|e| err(at(&e)))?;
        for (what, len) in [("NORMAL", normals.len()), ("TEXCOORD_0", uvs.len())] {
            if len != n {
                return Err(err(at(&format!("{what} has {len} elements but POSITION has {n}"))));
            }
        }
        primitives.push(Primitive {
            positions,
            normals,
            uvs,
            influences,
            indices,
            material: primitive.material().index(),
        });
    }
    Ok(Mesh { name, primitives })
}

fn read_influences<'a, 's, F>(
    reader: &gltf::mesh::Reader<'a, 's, F>,
    vertex_count: usize,
) -> Result<Option<Influences>, String>
where
    F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
{
    type JointsAndWeights = (Vec<[u16; 4]>, Vec<[f32; 4]>);
    let mut sets: Vec<JointsAndWeights> = Vec::new();
    for set in 0..2u32 {
        let (Some(joints), Some(weights)) = (reader.read_joints(set), reader.read_weights(set)) else {
            break;
        };
        let joints: Vec<[u16; 4]> = joints.into_u16().collect();
        let weights: Vec<[f32; 4]> = weights.into_f32().collect();
        if joints.len() != vertex_count || weights.len() != vertex_count {
            return Err(format!(
                "JOINTS_{set}/WEIGHTS_{set} have {}/{} elements but POSITION has {vertex_count}",
                joints.len(),
                weights.len()
            ));
        }
        sets.push((joints, weights));
    }
    if sets.is_empty() {
        return Ok(None);
    }
    let count = sets.len();
    let mut joints = Vec::with_capacity(vertex_count * count);
    let mut weights = Vec::with_capacity(vertex_count * count);
    for v in 0..vertex_count {
        for (j, w) in &sets {
            joints.push(j[v]);
            weights.push(w[v]);
        }
    }
    Ok(Some(Influences {
        sets: count,
        joints,
        weights,
    }))
}

fn read_material(material: &gltf::Material, texture_count: usize) -> Material {
    let pbr = material.pbr_metallic_roughness();
    Material {
        name: material.name().unwrap_or("material").to_owned(),
        base_color: Vec4::from(pbr.base_color_factor()),
        base_color_texture: pbr
            .base_color_texture()
            .map(|t| t.texture().index())
            .filter(|&t| t < texture_count),
        double_sided: material.double_sided(),
    }
}

fn read_clip<'s>(
    animation: &gltf::Animation,
    slot: &[usize],
    get: impl Clone + for<'b> Fn(gltf::Buffer<'b>) -> Option<&'s [u8]>,
) -> Result<Clip, RigError> {
    let name = animation
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("clip {}", animation.index()));
    let mut channels = Vec::new();
    let mut duration = 0.0f32;
    for channel in animation.channels() {
        let at = |what: &str| err(format!("clip '{name}' channel {}: {what}", channel.index()));
        let reader = channel.reader(get.clone());
        let times: Vec<f32> = reader
            .read_inputs()
            .ok_or_else(|| at("key times lie outside their buffer"))?
            .collect();
        let outputs = reader
            .read_outputs()
            .ok_or_else(|| at("key values lie outside their buffer"))?;
        let (property, values): (Property, Vec<Vec4>) = match outputs {
            ReadOutputs::Translations(it) => (Property::Translation, it.map(|v| Vec3::from(v).extend(0.0)).collect()),
            ReadOutputs::Scales(it) => (Property::Scale, it.map(|v| Vec3::from(v).extend(0.0)).collect()),
            ReadOutputs::Rotations(it) => (Property::Rotation, it.into_f32().map(Vec4::from).collect()),
            // Morph target weights do not move nodes; they are not played yet.
            ReadOutputs::MorphTargetWeights(_) => continue,
        };
        let interpolation = match channel.sampler().interpolation() {
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let mut values = values;
        if property == Property::Rotation && per_key == 1 {
            // Exporters write slightly denormalized quaternions; slerp expects unit length.
            for q in &mut values {
                *q = q.normalize_or(Vec4::W);
            }
        }
        if times.is_empty() {
            return Err(at("has no keys"));
        }
        if values.len() != times.len() * per_key {
            return Err(at(&format!("{} keys but {} values", times.len(), values.len())));
        }
        if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] < w[0]) {
            return Err(at("key times are not finite and increasing"));
        }
        duration = duration.max(*times.last().unwrap_or(&0.0));
        channels.push(Channel {
            node: slot[channel.target().node().index()],
            property,
            interpolation,
            times,
            values,
        });
    }
    Ok(Clip {
        name,
        duration,
        channels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_outside_the_model_folder_are_refused() {
        let base = Path::new("/models/fox");
        assert_eq!(
            resolve_uri("tex/a%20b.png", Some(base)).unwrap(),
            base.join("tex/a b.png")
        );
        assert_eq!(
            resolve_uri("tex/../a.bin", Some(base)).unwrap(),
            base.join("tex/../a.bin")
        );
        for bad in ["../a.bin", "tex/../../a.bin", "/etc/passwd", "http://example.com/a.bin"] {
            let e = resolve_uri(bad, Some(base)).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert!(
            resolve_uri("a.bin", None)
                .unwrap_err()
                .contains("not opened from a folder")
        );
    }
}
