//! The names of the ways joint transforms are blended. They live with the rig because a file
//! can ask for one (Maya's and FBX's dual quaternion and weight blended skins, see
//! [`super::FileSkinning`]); the skinning itself is in [`crate::skin`], which re-exports this.

crate::names::named_enum! {
    /// How joint transforms are blended (named `lbs`, `dqs` and `blended` on the command line and
    /// in settings, as [`crate::names`] says).
    #[strum(serialize_all = "lowercase")]
    pub enum SkinningMethod {
        /// Linear blend skinning: weighted sum of matrices.
        #[default]
        Lbs,
        /// Dual quaternion skinning: keeps volume at twisted joints; rigid transforms only.
        Dqs,
        /// Per vertex, a blend between the two ([`crate::skin::blend`]): Maya's weight blended
        /// skinning.
        Blended,
    }
}

impl SkinningMethod {
    pub fn label(self) -> &'static str {
        match self {
            SkinningMethod::Lbs => "Linear blend (LBS)",
            SkinningMethod::Dqs => "Dual quaternion (DQS)",
            SkinningMethod::Blended => "Weight blended (LBS to DQS per vertex)",
        }
    }

    /// Whether the pose must carry dual quaternion palettes for this method.
    pub fn needs_dual_quats(self) -> bool {
        self != SkinningMethod::Lbs
    }
}
