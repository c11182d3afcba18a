//! glTF 2.0 (`.gltf`, `.glb`) → [`Rig`].
//!
//! The `gltf` crate parses and validates the JSON; everything that touches bytes is done here:
//! the GLB container, buffers and images are resolved by this module, and accessors are read by
//! [`super::accessor`], which checks every size claim against the real data and charges a
//! memory [`Budget`] before allocating. A file may only reference files inside its own folder
//! (no absolute paths, no `..` that climbs out of it, no symbolic link that leads out of it).
//!
//! What stops a load and what does not:
//! - the structure the pose depends on (node tree, transforms, skins, inverse bind matrices,
//!   mesh geometry) must be sound, or the load fails with a message naming the problem;
//! - an animation channel that cannot be played (bad keys, non-finite values) is left out with
//!   a warning, and a texture that cannot be loaded is replaced by white with a warning, so the
//!   rest of the file can still be viewed and its report read.

use super::accessor::{self, Budget, BufferData, Buffers, FLOAT, FLOAT_OR_NORM, FLOAT_OR_UNORM, UINT_8_16, UINT_ANY};
use super::*;
use base64::Engine;
use gltf::mesh::Semantic;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

/// Largest file or buffer the importer reads; anything bigger is refused before allocating.
const MAX_BYTES: u64 = 1 << 30;
/// Largest image side decoded.
const MAX_IMAGE_SIDE: u32 = 16384;
/// Bytes the GPU and pose evaluation will need per drawn vertex and per palette entry, charged
/// to the budget so that a small file cannot make the viewer allocate without bound downstream.
const DRAWN_VERTEX_BYTES: u64 = 64;
const PALETTE_ENTRY_BYTES: u64 = 64 * 2;
/// How many validation problems a load error lists before summarizing the rest.
const LISTED_PROBLEMS: usize = 6;

fn err(message: impl Into<String>) -> RigError {
    RigError(message.into())
}

/// Loads a `.gltf` or `.glb` file; external buffers and images are looked up next to it.
pub fn load_file(path: &Path) -> Result<Rig, RigError> {
    let bytes = read_file_bounded(path).map_err(err)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    load_slice(&bytes, path.parent(), &name)
}

/// Reads a regular file of at most [`MAX_BYTES`].
fn read_file_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if !metadata.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if metadata.len() > MAX_BYTES {
        return Err(format!(
            "{} is {} bytes, more than the {MAX_BYTES}-byte limit",
            path.display(),
            metadata.len()
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{} grew past the {MAX_BYTES}-byte limit while being read",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Loads glTF JSON or GLB bytes. `base_dir` is where relative URIs point; `None` allows only
/// embedded data (GLB chunks and data URIs).
pub fn load_slice(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, RigError> {
    let (json, blob) = if bytes.starts_with(b"glTF") {
        glb::split_glb(bytes).map_err(|e| err(format!("not a valid GLB file: {e}")))?
    } else if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(err(
            "not a glTF file: it starts neither with the GLB magic 'glTF' nor with a JSON object",
        ));
    } else {
        (bytes, None)
    };
    let root: gltf::json::Root =
        gltf::json::deserialize::from_slice(json).map_err(|e| err(format!("not a valid glTF file: {e}")))?;
    validate(&root)?;
    let document = gltf::Document::from_json_without_validation(root);

    let mut warnings = Vec::new();
    let (buffers, external_bytes) = load_buffers(&document, blob, base_dir)?;
    let mut budget = Budget::for_input(bytes.len() as u64 + external_bytes);
    let data_errors = check_views_and_accessors(&document, &buffers, bytes.len() as u64 + external_bytes);
    let textures = load_textures(&document, &buffers, base_dir, &mut budget, &mut warnings);

    let (order, parents) = sort_nodes(&document)?;
    // `slot[i]` is where glTF node i lives in the sorted node array.
    let mut slot = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        slot[old] = new;
    }
    let gltf_nodes: Vec<gltf::Node> = document.nodes().collect();
    let mut node_matrices = Vec::with_capacity(order.len());
    let mut nodes = Vec::with_capacity(order.len());
    for &old in &order {
        let node = &gltf_nodes[old];
        let name = node.name().map(str::to_owned).unwrap_or_else(|| format!("node {old}"));
        let matrix = Mat4::from_cols_array_2d(&node.transform().matrix());
        if !matrix.is_finite() {
            return Err(err(format!("node {old} ('{name}') has a transform that is not finite")));
        }
        node_matrices.push(matrix);
        let (t, r, s) = node.transform().decomposed();
        // A matrix with a zero scale axis has no rotation to recover; identity keeps it collapsed.
        let rotation = Vec4::from(r).normalize_or(Vec4::W);
        nodes.push(Node {
            name,
            parent: parents[old].map(|p| slot[p]),
            rest: Trs {
                translation: Vec3::from(t),
                rotation: Quat::from_vec4(rotation),
                scale: Vec3::from(s),
            },
        });
    }

    let mut facts = ImportFacts {
        data_errors,
        gltf_node: order.clone(),
        node_matrices,
        ..ImportFacts::default()
    };
    let mut skins = Vec::new();
    for skin in document.skins() {
        skins.push(read_skin(&skin, &slot, &buffers, &mut budget)?);
        facts.skin_skeletons.push(skin.skeleton().map(|n| slot[n.index()]));
    }
    let mut meshes = Vec::new();
    let mut morphs = Morphs::default();
    for mesh in document.meshes() {
        morphs
            .targets
            .push(read_morph_targets(&mesh, &buffers, &mut budget, &mut warnings)?);
        morphs
            .default_weights
            .push(mesh.weights().map(<[f32]>::to_vec).unwrap_or_default());
        let (mesh, primitive_facts) = read_mesh(&mesh, &buffers, &mut budget, &mut facts, &mut warnings)?;
        meshes.push(mesh);
        facts.primitives.push(primitive_facts);
    }
    let materials = document
        .materials()
        .map(|m| read_material(&m, textures.len()))
        .collect();
    let mut clips = Vec::new();
    for animation in document.animations() {
        for channel in animation.channels() {
            if channel.target().property() == gltf::animation::Property::MorphTargetWeights {
                let node = slot[channel.target().node().index()];
                match read_morph_channel(&channel, clips.len(), node, &buffers, &mut budget) {
                    Ok(morph) => morphs.channels.push(morph),
                    Err(ChannelError::Budget(e)) => return Err(err(e)),
                    Err(ChannelError::Unsupported(e) | ChannelError::Invalid(e)) => warnings.push(format!(
                        "animation {} morph weight channel {} left out: {e}",
                        animation.index(),
                        channel.index()
                    )),
                }
            }
        }
        let (clip, channel_facts) = read_clip(&animation, &slot, &buffers, &mut budget, &mut facts, &mut warnings)?;
        clips.push(clip);
        facts.channels.push(channel_facts);
    }

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
    charge_downstream(&instances, &meshes, &skins, nodes.len(), &mut budget).map_err(err)?;
    facts.decoded_bytes = budget.used();

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
        facts,
        sources: external_sources(&document, base_dir),
        morphs,
    })
}

/// The morph targets of each triangle primitive of `mesh` (the primitives the rig keeps). Targets
/// whose sizes do not match their primitive are left out with a warning.
fn read_morph_targets(
    mesh: &gltf::Mesh,
    buffers: &Buffers,
    budget: &mut Budget,
    warnings: &mut Vec<String>,
) -> Result<Vec<Vec<MorphTarget>>, RigError> {
    let mut per_primitive = Vec::new();
    for primitive in mesh.primitives().filter(|p| p.mode() == gltf::mesh::Mode::Triangles) {
        let vertices = primitive.get(&Semantic::Positions).map_or(0, |a| a.count());
        let mut targets = Vec::new();
        for (t, target) in primitive.morph_targets().enumerate() {
            let mut read = |accessor: Option<gltf::Accessor>, what: &str| -> Result<Vec<Vec3>, AccessorError> {
                let Some(accessor) = accessor else {
                    // `vertices` is the POSITION accessor's claim, not yet checked against data.
                    budget
                        .charge(vertices as u64 * 12, what)
                        .map_err(AccessorError::Budget)?;
                    return Ok(vec![Vec3::ZERO; vertices]);
                };
                let values = floats::<3>(&accessor, FLOAT_OR_NORM, buffers, budget)
                    .map_err(|e| AccessorError::classify(e).context(what))?;
                if values.len() != vertices {
                    return Err(AccessorError::Data(format!(
                        "{what} has {} offsets for {vertices} vertices",
                        values.len()
                    )));
                }
                Ok(values.into_iter().map(Vec3::from).collect())
            };
            let read = read(target.positions(), "POSITION").and_then(|positions| {
                read(target.normals(), "NORMAL").map(|normals| MorphTarget { positions, normals })
            });
            match read {
                Ok(target) => targets.push(target),
                Err(AccessorError::Budget(e)) => return Err(err(e)),
                Err(AccessorError::Data(e)) => {
                    warnings.push(format!(
                        "mesh {} primitive {} morph target {t} left out: {e}",
                        mesh.index(),
                        primitive.index()
                    ));
                    targets.clear();
                    break;
                }
            }
        }
        per_primitive.push(targets);
    }
    Ok(per_primitive)
}

/// A sampler's interpolation and key times.
fn read_sampler_keys(
    sampler: &gltf::animation::Sampler,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<(Interpolation, Vec<f32>), ChannelError> {
    let interpolation = match sampler.interpolation() {
        gltf::animation::Interpolation::Step => Interpolation::Step,
        gltf::animation::Interpolation::Linear => Interpolation::Linear,
        gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
    };
    let times = floats::<1>(&sampler.input(), FLOAT, buffers, budget)
        .map_err(|e| ChannelError::from(AccessorError::classify(e).context("key times")))?
        .into_iter()
        .map(|[t]| t)
        .collect();
    Ok((interpolation, times))
}

/// A channel animating morph target weights.
fn read_morph_channel(
    channel: &gltf::animation::Channel,
    clip: usize,
    node: usize,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<MorphChannel, ChannelError> {
    let sampler = channel.sampler();
    let (interpolation, times) = read_sampler_keys(&sampler, buffers, budget)?;
    let read = |what: &str, e: String| ChannelError::from(AccessorError::classify(e).context(what));
    let values: Vec<f32> = floats::<1>(&sampler.output(), FLOAT_OR_NORM, buffers, budget)
        .map_err(|e| read("key values", e))?
        .into_iter()
        .map(|[v]| v)
        .collect();
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    if times.is_empty() || values.is_empty() || !values.len().is_multiple_of(times.len() * per_key) {
        return Err(ChannelError::Invalid(format!(
            "{} keys do not divide {} weights",
            times.len(),
            values.len()
        )));
    }
    if times.iter().any(|t| !t.is_finite())
        || times.windows(2).any(|w| w[1] < w[0])
        || values.iter().any(|v| !v.is_finite())
    {
        return Err(ChannelError::Invalid(
            "key times or weights are not finite and increasing".into(),
        ));
    }
    let targets = values.len() / (times.len() * per_key);
    Ok(MorphChannel {
        clip,
        node,
        interpolation,
        times,
        values,
        targets,
    })
}

/// The files behind the document's relative buffer and image URIs (data URIs and URIs the
/// folder rule refuses are left out).
fn external_sources(document: &gltf::Document, base_dir: Option<&Path>) -> Vec<PathBuf> {
    let buffers = document.buffers().filter_map(|b| match b.source() {
        gltf::buffer::Source::Uri(uri) => Some(uri),
        gltf::buffer::Source::Bin => None,
    });
    let images = document.images().filter_map(|i| match i.source() {
        gltf::image::Source::Uri { uri, .. } => Some(uri),
        gltf::image::Source::View { .. } => None,
    });
    let mut sources: Vec<PathBuf> = buffers
        .chain(images)
        .filter(|uri| !uri.starts_with("data:"))
        .filter_map(|uri| resolve_uri(uri, base_dir).ok())
        .collect();
    sources.sort();
    sources.dedup();
    sources
}

/// Runs the `gltf` crate's validation (references in range, enum values known, required fields
/// present) and words its findings. An accessor without a buffer view is allowed, as glTF
/// allows it (its elements are zeros).
fn validate(root: &gltf::json::Root) -> Result<(), RigError> {
    use gltf::json::validation::{Checked, Error, Validate};
    const OUT_OF_RANGE: &str = "refers to an object the file does not have (index out of range)";
    let mut problems = Vec::new();
    // Checked first: the `gltf` crate's own check of POSITION indexes the accessor array
    // without a bounds check.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            for (semantic, accessor) in &primitive.attributes {
                if accessor.value() >= root.accessors.len() {
                    let name = match semantic {
                        Checked::Valid(s) => s.to_string(),
                        Checked::Invalid => "(unknown attribute)".into(),
                    };
                    problems.push(format!("meshes[{m}].primitives[{p}].attributes.{name} {OUT_OF_RANGE}"));
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(err(format!("invalid glTF: {}", problems.join("; "))));
    }
    // Not checked by the `gltf` crate: the node and property an animation channel targets.
    for (a, animation) in root.animations.iter().enumerate() {
        for (c, channel) in animation.channels.iter().enumerate() {
            if channel.target.node.value() >= root.nodes.len() {
                problems.push(format!("animations[{a}].channels[{c}].target.node {OUT_OF_RANGE}"));
            }
            if matches!(channel.target.path, Checked::Invalid) {
                problems.push(format!(
                    "animations[{a}].channels[{c}].target.path is not translation, rotation, scale or weights"
                ));
            }
        }
    }
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        let path = path().to_string();
        let zero_filled_accessor =
            matches!(error, Error::Missing) && path.starts_with("accessors[") && path.ends_with("].bufferView");
        if !zero_filled_accessor {
            let what = match error {
                Error::IndexOutOfBounds => OUT_OF_RANGE,
                Error::Invalid => "has an invalid value",
                Error::Missing => "is missing",
                Error::Oversize => "is a size or offset beyond what this machine can address",
                Error::Unsupported => "uses an unsupported extension",
            };
            problems.push(format!("{path} {what}"));
        }
    });
    if problems.is_empty() {
        return Ok(());
    }
    let more = problems.len().saturating_sub(LISTED_PROBLEMS);
    problems.truncate(LISTED_PROBLEMS);
    let mut message = format!("invalid glTF: {}", problems.join("; "));
    if more > 0 {
        message.push_str(&format!("; and {more} more"));
    }
    Err(err(message))
}

/// Problems in buffer views and accessors that do not stop the load by themselves (the data may
/// be unused, or the problem may be only in its declared bounds). Data that is used and out of
/// range fails the load later, when it is read.
fn check_views_and_accessors(document: &gltf::Document, buffers: &Buffers, input_bytes: u64) -> Vec<String> {
    let mut problems: Vec<String> = document.views().filter_map(|view| buffers.view(&view).err()).collect();
    // Comparing min/max reads the data; many accessors over one big view must not make that
    // quadratic, so the bytes scanned are limited the way decoded memory is.
    let mut scan = Budget::for_input(input_bytes);
    for accessor in document.accessors() {
        problems.extend(accessor::check_accessor(&accessor, buffers, &mut scan));
    }
    problems
}

/// Charges what the viewer will allocate for this rig after the import (GPU vertex buffers per
/// drawn instance, joint palettes per skinned instance, per-node pose arrays), so that a few
/// kilobytes of JSON instancing a big mesh a million times are refused here.
fn charge_downstream(
    instances: &[MeshInstance],
    meshes: &[Mesh],
    skins: &[Skin],
    nodes: usize,
    budget: &mut Budget,
) -> Result<(), String> {
    let mut bytes = (nodes as u64).saturating_mul(128);
    for instance in instances {
        for primitive in &meshes[instance.mesh].primitives {
            bytes = bytes.saturating_add(
                (primitive.vertex_count() as u64)
                    .saturating_mul(DRAWN_VERTEX_BYTES)
                    .saturating_add(primitive.indices.len() as u64 * 4),
            );
        }
        if let Some(skin) = instance.skin {
            bytes = bytes.saturating_add((skins[skin].joints.len() as u64).saturating_mul(PALETTE_ENTRY_BYTES));
        }
    }
    budget.charge(
        bytes,
        &format!("drawing {} mesh instances of {nodes} nodes", instances.len()),
    )
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

/// Every buffer's bytes, and how many bytes were read from external files. The GLB binary chunk
/// is borrowed, not copied; an external file named by several buffers is read once.
fn load_buffers<'a>(
    document: &gltf::Document,
    blob: Option<&'a [u8]>,
    base_dir: Option<&Path>,
) -> Result<(Buffers<'a>, u64), RigError> {
    let mut files: HashMap<PathBuf, Rc<Vec<u8>>> = HashMap::new();
    let mut external = 0u64;
    let mut buffers = Vec::new();
    for buffer in document.buffers() {
        let index = buffer.index();
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => BufferData::Borrowed(blob.ok_or_else(|| {
                err(format!(
                    "buffer {index} refers to the GLB binary chunk, but there is none"
                ))
            })?),
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => BufferData::Shared(Rc::new(
                decode_data_uri(uri).map_err(|e| err(format!("buffer {index}: {e}")))?,
            )),
            gltf::buffer::Source::Uri(uri) => {
                let path = resolve_uri(uri, base_dir).map_err(|e| err(format!("buffer {index}: {e}")))?;
                if let Some(data) = files.get(&path) {
                    BufferData::Shared(data.clone())
                } else {
                    let data = Rc::new(read_file_bounded(&path).map_err(|e| {
                        err(format!(
                            "buffer {index}: the file '{uri}' it refers to is missing or unreadable: {e}"
                        ))
                    })?);
                    external += data.len() as u64;
                    if external > MAX_BYTES {
                        return Err(err(format!(
                            "buffer {index}: the external buffers total more than the {MAX_BYTES}-byte limit"
                        )));
                    }
                    files.insert(path, data.clone());
                    BufferData::Shared(data)
                }
            }
        };
        let real = match &data {
            BufferData::Borrowed(b) => b.len(),
            BufferData::Shared(b) => b.len(),
        };
        if real < buffer.length() {
            return Err(err(format!(
                "buffer {index} declares {} bytes but holds only {real}",
                buffer.length()
            )));
        }
        buffers.push((data, buffer.length()));
    }
    Ok((Buffers(buffers), external))
}

fn decode_data_uri(uri: &str) -> Result<Vec<u8>, String> {
    let rest = uri.strip_prefix("data:").unwrap_or(uri);
    let (_, payload) = rest
        .split_once(";base64,")
        .ok_or_else(|| "data URI is not base64".to_string())?;
    if payload.len() as u64 > MAX_BYTES * 4 / 3 {
        return Err("data URI is larger than the size limit".into());
    }
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|e| format!("data URI is not valid base64: {e}"))
}

/// Bytes behind a URI: a base64 data URI, or a file inside `base_dir`.
fn read_uri(uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, String> {
    if uri.starts_with("data:") {
        return decode_data_uri(uri);
    }
    read_file_bounded(&resolve_uri(uri, base_dir)?)
}

/// Applies the URI rule: relative paths that stay inside `base_dir`, nothing else. A path that
/// exists is also checked after following symbolic links.
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
    let path = base.join(relative);
    if let (Ok(real), Ok(real_base)) = (path.canonicalize(), base.canonicalize())
        && !real.starts_with(&real_base)
    {
        return Err(format!(
            "'{uri}' leads outside the model's folder through a symbolic link (to {}); only files inside it are read",
            real.display()
        ));
    }
    Ok(path)
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
    buffers: &Buffers,
    base_dir: Option<&Path>,
    budget: &mut Budget,
    warnings: &mut Vec<String>,
) -> Vec<Option<Texture>> {
    // Several textures may share an image: it is decoded once.
    let mut decoded: HashMap<usize, Result<image::RgbaImage, String>> = HashMap::new();
    document
        .textures()
        .map(|texture| {
            let image = texture.source();
            let label = image
                .name()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("image {}", image.index()));
            let decoded = decoded
                .entry(image.index())
                .or_insert_with(|| decode_image(&image, buffers, base_dir, budget));
            let result = match decoded {
                Ok(rgba) => budget.charge(rgba.len() as u64, "the texture").map(|_| rgba.clone()),
                Err(e) => Err(e.clone()),
            };
            match result {
                Ok(rgba) => Some(Texture {
                    name: label,
                    width: rgba.width(),
                    height: rgba.height(),
                    rgba8: rgba.into_raw(),
                }),
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

fn decode_image(
    image: &gltf::Image,
    buffers: &Buffers,
    base_dir: Option<&Path>,
    budget: &Budget,
) -> Result<image::RgbaImage, String> {
    let bytes: Cow<[u8]> = match image.source() {
        gltf::image::Source::View { view, .. } => Cow::Borrowed(buffers.view(&view)?),
        gltf::image::Source::Uri { uri, .. } => Cow::Owned(read_uri(uri, base_dir)?),
    };
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes.as_ref()))
        .with_guessed_format()
        .map_err(|e| format!("cannot read it: {e}"))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some((MAX_BYTES / 2).min(budget.left()));
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| format!("cannot decode it: {e}"))?;
    Ok(decoded.into_rgba8())
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
                return Err(err(if other == node.index() {
                    format!("node {other} lists node {} twice among its children", child.index())
                } else {
                    format!(
                        "node {} has two parents (nodes {other} and {}); glTF nodes form a tree",
                        child.index(),
                        node.index()
                    )
                }));
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
        let mut placed = vec![false; count];
        for &i in &order {
            placed[i] = true;
        }
        let stranded: Vec<usize> = (0..count).filter(|&i| !placed[i]).collect();
        let mut listed: Vec<String> = stranded.iter().take(8).map(|i| i.to_string()).collect();
        if stranded.len() > listed.len() {
            listed.push(format!("and {} more", stranded.len() - listed.len()));
        }
        return Err(err(format!(
            "the node hierarchy has a cycle: nodes {} are in it or below it, with no root above them",
            listed.join(", ")
        )));
    }
    Ok((order, parents))
}

/// Reads an accessor of `N` floats per element; errors say which accessor and why.
fn floats<const N: usize>(
    accessor: &gltf::Accessor,
    allowed: &[gltf::accessor::DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Vec<[f32; N]>, String> {
    accessor::read_f32::<N>(accessor, allowed, buffers, budget)
}

fn read_skin(skin: &gltf::Skin, slot: &[usize], buffers: &Buffers, budget: &mut Budget) -> Result<Skin, RigError> {
    let joints: Vec<usize> = skin.joints().map(|j| slot[j.index()]).collect();
    if joints.is_empty() {
        return Err(err(format!("skin {} has no joints", skin.index())));
    }
    let inverse_binds = match skin.inverse_bind_matrices() {
        None => vec![Mat4::IDENTITY; joints.len()],
        Some(accessor) => {
            let read: Vec<Mat4> = floats::<16>(&accessor, FLOAT, buffers, budget)
                .map_err(|e| err(format!("skin {} inverse bind matrices: {e}", skin.index())))?
                .iter()
                .map(Mat4::from_cols_array)
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

fn mode_code(mode: gltf::mesh::Mode) -> u32 {
    use gltf::mesh::Mode::*;
    match mode {
        Points => 0,
        Lines => 1,
        LineLoop => 2,
        LineStrip => 3,
        Triangles => 4,
        TriangleStrip => 5,
        TriangleFan => 6,
    }
}

fn read_mesh(
    mesh: &gltf::Mesh,
    buffers: &Buffers,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<(Mesh, Vec<PrimitiveFacts>), RigError> {
    let name = mesh
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("mesh {}", mesh.index()));
    let mut primitives = Vec::new();
    let mut primitive_facts = Vec::new();
    for primitive in mesh.primitives() {
        let at = |what: &str| format!("mesh '{name}' primitive {}: {what}", primitive.index());
        let mut pf = PrimitiveFacts {
            gltf_index: primitive.index(),
            mode: mode_code(primitive.mode()),
            ..PrimitiveFacts::default()
        };
        if primitive.mode() != gltf::mesh::Mode::Triangles {
            // Points and lines carry no surface to skin; they are not drawn, but their weights are
            // still read for the report.
            let read = read_positions(&primitive, buffers, budget).and_then(|positions| {
                read_influences(&primitive, positions.len(), buffers, budget, &mut pf).map(|i| (positions.len(), i))
            });
            match read {
                Ok((vertex_count, influences)) => facts.skipped_primitives.push(SkippedPrimitive {
                    mesh: mesh.index(),
                    facts: pf,
                    vertex_count,
                    influences,
                }),
                Err(AccessorError::Budget(e)) => return Err(err(at(&e))),
                Err(AccessorError::Data(e)) => warnings.push(at(&format!("not drawn (mode {}), and {e}", pf.mode))),
            }
            continue;
        }
        let read = read_triangles(&primitive, buffers, budget, &mut pf);
        let primitive = read.map_err(|e| err(at(e.message())))?;
        primitives.push(primitive);
        primitive_facts.push(pf);
    }
    Ok((Mesh { name, primitives }, primitive_facts))
}

/// A failed accessor read: out of memory budget (fatal for the whole file), or bad data.
enum AccessorError {
    Budget(String),
    Data(String),
}

impl AccessorError {
    fn message(&self) -> &str {
        match self {
            AccessorError::Budget(m) | AccessorError::Data(m) => m,
        }
    }

    fn classify(message: String) -> AccessorError {
        if message.contains("of memory, beyond the") {
            AccessorError::Budget(message)
        } else {
            AccessorError::Data(message)
        }
    }

    fn context(self, what: &str) -> AccessorError {
        match self {
            AccessorError::Budget(m) => AccessorError::Budget(format!("{what}: {m}")),
            AccessorError::Data(m) => AccessorError::Data(format!("{what}: {m}")),
        }
    }
}

fn attribute<const N: usize>(
    primitive: &gltf::Primitive,
    semantic: Semantic,
    allowed: &[gltf::accessor::DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Option<Vec<[f32; N]>>, AccessorError> {
    let Some(accessor) = primitive.get(&semantic) else {
        return Ok(None);
    };
    floats::<N>(&accessor, allowed, buffers, budget)
        .map(Some)
        .map_err(|e| AccessorError::classify(e).context(&semantic.to_string()))
}

fn read_positions(
    primitive: &gltf::Primitive,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Vec<Vec3>, AccessorError> {
    let positions = attribute::<3>(primitive, Semantic::Positions, FLOAT, buffers, budget)?
        .ok_or_else(|| AccessorError::Data("POSITION is missing".into()))?;
    Ok(positions.into_iter().map(Vec3::from).collect())
}

fn read_triangles(
    primitive: &gltf::Primitive,
    buffers: &Buffers,
    budget: &mut Budget,
    pf: &mut PrimitiveFacts,
) -> Result<Primitive, AccessorError> {
    let positions = read_positions(primitive, buffers, budget)?;
    let n = positions.len();
    let indices: Vec<u32> = match primitive.indices() {
        Some(accessor) => accessor::read_u32::<1>(&accessor, UINT_ANY, buffers, budget)
            .map_err(|e| AccessorError::classify(e).context("indices"))?
            .into_iter()
            .map(|[i]| i)
            .collect(),
        None => {
            budget
                .charge(n as u64 * 4, "generated indices")
                .map_err(AccessorError::Budget)?;
            (0..n as u32).collect()
        }
    };
    if let Some(bad) = indices.iter().find(|&&i| i as usize >= n) {
        return Err(AccessorError::Data(format!(
            "index {bad} is out of range for {n} vertices"
        )));
    }
    let normals = match attribute::<3>(primitive, Semantic::Normals, FLOAT, buffers, budget)? {
        Some(normals) => normals.into_iter().map(Vec3::from).collect(),
        None => {
            budget
                .charge(n as u64 * 12, "generated normals")
                .map_err(AccessorError::Budget)?;
            smooth_normals(&positions, &indices)
        }
    };
    let uvs = match attribute::<2>(primitive, Semantic::TexCoords(0), FLOAT_OR_UNORM, buffers, budget)? {
        Some(uvs) => uvs.into_iter().map(Vec2::from).collect(),
        None => {
            budget
                .charge(n as u64 * 8, "texture coordinates")
                .map_err(AccessorError::Budget)?;
            vec![Vec2::ZERO; n]
        }
    };
    let influences = read_influences(primitive, n, buffers, budget, pf)?;
    for (what, len) in [("NORMAL", normals.len()), ("TEXCOORD_0", uvs.len())] {
        if len != n {
            return Err(AccessorError::Data(format!(
                "{what} has {len} elements but POSITION has {n}"
            )));
        }
    }
    Ok(Primitive {
        positions,
        normals,
        uvs,
        influences,
        indices,
        material: primitive.material().index(),
    })
}

/// Reads `JOINTS_0`/`WEIGHTS_0` and `JOINTS_1`/`WEIGHTS_1` into [`Influences`]. Later sets are
/// read only to count the vertices whose weights they carry (skinning ignores them).
fn read_influences(
    primitive: &gltf::Primitive,
    vertex_count: usize,
    buffers: &Buffers,
    budget: &mut Budget,
    pf: &mut PrimitiveFacts,
) -> Result<Option<Influences>, AccessorError> {
    // The set numbers present, in order (a file may name `JOINTS_4000000000`: only sets that
    // exist are visited).
    let mut present: Vec<u32> = primitive
        .attributes()
        .filter_map(|(semantic, _)| match semantic {
            Semantic::Joints(n) | Semantic::Weights(n) => Some(n),
            _ => None,
        })
        .collect();
    present.sort_unstable();
    present.dedup();
    if present.is_empty() {
        return Ok(None);
    }
    type JointsAndWeights = (Vec<[u32; 4]>, Vec<[f32; 4]>);
    let mut sets: Vec<JointsAndWeights> = Vec::new();
    let mut truncated = vec![0.0f32; 0];
    for set in present {
        let (joints, weights) = match (
            primitive.get(&Semantic::Joints(set)),
            primitive.get(&Semantic::Weights(set)),
        ) {
            (Some(j), Some(w)) => (j, w),
            (None, None) => continue,
            (Some(_), None) => {
                pf.unpaired_sets.push(format!("JOINTS_{set} without WEIGHTS_{set}"));
                continue;
            }
            (None, Some(_)) => {
                pf.unpaired_sets.push(format!("WEIGHTS_{set} without JOINTS_{set}"));
                continue;
            }
        };
        let joint_values = accessor::read_u32::<4>(&joints, UINT_8_16, buffers, budget)
            .map_err(|e| AccessorError::classify(e).context(&format!("JOINTS_{set}")))?;
        let weight_values = accessor::read_f32::<4>(&weights, FLOAT_OR_UNORM, buffers, budget)
            .map_err(|e| AccessorError::classify(e).context(&format!("WEIGHTS_{set}")))?;
        if joint_values.len() != vertex_count || weight_values.len() != vertex_count {
            return Err(AccessorError::Data(format!(
                "JOINTS_{set}/WEIGHTS_{set} have {}/{} elements but POSITION has {vertex_count}",
                joint_values.len(),
                weight_values.len()
            )));
        }
        if set < 2 && sets.is_empty() {
            pf.weight_quantum = match weights.data_type() {
                gltf::accessor::DataType::U8 => 1.0 / 255.0,
                gltf::accessor::DataType::U16 => 1.0 / 65535.0,
                _ => 0.0,
            };
        }
        if set < 2 {
            sets.push((joint_values, weight_values));
        } else {
            if truncated.is_empty() {
                truncated = vec![0.0; vertex_count];
            }
            for (sum, w) in truncated.iter_mut().zip(&weight_values) {
                *sum += w.iter().filter(|w| **w != 0.0).map(|w| w.abs()).sum::<f32>();
            }
        }
    }
    for (v, &dropped) in truncated.iter().enumerate() {
        if dropped != 0.0 {
            pf.truncated_vertices.push(v as u32);
            pf.truncated_weight_max = pf.truncated_weight_max.max(dropped);
        }
    }
    if sets.is_empty() {
        return Ok(None);
    }
    let count = sets.len();
    let mut joints = Vec::with_capacity(vertex_count * count);
    let mut weights = Vec::with_capacity(vertex_count * count);
    for v in 0..vertex_count {
        for (j, w) in &sets {
            joints.push(j[v].map(|j| j as u16));
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

fn read_clip(
    animation: &gltf::Animation,
    slot: &[usize],
    buffers: &Buffers,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<(Clip, Vec<ChannelFacts>), RigError> {
    let name = animation
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("clip {}", animation.index()));
    let mut channels = Vec::new();
    let mut channel_facts = Vec::new();
    let mut duration = 0.0f32;
    for channel in animation.channels() {
        let node = slot[channel.target().node().index()];
        let drop = |reason: String, unsupported: bool| DroppedChannel {
            clip: animation.index(),
            gltf_index: channel.index(),
            node,
            reason,
            unsupported,
        };
        match read_channel(&channel, node, buffers, budget) {
            Ok((read, cf)) => {
                duration = duration.max(read.times.last().copied().unwrap_or(0.0));
                channels.push(read);
                channel_facts.push(cf);
            }
            Err(ChannelError::Budget(e)) => {
                return Err(err(format!("clip '{name}' channel {}: {e}", channel.index())));
            }
            Err(ChannelError::Unsupported(reason)) => facts.dropped_channels.push(drop(reason, true)),
            Err(ChannelError::Invalid(reason)) => {
                warnings.push(format!("clip '{name}' channel {} left out: {reason}", channel.index()));
                facts.dropped_channels.push(drop(reason, false));
            }
        }
    }
    Ok((
        Clip {
            name,
            duration,
            channels,
        },
        channel_facts,
    ))
}

enum ChannelError {
    /// The memory budget ran out: the whole load fails.
    Budget(String),
    /// A valid channel of a kind that is not played.
    Unsupported(String),
    /// Broken data: the channel is left out.
    Invalid(String),
}

impl From<AccessorError> for ChannelError {
    fn from(e: AccessorError) -> Self {
        match e {
            AccessorError::Budget(m) => ChannelError::Budget(m),
            AccessorError::Data(m) => ChannelError::Invalid(m),
        }
    }
}

fn read_channel(
    channel: &gltf::animation::Channel,
    node: usize,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<(Channel, ChannelFacts), ChannelError> {
    use gltf::animation::Property as P;
    let property = match channel.target().property() {
        P::Translation => Property::Translation,
        P::Rotation => Property::Rotation,
        P::Scale => Property::Scale,
        P::MorphTargetWeights => {
            return Err(ChannelError::Unsupported(
                "morph target weights are played from the rig's morph channels".into(),
            ));
        }
    };
    let sampler = channel.sampler();
    let (interpolation, times) = read_sampler_keys(&sampler, buffers, budget)?;
    let read = |what: &str, e: String| ChannelError::from(AccessorError::classify(e).context(what));
    let output = sampler.output();
    let values: Vec<Vec4> = match property {
        Property::Rotation => floats::<4>(&output, FLOAT_OR_NORM, buffers, budget)
            .map_err(|e| read("key values", e))?
            .into_iter()
            .map(Vec4::from)
            .collect(),
        _ => floats::<3>(&output, FLOAT, buffers, budget)
            .map_err(|e| read("key values", e))?
            .into_iter()
            .map(|v| Vec3::from(v).extend(0.0))
            .collect(),
    };
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let invalid = |m: String| Err(ChannelError::Invalid(m));
    if times.is_empty() {
        return invalid("it has no keys".into());
    }
    if values.len() != times.len() * per_key {
        return invalid(format!(
            "{} keys but {} values{}",
            times.len(),
            values.len(),
            if per_key == 3 {
                " (cubic splines need three per key)"
            } else {
                ""
            }
        ));
    }
    if let Some(k) = times.iter().position(|t| !t.is_finite()) {
        return invalid(format!("key time {k} is not finite ({})", times[k]));
    }
    if let Some(k) = times.windows(2).position(|w| w[1] < w[0]) {
        return invalid(format!(
            "key times decrease at key {}: {} after {}",
            k + 1,
            times[k + 1],
            times[k]
        ));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return invalid(format!("key value {i} is not finite ({})", values[i]));
    }
    let mut facts = ChannelFacts {
        gltf_index: channel.index(),
        worst_quaternion: None,
    };
    let mut values = values;
    if property == Property::Rotation {
        // The keyed quaternions, without the cubic-spline tangents.
        let keyed = (0..times.len()).map(|k| per_key * k + per_key / 2);
        for k in keyed.clone() {
            let length = values[k].length();
            if facts
                .worst_quaternion
                .is_none_or(|(_, worst)| (length - 1.0).abs() > (worst - 1.0).abs())
            {
                facts.worst_quaternion = Some((k / per_key, length));
            }
        }
        if per_key == 1 {
            // Exporters write slightly denormalized quaternions; slerp expects unit length.
            for q in &mut values {
                *q = q.normalize_or(Vec4::W);
            }
        }
    }
    Ok((
        Channel {
            node,
            property,
            interpolation,
            times,
            values,
        },
        facts,
    ))
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

    #[test]
    fn a_symbolic_link_out_of_the_model_folder_is_refused() {
        let dir = std::env::temp_dir().join(format!("rigscope-symlink-{}", std::process::id()));
        let model = dir.join("model");
        std::fs::create_dir_all(&model).unwrap();
        std::fs::write(dir.join("secret.bin"), [1, 2, 3, 4]).unwrap();
        std::fs::write(model.join("inside.bin"), [1, 2, 3, 4]).unwrap();
        let link = model.join("escape.bin");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(dir.join("secret.bin"), &link).unwrap();
        let e = resolve_uri("escape.bin", Some(&model)).unwrap_err();
        assert!(e.contains("symbolic link") && e.contains("escape.bin"), "{e}");
        assert_eq!(
            resolve_uri("inside.bin", Some(&model)).unwrap(),
            model.join("inside.bin")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
