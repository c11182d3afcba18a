//! The repairs as the Repair window and the settings keep them: each repair with its options
//! and whether it is chosen, and the plan they make.

use super::{DEFAULT_LIMIT, DEFAULT_PRUNE, FillMode, MirrorDirection, Repair, RepairPlan};

/// The repairs the Repair panel offers, each with its options and whether it is part of the
/// repair that is previewed and saved.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RepairOptions {
    pub normalize: bool,
    pub limit: bool,
    /// Influences kept per vertex by the limit (4 or 8).
    pub limit_to: usize,
    pub prune: bool,
    /// Weights below this are dropped by pruning.
    pub prune_below: f32,
    pub fill: bool,
    /// Give vertices without weight the nearest bone's joint, or only list them.
    pub fill_nearest_bone: bool,
    pub mirror: bool,
    pub mirror_left_to_right: bool,
}

impl Default for RepairOptions {
    /// The cleanup `render --fix` runs alone: fill, prune 1/255, limit 4 and normalize.
    fn default() -> RepairOptions {
        RepairOptions {
            normalize: true,
            limit: true,
            limit_to: DEFAULT_LIMIT,
            prune: true,
            prune_below: DEFAULT_PRUNE,
            fill: true,
            fill_nearest_bone: true,
            mirror: false,
            mirror_left_to_right: true,
        }
    }
}

/// Every repair, in the order [`crate::repair::apply`] runs them.
pub const REPAIRS: [Repair; 5] = [
    Repair::Fill,
    Repair::Mirror,
    Repair::Prune,
    Repair::Limit,
    Repair::Normalize,
];

impl RepairOptions {
    /// The chosen repairs' names, in the order they run: "fill, normalize".
    pub fn chosen_names(&self) -> String {
        let names: Vec<String> = (REPAIRS.iter())
            .filter(|&&r| self.is_chosen(r))
            .map(|r| format!("{r:?}").to_lowercase())
            .collect();
        names.join(", ")
    }

    /// The repair `repair` alone, with its options, whether it is chosen or not.
    pub fn single(&self, repair: Repair) -> RepairPlan {
        let mut plan = RepairPlan::default();
        match repair {
            Repair::Normalize => plan.normalize = true,
            Repair::Limit => plan.limit = Some(self.limit_to),
            Repair::Prune => plan.prune = Some(self.prune_below),
            Repair::Fill => {
                plan.fill = Some(if self.fill_nearest_bone {
                    FillMode::NearestBone
                } else {
                    FillMode::ListOnly
                })
            }
            Repair::Mirror => {
                plan.mirror = Some(if self.mirror_left_to_right {
                    MirrorDirection::LeftToRight
                } else {
                    MirrorDirection::RightToLeft
                })
            }
        }
        plan
    }

    pub fn is_chosen(&self, repair: Repair) -> bool {
        match repair {
            Repair::Normalize => self.normalize,
            Repair::Limit => self.limit,
            Repair::Prune => self.prune,
            Repair::Fill => self.fill,
            Repair::Mirror => self.mirror,
        }
    }

    /// `plan`'s repairs chosen with its options; the others keep their defaults, unchosen.
    pub fn from_plan(plan: &RepairPlan) -> RepairOptions {
        let defaults = RepairOptions::default();
        RepairOptions {
            normalize: plan.normalize,
            limit: plan.limit.is_some(),
            limit_to: plan.limit.unwrap_or(defaults.limit_to),
            prune: plan.prune.is_some(),
            prune_below: plan.prune.unwrap_or(defaults.prune_below),
            fill: plan.fill.is_some(),
            fill_nearest_bone: plan.fill != Some(FillMode::ListOnly),
            mirror: plan.mirror.is_some(),
            mirror_left_to_right: plan.mirror != Some(MirrorDirection::RightToLeft),
        }
    }

    pub fn is_default(&self) -> bool {
        *self == RepairOptions::default()
    }

    /// These options with values the window cannot set (read from a settings file) replaced by
    /// the defaults: a limit other than 4 or 8, a pruning threshold outside 0 to 0.5.
    pub fn checked(self) -> RepairOptions {
        let defaults = RepairOptions::default();
        RepairOptions {
            limit_to: if matches!(self.limit_to, 4 | 8) {
                self.limit_to
            } else {
                defaults.limit_to
            },
            prune_below: if (0.0..=0.5).contains(&self.prune_below) {
                self.prune_below
            } else {
                defaults.prune_below
            },
            ..self
        }
    }

    /// The chosen repairs together.
    pub fn plan(&self) -> RepairPlan {
        (REPAIRS.iter())
            .filter(|&&r| self.is_chosen(r))
            .map(|&r| self.single(r))
            .fold(RepairPlan::default(), |a, b| RepairPlan {
                normalize: a.normalize || b.normalize,
                limit: a.limit.or(b.limit),
                prune: a.prune.or(b.prune),
                fill: a.fill.or(b.fill),
                mirror: a.mirror.or(b.mirror),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_give_back_the_plan_they_were_made_from() {
        let plans = [
            RepairPlan::default(),
            RepairPlan {
                normalize: true,
                limit: Some(8),
                prune: Some(0.01),
                fill: Some(FillMode::ListOnly),
                mirror: Some(MirrorDirection::RightToLeft),
            },
            RepairPlan {
                fill: Some(FillMode::NearestBone),
                mirror: Some(MirrorDirection::LeftToRight),
                ..RepairPlan::default()
            },
        ];
        for plan in plans {
            assert_eq!(RepairOptions::from_plan(&plan).plan(), plan);
        }
        let defaults = RepairOptions::default();
        assert_eq!(defaults.single(Repair::Limit).limit, Some(4));
        assert_eq!(
            defaults.single(Repair::Mirror).mirror,
            Some(MirrorDirection::LeftToRight)
        );
        let hand_edited = RepairOptions {
            limit_to: 1000,
            prune_below: f32::NAN,
            mirror: true,
            ..defaults
        };
        let checked = hand_edited.checked();
        assert_eq!((checked.limit_to, checked.prune_below), (4, DEFAULT_PRUNE));
        assert!(checked.mirror, "valid choices are kept");
        let eight = RepairOptions {
            limit_to: 8,
            prune_below: 0.02,
            ..defaults
        }
        .checked();
        assert_eq!((eight.limit_to, eight.prune_below), (8, 0.02));
    }
}
