//! Which SIMD kernels this CPU runs: one run-time dispatch for every kernel family (skinning,
//! dual quaternions, palette builds).

/// Which implementation of a kernel runs (each family has one of each, or falls back to its
/// portable code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust and glam's 128-bit math, any CPU.
    Portable,
    /// 256-bit AVX2 with FMA (x86-64 only): eight vertices at a time when skinning.
    Avx2Fma,
    /// 512-bit AVX-512 F and BW, with AVX2 and FMA (x86-64 only): sixteen vertices at a time
    /// when skinning.
    Avx512,
}

impl Kernel {
    /// Every kernel, slowest first.
    pub const ALL: [Kernel; 3] = [Kernel::Portable, Kernel::Avx2Fma, Kernel::Avx512];

    /// The fastest kernel this CPU can run.
    pub fn detect() -> Kernel {
        Kernel::ALL
            .into_iter()
            .rev()
            .find(|k| k.is_available())
            .unwrap_or(Kernel::Portable)
    }

    pub fn is_available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Kernel::Portable => true,
                Kernel::Avx2Fma => has!("avx2") && has!("fma"),
                Kernel::Avx512 => has!("avx512f") && has!("avx512bw") && has!("avx2") && has!("fma"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernel::Portable
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Avx2Fma => "AVX2+FMA",
            Kernel::Avx512 => "AVX-512",
        }
    }
}

/// The kernels of [`Kernel::ALL`] this CPU runs, after printing which of them a test of `family`
/// exercises here and which it cannot (AVX-512 is on some machines and not on others, and a
/// kernel left out must show in the test's output).
#[cfg(test)]
pub(crate) fn report_kernels(family: &str) -> Vec<Kernel> {
    let (here, missing): (Vec<Kernel>, Vec<Kernel>) = Kernel::ALL.into_iter().partition(|k| k.is_available());
    let labels = |kernels: &[Kernel]| kernels.iter().map(|k| k.label()).collect::<Vec<_>>().join(", ");
    eprintln!(
        "{family}: ran {}; not on this CPU: {}",
        labels(&here),
        if missing.is_empty() {
            "none".to_string()
        } else {
            labels(&missing)
        }
    );
    here
}

/// Asks the CPU to fetch the cache line holding `address` ahead of a read (on x86-64; nothing
/// elsewhere). Only a hint: any address will do, even past the end of an allocation.
#[inline(always)]
pub fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults and reads nothing into the program.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
