//! `rigscope inspect`: the rig report of a file, as text or JSON, with an exit status a
//! pipeline can gate on.

use crate::report::RigReport;
use serde_json::json;

/// Exit status of `rigscope inspect` when the report has no error findings.
pub const EXIT_CLEAN: u8 = 0;
/// Exit status when the file loads but its report has error findings.
pub const EXIT_ERROR_FINDINGS: u8 = 1;
/// Exit status when the file cannot be loaded at all.
pub const EXIT_NOT_LOADED: u8 = 2;

/// `rigscope inspect`: loads `file` (the demo rig when `None`), prints the report as text or as
/// one JSON document on stdout, and returns [`EXIT_CLEAN`], [`EXIT_ERROR_FINDINGS`] or
/// [`EXIT_NOT_LOADED`]. A load failure is also printed on stderr.
pub fn inspect(file: Option<&std::path::Path>, as_json: bool) -> std::process::ExitCode {
    let label = file.map_or_else(|| "demo".to_string(), |f| f.display().to_string());
    let started = std::time::Instant::now();
    let rig = match crate::rig::open(file) {
        Ok(rig) => rig,
        Err(e) => {
            if as_json {
                let document = json!({ "file": label, "loaded": false, "error": e.to_string() });
                println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
            }
            eprintln!("rigscope: cannot load {label}: {e}");
            return std::process::ExitCode::from(EXIT_NOT_LOADED);
        }
    };
    let load_seconds = started.elapsed().as_secs_f64();
    let report = RigReport::new(&rig);
    if as_json {
        let mut document = report.to_json(&rig);
        document["file"] = json!(label);
        document["loaded"] = json!(true);
        document["load_seconds"] = json!(load_seconds);
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        print!("{}", report.to_text(&rig));
        println!("Loaded in {:.2} ms", load_seconds * 1e3);
    }
    std::process::ExitCode::from(if report.has_errors() {
        EXIT_ERROR_FINDINGS
    } else {
        EXIT_CLEAN
    })
}
