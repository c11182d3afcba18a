//! The edit journal's reader on arbitrary bytes: it must read a journal whole or refuse it with
//! an error, without a panic and without allocating what a damaged length claims. The seeds are
//! journals written by the `journal_mutations` test's session (`tests/files/journal_mutations.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rigscope::journal::parse(data);
});
