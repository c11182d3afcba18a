//! Broken and hostile FBX files: the shared FBX rigs truncated at many offsets, with bytes
//! overwritten, and with array counts claiming billions of elements, must each load or fail with
//! a typed error, never panic or abort, and never make one allocation anywhere near what a claim
//! the data does not back would take. A fixed random sequence, so that a failure is
//! reproducible; the `load_fbx` fuzz target explores the same space without end.

use crate::common;

use crate::common::shared_rigs;
use rigscope::report::RigReport;
use rigscope::rig::{FbxErrorKind, RigError, load_slice};
use std::time::{Duration, Instant};

/// No single allocation a broken file causes may reach this; the largest shared FBX file
/// (3.7 MB) may use 123 MiB in all.
const HUGE_ALLOCATION: usize = 256 << 20;

/// Every shared FBX file and how many mutations of each kind it gets: the small ones many, the
/// three of about 3 MB (which take a tenth of a second each to read) a few.
const FILES: &[(&str, usize)] = &[
    ("morph_test.fbx", 240),
    ("max_transformed_skin_6100_ascii.fbx", 120),
    ("maya_game_sausage_7500_ascii_combined.fbx", 80),
    ("blender_279_sausage_6100_ascii.fbx", 60),
    ("animation_with_skeleton.fbx", 80),
    ("blender_293_barbarian_7400_binary.fbx", 30),
    ("maya_slime_7500_binary.fbx", 30),
    ("maya_kenney_character_7700_binary.fbx", 30),
    ("Samba Dancing.fbx", 4),
    ("mixamo.fbx", 4),
    ("xsi_man_skinning.fbx", 3),
];

/// xorshift64*: a fixed sequence, independent of any crate's random generator.
struct Choose(u64);

impl Choose {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// Counts that claim far more elements than any file holds.
const HUGE_COUNTS: [u32; 4] = [u32::MAX, 0x7fff_ffff, 0x1000_0000, 0x0100_0000];

/// The offsets of every count: in binary files the first of the three u32 after an array
/// property's type code (`f`, `d`, `i`, `l`, `b`); in ASCII files every integer (an array's
/// `*N` in 7.x, any value in 6.x, whose arrays are not counted).
fn array_counts(bytes: &[u8]) -> Vec<usize> {
    if bytes.starts_with(b"Kaydara FBX Binary") {
        (0..bytes.len().saturating_sub(13))
            .filter(|&i| {
                // An array header: a type code, then count, encoding (0 or 1) and length.
                let encoding = u32::from_le_bytes(bytes[i + 5..i + 9].try_into().unwrap());
                b"fdilb".contains(&bytes[i]) && encoding <= 1 && bytes[i + 1..i + 5] != [0; 4]
            })
            .map(|i| i + 1)
            .collect()
    } else {
        bytes
            .windows(2)
            .enumerate()
            .filter(|(_, w)| !w[0].is_ascii_digit() && w[0] != b'.' && w[1].is_ascii_digit())
            .map(|(i, _)| i + 1)
            .collect()
    }
}

/// One mutation of `original` of the kind `kind`, and a description of it.
fn mutate(original: &[u8], kind: usize, counts: &[usize], choose: &mut Choose) -> (Vec<u8>, String) {
    let mut bytes = original.to_vec();
    let len = bytes.len();
    match kind {
        0 => {
            let at = choose.below(len);
            bytes.truncate(at);
            (bytes, format!("truncated to {at} bytes"))
        }
        1 => {
            let n = 1 + choose.below(8);
            let mut what = Vec::new();
            for _ in 0..n {
                let at = choose.below(len);
                let value = choose.below(256) as u8;
                bytes[at] = value;
                what.push(format!("{at}={value}"));
            }
            (bytes, format!("bytes set {}", what.join(",")))
        }
        _ => {
            let at = counts[choose.below(counts.len())];
            let count = HUGE_COUNTS[choose.below(HUGE_COUNTS.len())];
            if original.starts_with(b"Kaydara FBX Binary") {
                bytes[at..at + 4].copy_from_slice(&count.to_le_bytes());
            } else {
                let digits = bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
                bytes.splice(at..at + digits, count.to_string().into_bytes());
            }
            (bytes, format!("array count at {at} set to {count}"))
        }
    }
}

#[test]
fn mutated_shared_fbx_files_load_or_fail_with_a_typed_error() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");
    let mut choose = Choose(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let (mut loaded, mut refused, mut fbx_errors, mut largest) = (0, 0, 0, 0);
    for &(file, per_kind) in FILES {
        let original = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let counts = array_counts(&original);
        assert!(counts.len() > 3, "{file}: no array counts found to mutate");
        for kind in 0..3 {
            for k in 0..per_kind {
                let (bytes, what) = mutate(&original, kind, &counts, &mut choose);
                let started = Instant::now();
                let (result, allocated) = common::counting::watch(|| {
                    std::panic::catch_unwind(|| {
                        load_slice(&bytes, None, "mutated.fbx").map(|rig| RigReport::new(&rig).findings.len())
                    })
                });
                let case = format!("{file} #{kind}.{k} ({what})");
                match result {
                    Err(_) => failures.push(format!("{case}: panicked")),
                    Ok(Err(e @ RigError::Panic(_))) => failures.push(format!("{case}: the importer panicked: {e}")),
                    Ok(Err(e)) if e.to_string().trim().is_empty() => failures.push(format!("{case}: empty error")),
                    Ok(Err(e)) => {
                        refused += 1;
                        fbx_errors += usize::from(matches!(e, RigError::Fbx(_)));
                    }
                    Ok(Ok(_)) => loaded += 1,
                }
                largest = largest.max(allocated.largest);
                if allocated.largest >= HUGE_ALLOCATION {
                    failures.push(format!("{case}: one allocation of {} bytes", allocated.largest));
                }
                if started.elapsed() > Duration::from_secs(5) {
                    failures.push(format!("{case}: took {:?}", started.elapsed()));
                }
            }
        }
    }
    println!(
        "{loaded} mutated files loaded, {refused} refused ({fbx_errors} by ufbx), {} misbehaved; largest allocation {largest} bytes",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The mutations reach the reader's checks: most truncations and huge counts are refused.
    assert!(
        fbx_errors > refused / 2,
        "only {fbx_errors} of {refused} refusals came from ufbx"
    );
}

#[test]
fn truncations_at_every_kilobyte_of_a_binary_file_are_refused_as_fbx_errors() {
    let Some(dir) = shared_rigs() else { return };
    let original = std::fs::read(dir.join("fbx/morph_test.fbx")).expect("morph_test.fbx is readable");
    // The last 172 bytes are the footer (a null record, padding, the version and a magic
    // number), which readers do not need: a file cut there still loads.
    let footer = 172;
    for at in (0..original.len() - footer)
        .step_by(512)
        .chain([1, 17, 27, original.len() - footer - 1])
    {
        match load_slice(&original[..at], None, "truncated.fbx") {
            Err(RigError::Fbx(e)) => assert!(
                matches!(
                    e.kind,
                    FbxErrorKind::Truncated | FbxErrorKind::NotFbx | FbxErrorKind::Corrupt
                ),
                "cut at {at}: {e}"
            ),
            Err(e) => panic!("cut at {at}: not an FBX error: {e}"),
            Ok(_) => panic!("cut at {at} of {} bytes: loaded", original.len()),
        }
    }
}

#[test]
fn a_count_of_four_billion_allocates_nothing_near_it() {
    let text = ascii_fbx_with_vertex_count("*4294967295");
    let (result, allocated) = common::counting::watch(|| load_slice(text.as_bytes(), None, "huge.fbx"));
    // ASCII arrays are read by their values; the count is only a claim, never reserved.
    let rig = result.expect("the triangle loads whatever its count claims");
    assert_eq!(rig.meshes[0].primitives[0].positions.len(), 3);
    assert!(
        allocated.largest < 1 << 20,
        "one allocation of {} bytes for a claim the file does not back",
        allocated.largest
    );
}

/// A one-triangle ASCII FBX 7.4 file whose vertex array declares `count` (`*9` is the truth).
fn ascii_fbx_with_vertex_count(count: &str) -> String {
    format!(
        "; FBX 7.4.0 project file\nFBXHeaderExtension:  {{\n FBXHeaderVersion: 1003\n FBXVersion: 7400\n}}\n\
         Objects:  {{\n Geometry: 1, \"Geometry::tri\", \"Mesh\" {{\n  Vertices: {count} {{\n   a: 0,0,0,1,0,0,0,1,0\n  }}\n\
         \x20 PolygonVertexIndex: *3 {{\n   a: 0,1,-3\n  }}\n }}\n Model: 2, \"Model::tri\", \"Mesh\" {{\n }}\n}}\n\
         Connections:  {{\n C: \"OO\",1,2\n C: \"OO\",2,0\n}}\n"
    )
}

#[test]
fn ufbx_assertions_are_compiled_out() {
    // A failed C assertion would abort the process past any catch_unwind; every assertion
    // ufbx checks an internal magic number with leaves its condition text in the binary.
    let binary = std::fs::read(std::env::current_exe().expect("the test binary's path")).expect("the test binary");
    // Linked at all: the loader's own error text is there.
    assert!(
        contains(&binary, b"Memory limit exceeded"),
        "ufbx is not linked into the test"
    );
    assert!(
        !contains(&binary, b"magic == 0x"),
        "ufbx was compiled with its assertions (UFBX_NO_ASSERT missing from CFLAGS, see .cargo/config.toml)"
    );
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
