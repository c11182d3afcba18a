//! The GPU for tests: a headless adapter, or a skip with a printed reason on a machine that has
//! none, unless `RIGSCOPE_REQUIRE_ADAPTER` is set (as CI does), where a missing adapter fails.

use rigscope::render::{Gpu, REQUIRE_ADAPTER_ENV};

pub fn gpu_or_skip() -> Option<Gpu> {
    match Gpu::headless() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os(REQUIRE_ADAPTER_ENV).is_some() => {
            panic!("{REQUIRE_ADAPTER_ENV} is set but no adapter is usable: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no graphics adapter on this machine ({e})");
            None
        }
    }
}
