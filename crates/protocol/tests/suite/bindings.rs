//! The TypeScript bindings in `ui/src/bindings/` are generated from the protocol types and must
//! match them exactly. Regenerate with
//! `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-protocol --test all suite::bindings`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use cairn_protocol::*;
use ts_rs::{Config, TS};

const UPDATE_HINT: &str =
    "run `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-protocol --test all suite::bindings`";

/// Exports the root protocol types with everything they reference (`export_all`); types
/// reachable from these (every event payload, message part, ...) need no entry here.
/// `every_exported_type_is_generated` fails when a `#[ts(export)]` type is reachable from none.
fn export_protocol(cfg: &Config) {
    export::<Event>(cfg);
    export::<Message>(cfg);
    export::<ToolSchema>(cfg);
    export::<ToolMeta>(cfg);
    export::<Mode>(cfg);
    export::<ApprovalRequest>(cfg);
    export::<ApprovalDecision>(cfg);
    export::<UserAnswer>(cfg);
    export::<PlanReview>(cfg);
    export::<DirectoryGrant>(cfg);
    export::<cairn_protocol::ElicitationAnswer>(cfg);
    export::<RunEnd>(cfg);
}

fn export<T: TS + 'static>(cfg: &Config) {
    T::export_all(cfg).unwrap_or_else(|e| panic!("exporting {}: {e}", std::any::type_name::<T>()));
}

/// The checked-in bindings directory.
fn checked_in_dir() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../ui/src/bindings")
}

/// Top-level `*.ts` files of `dir` (sub-directories such as `app/` belong to other crates).
fn ts_files(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "ts"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn scratch_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!("cairn-bindings-{}-{nanos}", std::process::id()))
}

/// Generates the bindings into a scratch dir and returns them by file name.
fn generate() -> BTreeMap<String, String> {
    let out = scratch_dir();
    export_protocol(&Config::new().with_out_dir(&out).with_large_int("number"));
    let generated = ts_files(&out);
    fs::remove_dir_all(&out).unwrap();
    generated
}

#[test]
fn checked_in_bindings_are_current() {
    let generated = generate();
    assert!(
        generated.contains_key("Event.ts"),
        "ts-rs generated no Event.ts"
    );

    let dir = checked_in_dir();
    let current = ts_files(&dir);
    if std::env::var("CAIRN_UPDATE_BINDINGS").as_deref() == Ok("1") {
        fs::create_dir_all(&dir).unwrap();
        for stale in current.keys().filter(|n| !generated.contains_key(*n)) {
            fs::remove_file(dir.join(stale)).unwrap();
        }
        for (name, text) in &generated {
            if current.get(name) != Some(text) {
                fs::write(dir.join(name), text).unwrap();
            }
        }
        eprintln!("updated {} bindings in {}", generated.len(), dir.display());
        return;
    }

    let mut problems = Vec::new();
    for (name, text) in &generated {
        match current.get(name) {
            None => problems.push(format!("missing: {name}")),
            Some(old) if old != text => problems.push(format!("stale: {name}")),
            Some(_) => {}
        }
    }
    for name in current.keys().filter(|n| !generated.contains_key(*n)) {
        problems.push(format!("no longer generated: {name}"));
    }
    assert!(
        problems.is_empty(),
        "TypeScript bindings in {} do not match the protocol types:\n  {}\n{UPDATE_HINT}",
        dir.display(),
        problems.join("\n  ")
    );
}

/// Names of the types marked `#[ts(export)]` in the crate's sources.
fn exported_in_sources() -> BTreeSet<String> {
    let src = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("src");
    let mut names = BTreeSet::new();
    for entry in fs::read_dir(src).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut pending = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with("#[ts(") && line.contains("export") {
                pending = true;
            } else if pending {
                let decl = ["pub struct ", "pub enum "]
                    .iter()
                    .find_map(|kw| line.strip_prefix(kw));
                if let Some(rest) = decl {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    names.insert(name);
                    pending = false;
                }
            }
        }
    }
    names
}

#[test]
fn every_exported_type_is_generated() {
    let generated = generate();
    let missing: Vec<String> = exported_in_sources()
        .into_iter()
        .filter(|name| !generated.contains_key(&format!("{name}.ts")))
        .collect();
    assert!(
        missing.is_empty(),
        "types marked #[ts(export)] in crates/protocol/src are reachable from no root type in \
         `export_protocol` (tests/suite/bindings.rs); add them there: {missing:?}"
    );
}
