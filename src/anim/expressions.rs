//! A VRM avatar's expressions as morph weights set by hand: each expression at a weight moves
//! the morph targets it binds, as three-vrm's expression manager does.

use crate::rig::{MeshInstance, VrmExpression};

/// Sets, in `morph_weights` (per mesh instance, per target, as
/// [`AnimationStack::morph_overrides`](crate::anim::AnimationStack::morph_overrides)), the
/// weights of the targets that `expressions` bind, with `weights` the expressions' weights (one
/// per expression, clamped to [0, 1]). A target bound by an expression above 0 gets the sum of
/// expression weight × bind weight over those expressions, clamped to [0, 1]; a target bound
/// only by expressions at 0 goes back to the clip (`None`). Targets no expression binds keep
/// their weight. Allocates nothing: a slider dragged calls it every frame.
pub fn set_expression_morph_weights(
    expressions: &[VrmExpression],
    weights: &[f32],
    instances: &[MeshInstance],
    morph_weights: &mut [Vec<Option<f32>>],
) {
    for_each_bound_target(expressions, instances, morph_weights, |target, _, _| *target = None);
    for_each_bound_target(
        expressions,
        instances,
        morph_weights,
        |target, expression, bind_weight| {
            let weight = weights.get(expression).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            if weight > 0.0 {
                *target = Some(target.unwrap_or(0.0) + weight * bind_weight);
            }
        },
    );
    for_each_bound_target(expressions, instances, morph_weights, |target, _, _| {
        *target = target.map(|w| w.clamp(0.0, 1.0));
    });
}

/// Calls `visit` with each bind's target weight in `morph_weights`, the index of its
/// expression and the bind's weight (a bind on a node that places several instances visits
/// each; a bind past an instance's targets visits none).
fn for_each_bound_target(
    expressions: &[VrmExpression],
    instances: &[MeshInstance],
    morph_weights: &mut [Vec<Option<f32>>],
    mut visit: impl FnMut(&mut Option<f32>, usize, f32),
) {
    for (expression, bound) in expressions.iter().enumerate() {
        for bind in &bound.binds {
            for (instance, placed) in instances.iter().enumerate() {
                if placed.node != bind.node {
                    continue;
                }
                if let Some(target) = morph_weights.get_mut(instance).and_then(|t| t.get_mut(bind.target)) {
                    visit(target, expression, bind.weight);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::MorphBind;

    fn expression(name: &str, binds: &[(usize, usize, f32)]) -> VrmExpression {
        VrmExpression {
            name: name.to_owned(),
            binds: (binds.iter())
                .map(|&(node, target, weight)| MorphBind { node, target, weight })
                .collect(),
        }
    }

    /// Two mesh nodes (3 and 5 targets); `happy` and `blink` share target 1 of node 4.
    #[test]
    fn shared_targets_sum_and_clamp_and_unbound_targets_keep_their_weight() {
        let expressions = [
            expression("happy", &[(4, 1, 0.5), (4, 2, 0.25), (7, 0, 1.0)]),
            expression("blink", &[(4, 1, 1.0), (4, 9, 1.0)]),
            expression("sad", &[(7, 4, 0.8)]),
        ];
        let instances = [
            MeshInstance {
                node: 4,
                mesh: 0,
                skin: None,
            },
            MeshInstance {
                node: 7,
                mesh: 1,
                skin: None,
            },
        ];
        let mut weights = vec![
            vec![Some(0.3), None, Some(0.9)],
            vec![None, Some(0.6), None, None, Some(0.2)],
        ];
        set_expression_morph_weights(&expressions, &[0.8, 0.7, 0.0], &instances, &mut weights);
        // Node 4 target 1: 0.8 × 0.5 + 0.7 × 1 = 1.1, clamped; target 2: 0.8 × 0.25 = 0.2.
        // Node 7 target 0: 0.8; target 4 only by `sad` at 0: back to the clip.
        assert_eq!(weights[0], [Some(0.3), Some(1.0), Some(0.2)]);
        assert_eq!(weights[1], [Some(0.8), Some(0.6), None, None, None]);
        // Weights outside [0, 1] count as their clamp; all at 0 hand every bound target back.
        set_expression_morph_weights(&expressions, &[-1.0, 0.5, 2.0], &instances, &mut weights);
        assert_eq!(weights[0], [Some(0.3), Some(0.5), None]);
        assert_eq!(weights[1], [None, Some(0.6), None, None, Some(0.8)]);
        set_expression_morph_weights(&expressions, &[0.0; 3], &instances, &mut weights);
        assert_eq!(weights[0], [Some(0.3), None, None]);
        assert_eq!(weights[1], [None, Some(0.6), None, None, None]);
    }
}
