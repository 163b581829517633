//! apply_patch and apply_unified_diff: the fixture suite (`fixtures/NNN_name/{input,patch,
//! expected}` or `expected_error`), atomicity and the conflict guard.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use common::{tool, Ws};
use serde_json::json;

/// Every file under `dir` (relative path → bytes); a missing dir is an empty tree.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in tree(from) {
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

fn show(t: &BTreeMap<String, Vec<u8>>) -> String {
    t.iter()
        .map(|(k, v)| format!("== {k}\n{:?}\n", String::from_utf8_lossy(v)))
        .collect()
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/fixtures");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[tokio::test]
async fn fixture_suite() {
    let dirs = fixtures();
    assert!(dirs.len() >= 16, "fixtures missing: {dirs:?}");
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let ws = Ws::new();
        copy_tree(&dir.join("input"), &ws.root);
        let before = tree(&ws.root);
        let patch = std::fs::read_to_string(dir.join("patch")).unwrap();
        let tools = core_tools();
        let result = if patch.contains("*** Begin Patch") {
            ws.call(&tool(&tools, "apply_patch"), json!({ "patch": patch }))
                .await
        } else {
            ws.call(
                &tool(&tools, "apply_unified_diff"),
                json!({ "diff": patch }),
            )
            .await
        };
        let after = tree(&ws.root);
        match std::fs::read_to_string(dir.join("expected_error")) {
            Ok(want) => {
                let want = want.trim();
                match result {
                    Ok(out) => {
                        failures.push(format!("{name}: expected an error, got {}", out.content))
                    }
                    Err(e) if !e.to_string().contains(want) => {
                        failures.push(format!("{name}: error `{e}` does not contain `{want}`"))
                    }
                    Err(_) if after != before => failures.push(format!(
                        "{name}: a failed patch changed the tree:\n{}",
                        show(&after)
                    )),
                    Err(_) => {}
                }
            }
            Err(_) => {
                let expected = tree(&dir.join("expected"));
                match result {
                    Err(e) => failures.push(format!("{name}: failed: {e}")),
                    Ok(_) if after != expected => failures.push(format!(
                        "{name}: tree differs.\n-- got:\n{}-- expected:\n{}",
                        show(&after),
                        show(&expected)
                    )),
                    Ok(out) => {
                        let mut produced = out.produced_files.clone();
                        produced.sort();
                        let mut changed: Vec<String> = before
                            .keys()
                            .chain(expected.keys())
                            .filter(|k| before.get(*k) != expected.get(*k))
                            .cloned()
                            .collect();
                        changed.sort();
                        changed.dedup();
                        if produced != changed {
                            failures.push(format!(
                                "{name}: produced_files {produced:?} != changed {changed:?}"
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn failed_hunk_error_tells_which_hunk_and_shows_the_closest_text() {
    let ws = Ws::new();
    ws.write("a.py", "def f():\n    return compute(1)\n");
    let tools = core_tools();
    let e = ws
        .call(
            &tool(&tools, "apply_patch"),
            json!({"patch": "*** Begin Patch\n*** Update File: a.py\n@@\n def f():\n-    return compute(2)\n+    return compute(3)\n*** End Patch"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("hunk 1 of 1"), "{e}");
    assert!(e.contains("|    return compute(2)"), "{e}");
    assert!(
        e.contains("most similar text in the file starts at line 1"),
        "{e}"
    );
    assert!(e.contains("Nothing was changed"), "{e}");
    assert_eq!(ws.read("a.py"), "def f():\n    return compute(1)\n");
}

#[tokio::test]
async fn patches_keep_file_modes_and_refuse_binary_files() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Ws::new();
    let script = ws.write("run.sh", "#!/bin/sh\necho a\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tools = core_tools();
    let patch = tool(&tools, "apply_patch");
    ws.call(
        &patch,
        json!({"patch": "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n #!/bin/sh\n-echo a\n+echo b\n*** End Patch"}),
    )
    .await
    .unwrap();
    let moved = ws.root.join("bin/run.sh");
    assert_eq!(
        std::fs::read_to_string(&moved).unwrap(),
        "#!/bin/sh\necho b\n"
    );
    assert_eq!(
        std::fs::metadata(&moved).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert!(!script.exists());

    std::fs::write(ws.root.join("blob.bin"), b"ab\0cd\n").unwrap();
    let e = ws
        .call(
            &patch,
            json!({"patch": "*** Begin Patch\n*** Update File: blob.bin\n-ab\n+xy\n*** End Patch"}),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("binary"), "{e}");
    assert_eq!(
        std::fs::read(ws.root.join("blob.bin")).unwrap(),
        b"ab\0cd\n"
    );
}

#[tokio::test]
async fn deleting_a_symbolic_link_never_deletes_the_file_it_points_to() {
    let ws = Ws::new();
    ws.write("a.txt", "keep me\n");
    std::os::unix::fs::symlink("a.txt", ws.root.join("link_in")).unwrap();
    let tools = core_tools();
    for (name, args) in [
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Delete File: link_in\n*** End Patch"}),
        ),
        (
            "apply_unified_diff",
            json!({"diff": "--- a/link_in\n+++ /dev/null\n@@ -1 +0,0 @@\n-keep me\n"}),
        ),
    ] {
        let e = ws
            .call(&tool(&tools, name), args)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{name}: {e}");
        assert!(e.contains("Nothing was changed"), "{name}: {e}");
        assert_eq!(ws.read("a.txt"), "keep me\n", "{name}");
        assert!(
            std::fs::symlink_metadata(ws.root.join("link_in")).is_ok(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn the_first_line_of_a_file_with_a_byte_order_mark_can_be_patched() {
    let ws = Ws::new();
    let tools = core_tools();
    for (name, file, args) in [
        (
            "apply_patch",
            "bom1.txt",
            json!({"patch": "*** Begin Patch\n*** Update File: bom1.txt\n@@\n-head\n+HEAD\n body\n*** End Patch"}),
        ),
        (
            "apply_unified_diff",
            "bom2.txt",
            json!({"diff": "--- a/bom2.txt\n+++ b/bom2.txt\n@@ -1,2 +1,2 @@\n-head\n+HEAD\n body\n"}),
        ),
    ] {
        ws.write(file, "\u{feff}head\r\nbody\r\n");
        ws.call(&tool(&tools, name), args).await.unwrap();
        assert_eq!(
            ws.read(file),
            "\u{feff}HEAD\r\nbody\r\n",
            "{name}: the mark and the line endings are kept"
        );
    }
}

#[tokio::test]
async fn conflict_guard_blocks_patching_a_file_changed_since_it_was_read() {
    let ws = Ws::new();
    ws.write("notes.txt", "one\ntwo\nthree\n");
    let tools = core_tools();
    ws.call(&tool(&tools, "read_file"), json!({"path": "notes.txt"}))
        .await
        .unwrap();
    // The user edits the file in their editor.
    ws.write("notes.txt", "one\ntwo typed by the user\nthree\n");
    let e = ws
        .call(
            &tool(&tools, "apply_unified_diff"),
            json!({"diff": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n two typed by the user\n-three\n+3\n"}),
        )
        .await
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ToolError::Failed(_)), "{e}");
    assert!(
        msg.contains("changed on disk after you last read it"),
        "{msg}"
    );
    assert!(msg.contains("+two typed by the user"), "{msg}");
    assert_eq!(ws.read("notes.txt"), "one\ntwo typed by the user\nthree\n");
    // After reading again, the same diff applies.
    ws.call(&tool(&tools, "read_file"), json!({"path": "notes.txt"}))
        .await
        .unwrap();
    ws.call(
        &tool(&tools, "apply_unified_diff"),
        json!({"diff": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n two typed by the user\n-three\n+3\n"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("notes.txt"), "one\ntwo typed by the user\n3\n");
}

#[tokio::test]
async fn unparsable_patches_name_the_line() {
    let ws = Ws::new();
    let tools = core_tools();
    let e = ws
        .call(
            &tool(&tools, "apply_patch"),
            json!({"patch": "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    assert!(e.to_string().contains("line 2"), "{e}");
    let e = ws
        .call(
            &tool(&tools, "apply_unified_diff"),
            json!({"diff": "just words"}),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no file changes found"), "{e}");
}
