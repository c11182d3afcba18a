//! Keeping the window responsive when the whole scene takes longer to draw than a frame may.
//!
//! A rig heavy enough to have a proxy (see `scene::proxy`) and whose whole scene was measured
//! to cost more than the frame budget is drawn three ways: while the scene changes (orbiting,
//! playback, a bend), its proxy; once it stops changing, the whole scene in portions of the
//! budget's size, frame after frame, into a second image while the proxy's image stays on
//! screen; and while it stays unchanged, the finished image again. The UI is drawn over
//! whichever image is shown, at its own rate. Scenes within the budget are drawn whole every
//! frame, as before.

use std::ops::Range;
use std::time::Duration;

/// Scene time a frame may take: a scene estimated to take longer is heavy.
pub const FRAME_BUDGET: Duration = Duration::from_millis(30);
/// The share of the budget a portion of a heavy scene gets: the rest of its frame (the pose,
/// copying the kept image onto the frame, the UI) takes the rest.
const PORTION_SHARE: f64 = 2.0 / 3.0;

/// The part of the scene one pass draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenePortion {
    /// Draw each primitive's proxy where it has one (and no wireframe).
    pub proxy: bool,
    /// Mesh primitives this pass draws, counted in drawing order over the whole scene:
    /// triangles of the shaded draws, then lines of the wireframe.
    pub primitives: Range<u64>,
    /// The pass starts the image (clears color and depth).
    pub first: bool,
    /// The pass ends the image (resolves samples).
    pub last: bool,
    /// The pass draws the grid and the overlays after its meshes: the last pass of an image,
    /// or one side's pass when another side follows it into the image (a comparison).
    pub overlays: bool,
}

impl ScenePortion {
    /// The whole scene in one pass.
    pub const WHOLE: ScenePortion = ScenePortion {
        proxy: false,
        primitives: 0..u64::MAX,
        first: true,
        last: true,
        overlays: true,
    };

    /// The proxy scene in one pass.
    pub const PROXY: ScenePortion = ScenePortion {
        proxy: true,
        primitives: 0..u64::MAX,
        first: true,
        last: true,
        overlays: true,
    };

    /// `total` primitives split into passes of at most `per_pass`.
    pub fn split(total: u64, per_pass: u64) -> impl Iterator<Item = ScenePortion> {
        let per_pass = per_pass.max(1);
        let passes = total.div_ceil(per_pass).max(1);
        (0..passes).map(move |k| ScenePortion {
            proxy: false,
            primitives: k * per_pass..((k + 1) * per_pass).min(total),
            first: k == 0,
            last: k + 1 == passes,
            overlays: k + 1 == passes,
        })
    }
}

/// How this frame shows the scene.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SceneDraw {
    /// The whole scene straight into the frame (a scene within the budget).
    Whole,
    /// The proxy into the shown image, then that image.
    Proxy,
    /// The shown image as it is: nothing changed since it was finished.
    Keep,
    /// This portion of the whole scene into the image being finished, then the shown image;
    /// when the portion is the last, the finished image becomes the one shown.
    Refine(ScenePortion),
}

impl SceneDraw {
    /// A line for the status bar when the view does not show the whole scene of `total`
    /// primitives as it is now: the proxy, or how much of the whole scene is drawn.
    pub fn status(&self, total: u64) -> Option<String> {
        match self {
            SceneDraw::Proxy => Some("Coarse proxy while the view moves".to_owned()),
            SceneDraw::Refine(portion) if !portion.last => Some(format!(
                "Drawing the whole scene: {}%",
                portion.primitives.end * 100 / total.max(1)
            )),
            _ => None,
        }
    }

    /// Whether the whole scene is still to be finished after this frame: the window must draw
    /// another frame even when nothing else asks for one.
    pub fn is_unfinished(&self) -> bool {
        match self {
            SceneDraw::Proxy => true,
            SceneDraw::Refine(portion) => !portion.last,
            SceneDraw::Whole | SceneDraw::Keep => false,
        }
    }
}

/// What the shown image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    signature: u64,
    whole: bool,
}

/// Chooses how each frame shows the scene, from the scene's signature (a hash of everything
/// that decides its pixels) and the measured cost of drawing it.
#[derive(Debug, Clone)]
pub struct DetailPolicy {
    budget: Duration,
    /// Seconds per primitive, from the newest timed pass of the whole scene or a portion of it.
    per_primitive: Option<f64>,
    shown: Option<Shown>,
    /// The next primitive of the image being finished.
    refined_to: u64,
}

/// Sets the frame budget in milliseconds instead of [`FRAME_BUDGET`] (a slower or faster
/// machine's users, and tests that need a scene to count as heavy).
pub const FRAME_BUDGET_ENV: &str = "RIGSCOPE_FRAME_BUDGET_MS";

impl Default for DetailPolicy {
    /// A policy with [`FRAME_BUDGET`], or the budget [`FRAME_BUDGET_ENV`] sets.
    fn default() -> Self {
        let budget = std::env::var(FRAME_BUDGET_ENV)
            .ok()
            .and_then(|ms| ms.trim().parse::<f64>().ok())
            .filter(|ms| ms.is_finite() && *ms > 0.0)
            .map_or(FRAME_BUDGET, |ms| Duration::from_secs_f64(ms / 1e3));
        DetailPolicy::new(budget)
    }
}

impl DetailPolicy {
    pub fn new(budget: Duration) -> DetailPolicy {
        DetailPolicy {
            budget,
            per_primitive: None,
            shown: None,
            refined_to: 0,
        }
    }

    /// Learns from a timed pass that drew `primitives` of the whole scene (not the proxy) in
    /// `seconds`.
    pub fn measured(&mut self, seconds: f64, primitives: u64) {
        if primitives > 0 && seconds.is_finite() && seconds > 0.0 {
            self.per_primitive = Some(seconds / primitives as f64);
        }
    }

    /// Whether the whole scene of `total` primitives is estimated to take longer than the
    /// budget.
    pub fn is_heavy(&self, total: u64) -> bool {
        self.per_primitive
            .is_some_and(|p| p * total as f64 > self.budget.as_secs_f64())
    }

    /// Primitives of the whole scene that fit one portion's share of the budget.
    fn per_pass(&self, total: u64) -> u64 {
        match self.per_primitive {
            Some(p) => ((self.budget.as_secs_f64() * PORTION_SHARE / p).round() as u64).clamp(1, total.max(1)),
            None => total,
        }
    }

    /// How to show a frame whose scene has `signature` and `total` primitives, with or without
    /// a proxy ready. Decides for the frame being drawn: call once per frame.
    pub fn decide(&mut self, signature: u64, total: u64, has_proxy: bool) -> SceneDraw {
        if !has_proxy || !self.is_heavy(total) {
            self.shown = None;
            return SceneDraw::Whole;
        }
        match self.shown {
            Some(Shown { signature: s, whole }) if s == signature => {
                if whole {
                    return SceneDraw::Keep;
                }
                let start = self.refined_to.min(total);
                let end = (start + self.per_pass(total)).min(total);
                let portion = ScenePortion {
                    proxy: false,
                    primitives: start..end,
                    first: start == 0,
                    last: end == total,
                    overlays: end == total,
                };
                self.refined_to = end;
                if portion.last {
                    self.shown = Some(Shown { signature, whole: true });
                }
                SceneDraw::Refine(portion)
            }
            _ => {
                self.shown = Some(Shown {
                    signature,
                    whole: false,
                });
                self.refined_to = 0;
                SceneDraw::Proxy
            }
        }
    }

    /// [`DetailPolicy::decide`] for a view that keeps no image between frames (a comparison's
    /// two sides): the proxy while the signature changes, and the whole scene, in one pass, the
    /// first frame it holds still. Never [`SceneDraw::Keep`] or [`SceneDraw::Refine`].
    pub fn decide_unkept(&mut self, signature: u64, total: u64, has_proxy: bool) -> SceneDraw {
        if !has_proxy || !self.is_heavy(total) {
            self.shown = None;
            return SceneDraw::Whole;
        }
        let still = self.shown.is_some_and(|shown| shown.signature == signature);
        self.shown = Some(Shown {
            signature,
            whole: still,
        });
        if still { SceneDraw::Whole } else { SceneDraw::Proxy }
    }

    /// Forgets the shown image (it was lost, or must be drawn again).
    pub fn forget(&mut self) {
        self.shown = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Duration = FRAME_BUDGET;

    /// A policy that has seen the whole scene of `total` primitives take `seconds`.
    fn measured(total: u64, seconds: f64) -> DetailPolicy {
        let mut policy = DetailPolicy::new(BUDGET);
        policy.measured(seconds, total);
        policy
    }

    #[test]
    fn light_scenes_and_scenes_without_a_proxy_are_drawn_whole_every_frame() {
        let mut unmeasured = DetailPolicy::new(BUDGET);
        assert_eq!(unmeasured.decide(1, 1000, true), SceneDraw::Whole);
        let mut light = measured(1000, 0.029);
        for _ in 0..3 {
            assert_eq!(light.decide(1, 1000, true), SceneDraw::Whole);
        }
        let mut no_proxy = measured(1000, 0.5);
        assert_eq!(no_proxy.decide(1, 1000, false), SceneDraw::Whole);
        assert_eq!(no_proxy.decide(1, 1000, false), SceneDraw::Whole);
    }

    #[test]
    fn a_heavy_scene_shows_its_proxy_while_it_changes_then_refines_in_budget_sized_portions() {
        // 2,000,000 primitives in 0.9 s: 0.45 µs each, so 44,444 fit 20 ms; 46 portions.
        let total = 2_000_000;
        let mut policy = measured(total, 0.9);
        assert!(policy.is_heavy(total));
        for signature in 1..4 {
            let draw = policy.decide(signature, total, true);
            assert_eq!(draw, SceneDraw::Proxy);
            assert!(draw.is_unfinished());
        }
        let per_pass = (0.020f64 / (0.9 / total as f64)).round() as u64;
        assert_eq!(per_pass, 44_444);
        let mut covered = 0;
        let mut portions = 0;
        loop {
            let SceneDraw::Refine(portion) = policy.decide(3, total, true) else {
                panic!("expected a portion after {portions}");
            };
            assert_eq!(portion.primitives.start, covered, "portions follow each other");
            assert_eq!(portion.first, covered == 0);
            assert_eq!(SceneDraw::Refine(portion.clone()).is_unfinished(), !portion.last);
            assert!(!portion.proxy);
            assert!(portion.primitives.end - portion.primitives.start <= per_pass);
            covered = portion.primitives.end;
            portions += 1;
            if portion.last {
                break;
            }
        }
        assert_eq!((covered, portions), (total, total.div_ceil(per_pass)));
        assert!(!SceneDraw::Refine(ScenePortion::split(1, 1).next().unwrap()).is_unfinished());
        // Finished: kept while nothing changes; a change starts over from the proxy.
        assert_eq!(policy.decide(3, total, true), SceneDraw::Keep);
        assert_eq!(policy.decide(3, total, true), SceneDraw::Keep);
        assert_eq!(policy.decide(4, total, true), SceneDraw::Proxy);
        let SceneDraw::Refine(portion) = policy.decide(4, total, true) else {
            panic!("refining again");
        };
        assert!(portion.first && portion.primitives.start == 0);
    }

    #[test]
    fn a_change_halfway_through_refining_starts_over() {
        // 0.3 ms per primitive: 67 in a 20 ms portion.
        let total = 1000;
        let mut policy = measured(total, 0.3);
        assert_eq!(policy.decide(7, total, true), SceneDraw::Proxy);
        assert_eq!(
            policy.decide(7, total, true),
            SceneDraw::Refine(ScenePortion {
                proxy: false,
                primitives: 0..67,
                first: true,
                last: false,
                overlays: false
            })
        );
        assert_eq!(policy.decide(8, total, true), SceneDraw::Proxy);
        let SceneDraw::Refine(portion) = policy.decide(8, total, true) else {
            panic!("refining the new scene");
        };
        assert_eq!(portion.primitives, 0..67);
        // A new measurement changes the portion size from the next portion on: 0.1 ms each.
        policy.measured(0.01, 100);
        let SceneDraw::Refine(portion) = policy.decide(8, total, true) else {
            panic!("refining on");
        };
        assert_eq!(portion.primitives, 67..267);
        // A lighter estimate ends the whole business: drawn whole again.
        policy.measured(0.001, 1000);
        assert_eq!(policy.decide(8, total, true), SceneDraw::Whole);
        policy.measured(0.3, 1000);
        policy.forget();
        assert_eq!(policy.decide(8, total, true), SceneDraw::Proxy);
    }

    #[test]
    fn the_status_names_the_proxy_and_how_far_the_whole_scene_is() {
        assert_eq!(
            SceneDraw::Proxy.status(10).as_deref(),
            Some("Coarse proxy while the view moves")
        );
        let mut portions = ScenePortion::split(1000, 250);
        let first = portions.next().unwrap();
        assert_eq!(
            SceneDraw::Refine(first).status(1000).as_deref(),
            Some("Drawing the whole scene: 25%")
        );
        let last = portions.last().unwrap();
        assert_eq!(SceneDraw::Refine(last).status(1000), None, "finished: shown whole");
        assert_eq!(SceneDraw::Keep.status(1000), None);
        assert_eq!(SceneDraw::Whole.status(1000), None);
    }

    #[test]
    fn split_covers_the_scene_once_in_order() {
        let portions: Vec<_> = ScenePortion::split(10, 4).collect();
        let ranges: Vec<_> = portions.iter().map(|p| p.primitives.clone()).collect();
        assert_eq!(ranges, [0..4, 4..8, 8..10]);
        assert_eq!(
            portions.iter().map(|p| (p.first, p.last)).collect::<Vec<_>>(),
            [(true, false), (false, false), (false, true)]
        );
        let one: Vec<_> = ScenePortion::split(0, 4).collect();
        assert_eq!(one.len(), 1);
        assert!(one[0].first && one[0].last);
    }
}
