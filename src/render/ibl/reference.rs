//! The integrals the GPU estimates, computed another way in f64: what the tests compare the
//! BRDF table, the irradiance cube and the shaded view with.

use glam::DVec3;

/// The split-sum scale A and bias B of F0 for `n_dot_v` and perceptual `roughness`: the GGX
/// specular lobe of the glTF BRDF (height-correlated Smith visibility, Schlick's Fresnel)
/// integrated over the hemisphere as ∫ f (n·l) dl = F0·A + B. Computed on a `steps`×`steps`
/// midpoint grid in the variables that map the unit square onto half vectors with GGX's
/// density, where the integrand is smooth (the change of variables, not sampling: the grid
/// converges as a quadrature).
pub fn split_sum(n_dot_v: f64, roughness: f64, steps: usize) -> (f64, f64) {
    let alpha = roughness * roughness;
    let a2 = alpha * alpha;
    let v = DVec3::new((1.0 - n_dot_v * n_dot_v).max(0.0).sqrt(), 0.0, n_dot_v);
    let (mut a, mut b) = (0.0, 0.0);
    for i in 0..steps {
        let phi = (i as f64 + 0.5) / steps as f64 * std::f64::consts::TAU;
        for j in 0..steps {
            let xi = (j as f64 + 0.5) / steps as f64;
            let cos_theta = ((1.0 - xi) / (1.0 + (a2 - 1.0) * xi)).sqrt();
            let sin_theta = (1.0 - cos_theta * cos_theta).max(0.0).sqrt();
            let h = DVec3::new(sin_theta * phi.cos(), sin_theta * phi.sin(), cos_theta);
            let v_dot_h = v.dot(h);
            let n_dot_l = 2.0 * v_dot_h * h.z - v.z;
            if n_dot_l <= 0.0 || v_dot_h <= 0.0 {
                continue;
            }
            let ggx_v = n_dot_l * (n_dot_v * n_dot_v * (1.0 - a2) + a2).sqrt();
            let ggx_l = n_dot_v * (n_dot_l * n_dot_l * (1.0 - a2) + a2).sqrt();
            let visibility = 0.5 / (ggx_v + ggx_l);
            let g = visibility * n_dot_l * 4.0 * v_dot_h / h.z;
            let fc = (1.0 - v_dot_h).powi(5);
            a += (1.0 - fc) * g;
            b += fc * g;
        }
    }
    let n = (steps * steps) as f64;
    (a / n, b / n)
}

/// (1/π) ∫ L(l) max(n·l, 0) dl over the sphere for unit `n`: the irradiance cube's value there,
/// by the midpoint rule on a `steps` × 2·`steps` grid in polar angle and azimuth around `n`.
pub fn cosine_mean(n: DVec3, radiance: impl Fn(DVec3) -> f64, steps: usize) -> f64 {
    let up = if n.z.abs() < 0.999 { DVec3::Z } else { DVec3::X };
    let t = up.cross(n).normalize();
    let b = n.cross(t);
    let d_theta = std::f64::consts::FRAC_PI_2 / steps as f64;
    let d_phi = std::f64::consts::PI / steps as f64;
    let mut sum = 0.0;
    for i in 0..steps {
        let theta = (i as f64 + 0.5) * d_theta;
        let (sin, cos) = theta.sin_cos();
        for j in 0..2 * steps {
            let phi = (j as f64 + 0.5) * d_phi;
            let l = t * (sin * phi.cos()) + b * (sin * phi.sin()) + n * cos;
            sum += radiance(l) * cos * sin * d_theta * d_phi;
        }
    }
    sum / std::f64::consts::PI
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same integral by the plain midpoint rule over the directions of l, the GGX
    /// distribution written out: the change of variables in [`split_sum`] is right.
    fn split_sum_over_l(n_dot_v: f64, roughness: f64, steps: usize) -> (f64, f64) {
        let alpha = roughness * roughness;
        let a2 = alpha * alpha;
        let v = DVec3::new((1.0 - n_dot_v * n_dot_v).sqrt(), 0.0, n_dot_v);
        let (d_theta, d_phi) = (
            std::f64::consts::FRAC_PI_2 / steps as f64,
            std::f64::consts::TAU / steps as f64,
        );
        let (mut a, mut b) = (0.0, 0.0);
        for i in 0..steps {
            let theta = (i as f64 + 0.5) * d_theta;
            for j in 0..steps {
                let phi = (j as f64 + 0.5) * d_phi;
                let l = DVec3::new(theta.sin() * phi.cos(), theta.sin() * phi.sin(), theta.cos());
                let h = (l + v).normalize();
                let q = h.z * h.z * (a2 - 1.0) + 1.0;
                let d = a2 / (std::f64::consts::PI * q * q);
                let ggx_v = l.z * (n_dot_v * n_dot_v * (1.0 - a2) + a2).sqrt();
                let ggx_l = n_dot_v * (l.z * l.z * (1.0 - a2) + a2).sqrt();
                let f = d * 0.5 / (ggx_v + ggx_l) * l.z * theta.sin() * d_theta * d_phi;
                let fc = (1.0 - v.dot(h)).powi(5);
                a += (1.0 - fc) * f;
                b += fc * f;
            }
        }
        (a, b)
    }

    #[test]
    fn the_split_sum_reference_agrees_with_the_plain_integral() {
        for (n_dot_v, roughness) in [(0.9, 0.6), (0.5, 0.8), (0.3, 1.0), (0.7, 0.4)] {
            let (a, b) = split_sum(n_dot_v, roughness, 1000);
            let (a2, b2) = split_sum_over_l(n_dot_v, roughness, 1500);
            assert!(
                (a - a2).abs() < 2e-3 && (b - b2).abs() < 2e-3,
                "n·v {n_dot_v}, roughness {roughness}: ({a}, {b}) vs ({a2}, {b2})"
            );
        }
        // A mirror reflects everything: A + B → 1 as roughness → 0 (face on, Fresnel F0: A ≈ 1).
        let (a, b) = split_sum(1.0, 0.02, 200);
        assert!((a + b - 1.0).abs() < 1e-3, "{a} + {b}");
    }

    #[test]
    fn the_cosine_mean_of_a_constant_is_the_constant_and_of_a_half_sky_the_textbook_value() {
        assert!((cosine_mean(DVec3::Y, |_| 2.0, 200) - 2.0).abs() < 1e-4);
        let sky = |l: DVec3| if l.y > 0.0 { 1.0 } else { 0.0 };
        // Facing sideways, half the cosine lobe sees the sky: ½.
        assert!((cosine_mean(DVec3::X, sky, 400) - 0.5).abs() < 1e-3);
        assert!((cosine_mean(DVec3::Y, sky, 400) - 1.0).abs() < 1e-4);
        assert!(cosine_mean(DVec3::NEG_Y, sky, 400).abs() < 1e-4);
        // Tilted 60° from up: (1 + cos 60°) / 2.
        let n = DVec3::new(60f64.to_radians().sin(), 60f64.to_radians().cos(), 0.0);
        assert!((cosine_mean(n, sky, 600) - 0.75).abs() < 2e-3);
    }
}
