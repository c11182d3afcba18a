//! Which SIMD kernels this CPU runs: one run-time dispatch for every kernel family (skinning,
//! dual quaternions, palette builds).

#[cfg(target_arch = "x86_64")]
pub(crate) mod interleave;

/// The environment variable that forces one kernel for every family in the process:
/// `portable`, `avx2` or `avx512`. A bug report can then say which code ran, and a machine with
/// AVX-512 can run the code an AVX2 laptop runs.
pub const KERNEL_VARIABLE: &str = "RIGSCOPE_KERNEL";

/// Why [`KERNEL_VARIABLE`] cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelChoiceError {
    #[error("{KERNEL_VARIABLE}={0:?} names no kernel: use portable, avx2 or avx512")]
    Unknown(String),
    #[error(
        "{KERNEL_VARIABLE}={name}: this CPU cannot run the {label} kernels (they need {needs})",
        name = .0.choice_name(),
        label = .0.label(),
        needs = .0.needs()
    )]
    NotOnThisCpu(Kernel),
}

/// Which implementation of a kernel runs (each family has one of each, or falls back to its
/// portable code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

    /// The kernel every family runs in this process: the one [`KERNEL_VARIABLE`] names, else
    /// the fastest this CPU can run. A choice the CPU cannot run is refused by the program at
    /// start ([`Kernel::forced`]); here it falls back to the fastest.
    pub fn detect() -> Kernel {
        static CHOSEN: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| match Kernel::forced() {
            Ok(Some(kernel)) => kernel,
            Ok(None) => Kernel::fastest(),
            Err(e) => {
                log::error!("{e}; running the {} kernels", Kernel::fastest().label());
                Kernel::fastest()
            }
        })
    }

    /// The fastest kernel this CPU can run.
    pub fn fastest() -> Kernel {
        Kernel::ALL
            .into_iter()
            .rev()
            .find(|k| k.is_available())
            .unwrap_or(Kernel::Portable)
    }

    /// Whether this process runs `self`'s code where a family has it: the CPU can, and the
    /// kernel chosen ([`Kernel::detect`]) is `self` or a faster one (a family without a
    /// kernel of the chosen width steps down to the widest it has below it).
    pub fn is_enabled(self) -> bool {
        self <= Kernel::detect()
    }

    /// The kernel [`KERNEL_VARIABLE`] forces for this process, if it is set; an error when it
    /// names no kernel or one this CPU cannot run.
    pub fn forced() -> Result<Option<Kernel>, KernelChoiceError> {
        match std::env::var(KERNEL_VARIABLE) {
            Ok(value) => Kernel::choose(&value, Kernel::is_available).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(value)) => {
                Err(KernelChoiceError::Unknown(value.to_string_lossy().into_owned()))
            }
        }
    }

    /// The kernel `value` names (`portable`, `avx2` or `avx512`, any case), if `available`
    /// says the CPU runs it.
    pub fn choose(value: &str, available: impl Fn(Kernel) -> bool) -> Result<Kernel, KernelChoiceError> {
        let kernel = (Kernel::ALL.into_iter())
            .find(|k| k.choice_name().eq_ignore_ascii_case(value.trim()))
            .ok_or_else(|| KernelChoiceError::Unknown(value.to_owned()))?;
        if available(kernel) {
            Ok(kernel)
        } else {
            Err(KernelChoiceError::NotOnThisCpu(kernel))
        }
    }

    /// How [`KERNEL_VARIABLE`] names the kernel.
    pub fn choice_name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Avx2Fma => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// The CPU features the kernel needs, as a refusal names them.
    fn needs(self) -> &'static str {
        match self {
            Kernel::Portable => "nothing",
            Kernel::Avx2Fma => "AVX2 and FMA",
            Kernel::Avx512 => "AVX-512 F and BW, AVX2 and FMA",
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_is_chosen_by_name_and_refused_where_the_cpu_lacks_it() {
        let all = |_: Kernel| true;
        assert_eq!(Kernel::choose("portable", all), Ok(Kernel::Portable));
        assert_eq!(Kernel::choose("AVX2", all), Ok(Kernel::Avx2Fma));
        assert_eq!(Kernel::choose(" avx512\n", all), Ok(Kernel::Avx512));
        assert_eq!(
            Kernel::choose("sse4", all),
            Err(KernelChoiceError::Unknown("sse4".into()))
        );
        let avx2_only = |k: Kernel| k != Kernel::Avx512;
        let refused = Kernel::choose("avx512", avx2_only).unwrap_err();
        assert_eq!(refused, KernelChoiceError::NotOnThisCpu(Kernel::Avx512));
        assert_eq!(
            refused.to_string(),
            "RIGSCOPE_KERNEL=avx512: this CPU cannot run the AVX-512 kernels (they need AVX-512 F and BW, AVX2 and FMA)"
        );
        assert_eq!(Kernel::choose("avx2", avx2_only), Ok(Kernel::Avx2Fma));
    }

    /// The process runs the kernel the environment forces (CI runs the kernel-dependent test
    /// binaries under each one the CPU has), and never one the CPU lacks.
    #[test]
    fn the_running_kernel_is_the_forced_one_or_the_fastest() {
        let running = Kernel::detect();
        assert!(running.is_available());
        match Kernel::forced() {
            Ok(Some(forced)) => assert_eq!(running, forced),
            Ok(None) => assert_eq!(running, Kernel::fastest()),
            Err(e) => panic!("{e}"),
        }
        for kernel in Kernel::ALL {
            assert_eq!(kernel.is_enabled(), kernel <= running, "{kernel:?}");
        }
    }
}
