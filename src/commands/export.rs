//! `rigscope export` and File ▸ Export pose…: the mesh as the viewer shows it at one moment
//! (clip pose, morph weights and skinning method applied, on the CPU) written as a static mesh,
//! to share a pose or to hold Rigscope's skinning against a mesh an authoring tool deformed.
//!
//! Two formats, chosen by the output's extension:
//! - `.obj`: world-space positions, normals and texture coordinates, one `o` per mesh primitive
//!   with its material (`usemtl`), and beside it a `.mtl` (base colour, opacity, emission) and
//!   each base colour texture as a PNG;
//! - `.glb`: one static mesh per primitive (no skin, no animation), its materials with their
//!   base colour textures embedded as PNG.
//!
//! Each image is decoded again from the file's bytes (see [`crate::rig::Texture::rgba8`]) and
//! encoded anew as PNG (lossless: the same pixels come back), whatever format the file used.
//!
//! Every file is written whole or not at all, through a temporary file beside it that is renamed
//! into place once all of them are written (as [`crate::save`] and the PNG writer do), and never
//! over a file the rig was read from.

use crate::anim::PoseBuffers;
use crate::anim::morph::{apply_morph, is_morphed};
use crate::commands::{CommandError, Outcome};
use crate::rig::{Material, Rig};
use crate::save::new_gltf::{Chunk, Materials, gltf_files, png_bytes, write_files};
use crate::save::{OutputFormat, SaveError, same_file};
use crate::skin::{SkinnedPose, SkinningMethod, SkinningPath, normal_matrix};
use crate::viewer::Viewer;
use glam::{Vec2, Vec3, Vec4};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The arguments of `rigscope export`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExportArgs {
    /// A .gltf, .glb, .vrm or .fbx file; `demo` exports the built-in demo rig.
    pub file: PathBuf,
    /// Clip name or index (default: the first clip; the rest pose for a rig without clips).
    #[arg(long)]
    pub clip: Option<String>,
    /// Time in the clip, in seconds, from 0 to the clip's duration.
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    #[command(flatten)]
    pub method: crate::cli::SkinningChoice,
    /// The file to write: .obj (a .mtl and the textures as PNG go beside it) or .glb.
    #[arg(long)]
    pub out: PathBuf,
    /// Write the mesh as this engine profile draws it (see `rigscope check`).
    #[arg(long, value_name = "NAME", value_parser = crate::engine::parse_engine)]
    pub engine: Option<crate::engine::Engine>,
}

/// The two formats a pose is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Obj,
    Glb,
}

impl ExportFormat {
    /// The format `path`'s extension names (either case).
    pub fn of_path(path: &Path) -> Result<ExportFormat, ExportError> {
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("obj") => Ok(ExportFormat::Obj),
            Some("glb") => Ok(ExportFormat::Glb),
            _ => Err(ExportError::Extension(path.to_owned())),
        }
    }
}

/// Why nothing was exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot export to {}: the output must end in .obj or .glb", .0.display())]
    Extension(PathBuf),
    #[error("cannot load {}: {source}", path.display())]
    Load {
        path: PathBuf,
        #[source]
        source: crate::rig::RigError,
    },
    #[error("no clip '{key}' in {rig} (clips: {clips})")]
    NoClip { key: String, rig: String, clips: String },
    #[error("time {0} is not a number of seconds")]
    TimeNotFinite(f32),
    #[error("time {time} s is outside clip '{clip}', which runs from 0 to {duration} s")]
    TimeOutsideClip { time: f32, clip: String, duration: f32 },
    #[error("time {0} s needs a clip, and {1} has none (its rest pose is at time 0)")]
    TimeWithoutClip(f32, String),
    #[error(transparent)]
    Skinning(#[from] crate::cli::NoNodeError),
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineRefusal),
    #[error("{0} has no mesh with triangles to export")]
    NothingToExport(String),
    #[error("the pose puts vertices of '{0}' at infinity or NaN; nothing was written")]
    NotFinite(String),
    #[error("will not write {}: the rig was read from that file", .0.display())]
    WouldOverwriteInput(PathBuf),
    #[error("cannot write {}: {message}", path.display())]
    Write { path: PathBuf, message: String },
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// Every file written, the mesh first (an OBJ's .mtl and textures follow it).
    pub written: Vec<PathBuf>,
    pub primitives: usize,
    pub vertices: usize,
    pub triangles: usize,
}

/// One mesh primitive as posed, in world space.
#[derive(Debug, Clone)]
pub struct PosedPrimitive {
    /// The mesh's name (with the primitive's number when the mesh has several), unique in the
    /// export.
    pub name: String,
    pub positions: Vec<Vec3>,
    /// Unit length, or zero where the pose leaves a vertex no direction.
    pub normals: Vec<Vec3>,
    /// As the viewer reads them (the base colour texture's set, its transform applied); empty
    /// when the primitive has none.
    pub uvs: Vec<Vec2>,
    /// `TEXCOORD_0` and `TEXCOORD_1` as the file gives them (see [`crate::rig::Primitive::uv_set`]),
    /// which the material's other textures read; empty with `uvs`.
    pub file_uvs: [Vec<Vec2>; 2],
    /// `COLOR_0`; empty when the primitive has none.
    pub colors: Vec<Vec4>,
    /// Triangle list.
    pub indices: Vec<u32>,
    pub material: Option<usize>,
}

/// Which moment a pose is, for the files' headers and the summary line.
#[derive(Debug, Clone)]
pub struct PoseLabel {
    pub source: String,
    pub clip: Option<String>,
    pub time: f32,
    pub method: SkinningMethod,
}

impl std::fmt::Display for PoseLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.clip {
            Some(clip) => write!(f, "{}, clip '{clip}' at {} s", self.source, self.time)?,
            None => write!(f, "{}, rest pose", self.source)?,
        }
        write!(f, ", {} skinning", crate::names::Named::name(self.method))
    }
}

/// `rigscope export`: loads the rig, poses it as asked and writes the mesh.
pub fn run(args: &ExportArgs) -> Result<Outcome, CommandError> {
    let exported = export_file(args)?;
    println!(
        "wrote {}: {} primitives, {} vertices, {} triangles",
        exported.written[0].display(),
        exported.primitives,
        exported.vertices,
        exported.triangles
    );
    for also in &exported.written[1..] {
        println!("wrote {}", also.display());
    }
    Ok(Outcome::Passed)
}

/// What `rigscope export` does: the rig is opened in a [`Viewer`], set to the clip and time
/// with the skinning method asked for, and exported as the window's File ▸ Export pose… does.
pub fn export_file(args: &ExportArgs) -> Result<Exported, ExportError> {
    // The output's name is checked first: a wrong one is refused without loading anything.
    ExportFormat::of_path(&args.out)?;
    let input = crate::commands::demo_or_file(&args.file).map(Path::to_path_buf);
    let rig = crate::rig::open(input.as_deref()).map_err(|source| ExportError::Load {
        path: args.file.clone(),
        source,
    })?;
    for warning in rig.load_warnings() {
        eprintln!("warning: {warning}");
    }
    let rig = match args.engine {
        Some(engine) => engine.draw(&rig)?,
        None => rig,
    };
    let clip = match &args.clip {
        Some(key) => Some(rig.find_clip(key).ok_or_else(|| {
            let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
            ExportError::NoClip {
                key: key.clone(),
                rig: rig.name.clone(),
                clips: if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
            }
        })?),
        None => (!rig.clips.is_empty()).then_some(0),
    };
    check_time(&rig, clip, args.time)?;
    let mut viewer = Viewer::new(rig, input);
    viewer.hold(clip, args.time);
    let method = args.method.apply(&mut viewer)?;
    viewer.set_skinning(SkinningPath::Cpu, method);
    export_viewer(&mut viewer, &args.out)
}

/// A time the clip holds: finite and from 0 to its duration (the rest pose only at 0). The
/// player would wrap or clamp any other, which would export a moment not asked for.
fn check_time(rig: &Rig, clip: Option<usize>, time: f32) -> Result<(), ExportError> {
    if !time.is_finite() {
        return Err(ExportError::TimeNotFinite(time));
    }
    match clip.and_then(|c| rig.clips.get(c)) {
        Some(clip) if !(0.0..=clip.duration).contains(&time) => Err(ExportError::TimeOutsideClip {
            time,
            clip: clip.name.clone(),
            duration: clip.duration,
        }),
        None if time != 0.0 => Err(ExportError::TimeWithoutClip(time, rig.name.clone())),
        _ => Ok(()),
    }
}

/// Exports the viewer's current pose with its current skinning method (skinned on the CPU
/// first if it was drawn on the GPU) to `out`, in the format its extension names.
pub fn export_viewer(viewer: &mut Viewer, out: &Path) -> Result<Exported, ExportError> {
    let format = ExportFormat::of_path(out)?;
    viewer.skin_on_cpu();
    let rig = viewer.rig().clone();
    let label = PoseLabel {
        source: viewer.document().path.as_ref().map_or_else(
            || rig.name.clone(),
            |p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            },
        ),
        clip: viewer
            .player()
            .clip
            .and_then(|c| rig.clips.get(c))
            .map(|c| c.name.clone()),
        time: viewer.player().time,
        method: viewer.skinning_method(),
    };
    let posed = posed_primitives(&rig, viewer.last_pose(), viewer.last_skinned());
    let mut inputs: Vec<PathBuf> = rig.sources.clone();
    inputs.extend(viewer.document().path.clone());
    write_pose(&rig, &posed, &label, format, out, &inputs)
}

/// The File ▸ Export pose… action: asks `pick` where to save (given the rig's folder and a
/// suggested name) and exports there; `None` when the dialog was cancelled.
pub fn export_from_dialog(
    viewer: &mut Viewer,
    pick: impl FnOnce(Option<&Path>, &str) -> Option<PathBuf>,
) -> Option<Result<Exported, ExportError>> {
    let path = viewer.document().path.clone();
    let folder = (path.as_deref())
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| p.parent().map(Path::to_owned));
    let stem = path
        .as_deref()
        .and_then(Path::file_stem)
        .map_or_else(|| "demo".to_owned(), |s| s.to_string_lossy().into_owned());
    let clip = viewer.player().clip.and_then(|c| viewer.rig().clips.get(c));
    let name = match clip {
        Some(clip) => format!("{stem}-{}-{:.2}s.glb", clip.name, viewer.player().time),
        None => format!("{stem}-rest.glb"),
    };
    // Clip names may hold characters a file name cannot.
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let out = pick(folder.as_deref(), &name)?;
    Some(export_viewer(viewer, &out))
}

/// Every mesh primitive of `rig` as `skinned` skinned it in `pose` (morph targets included),
/// in world space: a skinned instance's vertices as skinned, an unskinned one's morphed and
/// placed by its node, as the renderer draws them. Primitives without triangles are left out.
pub fn posed_primitives(rig: &Rig, pose: &PoseBuffers, skinned: &SkinnedPose) -> Vec<PosedPrimitive> {
    let mut posed = Vec::new();
    let mut names = HashSet::new();
    for (i, instance) in rig.instances.iter().enumerate() {
        let mesh = &rig.meshes[instance.mesh];
        for (k, primitive) in mesh.primitives.iter().enumerate() {
            let n = primitive.vertex_count();
            if n == 0 || primitive.indices.len() < 3 {
                continue;
            }
            let skinned_vertices = (skinned.meshes.get(i))
                .and_then(|m| m.get(k))
                .filter(|_| primitive.influences.is_some() && instance.skin.is_some());
            let (positions, normals) = match skinned_vertices {
                // The palette already puts skinned vertices in world space, morphs applied.
                Some(s) => (s.positions.clone(), s.normals.clone()),
                None => {
                    let (mut positions, mut normals) = (primitive.positions.clone(), primitive.normals.clone());
                    let targets = rig.morphs.of(instance.mesh, k);
                    let weights = pose.morph_weights.get(i).map_or(&[][..], Vec::as_slice);
                    if is_morphed(targets, weights) && normals.len() == n {
                        let (p, nr) = (&primitive.positions, &primitive.normals);
                        apply_morph(targets, weights, p, nr, &mut positions, &mut normals);
                    }
                    let world = pose.instance_world(rig, i);
                    let turn = normal_matrix(&world);
                    positions.iter_mut().for_each(|p| *p = world.transform_point3(*p));
                    normals.iter_mut().for_each(|v| *v = turn * *v);
                    (positions, normals)
                }
            };
            // A primitive without normals of its own gets them from its posed surface.
            let normals = if normals.len() == n {
                normals.iter().map(|v| v.normalize_or_zero()).collect()
            } else {
                crate::rig::smooth_normals(&positions, &primitive.indices)
            };
            let base = match mesh.name.trim() {
                "" => format!("mesh{}", instance.mesh),
                name => name.to_owned(),
            };
            let base = match mesh.primitives.len() {
                1 => base,
                _ => format!("{base}.{k}"),
            };
            let name = unique_name(&mut names, base);
            let has_uvs = primitive.uvs.len() == n && primitive.uvs.iter().any(|uv| *uv != Vec2::ZERO);
            posed.push(PosedPrimitive {
                name,
                positions,
                normals,
                // The importer fills in zeros where a file has no texture coordinates.
                uvs: match has_uvs {
                    true => primitive.uvs.clone(),
                    false => Vec::new(),
                },
                file_uvs: match has_uvs {
                    true => [0, 1].map(|set| primitive.uv_set(set).to_vec()),
                    false => Default::default(),
                },
                colors: if primitive.colors.len() == n {
                    primitive.colors.clone()
                } else {
                    Vec::new()
                },
                indices: primitive.indices.clone(),
                material: primitive.material.filter(|&m| m < rig.materials.len()),
            });
        }
    }
    posed
}

/// `base`, or `base_2`, `base_3`, … when taken; the result is marked taken.
fn unique_name(taken: &mut HashSet<String>, base: String) -> String {
    let name = (1..)
        .map(|n| if n == 1 { base.clone() } else { format!("{base}_{n}") })
        .find(|name| !taken.contains(name))
        .expect("some name is free");
    taken.insert(name.clone());
    name
}

/// Writes `posed` (of `rig`, at `label`) to `out` in `format`, refusing any file in `inputs`.
pub fn write_pose(
    rig: &Rig,
    posed: &[PosedPrimitive],
    label: &PoseLabel,
    format: ExportFormat,
    out: &Path,
    inputs: &[PathBuf],
) -> Result<Exported, ExportError> {
    if posed.is_empty() {
        return Err(ExportError::NothingToExport(rig.name.clone()));
    }
    // JSON has no NaN and OBJ readers choke on it: a broken pose is reported, not written.
    if let Some(bad) = posed
        .iter()
        .find(|p| !p.positions.iter().chain(&p.normals).all(|v| v.is_finite()))
    {
        return Err(ExportError::NotFinite(bad.name.clone()));
    }
    let files = match format {
        ExportFormat::Obj => obj_files(rig, posed, label, out),
        ExportFormat::Glb => vec![(out.to_owned(), glb_bytes(rig, posed, label, out)?)],
    };
    for (path, _) in &files {
        if inputs.iter().any(|input| same_file(input, path)) {
            return Err(ExportError::WouldOverwriteInput(path.clone()));
        }
    }
    write_files(&files).map_err(|e| write_error(out, e))?;
    Ok(Exported {
        written: files.into_iter().map(|(path, _)| path).collect(),
        primitives: posed.len(),
        vertices: posed.iter().map(|p| p.positions.len()).sum(),
        triangles: posed.iter().map(|p| p.indices.len() / 3).sum(),
    })
}

/// A name OBJ and MTL readers take as one word: whitespace and `#` (a comment) become `_`.
fn obj_word(name: &str) -> String {
    let word: String = name
        .chars()
        .map(|c| if c.is_whitespace() || c == '#' { '_' } else { c })
        .collect();
    if word.is_empty() { "unnamed".into() } else { word }
}

/// The files of an OBJ export: the OBJ, its MTL (every material of the rig, and `default` for
/// primitives without one) and the base colour textures the materials use, as PNG.
fn obj_files(rig: &Rig, posed: &[PosedPrimitive], label: &PoseLabel, out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let stem = out
        .file_stem()
        .map_or_else(|| "pose".into(), |s| s.to_string_lossy().into_owned());
    let mtl_path = out.with_extension("mtl");
    let mut taken = HashSet::new();
    let default_name = unique_name(&mut taken, "default".into());
    let material_names: Vec<String> = (rig.materials.iter())
        .map(|m| unique_name(&mut taken, obj_word(&m.name)))
        .collect();
    let uses_default = posed.iter().any(|p| p.material.is_none());

    let mut files = Vec::new();
    let mut mtl = format!("# Materials of {}\n", obj_word(&label.source));
    let mut textures_written = Vec::new();
    let mut material_text = |name: &str, material: &Material, mtl: &mut String| {
        let [r, g, b, a] = material.base_color.to_array();
        let _ = writeln!(mtl, "\nnewmtl {name}\nKd {r} {g} {b}\nd {a}");
        let e = material.emissive;
        if e != Vec3::ZERO {
            let _ = writeln!(mtl, "Ke {} {} {}", e.x, e.y, e.z);
        }
        let texture = material
            .base_color_texture
            .and_then(|t| Some((t, rig.textures.get(t)?)));
        if let Some((t, texture)) = texture
            && let Some(png) = png_bytes(texture)
        {
            let file = format!("{stem}_texture{t}.png");
            let _ = writeln!(mtl, "map_Kd {file}");
            if !textures_written.contains(&t) {
                textures_written.push(t);
                files.push((out.with_file_name(&file), png));
            }
        }
    };
    if uses_default {
        material_text(&default_name, &Material::default(), &mut mtl);
    }
    for (material, name) in rig.materials.iter().zip(&material_names) {
        material_text(name, material, &mut mtl);
    }

    let mut obj = String::with_capacity(posed.iter().map(|p| p.positions.len() * 120).sum());
    let _ = writeln!(obj, "# Rigscope pose: {label}\n# Y up, metres, world space");
    let mtl_name = mtl_path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let _ = writeln!(obj, "mtllib {mtl_name}");
    // OBJ numbers vertices from 1 across the whole file.
    let mut first = 1usize;
    for primitive in posed {
        let _ = writeln!(obj, "o {}", obj_word(&primitive.name));
        for p in &primitive.positions {
            let _ = writeln!(obj, "v {} {} {}", p.x, p.y, p.z);
        }
        for n in &primitive.normals {
            let _ = writeln!(obj, "vn {} {} {}", n.x, n.y, n.z);
        }
        // glTF puts the texture's origin top left, OBJ bottom left.
        for uv in &primitive.uvs {
            let _ = writeln!(obj, "vt {} {}", uv.x, 1.0 - uv.y);
        }
        let material = primitive.material.map_or(&default_name, |m| &material_names[m]);
        let _ = writeln!(obj, "usemtl {material}");
        let textured = !primitive.uvs.is_empty();
        for triangle in primitive.indices.chunks_exact(3) {
            obj.push('f');
            for &v in triangle {
                let v = first + v as usize;
                let _ = match textured {
                    true => write!(obj, " {v}/{v}/{v}"),
                    false => write!(obj, " {v}//{v}"),
                };
            }
            obj.push('\n');
        }
        first += primitive.positions.len();
    }
    let mut all = vec![(out.to_owned(), obj.into_bytes()), (mtl_path, mtl.into_bytes())];
    all.append(&mut files);
    all
}

/// A GLB of `posed`: a node and a mesh of one primitive for each, unskinned; the rig's
/// materials in their order, with the textures they use embedded as PNG.
fn glb_bytes(rig: &Rig, posed: &[PosedPrimitive], label: &PoseLabel, out: &Path) -> Result<Vec<u8>, ExportError> {
    let mut chunk = Chunk::default();
    let materials = Materials::of(rig, &mut chunk);
    let mut meshes = Vec::new();
    for primitive in posed {
        let positions: Vec<[f32; 3]> = primitive.positions.iter().map(|v| v.to_array()).collect();
        let normals: Vec<[f32; 3]> = primitive.normals.iter().map(|v| v.to_array()).collect();
        let mut attributes = json!({
            "POSITION": chunk.floats(&positions),
            "NORMAL": chunk.floats(&normals),
        });
        let file_set = |set: u32| primitive.file_uvs[set.min(1) as usize].as_slice();
        (materials.write_uvs(
            primitive.material,
            file_set,
            &mut chunk,
            &mut attributes,
            &primitive.name,
        ))
        .map_err(|e| write_error(out, e))?;
        if !primitive.colors.is_empty() {
            let colors: Vec<[f32; 4]> = primitive.colors.iter().map(|v| v.to_array()).collect();
            attributes["COLOR_0"] = json!(chunk.floats(&colors));
        }
        let mut gltf_primitive = json!({ "attributes": attributes, "indices": chunk.indices(&primitive.indices) });
        if let Some(material) = primitive.material {
            gltf_primitive["material"] = json!(material);
        }
        meshes.push(json!({ "name": primitive.name, "primitives": [gltf_primitive] }));
    }
    let nodes: Vec<Value> = (posed.iter().enumerate())
        .map(|(m, p)| json!({ "name": p.name, "mesh": m }))
        .collect();
    let mut document = json!({
        "asset": { "version": "2.0", "generator": format!("Rigscope export: {label}") },
        "scene": 0,
        "scenes": [{ "name": out.file_stem().map(|s| s.to_string_lossy()), "nodes": (0..posed.len()).collect::<Vec<_>>() }],
        "nodes": nodes,
        "meshes": meshes,
    });
    materials.add_to(&mut document);
    let files = gltf_files(document, chunk, out, OutputFormat::Glb).map_err(|e| write_error(out, e))?;
    Ok(files
        .into_iter()
        .map(|(_, bytes)| bytes)
        .next_back()
        .unwrap_or_default())
}

/// A save error while writing `path`, as the export reports it.
fn write_error(path: &Path, error: SaveError) -> ExportError {
    match error {
        SaveError::Write { path, source } => ExportError::Write {
            path,
            message: source.to_string(),
        },
        other => ExportError::Write {
            path: path.to_owned(),
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests;
