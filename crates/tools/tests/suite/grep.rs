//! grep over real files: ignore rules, binary files, globs, case, caps and failures.

use crate::common;

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use common::{tool, Ws};
use serde_json::json;

fn tree() -> Ws {
    let ws = Ws::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "fn main() {\n    let needle = 1;\n}\n");
    ws.write("src/lib.rs", "pub fn Needle() {}\n// needle again\n");
    ws.write("src/web/app.ts", "const needle = 'x';\n");
    ws.write("target/out.rs", "needle in build output\n");
    ws.write("run.log", "needle in a log\n");
    ws.write(".hidden/secret.rs", "needle hidden\n");
    std::fs::write(ws.root.join("src/blob.bin"), b"needle\0binary").unwrap();
    ws
}

#[tokio::test]
async fn finds_matches_with_paths_and_line_numbers_respecting_ignores() {
    let ws = tree();
    let grep = tool(&core_tools(), "grep");
    let out = ws
        .call(&grep, json!({"pattern": "needle"}))
        .await
        .unwrap()
        .content;
    assert_eq!(
        out,
        "src/lib.rs:2:// needle again\n\
         src/main.rs:2:    let needle = 1;\n\
         src/web/app.ts:1:const needle = 'x';\n\
         [3 matching lines in 3 files]\n"
    );
}

#[tokio::test]
async fn case_glob_path_and_hidden_options() {
    let ws = tree();
    let grep = tool(&core_tools(), "grep");
    let out = ws
        .call(
            &grep,
            json!({"pattern": "needle", "ignore_case": true, "glob": "*.rs"}),
        )
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with("src/lib.rs:1:pub fn Needle() {}\nsrc/lib.rs:2:"),
        "{out}"
    );
    assert!(!out.contains("app.ts"), "{out}");
    let out = ws
        .call(
            &grep,
            json!({"pattern": "needle", "glob": "!*.rs", "path": "src"}),
        )
        .await
        .unwrap()
        .content;
    assert_eq!(
        out,
        "src/web/app.ts:1:const needle = 'x';\n[1 matching lines in 1 files]\n"
    );
    let out = ws
        .call(&grep, json!({"pattern": "needle", "path": "src/main.rs"}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("src/main.rs:2:"), "{out}");
    let out = ws
        .call(&grep, json!({"pattern": "hidden", "include_hidden": true}))
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with(".hidden/secret.rs:1:needle hidden"),
        "{out}"
    );
}

#[tokio::test]
async fn binary_files_are_skipped_and_reported_when_nothing_matches() {
    let ws = tree();
    let grep = tool(&core_tools(), "grep");
    let out = ws
        .call(&grep, json!({"pattern": "binary", "path": "src/blob.bin"}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("No matches for `binary`"), "{out}");
    assert!(out.contains("1 binary file(s) were skipped"), "{out}");
}

#[tokio::test]
async fn results_are_capped_with_a_note_of_what_was_cut() {
    let ws = Ws::new();
    for f in 0..5 {
        let body: String = (0..30).map(|i| format!("hit {i}\n")).collect();
        ws.write(&format!("d/f{f}.txt"), &body);
    }
    let grep = tool(&core_tools(), "grep");
    let out = ws
        .call(&grep, json!({"pattern": "^hit", "max_results": 40}))
        .await
        .unwrap()
        .content;
    assert_eq!(out.lines().filter(|l| l.starts_with("d/")).count(), 40);
    assert!(out.starts_with("d/f0.txt:1:hit 0\n"), "{out}");
    assert!(
        out.contains("[showing 40 of 150 matching lines in 5 files; 110 more lines not shown."),
        "{}",
        out.lines().last().unwrap()
    );
    assert!(out.contains("or raise max_results (up to 2000)"), "{out}");
    // At the largest max_results there is nothing to raise.
    for f in 0..5 {
        let body: String = (0..500).map(|i| format!("hit {i}\n")).collect();
        ws.write(&format!("d/f{f}.txt"), &body);
    }
    let out = ws
        .call(&grep, json!({"pattern": "^hit", "max_results": 5000}))
        .await
        .unwrap()
        .content;
    let last = out.lines().last().unwrap();
    assert!(last.contains("[showing 2000 of 2500"), "{last}");
    assert!(!last.contains("raise max_results"), "{last}");
}

#[tokio::test]
async fn failures_are_clear() {
    let ws = tree();
    let grep = tool(&core_tools(), "grep");
    let e = ws
        .call(&grep, json!({"pattern": "fn ("}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::InvalidArguments(m) if m.contains("invalid regex `fn (`")),
        "{e}"
    );
    let e = ws
        .call(&grep, json!({"pattern": "x", "glob": "[z"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("invalid glob"), "{e}");
    let e = ws
        .call(&grep, json!({"pattern": "x", "path": "nope"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
    let e = ws
        .call(&grep, json!({"pattern": "x", "path": "../.."}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::OutsideWorkspace(_)), "{e}");
    let out = ws
        .call(&grep, json!({"pattern": "zzz_not_there"}))
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with("No matches for `zzz_not_there` in `.`"),
        "{out}"
    );
}

#[tokio::test]
async fn line_anchors_work_in_files_with_windows_line_endings() {
    let ws = Ws::new();
    ws.write("crlf.txt", "first\r\nneedle crlf\r\nlast\r\n");
    ws.write("lf.txt", "needle lf\n");
    let grep = tool(&core_tools(), "grep");
    let out = ws
        .call(&grep, json!({"pattern": "^needle (crlf|lf)$"}))
        .await
        .unwrap()
        .content;
    assert_eq!(
        out,
        "crlf.txt:2:needle crlf\nlf.txt:1:needle lf\n[2 matching lines in 2 files]\n"
    );
}
