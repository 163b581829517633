//! Every path-taking tool refuses every way out of the workspace.

use crate::common;
mod race;

use std::os::unix::fs::symlink;

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use common::{exists, tool, Ws};
use serde_json::{json, Value};

/// Escape attempts, given the workspace fixture (symlinks created by `setup`).
fn escapes(ws: &Ws) -> Vec<String> {
    vec![
        "/etc/passwd".into(),
        "../../etc/passwd".into(),
        "../outside/secret".into(),
        "sub/../../outside/secret".into(),
        ws.outside.join("secret").to_str().unwrap().into(),
        "link_dir/secret".into(),
        "link_dir/new_file".into(),
        "link_dir/newdir/nested".into(),
        "link_file".into(),
        "dangling".into(),
        "sub/rel_up/secret".into(),
    ]
}

fn setup() -> Ws {
    let ws = Ws::new();
    std::fs::write(ws.outside.join("secret"), "top secret\n").unwrap();
    ws.write("sub/inside.txt", "inside\n");
    symlink(&ws.outside, ws.root.join("link_dir")).unwrap();
    symlink(ws.outside.join("secret"), ws.root.join("link_file")).unwrap();
    symlink(
        ws.outside.join("created_through_link"),
        ws.root.join("dangling"),
    )
    .unwrap();
    symlink("../../outside", ws.root.join("sub/rel_up")).unwrap();
    ws
}

fn args_for(tool: &str, path: &str) -> Value {
    match tool {
        "read_file" | "list_files" => json!({"path": path}),
        "write_file" => json!({"path": path, "content": "pwned"}),
        "replace_in_file" => {
            json!({"path": path, "old_string": "top secret", "new_string": "pwned"})
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn no_path_tool_escapes_the_workspace() {
    let ws = setup();
    let tools = core_tools();
    for name in ["read_file", "list_files", "write_file", "replace_in_file"] {
        let t = tool(&tools, name);
        for path in escapes(&ws) {
            let r = ws.call(&t, args_for(name, &path)).await;
            assert!(
                matches!(r, Err(ToolError::OutsideWorkspace(_))),
                "{name} {path}: {r:?}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(ws.outside.join("secret")).unwrap(),
        "top secret\n"
    );
    assert!(!exists(&ws.outside.join("created_through_link")));
    assert!(!exists(&ws.outside.join("new_file")));
    assert!(!exists(&ws.outside.join("newdir")));
}

#[tokio::test]
async fn outside_error_names_the_workspace() {
    let ws = setup();
    let e = ws
        .call(
            &tool(&core_tools(), "read_file"),
            json!({"path": "/etc/passwd"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.error_type(), "outside_workspace");
    assert!(e.to_string().contains(ws.root.to_str().unwrap()), "{e}");
}

#[tokio::test]
async fn inside_paths_still_work_through_symlinks_and_absolute_paths() {
    let ws = setup();
    symlink(ws.root.join("sub"), ws.root.join("alias")).unwrap();
    let tools = core_tools();
    let out = ws
        .call(
            &tool(&tools, "read_file"),
            json!({"path": "alias/inside.txt"}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "     1\tinside\n");
    let abs = ws.root.join("sub/inside.txt");
    let out = ws
        .call(
            &tool(&tools, "write_file"),
            json!({"path": abs.to_str().unwrap(), "content": "new"}),
        )
        .await
        .unwrap();
    assert_eq!(out.produced_files, ["sub/inside.txt"]);
    let out = ws
        .call(
            &tool(&tools, "write_file"),
            json!({"path": "alias/x/y.txt", "content": "y"}),
        )
        .await
        .unwrap();
    assert_eq!(out.produced_files, ["sub/x/y.txt"]);
    assert_eq!(ws.read("sub/x/y.txt"), "y");
}
