//! The headless subcommands: what `rigscope inspect` and `rigscope bench` do, above the layers
//! they use and below the window.

pub mod bench;
pub mod inspect;
