//! The headless subcommands: what `rigscope inspect`, `rigscope audit`, `rigscope bench` and `rigscope fix` do, above the layers
//! they use and below the window.

pub mod audit;
pub mod audit_motion;
pub mod bench;
pub mod clips;
pub mod curves;
pub mod diff;
pub mod edit_clips;
pub mod export;
pub mod fix;
pub mod inspect;
pub mod orbit;
