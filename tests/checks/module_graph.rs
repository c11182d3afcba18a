//! The source's own structure, as `src/lib.rs` states it: no top-level module reaches itself
//! through `crate::` paths, and each uses only modules of its own layer or below in the layer
//! table. Read from the source files, so the table cannot drift from the code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `path` (or `path` itself, a file).
fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        files.extend(rust_files(&entry.unwrap().path()));
    }
    files
}

/// The code of `file` that ships: unit-test files and the `#[cfg(test)] mod tests` at the end
/// of a file are left out, as are comment lines (doc links are no imports).
fn shipped_code(file: &Path) -> String {
    let is_test_file =
        file.file_name().is_some_and(|n| n == "tests.rs") || file.components().any(|c| c.as_os_str() == "tests");
    if is_test_file {
        return String::new();
    }
    let text = std::fs::read_to_string(file).unwrap();
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed == "#[cfg(test)]" && lines.peek().is_some_and(|next| next.trim() == "mod tests {") {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// The top-level modules named after `crate::` in `code`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    code.match_indices("crate::")
        .map(|(at, prefix)| {
            let rest = &code[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest[..end].to_owned()
        })
        .collect()
}

/// Each top-level module and the other top-level modules its shipped code uses.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = source_root();
    let modules: BTreeMap<String, PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !matches!(p.file_name().and_then(|n| n.to_str()), Some("lib.rs" | "main.rs")))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    (modules.iter())
        .map(|(name, path)| {
            let used = (rust_files(path).iter())
                .flat_map(|file| crate_paths(&shipped_code(file)))
                .filter(|used| used != name && modules.contains_key(used))
                .collect();
            (name.clone(), used)
        })
        .collect()
}

/// A path from `from` back to itself through `graph`, if there is one.
fn circle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut path = vec![from.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let at = path.last().unwrap().clone();
        for next in &graph[&at] {
            if next == from {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, from, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(graph, from, &mut path, &mut seen).then_some(path)
}

/// The layer table of `src/lib.rs`: each module and its row, lowest first.
fn stated_layers() -> BTreeMap<String, usize> {
    let lib = std::fs::read_to_string(source_root().join("lib.rs")).unwrap();
    let rows = lib.lines().filter(|l| l.starts_with("//! | ") && l.contains("[`"));
    let mut layers = BTreeMap::new();
    for (row, line) in rows.enumerate() {
        let modules = line.split('|').nth(2).unwrap();
        for name in modules.split("[`").skip(1) {
            layers.insert(name.split('`').next().unwrap().to_owned(), row);
        }
    }
    layers
}

#[test]
fn no_top_level_module_reaches_itself_through_its_imports() {
    let graph = module_graph();
    assert!(graph.len() > 20, "the modules were found: {:?}", graph.keys());
    assert!(
        graph["viewer"].contains("anim"),
        "imports are read: {:?}",
        graph["viewer"]
    );
    let circles: Vec<String> = (graph.keys())
        .filter_map(|module| circle_through(&graph, module))
        .map(|circle| circle.join(" → "))
        .collect();
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

#[test]
fn every_module_uses_only_its_own_layer_and_those_below_as_lib_rs_states() {
    let graph = module_graph();
    let layers = stated_layers();
    let unlisted: Vec<&String> = graph.keys().filter(|m| !layers.contains_key(*m)).collect();
    assert!(
        unlisted.is_empty(),
        "modules missing from lib.rs's layer table: {unlisted:?}"
    );
    let upward: Vec<String> = (graph.iter())
        .flat_map(|(module, used)| used.iter().map(move |u| (module, u)))
        .filter(|(module, used)| layers[*used] > layers[*module])
        .map(|(module, used)| format!("{module} (row {}) uses {used} (row {})", layers[module], layers[used]))
        .collect();
    assert!(upward.is_empty(), "imports from a higher layer:\n{}", upward.join("\n"));
}

#[test]
fn the_graph_reader_sees_a_circle_and_skips_test_code() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", &["b"][..]), ("b", &["c"]), ("c", &["a"]), ("d", &["a"])]
        .into_iter()
        .map(|(m, used)| (m.to_owned(), used.iter().map(|u| u.to_string()).collect()))
        .collect();
    assert_eq!(circle_through(&graph, "a").unwrap(), ["a", "b", "c", "a"]);
    assert_eq!(circle_through(&graph, "d"), None);
    let dir = super::common::temp_dir("module-graph");
    let file = dir.join("m.rs");
    std::fs::write(
        &file,
        "use crate::anim::X;\n/// [`crate::ui`]\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::viewer::Y;\n}\n",
    )
    .unwrap();
    assert_eq!(crate_paths(&shipped_code(&file)), BTreeSet::from(["anim".to_owned()]));
    std::fs::remove_dir_all(&dir).unwrap();
}
