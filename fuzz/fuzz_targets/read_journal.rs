//! The edit journal's reader on arbitrary bytes: it must read a journal whole or refuse it with
//! an error, without a panic and without allocating what a damaged length claims.
//!
//! The bytes are read twice: as they are (the magic, the format and the header fuzzed too), and
//! after a whole header of this Rigscope, so that the records themselves are reached (a header
//! of another version is refused before its records are read). The seeds (`seed_corpus.py`) are
//! records of every kind, framed as the journal frames them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigscope::journal::{Header, RIGSCOPE, encode, parse};

fuzz_target!(|data: &[u8]| {
    let _ = parse(data);
    let header = Header {
        rigscope: RIGSCOPE.to_owned(),
        document: "fuzz.glb".into(),
        files: None,
    };
    if let Ok(mut bytes) = encode(&header, &[]) {
        bytes.extend_from_slice(data);
        let _ = parse(&bytes);
    }
});
