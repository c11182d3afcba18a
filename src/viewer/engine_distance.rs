//! The engine distance view's values: each vertex of the engine's drawing against the file's
//! own at the current pose, both skinned on the CPU with the view's method. The buffers are
//! made once per drawing and measured again in place whenever the pose is evaluated.

use super::Viewer;
use crate::anim::{PoseBuffers, evaluate_pose};
use crate::engine::distance::{PosedDrawing, VertexDistances};
use crate::skin::{SkinnedPose, SkinningMethod};

/// What the distances were measured for: the document's rig, the engine's drawing (0: none),
/// the pose evaluation and the method. Equal keys: the values are current.
type MeasuredFor = (u64, u64, u64, SkinningMethod);

/// The file's own pose and both drawings' vertices for one drawing of one document.
struct DistanceBuffers {
    /// The document generation and the drawing generation (0: none) they are sized for.
    made_for: (u64, u64),
    /// The file's drawing's height at rest, which the distances are fractions of.
    height: f64,
    file_pose: PoseBuffers,
    file_skinned: SkinnedPose,
    engine_skinned: SkinnedPose,
    distances: VertexDistances,
}

/// The engine distance view's state: kept while the view shows, measured once per pose.
#[derive(Default)]
pub(super) struct DistanceView {
    buffers: Option<DistanceBuffers>,
    measured: Option<MeasuredFor>,
    /// Counts the measurements, so that the renderer uploads each once.
    measurements: u64,
}

impl Viewer {
    /// Measures the engine distance view's values for the current pose, when they are not
    /// current: zeros when no engine's drawing is shown.
    pub(super) fn update_engine_distance(&mut self) {
        let document = &self.documents[self.active];
        let (shown, drawing_generation) = document.shown_rig();
        let drawing_generation = if drawing_generation == document.generation {
            0
        } else {
            drawing_generation
        };
        let playback = &self.playback;
        let key = (
            document.generation,
            drawing_generation,
            playback.work_done().evaluations,
            playback.method,
        );
        let view = &mut self.engines.distance;
        if view.measured == Some(key) {
            return;
        }
        let made_for = (document.generation, drawing_generation);
        let buffers = match &mut view.buffers {
            Some(buffers) if buffers.made_for == made_for => buffers,
            slot => slot.insert(DistanceBuffers {
                made_for,
                height: crate::engine::check::drawn_height(&document.rig),
                file_pose: PoseBuffers::new(&document.rig),
                file_skinned: SkinnedPose::new(&document.rig),
                engine_skinned: SkinnedPose::new(shown),
                distances: VertexDistances::zeros(&document.rig),
            }),
        };
        if drawing_generation == 0 {
            buffers.distances.clear();
        } else {
            let method = playback.method;
            let inputs = crate::anim::PoseInputs {
                dual_quaternions: method.needs_dual_quats(),
                ..playback.animation.inputs(&playback.player)
            };
            evaluate_pose(&document.rig, &inputs, &mut buffers.file_pose);
            let blend = playback.skinned.blend();
            buffers.file_skinned.set_blend(std::sync::Arc::clone(blend));
            buffers.engine_skinned.set_blend(std::sync::Arc::clone(blend));
            buffers.file_skinned.skin(&document.rig, &buffers.file_pose, method);
            buffers.engine_skinned.skin(shown, &playback.pose, method);
            let file = PosedDrawing {
                rig: &document.rig,
                pose: &buffers.file_pose,
                skinned: &buffers.file_skinned,
            };
            let engine = PosedDrawing {
                rig: shown,
                pose: &playback.pose,
                skinned: &buffers.engine_skinned,
            };
            buffers.distances.measure(file, engine, buffers.height);
        }
        view.measured = Some(key);
        view.measurements += 1;
    }

    /// The engine distance view's values as last measured, with their measurement's number
    /// (see [`Viewer::prepare_frame`]): `None` until the view first showed for the active
    /// document (values of another document, or of its rig before an edit, index other
    /// vertices).
    pub fn engine_distances(&self) -> Option<(u64, &VertexDistances)> {
        let view = &self.engines.distance;
        self.current_distance_buffers()
            .map(|buffers| (view.measurements, &buffers.distances))
    }

    /// The height the engine distance view's values are fractions of: the file's drawing's
    /// vertical extent at rest (see [`crate::engine::check::drawn_height`]).
    pub fn engine_distance_height(&self) -> Option<f64> {
        self.current_distance_buffers().map(|b| b.height)
    }

    fn current_distance_buffers(&self) -> Option<&DistanceBuffers> {
        let generation = self.documents[self.active].generation;
        (self.engines.distance.buffers.as_ref()).filter(|buffers| buffers.made_for.0 == generation)
    }
}
