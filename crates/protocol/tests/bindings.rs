//! The TypeScript bindings in `ui/src/bindings/` are generated from the protocol types and must
//! match them exactly. Regenerate with
//! `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-protocol --test bindings`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use cairn_protocol::*;
use ts_rs::{Config, TS};

const UPDATE_HINT: &str =
    "run `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-protocol --test bindings`";

/// Calls `$f::<T>()` for every exported protocol type; keep in sync with `#[ts(export)]` in src/
/// (the `every_exported_type_is_listed` test enforces it).
macro_rules! protocol_types {
    ($f:ident, $cfg:expr) => {{
        let cfg = $cfg;
        let mut names = Vec::new();
        protocol_types!(@each $f, cfg, names,
            // approval.rs
            Mode, ApprovalRequest, ApprovalDecision,
            // event.rs
            TurnStatus, TurnStart, TextDelta, AssistantMessage, ToolProposed, PermissionRequired,
            ToolStarted, ToolFinished, IterationEnd, TurnEnd, ErrorEvent, Interrupted, Compacting,
            Compacted, QueueSteering, LlmRequest, AskUserQuestion, PlanProposed,
            DirectoryRequested, LlmRetry, SessionNamed, Event,
            // message.rs
            ContentPart, ToolCall, ToolResult, TokenUsage, Message,
            // tool.rs
            ToolStatus, RiskLevel, ToolSchema, ToolMeta
        );
        names
    }};
    (@each $f:ident, $cfg:ident, $names:ident, $($ty:ident),+ $(,)?) => {
        $( $f::<$ty>(&$cfg); $names.push(stringify!($ty)); )+
    };
}

fn export<T: TS + 'static>(cfg: &Config) {
    T::export_all(cfg).unwrap_or_else(|e| panic!("exporting {}: {e}", std::any::type_name::<T>()));
}

/// The checked-in bindings directory.
fn checked_in_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings")
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

#[test]
fn checked_in_bindings_are_current() {
    let out = scratch_dir();
    protocol_types!(
        export,
        Config::new().with_out_dir(&out).with_large_int("number")
    );
    let generated = ts_files(&out);
    fs::remove_dir_all(&out).unwrap();
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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
fn every_exported_type_is_listed() {
    fn noop<T: TS + 'static>(_: &()) {}
    let listed: BTreeSet<String> = protocol_types!(noop, ())
        .into_iter()
        .map(String::from)
        .collect();
    let in_sources = exported_in_sources();
    let unlisted: Vec<_> = in_sources.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "types marked #[ts(export)] but missing from the list in tests/bindings.rs: {unlisted:?}"
    );
}
