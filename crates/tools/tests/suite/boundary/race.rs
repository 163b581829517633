//! A folder swapped for a symbolic link while a file tool runs (between the permission check,
//! the tool's path resolution and the write) never redirects the tool outside the workspace or
//! into `.git`: deterministically through the `test-support` hook, and under load with a thread
//! flipping the link.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_engine::{PermissionEngine, ToolHandle};
use cairn_protocol::Mode;
use cairn_tools::core_tools;
use cairn_tools::testing::{before_fs_op, FsOp};
use serde_json::{json, Value};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
use crate::common::LinkFlipper;
use crate::common::{tool, Ws};

/// Where the swapped-in link `d` points.
#[derive(Debug, Clone, Copy)]
enum Target {
    Outside,
    GitHooks,
}

impl Target {
    fn dir(self, ws: &Ws) -> PathBuf {
        match self {
            Target::Outside => ws.outside.clone(),
            Target::GitHooks => ws.root.join(".git/hooks"),
        }
    }
}

/// A workspace with `d/f.txt`, `a.txt` and `.git/hooks/`; the outside folder and the hooks
/// folder hold an `f.txt` of their own, so a followed link would find something to change.
fn setup() -> Ws {
    let ws = Ws::new();
    ws.write("d/f.txt", "top secret\n");
    ws.write("a.txt", "alpha\n");
    ws.write(".git/hooks/f.txt", "top secret\n");
    std::fs::write(ws.outside.join("f.txt"), "top secret\n").unwrap();
    ws
}

/// Every file and folder under `root` with its content (links by their target).
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let what = if meta.file_type().is_symlink() {
            format!("-> {}", std::fs::read_link(&p).unwrap().display())
        } else if meta.is_dir() {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                stack.push(e.path());
            }
            "/".to_string()
        } else {
            std::fs::read_to_string(&p).unwrap_or_default()
        };
        out.insert(p, what);
    }
    out
}

/// Swaps `ws/d` for a link to `target` (the folder moves to `d_real`) the first time a tool
/// is about to do `ops` on a path under `d`.
fn swap_on(ws: &Ws, target: Target, ops: &'static [FsOp]) -> cairn_tools::testing::HookGuard {
    let d = ws.root.join("d");
    let real = ws.root.join("d_real");
    let to = target.dir(ws);
    let done = AtomicBool::new(false);
    before_fs_op(&ws.root, move |op, path| {
        if ops.contains(&op) && path.starts_with(&d) && !done.swap(true, Ordering::SeqCst) {
            std::fs::rename(&d, &real).unwrap();
            symlink(&to, &d).unwrap();
        }
    })
}

/// One write of each file tool, each touching `d/` (name, tool, arguments).
fn writes() -> Vec<(&'static str, &'static str, Value)> {
    let patch = |body: &str| json!({"patch": format!("*** Begin Patch\n{body}*** End Patch\n")});
    vec![
        (
            "create",
            "write_file",
            json!({"path": "d/new.txt", "content": "pwned\n"}),
        ),
        (
            "overwrite",
            "write_file",
            json!({"path": "d/f.txt", "content": "pwned\n"}),
        ),
        (
            "mkdir -p",
            "write_file",
            json!({"path": "d/n1/n2/x.txt", "content": "pwned\n"}),
        ),
        (
            "replace",
            "replace_in_file",
            json!({"path": "d/f.txt", "old_string": "top secret", "new_string": "pwned"}),
        ),
        (
            "patch add",
            "apply_patch",
            patch("*** Add File: d/new.txt\n+pwned\n"),
        ),
        (
            "patch add nested",
            "apply_patch",
            patch("*** Add File: d/n1/x.txt\n+pwned\n"),
        ),
        (
            "patch update",
            "apply_patch",
            patch("*** Update File: d/f.txt\n@@\n-top secret\n+pwned\n"),
        ),
        (
            "patch delete",
            "apply_patch",
            patch("*** Delete File: d/f.txt\n"),
        ),
        (
            "patch move in",
            "apply_patch",
            patch("*** Update File: a.txt\n*** Move to: d/moved.txt\n@@\n-alpha\n+pwned\n"),
        ),
        (
            "patch move out",
            "apply_patch",
            patch("*** Update File: d/f.txt\n*** Move to: moved.txt\n@@\n-top secret\n+pwned\n"),
        ),
        (
            "diff add",
            "apply_unified_diff",
            json!({"diff": "--- /dev/null\n+++ b/d/new.txt\n@@ -0,0 +1 @@\n+pwned\n"}),
        ),
        (
            "diff update",
            "apply_unified_diff",
            json!({"diff": "--- a/d/f.txt\n+++ b/d/f.txt\n@@ -1 +1 @@\n-top secret\n+pwned\n"}),
        ),
    ]
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_just_before_the_write_is_never_followed() {
    let tools = core_tools();
    for target in [Target::Outside, Target::GitHooks] {
        for (what, name, args) in writes() {
            let ws = setup();
            let outside = tree(&ws.outside);
            let git = tree(&ws.root.join(".git"));
            let _hook = swap_on(&ws, target, &[FsOp::Write, FsOp::Remove]);
            let r = ws.call(&tool(&tools, name), args).await;
            let label = format!("{what} ({name}) with d -> {target:?}");
            let e = r.expect_err(&label).to_string();
            assert!(
                e.contains("changed on disk") && e.contains("symbolic link"),
                "{label}: {e}"
            );
            assert_eq!(tree(&ws.outside), outside, "{label}: outside changed");
            assert_eq!(tree(&ws.root.join(".git")), git, "{label}: .git changed");
            assert!(
                std::fs::symlink_metadata(ws.root.join("d"))
                    .unwrap()
                    .is_symlink(),
                "{label}: the hook did not swap"
            );
            // The real folder and the rest of the workspace are as they were.
            assert_eq!(ws.read("d_real/f.txt"), "top secret\n", "{label}");
            assert_eq!(ws.read("a.txt"), "alpha\n", "{label}");
            assert!(!ws.root.join("moved.txt").exists(), "{label}");
            let names: Vec<_> = std::fs::read_dir(ws.root.join("d_real"))
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            assert_eq!(names, ["f.txt"], "{label}: left behind in d_real");
        }
    }
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_just_before_a_read_is_never_followed() {
    let tools = core_tools();
    for target in [Target::Outside, Target::GitHooks] {
        let ws = setup();
        std::fs::write(target.dir(&ws).join("f.txt"), "OTHER SECRET\n").unwrap();
        let _hook = swap_on(&ws, target, &[FsOp::Look]);
        let r = ws
            .call(&tool(&tools, "read_file"), json!({"path": "d/f.txt"}))
            .await;
        let e = r.expect_err("read through a swapped link").to_string();
        assert!(e.contains("changed on disk"), "{target:?}: {e}");
        assert!(!e.contains("OTHER SECRET"), "{e}");
    }
}

/// The permission check looks at `d/x` while `d` is a folder; the link is swapped in before
/// the tool resolves the path. The tool must not write where the check never looked.
#[tokio::test]
async fn a_link_swapped_in_after_the_permission_check_is_refused() {
    let tools = core_tools();
    let cases: Vec<(&str, Value)> = vec![
        (
            "write_file",
            json!({"path": "d/pre-commit", "content": "pwned\n"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: d/pre-commit\n+pwned\n*** End Patch\n"}),
        ),
        (
            "apply_unified_diff",
            json!({"diff": "--- /dev/null\n+++ b/d/pre-commit\n@@ -0,0 +1 @@\n+pwned\n"}),
        ),
        (
            "replace_in_file",
            json!({"path": "d/f.txt", "old_string": "top secret", "new_string": "pwned"}),
        ),
    ];
    for target in [Target::GitHooks, Target::Outside] {
        for (name, args) in &cases {
            let ws = setup();
            let t: ToolHandle = tool(&tools, name);
            let perms = PermissionEngine::new(ws.root.clone(), Mode::Auto, Vec::new());
            let d = perms.evaluate_call(name, &t.meta(), args, t.write_targets(args));
            assert!(d.is_allow() && !d.is_ask(), "{name}: {d:?}");
            let outside = tree(&ws.outside);
            let git = tree(&ws.root.join(".git"));
            std::fs::rename(ws.root.join("d"), ws.root.join("d_real")).unwrap();
            symlink(target.dir(&ws), ws.root.join("d")).unwrap();
            let r = ws.call(&t, args.clone()).await;
            let label = format!("{name} with d -> {target:?}");
            let e = r.expect_err(&label).to_string();
            match target {
                Target::GitHooks => assert!(e.contains("protected `.git`"), "{label}: {e}"),
                Target::Outside => assert!(e.contains("outside the workspace"), "{label}: {e}"),
            }
            assert_eq!(tree(&ws.outside), outside, "{label}: outside changed");
            assert_eq!(tree(&ws.root.join(".git")), git, "{label}: .git changed");
        }
    }
}

/// A legitimate link inside the workspace is resolved once and written through; naming the
/// protected folder itself still works (the permission check asks for such paths).
#[tokio::test]
async fn in_workspace_links_and_named_protected_paths_still_work() {
    let tools = core_tools();
    let ws = setup();
    ws.write("shared/lib.rs", "old\n");
    symlink("shared", ws.root.join("lib")).unwrap();
    let w = tool(&tools, "write_file");
    let out = ws
        .call(&w, json!({"path": "lib/lib.rs", "content": "new\n"}))
        .await
        .unwrap();
    assert_eq!(out.produced_files, ["shared/lib.rs"]);
    assert_eq!(ws.read("shared/lib.rs"), "new\n");
    assert!(std::fs::symlink_metadata(ws.root.join("lib"))
        .unwrap()
        .is_symlink());
    ws.call(&w, json!({"path": ".git/hooks/x", "content": "approved\n"}))
        .await
        .unwrap();
    assert_eq!(ws.read(".git/hooks/x"), "approved\n");
    // A link into `.git` is refused by the tool: the user is asked for the real path.
    symlink(".git/hooks", ws.root.join("h")).unwrap();
    let e = ws
        .call(&w, json!({"path": "h/y", "content": "x\n"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("protected `.git`") && e.contains(".git/hooks/y"),
        "{e}"
    );
    assert!(!ws.root.join(".git/hooks/y").exists());
    // So is a link into a nested repository's `.git`.
    ws.write("vendor/lib/.git/config", "[core]\n");
    symlink("vendor/lib/.git", ws.root.join("nested")).unwrap();
    let e = ws
        .call(&w, json!({"path": "nested/config", "content": "x\n"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("protected `.git`"), "{e}");
    assert_eq!(ws.read("vendor/lib/.git/config"), "[core]\n");
}

/// Thousands of flips while the tools write and read in a loop: nothing ever lands outside or
/// in `.git`, and nothing is ever read from outside.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_flipping_under_load_never_lets_a_write_out() {
    use std::time::{Duration, Instant};
    const CALLS: usize = 1500;
    let tools = core_tools();
    let (write, read) = (tool(&tools, "write_file"), tool(&tools, "read_file"));
    for target in [Target::Outside, Target::GitHooks] {
        let ws = setup();
        std::fs::write(target.dir(&ws).join("f.txt"), "OTHER SECRET\n").unwrap();
        let outside = tree(&ws.outside);
        let git = tree(&ws.root.join(".git"));
        let flipper =
            LinkFlipper::start(&ws.root.join("d"), &ws.root.join("d_alt"), &target.dir(&ws));
        let started = Instant::now();
        let (mut ok, mut refused, mut calls) = (0usize, 0usize, 0usize);
        while calls < CALLS && started.elapsed() < Duration::from_secs(30) {
            let path = format!("d/x{}.txt", calls % 7);
            let r = ws
                .call(&write, json!({"path": path, "content": "pwned\n"}))
                .await;
            match r {
                Ok(_) => ok += 1,
                Err(_) => refused += 1,
            }
            // Reading `.git` is allowed; reading outside is not.
            if let (Target::Outside, Ok(out)) =
                (target, ws.call(&read, json!({"path": "d/f.txt"})).await)
            {
                assert!(
                    !out.content.contains("OTHER SECRET"),
                    "read through the link"
                );
            }
            calls += 1;
        }
        let flips = flipper.stop();
        eprintln!("{target:?}: {calls} writes ({ok} written, {refused} refused), {flips} flips");
        assert!(flips >= 1000, "only {flips} flips");
        assert_eq!(tree(&ws.outside), outside, "{target:?}: outside changed");
        assert_eq!(tree(&ws.root.join(".git")), git, "{target:?}: .git changed");
    }
}
