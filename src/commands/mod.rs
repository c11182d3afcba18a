//! The headless subcommands: what `rigscope inspect`, `rigscope audit` and `rigscope bench` do, above the layers
//! they use and below the window.

pub mod audit;
pub mod bench;
pub mod fix;
pub mod inspect;
pub mod orbit;
