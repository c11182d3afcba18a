//! `rigscope inspect`: the rig report of a file, as text or JSON, with an exit status a
//! pipeline can gate on.

pub mod curves;

use crate::anim::PoseBuffers;
use crate::commands::{CommandError, Outcome, open_rig_with};
use crate::report::{ReportLimits, RigReport};
use crate::rig::Rig;
use serde::Serialize;
use serde_json::json;
use std::path::PathBuf;

/// The arguments of `rigscope inspect`.
#[derive(clap::Args, Debug, Clone)]
pub struct InspectArgs {
    /// A .gltf, .glb, .vrm, .fbx or .bvh file; `demo` inspects the built-in demo rig.
    pub file: PathBuf,
    #[command(flatten)]
    pub bvh: crate::cli::BvhScaleArg,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print one vertex instead of the report: bind and posed position (the first clip at
    /// t = 0, else the bind pose) and its joints by weight. glTF mesh and primitive indices.
    #[arg(long, value_name = "MESH:PRIMITIVE:INDEX", value_parser = parse_vertex)]
    pub vertex: Option<(usize, usize, u32)>,
    #[command(flatten)]
    pub curves: curves::CurvesArgs,
    #[command(flatten)]
    pub limits: ReportLimitArgs,
}

/// The limits of the report's checks that `rigscope inspect` takes as flags.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportLimitArgs {
    /// A rotation channel turning more than this many degrees within one frame (1/30 s) of
    /// playback is reported as `keys-jump`.
    #[arg(long, value_name = "DEGREES", default_value_t = crate::motion::curves::KEY_JUMP_DEGREES)]
    pub keys_jump_deg: f32,
}

impl ReportLimitArgs {
    /// The limits, or why a value is refused.
    pub fn limits(&self) -> Result<ReportLimits, CommandError> {
        if !(self.keys_jump_deg.is_finite() && self.keys_jump_deg > 0.0) {
            return Err(CommandError::Argument(format!(
                "--keys-jump-deg must be above 0, not {}",
                self.keys_jump_deg
            )));
        }
        Ok(ReportLimits {
            keys_jump_degrees: self.keys_jump_deg,
        })
    }
}

/// `rigscope inspect`: prints the report of the file (the demo rig for `demo`) as text or as
/// one JSON document, flagged when it has error findings. With `--vertex` it prints that vertex
/// instead (see [`vertex_info`]); with `--curves`, one joint's curves (see [`curves`]).
pub fn run(args: &InspectArgs) -> Result<Outcome, CommandError> {
    if args.curves.curves {
        return curves::print(&args.file, &args.bvh.options(), &args.curves, args.json);
    }
    let label = args.file.display().to_string();
    let started = std::time::Instant::now();
    let rig = open_rig_with(&args.file, &args.bvh.options())?;
    let load_seconds = started.elapsed().as_secs_f64();
    let limits = args.limits.limits()?;
    if let Some((mesh, primitive, index)) = args.vertex {
        let info = vertex_info(&rig, mesh, primitive, index)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&info).unwrap_or_default());
        } else {
            print!("{}", info.to_text());
        }
        return Ok(Outcome::Passed);
    }
    let report = RigReport::with_limits(&rig, limits);
    if args.json {
        let mut document = report.to_json(&rig);
        document["file"] = json!(label);
        document["loaded"] = json!(true);
        document["load_seconds"] = json!(load_seconds);
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        print!("{}", report.to_text(&rig));
        println!("Loaded in {:.2} ms", load_seconds * 1e3);
    }
    Ok(Outcome::flagged_if(report.has_errors()))
}

/// A `--vertex` value that is not three whole numbers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{0}' is not MESH:PRIMITIVE:INDEX (three whole numbers, e.g. 0:0:125)")]
pub struct VertexArgError(pub String);

/// `MESH:PRIMITIVE:INDEX` (glTF mesh index, glTF primitive index, vertex index).
pub fn parse_vertex(text: &str) -> Result<(usize, usize, u32), VertexArgError> {
    let parts: Vec<&str> = text.split(':').collect();
    let bad = || VertexArgError(text.to_owned());
    let [mesh, primitive, index] = parts[..] else {
        return Err(bad());
    };
    Ok((
        mesh.trim().parse().map_err(|_| bad())?,
        primitive.trim().parse().map_err(|_| bad())?,
        index.trim().parse().map_err(|_| bad())?,
    ))
}

/// Which number of a vertex is out of range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VertexError {
    #[error("mesh {mesh} does not exist (the file has {meshes} meshes)")]
    NoMesh { mesh: usize, meshes: usize },
    #[error("mesh {mesh} primitive {primitive} is not a triangle list and is not loaded")]
    PrimitiveSkipped { mesh: usize, primitive: usize },
    #[error("mesh {mesh} ('{name}') has no primitive {primitive} ({loaded} loaded)")]
    NoPrimitive {
        mesh: usize,
        name: String,
        primitive: usize,
        loaded: usize,
    },
    #[error("mesh {mesh} primitive {primitive} has {vertices} vertices; there is no vertex {index}")]
    NoVertex {
        mesh: usize,
        primitive: usize,
        vertices: usize,
        index: u32,
    },
}

/// One joint's weight on a vertex.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointWeight {
    /// Index in the skin's joint list.
    pub joint: usize,
    /// The rig node; `None` when the index is beyond the skin's joints.
    pub node: Option<usize>,
    pub name: String,
    pub weight: f32,
}

/// A vertex of a file with its weights and its place in the bind pose and in a pose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VertexInfo {
    pub mesh: usize,
    pub mesh_name: String,
    /// glTF primitive index.
    pub primitive: usize,
    pub index: u32,
    /// The position in the file.
    pub bind_position: [f32; 3],
    /// Where the vertex is in `pose`, in world space.
    pub posed_position: [f32; 3],
    /// `"clip 'NAME' at t = 0"` (the first clip), `"bind pose"` (skinned, no clip) or
    /// `"rest pose"` (not skinned, no clip).
    pub pose: String,
    pub skin: Option<usize>,
    /// Non-zero weights, largest first; a joint listed twice on the vertex counts once.
    pub weights: Vec<JointWeight>,
    pub weight_sum: f32,
    /// How many joints carry weight.
    pub influences: usize,
}

impl VertexInfo {
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let v3 = |p: [f32; 3]| format!("({:.6}, {:.6}, {:.6})", p[0], p[1], p[2]);
        let mut out = format!(
            "Vertex {}:{}:{} (mesh '{}', primitive {}, index {})\n",
            self.mesh, self.primitive, self.index, self.mesh_name, self.primitive, self.index
        );
        let _ = writeln!(out, "  bind position   {}", v3(self.bind_position));
        let _ = writeln!(out, "  posed position  {}  ({})", v3(self.posed_position), self.pose);
        match self.skin {
            None => {
                let _ = writeln!(out, "  not skinned");
            }
            Some(skin) => {
                let _ = writeln!(out, "  weights (skin {skin}):");
                for w in &self.weights {
                    let _ = writeln!(out, "    {:.6}  {} (joint {})", w.weight, w.name, w.joint);
                }
                let _ = writeln!(
                    out,
                    "  sum {:.6} over {} influence{}",
                    self.weight_sum,
                    self.influences,
                    if self.influences == 1 { "" } else { "s" }
                );
            }
        }
        out
    }
}

/// Vertex `index` of glTF primitive `primitive` of glTF mesh `mesh`: its bind position, its
/// position at time 0 of the first clip (the bind pose for a skinned mesh without clips), and
/// its weights by joint name. Errors say which number is out of range.
pub fn vertex_info(rig: &Rig, mesh: usize, primitive: usize, index: u32) -> Result<VertexInfo, VertexError> {
    let m = rig.meshes.get(mesh).ok_or(VertexError::NoMesh {
        mesh,
        meshes: rig.meshes.len(),
    })?;
    let p = match rig.facts.primitives.get(mesh) {
        Some(_) => rig.facts.primitive_of_gltf(mesh, primitive),
        None => (primitive < m.primitives.len()).then_some(primitive),
    }
    .filter(|&p| p < m.primitives.len())
    .ok_or_else(|| {
        let skipped = rig
            .facts
            .skipped_primitives
            .iter()
            .any(|s| s.mesh == mesh && s.facts.gltf_index == primitive);
        if skipped {
            VertexError::PrimitiveSkipped { mesh, primitive }
        } else {
            VertexError::NoPrimitive {
                mesh,
                name: m.name.clone(),
                primitive,
                loaded: m.primitives.len(),
            }
        }
    })?;
    let prim = &m.primitives[p];
    let v = index as usize;
    let bind = *prim.positions.get(v).ok_or(VertexError::NoVertex {
        mesh,
        primitive,
        vertices: prim.positions.len(),
        index,
    })?;
    let instance = rig
        .instances
        .iter()
        .position(|i| i.mesh == mesh && i.skin.is_some() && prim.influences.is_some());
    let skin = instance
        .and_then(|i| rig.instances[i].skin)
        .filter(|&s| s < rig.skins.len());
    let clip = rig.clips.first();
    let mut pose = PoseBuffers::new(rig);
    if clip.is_some() {
        pose.evaluate(rig, Some(0), 0.0);
    }
    let mut weights: Vec<JointWeight> = Vec::new();
    let posed = match (instance, skin, &prim.influences) {
        (Some(i), Some(s), Some(influences)) if influences.joints.len() >= (v + 1) * influences.sets => {
            let skin = &rig.skins[s];
            for (joint, weight) in influences.of_vertex(v).filter(|(_, w)| *w != 0.0) {
                let joint = joint as usize;
                match weights.iter_mut().find(|w| w.joint == joint) {
                    Some(w) => w.weight += weight,
                    None => {
                        let node = skin.joints.get(joint).copied();
                        weights.push(JointWeight {
                            joint,
                            node,
                            name: node.map_or_else(
                                || format!("joint {joint} (beyond the skin's {} joints)", skin.joints.len()),
                                |n| rig.nodes.get(n).map_or_else(|| format!("node {n}"), |n| n.name.clone()),
                            ),
                            weight,
                        });
                    }
                }
            }
            if clip.is_some() {
                crate::skin::blend_matrix(&pose.palettes[i], influences, v).transform_point3(bind)
            } else {
                bind
            }
        }
        _ => rig
            .instances
            .iter()
            .find(|i| i.mesh == mesh)
            .and_then(|i| pose.worlds.get(i.node))
            .map_or(bind, |w| w.transform_point3(bind)),
    };
    weights.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.joint.cmp(&b.joint)));
    let pose = match (clip, skin) {
        (Some(c), _) => format!("clip '{}' at t = 0", c.name),
        (None, Some(_)) => "bind pose".to_string(),
        (None, None) => "rest pose".to_string(),
    };
    Ok(VertexInfo {
        mesh,
        mesh_name: m.name.clone(),
        primitive,
        index,
        bind_position: bind.to_array(),
        posed_position: posed.to_array(),
        pose,
        skin,
        weight_sum: weights.iter().map(|w| w.weight).sum(),
        influences: weights.len(),
        weights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{build_palette_mat4, local_to_world, sample_clip};
    use crate::rig::Trs;
    use glam::{Mat4, Quat, Vec3};

    /// Posed positions against the kernels called one by one (clip sampling, world matrices,
    /// the 4×4 palette, the blend) instead of through the pose pipeline `vertex_info` uses.
    #[test]
    fn a_posed_vertex_is_where_the_first_clip_puts_it_at_time_zero() {
        let mut rig = crate::rig::open(None).unwrap();
        // The demo's clips start in the bind pose and animate rotations only: joints grown a
        // little at rest move the vertices at time 0, and a turn at rest that the clip
        // overrides tells the clip's pose from the rest pose.
        let joints = rig.skins[0].joints.clone();
        for joint in joints {
            rig.nodes[joint].rest.scale = Vec3::splat(1.1);
            rig.nodes[joint].rest.rotation = Quat::from_rotation_z(0.3);
        }
        let clip = &rig.clips[0];
        let mut locals = vec![Trs::IDENTITY; rig.nodes.len()];
        sample_clip(
            &rig.nodes,
            Some(clip),
            0.0,
            &mut vec![0; clip.channels.len()],
            &mut locals,
        );
        let mut worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
        local_to_world(&rig.nodes, &locals, &mut worlds);
        let instance = rig.instances.iter().find(|i| i.skin.is_some()).unwrap();
        let skin = &rig.skins[instance.skin.unwrap()];
        let mut palette = vec![Mat4::IDENTITY; skin.joints.len()];
        build_palette_mat4(&skin.joints, &skin.inverse_binds, &worlds, &mut palette);
        let primitive = &rig.meshes[instance.mesh].primitives[0];
        let influences = primitive.influences.as_ref().unwrap();
        let mut moved = 0;
        for v in (0..primitive.positions.len()).step_by(7) {
            let bind = primitive.positions[v];
            let expected = crate::skin::blend_matrix(&palette, influences, v).transform_point3(bind);
            let info = vertex_info(&rig, instance.mesh, 0, v as u32).unwrap();
            let posed = Vec3::from(info.posed_position);
            assert!(
                posed.distance(expected) < 1e-5,
                "vertex {v}: {posed} instead of {expected}"
            );
            moved += usize::from(expected.distance(bind) > 1e-3);
        }
        assert!(
            moved > 0,
            "the first clip's first frame moves no vertex: nothing was tested"
        );
    }
}
