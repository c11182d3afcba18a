//! A seeded random walk through the window, as a person plays with it for minutes: menus,
//! shortcuts, drags in the view (orbiting, the gizmo's rings, IK goals, bends), the panels'
//! widgets, the Compare, Repair, Curves and Joint mapping windows, clip edits, undo and redo,
//! over several shared rigs (Fox, Xbot, RobotExpressive, readyplayer.me with Michelle's clips,
//! Mixamo's FBX), each frame drawn by the renderer the window uses.
//!
//! The walk fails on a panic, and on a screen with a widget that has no accessible name; at the
//! end of each rig's walk, on undoing every edit not giving back the document as opened bit for
//! bit, or redoing them not giving back the last state (see
//! [`rigscope::viewer::DocumentState`]); and on memory that grows from one walk of a rig to its
//! next (see [`Memory`]). After each rig's walk the document is saved as a new file, which must
//! open in its place with its clips, and then changed on disk under an edit that the reload must
//! keep (see `file_round`); the next rig opens over that unsaved edit. It runs for `RIGSCOPE_MONKEY_SECONDS` (60 unless set); the seed
//! is printed, and `RIGSCOPE_MONKEY_SEED` replays it: the walk's actions depend on the seed alone,
//! never on the machine's speed, which only decides where the walk stops.
//!
//! ```sh
//! cargo test --release --test app monkey:: -- --ignored --nocapture
//! RIGSCOPE_MONKEY_SECONDS=600 RIGSCOPE_MONKEY_SEED=7 cargo test --release --test app monkey:: -- --ignored --nocapture
//! ```

mod file_round;

use crate::common;
use crate::common::gpu;
use crate::common::random::Random;

use egui::accesskit::Role;
use egui::{Event, Key, Modifiers, PointerButton, Pos2, Rect, Vec2, vec2};
use egui_kittest::kittest::{By, NodeT, Queryable};
use egui_kittest::{Harness, TestRenderer};
use rigscope::draw::{Clock, DetailedView, FrameStep, ViewRenderer};
use rigscope::render::compute::ComputeSkinner;
use rigscope::render::offscreen::OFFSCREEN_FORMAT;
use rigscope::render::{Gpu, Msaa, Offscreen, RenderTargets};
use rigscope::ui::{self, FrameInfo, UiAction, UiState};
use rigscope::viewer::{DocumentState, UNDO_DEPTH, Viewer};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How long the walk runs unless `RIGSCOPE_MONKEY_SECONDS` says otherwise.
const DEFAULT_SECONDS: u64 = 60;
/// The window's size in points.
const WINDOW: Vec2 = vec2(1280.0, 800.0);
/// Pixels per point of the drawn frames: half size keeps a software rasterizer's frames short.
const RENDER_SCALE: f32 = 0.5;
/// The clock's step per frame.
const FRAME_SECONDS: f32 = 1.0 / 30.0;
/// Actions in one rig's walk, before its undo and redo check.
const ACTIONS_PER_RIG: usize = 24;
/// A rig's walk also ends this many edits short of the history's depth, so that undoing every
/// edit can reach the document as opened (a single action makes at most a few edits).
const EDIT_MARGIN: usize = 6;
/// Rust's heap at a rig's walk start may hold this much more than at its first walk.
const LIVE_GROWTH_BOUND: usize = 16 << 20;
/// Resident memory in the second half of a run may rise this far above the first half's peak,
/// in a run of this many seconds or more.
const RESIDENT_GROWTH_BOUND: u64 = 128 << 20;
const RESIDENT_CHECK_SECONDS: u64 = 300;

/// One rig of the walk: the file opened, the file whose clips File ▸ Load clips from… adds, and
/// the file File ▸ Compare with… shows beside it (paths under `../shared`).
struct Stage {
    file: &'static str,
    clips_from: &'static str,
    compare_with: &'static str,
}

const STAGES: &[Stage] = &[
    Stage {
        file: "rigs/Fox.glb",
        clips_from: "rigs/Fox.glb",
        compare_with: "rigs/Fox.glb",
    },
    Stage {
        file: "rigs/real/Xbot.glb",
        clips_from: "rigs/fbx/mixamo.fbx",
        compare_with: "corpus/rigs/ybot.glb",
    },
    Stage {
        file: "rigs/real/RobotExpressive.glb",
        clips_from: "rigs/real/RobotExpressive.glb",
        compare_with: "rigs/real/RobotExpressive.glb",
    },
    Stage {
        file: "corpus/rigs/readyplayer.me.glb",
        clips_from: "corpus/rigs/Michelle.glb",
        compare_with: "corpus/rigs/readyplayer.me.glb",
    },
    Stage {
        file: "rigs/fbx/mixamo.fbx",
        clips_from: "rigs/real/Xbot.glb",
        compare_with: "rigs/real/Xbot.glb",
    },
];

/// Widgets the walk leaves alone: they replace the open document (which would end the rig's
/// walk without its check) or quit. Native file dialogs never open: the walk answers the
/// window's requests for them itself (see [`Monkey::answer`]).
const LEFT_ALONE: &[&str] = &[
    "Open demo rig",
    "Open by path…",
    "Recent",
    "Reload",
    "Quit",
    "Discard edits",
    "Reload and keep my edits",
    "Reload and drop my edits",
    "Keep mine",
];

/// Whether a widget's label is `name`: a menu item's label ends with its shortcut ("Reload F5").
fn names(label: &str, name: &str) -> bool {
    label
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

/// The window's state as the window keeps it: the viewer, the UI's own state, what the UI asked
/// of the window in the last frame, and where the 3D view is.
struct Session {
    viewer: Viewer,
    ui: UiState,
    actions: Vec<UiAction>,
    viewport: Rect,
}

/// egui's texture changes (the font atlas, mostly) as the harness hands them over each frame,
/// for the screen to apply as the window does. The harness's own renderer would keep every
/// change until it first draws, which the walk never asks of it.
struct TextureChanges(Rc<RefCell<Vec<egui::TexturesDelta>>>);

impl TestRenderer for TextureChanges {
    fn handle_delta(&mut self, delta: &mut egui::TexturesDelta) {
        self.0.borrow_mut().push(std::mem::take(delta));
    }
}

/// The window's drawing (see `app/window.rs`), into an offscreen target: the 3D view through the
/// frame step with a heavy scene's detail policy and a comparison's other side, at the
/// anti-aliasing the View menu sets, and the panels over it through egui's renderer.
struct Screen {
    gpu: Gpu,
    samples: u32,
    target: Offscreen,
    renderer: ViewRenderer,
    other_side: Option<ViewRenderer>,
    detail: DetailedView,
    compute: Option<ComputeSkinner>,
    egui: egui_wgpu::Renderer,
    texture_changes: Rc<RefCell<Vec<egui::TexturesDelta>>>,
}

/// A frame's UI as egui made it, ready to draw.
struct UiFrame {
    /// Where the 3D view is, in points.
    viewport: Rect,
    paint_jobs: Vec<egui::ClippedPrimitive>,
}

impl Screen {
    fn new(gpu: Gpu, texture_changes: Rc<RefCell<Vec<egui::TexturesDelta>>>) -> Screen {
        let samples = Msaa::default().samples(&gpu.adapter, OFFSCREEN_FORMAT);
        let (target, renderer) = Screen::targets(&gpu, samples);
        let egui = egui_wgpu::Renderer::new(
            &gpu.device,
            target.overlay_format(),
            egui_wgpu::RendererOptions::default(),
        );
        Screen {
            samples,
            target,
            renderer,
            gpu,
            other_side: None,
            detail: DetailedView::default(),
            compute: None,
            egui,
            texture_changes,
        }
    }

    fn targets(gpu: &Gpu, samples: u32) -> (Offscreen, ViewRenderer) {
        let size = WINDOW * RENDER_SCALE;
        ViewRenderer::offscreen_target(gpu, size.x as u32, size.y as u32, samples).expect("an offscreen target")
    }

    /// Follows View ▸ Anti-aliasing as the window does: another sample count needs other
    /// targets and pipelines.
    fn apply_msaa(&mut self, msaa: Msaa) {
        let samples = msaa.samples(&self.gpu.adapter, OFFSCREEN_FORMAT);
        if samples != self.samples {
            self.samples = samples;
            (self.target, self.renderer) = Screen::targets(&self.gpu, samples);
            self.other_side = None;
        }
    }

    /// Draws the viewer's 3D view and `ui` over it as the window does, waiting for the GPU to
    /// finish; with `read`, reads the picture back.
    fn draw(&mut self, viewer: &mut Viewer, ui: &UiFrame, read: bool) -> Option<image::RgbaImage> {
        let changes = std::mem::take(&mut *self.texture_changes.borrow_mut());
        for (id, deltas) in changes.iter().flat_map(|c| &c.set) {
            for delta in deltas {
                self.egui.update_texture(&self.gpu.device, &self.gpu.queue, *id, delta);
            }
        }
        let viewport = ui::viewport_pixels(ui.viewport, RENDER_SCALE);
        let aspect = rigscope::draw::compare::active_aspect(viewer, viewport);
        if viewer.comparison().is_none() {
            self.other_side = None;
        } else if self.other_side.is_none() {
            self.other_side = Some(ViewRenderer::offscreen_with(&self.gpu, self.samples));
        }
        let (target, detail, mut other_side) = (&self.target, &mut self.detail, self.other_side.as_mut());
        let egui = &mut self.egui;
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [target.width(), target.height()],
            pixels_per_point: RENDER_SCALE,
        };
        let step = FrameStep {
            gpu: &self.gpu,
            renderer: &mut self.renderer,
            timer: None,
            // In step with the GPU, as a window showing each frame is.
            wait: true,
        };
        step.run(viewer, Clock::Still, aspect, |recording| {
            let gpu = recording.gpu;
            let mut draw = |encoder: &mut wgpu::CommandEncoder, targets: &RenderTargets, view: &wgpu::TextureView| {
                match other_side {
                    Some(ref mut other) => {
                        rigscope::draw::compare::prepare_other_side(gpu, other, recording.viewer, viewport);
                        rigscope::draw::compare::encode_detailed(
                            detail,
                            gpu,
                            (&mut *recording.renderer, &mut **other),
                            encoder,
                            (targets, view),
                            recording.viewer,
                            viewport,
                            None,
                        );
                    }
                    None => {
                        let output = (targets, view, OFFSCREEN_FORMAT);
                        let viewer = recording.viewer;
                        detail.encode(gpu, recording.renderer, encoder, output, viewer, viewport, false, None);
                    }
                }
            };
            let mut panels = |encoder: &mut wgpu::CommandEncoder, view: &wgpu::TextureView| {
                let (device, queue) = (&gpu.device, &gpu.queue);
                ui::paint::encode_egui(egui, device, queue, encoder, view, &ui.paint_jobs, &screen)
            };
            recording.first = target.encode_capture(recording.encoder, &mut draw, Some(&mut panels));
        })
        .expect("a frame is drawn");
        for id in changes.iter().flat_map(|c| &c.free) {
            self.egui.free_texture(id);
        }
        read.then(|| self.target.read_capture(&self.gpu).expect("the frame reads back"))
    }
}

/// Resident set size of this process, from `/proc/self/statm` (second field, in pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm is readable");
    let pages: u64 = (statm.split_whitespace().nth(1))
        .and_then(|f| f.parse().ok())
        .expect("statm has a resident field");
    pages * 4096
}

/// An interactive widget as the accessibility tree shows it.
#[derive(Debug, Clone)]
struct Widget {
    role: Role,
    label: String,
    rect: Rect,
    /// Inside one of the floating windows (Repair, Curves, Compare…), not a panel.
    in_window: bool,
}

/// One kind of action of the walk: what it did, for the trail.
type Action = fn(&mut Monkey) -> String;

/// The walk's actions, each with its weight (out of the sum) and a name for the summary.
const CATALOGUE: &[(u32, &str, Action)] = &[
    (28, "click a widget", Monkey::click_widget),
    (8, "drag a slider", Monkey::slider),
    (8, "a menu item", Monkey::menu),
    (5, "open a tool window or add a file", Monkey::window),
    (5, "edit a clip", Monkey::clip_edit),
    (4, "repair weights", Monkey::repair),
    (8, "a key of the command table", Monkey::shortcut),
    (8, "pose keys", Monkey::pose_keys),
    (8, "undo or redo", Monkey::undo_redo),
    (8, "orbit, pan, zoom or click in the view", Monkey::view_gesture),
    (6, "drag a gizmo ring", Monkey::gizmo_drag),
    (5, "drag an IK goal", Monkey::ik_drag),
    (3, "Alt-drag a bend", Monkey::bend_drag),
    (4, "scroll a side panel", Monkey::scroll_panel),
    (3, "let the clip play", Monkey::watch),
    (4, "close a window", Monkey::close_window),
];

/// The walk: the window under test, the renderer, the seeded choices, and what was done.
struct Monkey {
    harness: Harness<'static, Session>,
    screen: Screen,
    random: Random,
    shared: PathBuf,
    stage: &'static Stage,
    /// The latest actions, for the failure message.
    trail: Rc<RefCell<Vec<String>>>,
    frames: u64,
    actions: u64,
    /// How many times each kind of action was done.
    done: std::collections::BTreeMap<&'static str, u64>,
    /// Time spent running the UI, and drawing the frame.
    ui_time: Duration,
    draw_time: Duration,
}

impl Monkey {
    fn session(&mut self) -> &mut Session {
        self.harness.state_mut()
    }

    fn viewer(&mut self) -> &mut Viewer {
        &mut self.harness.state_mut().viewer
    }

    /// Adds a line to the trail, which keeps the latest few hundred (it is counted in the heap
    /// the walk watches).
    fn note(&self, text: String) {
        let mut trail = self.trail.borrow_mut();
        if trail.len() >= 400 {
            trail.drain(..200);
        }
        trail.push(text);
    }

    /// One frame of the window: the UI runs on the queued input (a frame per event), the
    /// window answers what the UI asked, the clock ticks, and the 3D view and the panels are
    /// drawn.
    fn frame(&mut self) {
        self.frame_read(false);
    }

    /// [`Monkey::frame`], the picture read back with `read`.
    fn frame_read(&mut self, read: bool) -> Option<image::RgbaImage> {
        let ui_start = Instant::now();
        self.harness.step();
        self.ui_time += ui_start.elapsed();
        let requests = std::mem::take(&mut self.session().actions);
        for request in requests {
            self.answer(request);
        }
        let session = self.harness.state_mut();
        session.viewer.tick(FRAME_SECONDS);
        // A load the walk started (clips added) is waited for, as a person waits for it: the
        // walk then goes on the same whatever the machine's speed.
        if session.viewer.loading().is_some() {
            session.viewer.wait_for_load();
        }
        self.frames += 1;
        let draw_start = Instant::now();
        self.screen.apply_msaa(session.ui.msaa);
        let shapes = self.harness.output().shapes.clone();
        let ui = UiFrame {
            viewport: self.harness.state().viewport,
            paint_jobs: self.harness.ctx.tessellate(shapes, RENDER_SCALE),
        };
        let image = self.screen.draw(&mut self.harness.state_mut().viewer, &ui, read);
        self.draw_time += draw_start.elapsed();
        image
    }

    /// What the window does for a request of the UI, with the file dialogs answered by the
    /// walk: the stage's clip file and file to compare with, and no file for the others.
    fn answer(&mut self, request: UiAction) {
        let clips = self.shared.join(self.stage.clips_from);
        let compared = self.shared.join(self.stage.compare_with);
        let Session { viewer, ui, .. } = self.harness.state_mut();
        match request {
            UiAction::LoadClipsDialog => {
                ui::load_clips_from_dialog(viewer, ui, |_| Some(clips));
            }
            UiAction::CompareDialog => {
                ui::compare_from_dialog(viewer, ui, |_| Some(compared));
            }
            UiAction::Compare => {
                let gpu = &self.screen.gpu;
                let skinner = self.screen.compute.get_or_insert_with(|| ComputeSkinner::new(gpu));
                viewer.skin_on_cpu();
                let size = viewer.document().rest_bounds.size().max(f32::MIN_POSITIVE);
                let (pose, skinned) = (viewer.last_pose(), viewer.last_skinned());
                let method = viewer.skinning_method();
                let compared = (skinner.compare(gpu, viewer.rig(), pose, skinned, method, size))
                    .expect("the CPU and GPU skinnings compare");
                viewer.diagnostics.comparison = Some(compared);
            }
            // Quitting asks first when edits would be lost; the walk never quits.
            UiAction::Quit => {
                ui::discard::may_quit_now(viewer, ui);
            }
            // Open, Save as, export, environment and folder dialogs: cancelled. Screenshots are
            // the window's own files.
            _ => {}
        }
    }

    fn event(&mut self, event: Event) {
        self.harness.event(event);
        self.frame();
    }

    fn modifiers(&mut self, modifiers: Modifiers) {
        self.harness.event(Event::ModifiersChanged(modifiers));
    }

    fn button(&mut self, at: Pos2, button: PointerButton, pressed: bool, modifiers: Modifiers) {
        self.event(Event::PointerButton {
            pos: at,
            button,
            pressed,
            modifiers,
        });
    }

    fn click(&mut self, at: Pos2, modifiers: Modifiers) {
        if self.may_press(at) {
            self.click_anything(at, modifiers);
        }
    }

    /// A click at `at`, whatever lies there.
    fn click_anything(&mut self, at: Pos2, modifiers: Modifiers) {
        self.modifiers(modifiers);
        self.event(Event::PointerMoved(at));
        self.button(at, PointerButton::Primary, true, modifiers);
        self.button(at, PointerButton::Primary, false, modifiers);
        self.modifiers(Modifiers::NONE);
        self.frame();
    }

    /// A drag with `button` from `from` to `to` in `steps` moves, a frame each.
    fn drag(&mut self, from: Pos2, to: Pos2, button: PointerButton, modifiers: Modifiers, steps: usize) {
        if !self.may_press(from) {
            return;
        }
        self.modifiers(modifiers);
        self.event(Event::PointerMoved(from));
        self.button(from, button, true, modifiers);
        for k in 1..=steps {
            self.event(Event::PointerMoved(from.lerp(to, k as f32 / steps as f32)));
        }
        self.button(to, button, false, modifiers);
        self.modifiers(Modifiers::NONE);
        self.frame();
    }

    fn key(&mut self, modifiers: Modifiers, key: Key) {
        self.harness.key_press_modifiers(modifiers, key);
        self.frame();
    }

    /// Whether a press at `at` stays clear of the widgets the walk leaves alone: a menu or a
    /// window may lie over what the walk aimed at. A menu in the way is closed first; a press
    /// that would still land on such a widget is not made (and the trail says so).
    fn may_press(&mut self, at: Pos2) -> bool {
        let left_alone = |monkey: &Monkey| {
            (monkey.all_widgets().into_iter())
                .find(|w| w.rect.contains(at) && LEFT_ALONE.iter().any(|name| names(&w.label, name)))
                .map(|w| w.label)
        };
        if left_alone(self).is_none() {
            return true;
        }
        self.key(Modifiers::NONE, Key::Escape);
        match left_alone(self) {
            None => true,
            Some(label) => {
                self.note(format!("  (no press at {at:?}: it would land on '{label}')"));
                false
            }
        }
    }

    /// The interactive widgets on screen now, less those the walk leaves alone, in the tree's
    /// order (the same for the same window).
    fn widgets(&self) -> Vec<Widget> {
        (self.all_widgets().into_iter())
            .filter(|w| !LEFT_ALONE.iter().any(|name| names(&w.label, name)))
            .collect()
    }

    /// Every interactive widget on screen now.
    fn all_widgets(&self) -> Vec<Widget> {
        let screen = Rect::from_min_size(Pos2::ZERO, WINDOW);
        let interactive =
            By::new().predicate(|n| egui::accessibility::is_input(n.role()) && !n.is_disabled() && !n.is_hidden());
        (self.harness.query_all(interactive))
            .filter_map(|node| {
                let bounds = node.accesskit_node().bounding_box()?;
                let rect = Rect::from_min_max(
                    Pos2::new(bounds.x0 as f32, bounds.y0 as f32),
                    Pos2::new(bounds.x1 as f32, bounds.y1 as f32),
                );
                let label = node.accesskit_node().label().unwrap_or_default();
                let mut in_window = false;
                let mut parent = node.parent();
                while let Some(p) = parent {
                    // The root is a window too; a floating window is one below it.
                    in_window |= p.accesskit_node().role() == Role::Window && p.parent().is_some();
                    parent = p.parent();
                }
                let role = node.accesskit_node().role();
                (screen.contains(rect.center()) && rect.area() > 1.0).then_some(Widget {
                    role,
                    label,
                    rect,
                    in_window,
                })
            })
            .collect()
    }

    fn pick<'w, T>(&mut self, items: &'w [T]) -> Option<&'w T> {
        (!items.is_empty()).then(|| &items[self.random.below(items.len())])
    }

    /// A point of the 3D view away from its edges and the posing tools' bar at its bottom.
    fn point_in_view(&mut self) -> Pos2 {
        let view = self.session().viewport.shrink2(vec2(20.0, 40.0));
        let (x, y) = (self.random.float() * 0.5 + 0.5, self.random.float() * 0.5 + 0.5);
        view.min + vec2(x * view.width(), y * view.height())
    }

    fn offset(&mut self, size: f32) -> Vec2 {
        vec2(self.random.float(), self.random.float()) * size
    }

    /// Where a world point is drawn in the view, if in front of the camera.
    fn on_screen(&mut self, world: glam::Vec3) -> Option<Pos2> {
        let session = self.session();
        let view = session.viewport;
        let clip = session.viewer.view.camera.view_projection(view.aspect_ratio()) * world.extend(1.0);
        (clip.w > 0.0).then(|| {
            let ndc = clip.truncate() / clip.w;
            Pos2::new(
                view.min.x + (ndc.x * 0.5 + 0.5) * view.width(),
                view.min.y + (0.5 - ndc.y * 0.5) * view.height(),
            )
        })
    }

    /// Where joint `node` is drawn, if in the view.
    fn joint_on_screen(&mut self, node: usize) -> Option<Pos2> {
        let world = self.viewer().pose().worlds.get(node)?.w_axis.truncate();
        let at = self.on_screen(world)?;
        self.session().viewport.contains(at).then_some(at)
    }

    // The actions. Each returns what it did, for the trail.

    /// Clicks a widget: one in a floating window half the time when one is open.
    fn click_widget(&mut self) -> String {
        let widgets = self.widgets();
        let in_windows: Vec<Widget> = widgets.iter().filter(|w| w.in_window).cloned().collect();
        let from = if !in_windows.is_empty() && self.random.below(2) == 0 {
            &in_windows
        } else {
            &widgets
        };
        let Some(widget) = self.pick(from).cloned() else {
            return "no widget to click".into();
        };
        match widget.role {
            Role::Slider | Role::SpinButton | Role::Splitter => self.drag_widget(&widget),
            Role::TextInput | Role::MultilineTextInput => self.type_into(&widget),
            _ => {
                self.click(widget.rect.center(), Modifiers::NONE);
                format!("click {:?} '{}'", widget.role, widget.label)
            }
        }
    }

    /// Drags a slider or a number field sideways, or a window's or panel's edge.
    fn drag_widget(&mut self, widget: &Widget) -> String {
        let from = widget.rect.center();
        let by = match widget.role {
            Role::Splitter => self.offset(60.0),
            _ => vec2(self.random.float() * widget.rect.width().max(60.0), 0.0),
        };
        self.drag(from, from + by, PointerButton::Primary, Modifiers::NONE, 4);
        format!("drag {:?} '{}' by {by:?}", widget.role, widget.label)
    }

    /// Types into a text field: a clip's new name, say, then Enter or Escape.
    fn type_into(&mut self, widget: &Widget) -> String {
        const TEXTS: &[&str] = &["Walk", "run 2", "x", "Ünïcode ✓", " "];
        let text = TEXTS[self.random.below(TEXTS.len())];
        self.click(widget.rect.center(), Modifiers::NONE);
        // Select what is there, so that the text replaces it.
        self.key(Modifiers::COMMAND, Key::A);
        self.event(Event::Text(text.to_owned()));
        let end = if self.random.below(4) == 0 {
            Key::Escape
        } else {
            Key::Enter
        };
        self.key(Modifiers::NONE, end);
        format!("type '{text}' into '{}' and {end:?}", widget.label)
    }

    fn slider(&mut self) -> String {
        let sliders: Vec<Widget> = (self.widgets().into_iter())
            .filter(|w| matches!(w.role, Role::Slider | Role::SpinButton))
            .collect();
        match self.pick(&sliders).cloned() {
            Some(widget) => self.drag_widget(&widget),
            None => "no slider".into(),
        }
    }

    /// Opens a menu of the menu bar and clicks one of its items (a submenu opens on hover).
    fn menu(&mut self) -> String {
        const MENUS: &[&str] = &["File", "Edit", "View", "Tools", "Help"];
        let menu = MENUS[self.random.below(MENUS.len())];
        // A menu left open would close on the click on its title.
        self.key(Modifiers::NONE, Key::Escape);
        let before = self.widgets();
        let Some(title) = before.iter().find(|w| w.label == menu).cloned() else {
            return format!("no menu {menu}");
        };
        self.click(title.rect.center(), Modifiers::NONE);
        // The menu shows from the frame after the click.
        self.frame();
        let items: Vec<Widget> = (self.widgets().into_iter())
            .filter(|w| !before.iter().any(|b| b.label == w.label && b.rect == w.rect))
            .collect();
        match self.pick(&items).cloned() {
            Some(item) => {
                self.click(item.rect.center(), Modifiers::NONE);
                format!("{menu} ▸ {}", item.label)
            }
            None => {
                self.key(Modifiers::NONE, Key::Escape);
                format!("{menu} (nothing to click)")
            }
        }
    }

    /// A menu item by its path of labels, as a person goes through the menu bar.
    fn menu_path(&mut self, path: &[&str]) -> String {
        for label in path {
            match self.widgets().into_iter().find(|w| names(&w.label, label)) {
                Some(item) => {
                    self.click(item.rect.center(), Modifiers::NONE);
                    self.frame();
                }
                None => {
                    self.key(Modifiers::NONE, Key::Escape);
                    return format!("{} (no '{label}')", path.join(" ▸ "));
                }
            }
        }
        path.join(" ▸ ")
    }

    /// Opens one of the tool windows, or adds or compares a file, by its key or its menu.
    fn window(&mut self) -> String {
        match self.random.below(9) {
            0 => self.menu_path(&["Tools", "Repair weights"]),
            1 => self.menu_path(&["Tools", "Curves"]),
            2 => self.menu_path(&["Tools", "Audit"]),
            3 => self.menu_path(&["File", "Compare with…"]),
            4 => self.menu_path(&["File", "Load clips from…"]),
            5 => self.menu_path(&["File", "Map joints of added clips…"]),
            6 => self.menu_path(&["Edit", "Save pose as clip…"]),
            7 => {
                let key = [Key::W, Key::K, Key::A][self.random.below(3)];
                self.hover_view();
                self.key(Modifiers::NONE, key);
                format!("key {key:?}")
            }
            _ => self.menu_path(&["File", "Compare with…"]),
        }
    }

    /// One of the keys of the command table (File ▸ Reload's aside: it replaces the document).
    fn shortcut(&mut self) -> String {
        use rigscope::ui::commands::{BINDINGS, Command};
        let bindings: Vec<_> = BINDINGS.iter().filter(|b| b.command != Command::Reload).collect();
        let binding = bindings[self.random.below(bindings.len())];
        if self.random.below(2) == 0 {
            self.hover_view();
        }
        let shortcut = binding.shortcut;
        self.key(shortcut.modifiers, shortcut.logical_key);
        format!("key {} ({})", binding.keys, binding.action)
    }

    fn hover_view(&mut self) {
        let at = self.point_in_view();
        self.event(Event::PointerMoved(at));
    }

    /// Blender's pose keys over the view: `R` or `G`, an axis, an amount typed or moved by the
    /// mouse, then Enter, Escape or a click; or `Alt+R`, `Alt+G`, `I`, `Ctrl+C`, `Ctrl+V`.
    fn pose_keys(&mut self) -> String {
        self.hover_view();
        let single = [
            (Modifiers::ALT, Key::R),
            (Modifiers::ALT, Key::G),
            (Modifiers::NONE, Key::I),
            (Modifiers::COMMAND, Key::C),
            (Modifiers::COMMAND, Key::V),
        ];
        if self.random.below(3) == 0 {
            let (modifiers, key) = single[self.random.below(single.len())];
            self.key(modifiers, key);
            return format!("key {modifiers:?} {key:?}");
        }
        let kind = if self.random.below(3) == 0 { Key::G } else { Key::R };
        self.key(Modifiers::NONE, kind);
        let mut keys = vec![format!("{kind:?}")];
        if self.random.below(3) > 0 {
            let axis = [Key::X, Key::Y, Key::Z][self.random.below(3)];
            self.key(Modifiers::NONE, axis);
            keys.push(format!("{axis:?}"));
        }
        const DIGITS: [Key; 10] = [
            Key::Num0,
            Key::Num1,
            Key::Num2,
            Key::Num3,
            Key::Num4,
            Key::Num5,
            Key::Num6,
            Key::Num7,
            Key::Num8,
            Key::Num9,
        ];
        if self.random.below(2) == 0 {
            if self.random.below(4) == 0 {
                self.key(Modifiers::NONE, Key::Minus);
                keys.push("-".into());
            }
            for _ in 0..1 + self.random.below(3) {
                let digit = self.random.below(10);
                self.key(Modifiers::NONE, DIGITS[digit]);
                keys.push(digit.to_string());
            }
        } else {
            for _ in 0..3 {
                let at = self.point_in_view();
                self.event(Event::PointerMoved(at));
            }
            keys.push("mouse".into());
        }
        match self.random.below(4) {
            0 => {
                self.key(Modifiers::NONE, Key::Escape);
                keys.push("Escape".into());
            }
            1 => {
                let at = self.point_in_view();
                self.click(at, Modifiers::NONE);
                keys.push("click".into());
            }
            _ => {
                self.key(Modifiers::NONE, Key::Enter);
                keys.push("Enter".into());
            }
        }
        format!("pose keys {}", keys.join(" "))
    }

    fn undo_redo(&mut self) -> String {
        let (modifiers, key, what) = match self.random.below(5) {
            0..=2 => (Modifiers::COMMAND, Key::Z, "undo"),
            3 => (Modifiers::COMMAND | Modifiers::SHIFT, Key::Z, "redo"),
            _ => (Modifiers::COMMAND, Key::Y, "redo"),
        };
        self.hover_view();
        self.key(modifiers, key);
        format!("{what} ({modifiers:?} {key:?})")
    }

    /// Orbits, pans, zooms, frames or clicks in the view.
    fn view_gesture(&mut self) -> String {
        let from = self.point_in_view();
        let by = self.offset(150.0);
        match self.random.below(7) {
            0 | 1 => {
                self.drag(from, from + by, PointerButton::Primary, Modifiers::NONE, 5);
                format!("orbit by {by:?}")
            }
            2 => {
                let (button, modifiers) = if self.random.below(2) == 0 {
                    (PointerButton::Secondary, Modifiers::NONE)
                } else {
                    (PointerButton::Primary, Modifiers::SHIFT)
                };
                self.drag(from, from + by, button, modifiers, 5);
                format!("pan by {by:?}")
            }
            3 => {
                self.event(Event::PointerMoved(from));
                let delta = vec2(0.0, self.random.float() * 150.0);
                self.event(Event::MouseWheel {
                    unit: egui::MouseWheelUnit::Point,
                    delta,
                    phase: egui::TouchPhase::Move,
                    source: egui::MouseWheelSource::Unknown,
                    modifiers: Modifiers::NONE,
                });
                format!("zoom {:.0}", delta.y)
            }
            4 => {
                self.click(from, Modifiers::NONE);
                self.click(from, Modifiers::NONE);
                "double click in the view".into()
            }
            5 => {
                self.click(from, Modifiers::COMMAND);
                "Ctrl+click a vertex".into()
            }
            _ => {
                self.click(from, Modifiers::NONE);
                "click in the view".into()
            }
        }
    }

    /// Selects a joint by a click where it is drawn: one of the bones, or a hand or a foot.
    fn select_joint(&mut self, chain_end: bool) -> Option<usize> {
        let viewer = self.viewer();
        let rig = viewer.rig().clone();
        let bones = &rig.hierarchy().bones;
        let candidates: Vec<usize> = (0..rig.nodes.len())
            .filter(|&n| bones[n])
            .filter(|&n| {
                !chain_end || {
                    let name = rig.nodes[n].name.to_lowercase();
                    (name.contains("hand") || name.contains("foot"))
                        && rigscope::anim::ik_layer::IkGoal::for_end_joint(&rig.nodes, n, glam::Vec3::ZERO).is_some()
                }
            })
            .collect();
        let &node = self.pick(&candidates)?;
        let at = self.joint_on_screen(node)?;
        self.click(at, Modifiers::NONE);
        self.viewer().view.selected_joint
    }

    /// Drags a ring of the rotation gizmo: the pointer goes round the selected joint until a
    /// ring lights up, then drags along it (with Ctrl, snapping, now and then).
    fn gizmo_drag(&mut self) -> String {
        if self.random.below(2) == 0 {
            self.select_joint(false);
        }
        let Some(joint) = self.viewer().view.selected_joint else {
            return "gizmo: no joint selected".into();
        };
        let Some(center) = self.joint_on_screen(joint) else {
            return "gizmo: the joint is out of the view".into();
        };
        let radius = ui::gizmo::GIZMO_RADIUS_POINTS;
        let turn = self.random.float() * std::f32::consts::PI;
        for k in 0..12 {
            let angle = turn + k as f32 * std::f32::consts::TAU / 12.0;
            let at = center + radius * vec2(angle.cos(), angle.sin());
            self.event(Event::PointerMoved(at));
            if let Some(ring) = self.session().ui.pose_tools.hovered_ring() {
                let sweep = self.random.float() * 1.5;
                let to = center + radius * vec2((angle + sweep).cos(), (angle + sweep).sin());
                let modifiers = if self.random.below(4) == 0 {
                    Modifiers::COMMAND
                } else {
                    Modifiers::NONE
                };
                self.drag(at, to, PointerButton::Primary, modifiers, 6);
                return format!("gizmo: drag ring {ring:?} of joint {joint} by {sweep:.2} rad");
            }
        }
        "gizmo: no ring under the pointer".into()
    }

    /// Drags a hand's or foot's IK goal: Ctrl+Alt+drag, or with the IK tool on.
    fn ik_drag(&mut self) -> String {
        let Some(end) = self.select_joint(true) else {
            return "IK: no hand or foot in the view".into();
        };
        let Some(from) = self.joint_on_screen(end) else {
            return "IK: the joint is out of the view".into();
        };
        let to = from + self.offset(80.0);
        if self.session().ui.pose_tools.ik_tool {
            self.drag(from, to, PointerButton::Primary, Modifiers::NONE, 6);
            format!("IK tool: drag joint {end}")
        } else {
            self.drag(from, to, PointerButton::Primary, Modifiers::COMMAND | Modifiers::ALT, 6);
            format!("IK: Ctrl+Alt+drag joint {end}")
        }
    }

    /// Alt+drag: bends the selected joint.
    fn bend_drag(&mut self) -> String {
        let from = self.point_in_view();
        let by = self.offset(100.0);
        self.drag(from, from + by, PointerButton::Primary, Modifiers::ALT, 5);
        format!("Alt+drag bend by {by:?}")
    }

    /// Scrolls one of the side panels, to reach what lies below its fold.
    fn scroll_panel(&mut self) -> String {
        let x = if self.random.below(2) == 0 {
            100.0
        } else {
            WINDOW.x - 100.0
        };
        let at = Pos2::new(x, 200.0 + self.random.below(400) as f32);
        self.event(Event::PointerMoved(at));
        let delta = vec2(0.0, self.random.float() * 400.0);
        self.event(Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
            modifiers: Modifiers::NONE,
        });
        format!("scroll the panel at x {x} by {:.0}", delta.y)
    }

    /// One of the clip list's edits of the selected clip (a trim range set at the playhead,
    /// trim, in place, resample, drop), a new name typed for it, or another clip selected.
    fn clip_edit(&mut self) -> String {
        const EDITS: &[&str] = &[
            "Set start",
            "Set end",
            "Trim to range",
            "In place",
            "Resample 30 fps",
            "Drop",
        ];
        let widgets = self.widgets();
        let edits: Vec<Widget> = (widgets.iter())
            .filter(|w| EDITS.iter().any(|name| names(&w.label, name)) || w.label == "Clip name")
            .cloned()
            .collect();
        let Some(widget) = self.pick(&edits).cloned() else {
            return "no clip to edit in sight".into();
        };
        if widget.role == Role::TextInput {
            return self.type_into(&widget);
        }
        self.click(widget.rect.center(), Modifiers::NONE);
        format!("clip list: '{}'", widget.label)
    }

    /// The Repair weights window (opened with `W` when closed): a repair chosen or not, a
    /// preview, before or after, marks, the end of the preview.
    fn repair(&mut self) -> String {
        const BUTTONS: &[&str] = &[
            "Preview",
            "Preview again",
            "Before",
            "After",
            "Mark changed vertices",
            "End preview",
        ];
        if !self.session().ui.repair.open {
            self.hover_view();
            self.key(Modifiers::NONE, Key::W);
        }
        // The analysis the window shows is made before the next frame.
        self.frame();
        let widgets: Vec<Widget> = (self.widgets().into_iter())
            .filter(|w| w.in_window && (w.role == Role::CheckBox || BUTTONS.iter().any(|name| names(&w.label, name))))
            .collect();
        match self.pick(&widgets).cloned() {
            Some(widget) => {
                self.click(widget.rect.center(), Modifiers::NONE);
                format!("Repair weights: '{}'", widget.label)
            }
            None => "Repair weights: nothing to click".into(),
        }
    }

    /// Closes one of the floating windows by its close button: open windows cover the menus
    /// and the view.
    fn close_window(&mut self) -> String {
        let buttons: Vec<Widget> = (self.widgets().into_iter())
            .filter(|w| w.in_window && w.label == "Close window")
            .collect();
        match self.pick(&buttons).cloned() {
            Some(button) => {
                self.click(button.rect.center(), Modifiers::NONE);
                "close a window".into()
            }
            None => "no window to close".into(),
        }
    }

    /// Lets the clip play for a few frames.
    fn watch(&mut self) -> String {
        let frames = 1 + self.random.below(10);
        for _ in 0..frames {
            self.frame();
        }
        format!("watch {frames} frames")
    }

    /// One action, chosen with the weights a person's session might have.
    fn act(&mut self) -> String {
        let total: u32 = CATALOGUE.iter().map(|(w, _, _)| w).sum();
        let mut roll = (self.random.next() % total as u64) as u32;
        for &(weight, name, action) in CATALOGUE {
            if roll < weight {
                self.actions += 1;
                *self.done.entry(name).or_default() += 1;
                return action(self);
            }
            roll -= weight;
        }
        unreachable!("the roll is below the total")
    }

    /// Ends what the walk may have left going: a typed field, an `R`/`G` transform, a menu.
    fn settle(&mut self) {
        self.event(Event::PointerMoved(Pos2::new(WINDOW.x / 2.0, WINDOW.y - 4.0)));
        for _ in 0..2 {
            self.key(Modifiers::NONE, Key::Escape);
        }
        let viewer = self.viewer();
        viewer.wait_for_load();
        viewer.wait_for_save();
        viewer.end_gesture();
        self.frame();
    }

    /// Closes the comparison and the windows and puts the windows back in their places, as a
    /// person tidies up before opening the next file: each walk starts alike (the same screen,
    /// nothing computed for a window), and the memory sampled there compares with the last.
    fn tidy(&mut self) {
        self.key(Modifiers::NONE, Key::Escape);
        self.harness.ctx.memory_mut(egui::Memory::reset_areas);
        self.frame();
        for _ in 0..8 {
            if self.close_window() == "no window to close" {
                break;
            }
        }
        // What the close buttons did not reach (a window under another).
        let Session { viewer, ui, .. } = self.harness.state_mut();
        viewer.stop_comparing();
        viewer.diagnostics.error = None;
        (ui.help_open, ui.about_open, ui.joint_map_open) = (false, false, false);
        (ui.audit.open, ui.repair.open, ui.curves.open) = (false, false, false);
        self.frame();
    }

    /// Opens the stage's file as a person does: File ▸ Open…, and Discard edits when asked.
    fn open(&mut self, stage: &'static Stage) {
        self.stage = stage;
        let path = self.shared.join(stage.file);
        self.tidy();
        let Session { viewer, ui, .. } = self.harness.state_mut();
        ui::open_from_dialog(viewer, ui, |_| Some(path.clone()));
        self.frame();
        if self.session().ui.discard_question.is_some() {
            self.click_when_shown("Discard edits");
            assert!(
                self.session().ui.discard_question.is_none(),
                "Discard edits answers the question"
            );
        }
        self.viewer().wait_for_load();
        self.frame();
        let viewer = self.viewer();
        assert_eq!(viewer.diagnostics.error, None, "{} opens", stage.file);
        assert_eq!(viewer.document().path.as_deref(), Some(path.as_path()));
        assert_eq!(viewer.history().undo_count(), 0, "a file opens with no edits");
    }

    /// Undoes every edit and checks the document is as opened; redoes them all and checks it is
    /// as it was. A frame is drawn after each step.
    fn check_undo_and_redo(&mut self, opened: &DocumentState) -> usize {
        self.settle();
        let depth = self.viewer().history().undo_count();
        // Past the history's depth the oldest edits are forgotten, and the document as opened
        // is out of reach: the walk stops short of it.
        assert!(
            depth < UNDO_DEPTH,
            "the walk made {depth} edits, as many as the history keeps"
        );
        let last = self.viewer().document_state();
        let mut undone = 0;
        while self.viewer().undo().is_some() {
            undone += 1;
            self.frame();
        }
        let restored = self.viewer().document_state();
        assert!(
            restored == *opened,
            "undoing all {undone} edits of {} does not give back the document as opened: {:?} differ",
            self.stage.file,
            restored.differences(opened)
        );
        for redone in 0..undone {
            let label = self.viewer().redo();
            assert!(label.is_some(), "edit {redone} of the {undone} undone is redone");
            self.frame();
        }
        let again = self.viewer().document_state();
        assert!(
            again == last,
            "redoing the {undone} edits undone of {} does not give back the last state: {:?} differ",
            self.stage.file,
            again.differences(&last)
        );
        // Edits the walk undid itself are still there to redo; made again and undone, they
        // leave the last state too.
        let mut later = 0;
        while self.viewer().redo().is_some() {
            later += 1;
            self.frame();
        }
        for _ in 0..later {
            self.viewer().undo();
            self.frame();
        }
        let back = self.viewer().document_state();
        assert!(
            back == last,
            "redoing and undoing the {later} edits the walk had undone of {} does not give back the last state: {:?} differ",
            self.stage.file,
            back.differences(&last)
        );
        undone
    }
}

/// Memory where each rig's walk starts (its file just opened and drawn, nothing compared), by
/// rig: the same point of the walk each time, whatever the walk did before.
struct Memory {
    /// Per stage, per walk of it: bytes live on Rust's heap (see `common::counting`).
    live: Vec<Vec<usize>>,
    /// Every walk's start: seconds into the run, resident bytes.
    resident: Vec<(f64, u64)>,
}

impl Memory {
    fn new() -> Memory {
        Memory {
            live: vec![Vec::new(); STAGES.len()],
            resident: Vec::new(),
        }
    }

    /// Samples the start of a walk of stage `stage`. Rust's heap is counted exactly: from a
    /// rig's second walk on, it may not hold more than [`LIVE_GROWTH_BOUND`] above its first
    /// (in ten minutes, later walks started with at most 2 MiB more).
    fn at_walk_start(&mut self, stage: usize, at: Duration) {
        let live = common::counting::live_bytes();
        self.resident.push((at.as_secs_f64(), resident_bytes()));
        let visits = &mut self.live[stage];
        visits.push(live);
        let first = visits[0];
        assert!(
            live <= first + LIVE_GROWTH_BOUND,
            "Rust's heap at the start of walk {} of {} holds {} MiB, {} MiB at its first walk",
            visits.len(),
            STAGES[stage].file,
            live >> 20,
            first >> 20
        );
    }

    /// Resident memory, which also counts the graphics driver's memory and what the allocator
    /// keeps, in the second half of a run of [`RESIDENT_CHECK_SECONDS`] or more: it may not rise
    /// more than [`RESIDENT_GROWTH_BOUND`] above the first half's peak. (With Rust's heap the
    /// same from walk to walk, resident memory still rises for minutes on a software
    /// rasterizer, steeply at first, as the walk meets pipelines and rigs it had not drawn.)
    /// Returns whether the run was long enough to check.
    fn check_resident(&self, total: Duration) -> bool {
        let half = total.as_secs_f64() / 2.0;
        let (first, second): (Vec<_>, Vec<_>) = self.resident.iter().copied().partition(|s| s.0 < half);
        if total.as_secs() < RESIDENT_CHECK_SECONDS || first.is_empty() || second.is_empty() {
            return false;
        }
        let peak = first.iter().map(|s| s.1).max().unwrap_or(0);
        for (at, rss) in second {
            assert!(
                rss <= peak + RESIDENT_GROWTH_BOUND,
                "resident memory at {at:.0} s is {} MiB, {} MiB at most in the first half of the run",
                rss >> 20,
                peak >> 20
            );
        }
        true
    }

    /// Least-squares slope of resident memory over the second half of the run, in MiB per
    /// minute.
    fn resident_trend(&self, total: Duration) -> f64 {
        let half = total.as_secs_f64() / 2.0;
        let samples: Vec<(f64, u64)> = self.resident.iter().copied().filter(|s| s.0 >= half).collect();
        let n = samples.len() as f64;
        let mean_t = samples.iter().map(|s| s.0).sum::<f64>() / n;
        let mean_m = samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
        let covariance: f64 = (samples.iter()).map(|s| (s.0 - mean_t) * (s.1 as f64 - mean_m)).sum();
        let variance: f64 = samples.iter().map(|s| (s.0 - mean_t).powi(2)).sum();
        if variance > 0.0 {
            covariance / variance * 60.0 / (1 << 20) as f64
        } else {
            0.0
        }
    }

    /// The samples in MiB: Rust's heap per rig, one line each, and resident memory in order.
    fn table(&self) -> String {
        let mut lines: Vec<String> = (STAGES.iter().zip(&self.live))
            .map(|(stage, visits)| {
                let mib: Vec<String> = visits.iter().map(|bytes| (bytes >> 20).to_string()).collect();
                format!("  heap     {:34} {}", stage.file, mib.join(" "))
            })
            .collect();
        let resident: Vec<String> = (self.resident.iter())
            .map(|(at, rss)| format!("{at:.0}s:{}", rss >> 20))
            .collect();
        lines.push(format!("  resident {}", resident.join(" ")));
        lines.join("\n")
    }
}

fn seconds() -> u64 {
    std::env::var("RIGSCOPE_MONKEY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECONDS)
}

fn seed() -> u64 {
    match std::env::var("RIGSCOPE_MONKEY_SEED") {
        Ok(seed) => seed.parse().expect("RIGSCOPE_MONKEY_SEED is a number"),
        // A new walk each run: the seed is printed to replay it.
        Err(_) => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
            nanos % 1_000_000_007 + 1
        }
    }
}

fn shared_root() -> Option<PathBuf> {
    let rigs = common::shared_folder("rigs")?;
    common::shared_folder("corpus/rigs")?;
    rigs.parent().map(Path::to_owned)
}

#[test]
#[ignore = "plays for a minute or more; cargo test --release --test app monkey:: -- --ignored"]
fn a_seeded_random_walk_through_the_window_keeps_undo_exact_and_memory_flat() {
    let Some(shared) = shared_root() else { return };
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let (seed, seconds) = (seed(), seconds());
    eprintln!(
        "monkey: seed {seed} for {seconds} s on {} (RIGSCOPE_MONKEY_SEED={seed} replays it)",
        gpu.describe()
    );
    let trail = Rc::new(RefCell::new(Vec::new()));
    let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        walk(&shared, gpu, seed, seconds, Rc::clone(&trail))
    }));
    if let Err(failure) = walked {
        let trail = trail.borrow();
        let from = trail.len().saturating_sub(60);
        eprintln!("monkey: the walk failed; its last actions:");
        for line in &trail[from..] {
            eprintln!("  {line}");
        }
        eprintln!(
            "monkey: replay with RIGSCOPE_MONKEY_SEED={seed} RIGSCOPE_MONKEY_SECONDS={seconds} cargo test --release --test app monkey:: -- --ignored --nocapture"
        );
        std::panic::resume_unwind(failure);
    }
}

fn walk(shared: &Path, gpu: Gpu, seed: u64, seconds: u64, trail: Rc<RefCell<Vec<String>>>) {
    let total = Duration::from_secs(seconds);
    let verbose = std::env::var_os("RIGSCOPE_MONKEY_VERBOSE").is_some();
    let session = Session {
        viewer: Viewer::new(common::load_demo(), None),
        ui: UiState::default(),
        actions: Vec::new(),
        viewport: Rect::NOTHING,
    };
    let texture_changes = Rc::new(RefCell::new(Vec::new()));
    let harness = (Harness::builder().with_size(WINDOW))
        .renderer(TextureChanges(Rc::clone(&texture_changes)))
        // Names typed (and names in files) may hold characters the UI's fonts lack: the window
        // draws them as boxes, as here.
        .allow_missing_glyphs()
        .build_ui_state(
            |ui, session: &mut Session| {
                let output = ui::show(ui, &mut session.viewer, &mut session.ui, &FrameInfo::default());
                session.actions.extend(output.actions);
                session.viewport = output.viewport;
            },
            session,
        );
    let mut monkey = Monkey {
        harness,
        screen: Screen::new(gpu, texture_changes),
        // xorshift never leaves 0.
        random: Random(seed.max(1)),
        shared: shared.to_owned(),
        stage: &STAGES[0],
        trail,
        frames: 0,
        actions: 0,
        done: Default::default(),
        ui_time: Duration::ZERO,
        draw_time: Duration::ZERO,
    };
    let saved_files = common::temp_dir("monkey-saves");
    let started = Instant::now();
    let mut memory = Memory::new();
    let mut walks = 0;
    let mut edits_checked = 0;
    'walk: for (index, stage) in STAGES.iter().enumerate().cycle() {
        monkey.note(format!("walk {walks}: open {}", stage.file));
        monkey.open(stage);
        // The rig is really drawn: the view framed on it shows more than the background.
        let image = monkey.frame_read(true).expect("read back");
        let background = *image.get_pixel(0, image.height() - 1);
        let drawn = image.pixels().filter(|p| common::differs(p, &background)).count();
        assert!(drawn > 500, "{} opens drawn: {drawn} pixels", stage.file);
        memory.at_walk_start(index, started.elapsed());
        let opened = monkey.viewer().document_state();
        for n in 0..ACTIONS_PER_RIG {
            if started.elapsed() >= total && walks > 0 {
                break;
            }
            let did = monkey.act();
            // Every state the walk reaches names its widgets, as the other UI tests require.
            monkey.harness.check_accessibility();
            if verbose {
                eprintln!("  {n}: {did}");
            }
            monkey.note(format!("{n}: {did}"));
            if monkey.viewer().history().undo_count() + EDIT_MARGIN >= UNDO_DEPTH {
                break;
            }
        }
        let edits = monkey.check_undo_and_redo(&opened);
        edits_checked += edits;
        let round = monkey.file_round(&saved_files, walks);
        monkey.note(round);
        walks += 1;
        let rss = resident_bytes() >> 20;
        let live = common::counting::live_bytes() >> 20;
        eprintln!(
            "monkey: {:5.1} s  walk {walks:3} {:34} {edits:3} edits {:5} actions {:6} frames  {rss} MiB resident, {live} MiB live",
            started.elapsed().as_secs_f64(),
            stage.file,
            monkey.actions,
            monkey.frames,
        );
        if started.elapsed() >= total {
            break 'walk;
        }
    }
    std::fs::remove_dir_all(&saved_files).expect("the saved files are removed");
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let per_frame = |time: Duration| time.as_secs_f64() * 1e3 / monkey.frames.max(1) as f64;
    eprintln!(
        "monkey: per frame {:.1} ms in the UI, {:.1} ms drawing it",
        per_frame(monkey.ui_time),
        per_frame(monkey.draw_time)
    );
    let done: Vec<String> = (monkey.done.iter()).map(|(name, n)| format!("{name} {n}")).collect();
    eprintln!("monkey: actions done: {}", done.join(", "));
    let resident_checked = memory.check_resident(total);
    eprintln!(
        "monkey: seed {seed}: {} actions ({:.0} a minute), {} frames, {walks} rigs walked, {edits_checked} edits undone and redone; memory at each walk's start (MiB){}, resident trend over the second half {:+.2} MiB/min:\n{}",
        monkey.actions,
        monkey.actions as f64 / minutes,
        monkey.frames,
        if resident_checked {
            ""
        } else {
            " (too short a run to check resident memory)"
        },
        memory.resident_trend(total),
        memory.table()
    );
}
