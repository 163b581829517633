//! The TypeScript bindings of the app's own command types in `ui/src/bindings/app/` must match
//! the Rust types. Regenerate with
//! `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-app --features custom-protocol --test all suite::bindings`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use cairn_app::types::*;
use cairn_runtime::problem::Problem;
use ts_rs::{Config, TS};

fn export<T: TS + 'static>(cfg: &Config) {
    T::export_all(cfg).unwrap_or_else(|e| panic!("exporting {}: {e}", std::any::type_name::<T>()));
}

/// Every command type exported to `ui/src/bindings/app/` (types they reference come along).
fn export_app_types(cfg: &Config) {
    export::<AppInfo>(cfg);
    export::<Bootstrap>(cfg);
    export::<SessionView>(cfg);
    export::<SessionStatus>(cfg);
    export::<cairn_runtime::history::HistoryPage>(cfg);
    export::<cairn_runtime::history_search::SessionSearch>(cfg);
    export::<PermissionRules>(cfg);
    export::<SettingsUpdate>(cfg);
    export::<UsageReport>(cfg);
    export::<EndpointCheck>(cfg);
    export::<TimelineView>(cfg);
    export::<RestoreRequest>(cfg);
    export::<RestoreView>(cfg);
    export::<RewindView>(cfg);
    export::<TerminalTab>(cfg);
    export::<DirListing>(cfg);
    export::<FileIndex>(cfg);
    export::<WatchStatus>(cfg);
    export::<FilesEvent>(cfg);
    export::<ImageUpload>(cfg);
    export::<Problem>(cfg);
    export::<RunOutcome>(cfg);
    export::<BoardView>(cfg);
    export::<BudgetView>(cfg);
    export::<BudgetLimit>(cfg);
    export::<ReviewView>(cfg);
    export::<ReviewComment>(cfg);
    export::<ApplyView>(cfg);
    export::<CommitView>(cfg);
    export::<RemovalView>(cfg);
    export::<CommandView>(cfg);
    export::<ExtensionsView>(cfg);
    export::<WorktreeDiskView>(cfg);
    export::<UpdateView>(cfg);
    export::<HandoffView>(cfg);
    export::<VaultView>(cfg);
    export::<CheckRow>(cfg);
    export::<CardRect>(cfg);
}

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
    std::env::temp_dir().join(format!("cairn-app-bindings-{}-{nanos}", std::process::id()))
}

#[test]
fn checked_in_app_bindings_are_current() {
    let out = scratch_dir();
    export_app_types(&Config::new().with_out_dir(&out).with_large_int("number"));
    let generated = ts_files(&out.join("app"));
    // Protocol types referenced by app types are generated at the top level; those are
    // checked by the protocol crate's own bindings test.
    fs::remove_dir_all(&out).unwrap();
    for expected in [
        "AppInfo.ts",
        "Bootstrap.ts",
        "SessionView.ts",
        "UsageReport.ts",
        "KeyStatus.ts",
    ] {
        assert!(
            generated.contains_key(expected),
            "ts-rs generated no app/{expected}"
        );
    }

    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("ui/src/bindings/app");
    let current = ts_files(&dir);
    if std::env::var("CAIRN_UPDATE_BINDINGS").as_deref() == Ok("1") {
        fs::create_dir_all(&dir).unwrap();
        for stale in current.keys().filter(|n| !generated.contains_key(*n)) {
            fs::remove_file(dir.join(stale)).unwrap();
        }
        for (name, text) in &generated {
            fs::write(dir.join(name), text).unwrap();
        }
        eprintln!(
            "updated {} app bindings in {}",
            generated.len(),
            dir.display()
        );
        return;
    }
    let mut problems: Vec<String> = generated
        .iter()
        .filter(|(name, text)| current.get(*name) != Some(*text))
        .map(|(name, _)| format!("missing or stale: app/{name}"))
        .collect();
    problems.extend(
        current
            .keys()
            .filter(|n| !generated.contains_key(*n))
            .map(|n| format!("no longer generated: app/{n}")),
    );
    assert!(
        problems.is_empty(),
        "TypeScript bindings of the app's commands are out of date:\n  {}\nrun \
         `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-app --features custom-protocol --test all suite::bindings`",
        problems.join("\n  ")
    );
}
