//! Layering checks for a crate's modules: the imports between the top-level modules of a
//! `src` folder (`use crate::x`, `crate::x::…`, `super::…`) must form a DAG, and code inside
//! names modules rather than crate-root re-exports (which hide the edge). Used by the
//! engine's and the runtime's tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file (`session.rs` → `[session]`, `agents/mod.rs` → `[agents]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Drops comments and string literals (doc links like [`crate::Session`] are no imports).
fn code_only(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut out = String::new();
            let mut in_str = false;
            let mut prev = ' ';
            let chars: Vec<char> = line.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                if !in_str && c == '/' && chars.get(i + 1) == Some(&'/') {
                    break;
                }
                if c == '"' && prev != '\\' {
                    in_str = !in_str;
                } else if !in_str {
                    out.push(c);
                }
                prev = if prev == '\\' && c == '\\' { ' ' } else { c };
                i += 1;
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifier starting at `at` in `s`.
fn ident(s: &str, at: usize) -> &str {
    let rest = &s[at..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The top-level modules `text` (of the file at `path`) refers to, and the crate-root names
/// it uses that are no module (re-exports: those hide the real edge).
pub fn references(
    text: &str,
    path: &[String],
    modules: &BTreeSet<String>,
) -> (BTreeSet<String>, Vec<String>) {
    let code = code_only(text);
    let mut refs = BTreeSet::new();
    let mut via_root = Vec::new();
    // `use crate::{a, b::c}` groups.
    let mut i = 0;
    while let Some(pos) = code[i..].find("crate::") {
        let at = i + pos;
        i = at + "crate::".len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` in a macro, or part of a longer name
        }
        if code[i..].starts_with('{') {
            let close = code[i..].find('}').map_or(code.len(), |c| i + c);
            for item in code[i + 1..close].split(',') {
                let name = item.trim().split("::").next().unwrap_or("").trim();
                classify(name, modules, &mut refs, &mut via_root);
            }
            continue;
        }
        classify(ident(&code, i), modules, &mut refs, &mut via_root);
    }
    // `super::` from a file: its parent module (a test module's `super::*` is the file).
    let mut i = 0;
    while let Some(pos) = code[i..].find("super::") {
        let at = i + pos;
        i = at + "super::".len();
        let mut depth = 1;
        while code[i..].starts_with("super::") {
            depth += 1;
            i += "super::".len();
        }
        // Inside the file's own items `super` is its parent; when that is the crate root
        // (a top-level file), the next segment names a top-level module.
        if depth >= path.len() {
            let name = ident(&code, i);
            if modules.contains(name) {
                refs.insert(name.to_string());
            }
        }
    }
    (refs, via_root)
}

fn classify(
    name: &str,
    modules: &BTreeSet<String>,
    refs: &mut BTreeSet<String>,
    root: &mut Vec<String>,
) {
    if name.is_empty() || name == "self" {
        return;
    }
    if modules.contains(name) {
        refs.insert(name.to_string());
    } else {
        root.push(name.to_string());
    }
}

/// A cycle in `graph`, as the modules along it.
pub fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::Open);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next.as_str()).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(next, graph, marks, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if marks.get(node.as_str()).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The import graph between the top-level modules of `src`, and root re-exports used inside.
pub fn import_graph(src: &Path) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_path(src, f).first().cloned())
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut root_uses = Vec::new();
    for file in &files {
        let path = module_path(src, file);
        let Some(top) = path.first().cloned() else {
            continue; // lib.rs: only declares and re-exports
        };
        let text = std::fs::read_to_string(file).unwrap();
        let (refs, via_root) = references(&text, &path, &modules);
        let edges = graph.entry(top.clone()).or_default();
        edges.extend(refs.into_iter().filter(|r| *r != top));
        root_uses.extend(
            via_root
                .into_iter()
                .map(|n| format!("{}: crate::{n}", file.display())),
        );
    }
    (graph, root_uses)
}

/// Panics naming the cycle (and the whole graph) when the top-level modules of `src` import
/// each other in a loop, or when code inside names a crate-root re-export.
pub fn assert_layered(crate_name: &str, src: &Path) {
    let (graph, root_uses) = import_graph(src);
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the {crate_name}'s module imports form a cycle: {}\nfull graph:\n{}",
            cycle.join(" → "),
            graph
                .iter()
                .map(|(k, v)| format!("{k} → {}", v.iter().cloned().collect::<Vec<_>>().join(", ")))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    assert!(
        root_uses.is_empty(),
        "inside the {crate_name}, name the module, not a crate-root re-export (it hides the edge):\n{}",
        root_uses.join("\n")
    );
}
