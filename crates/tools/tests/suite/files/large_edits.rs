//! Edits of huge files answer at once (no quadratic diff), and an interrupted call writes
//! nothing.

use std::time::{Duration, Instant};

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::common::{tool, Ws};

/// What the issue demands of a 50 MB edit on the 2-core test machine (debug build).
const BOUND: Duration = Duration::from_secs(5);

/// About `mb` megabytes of distinct numbered lines.
fn big_text(mb: usize) -> String {
    let mut s = String::with_capacity(mb << 20);
    let mut i = 0usize;
    while s.len() < mb << 20 {
        s.push_str("item ");
        s.push_str(&i.to_string());
        s.push('\n');
        i += 1;
    }
    s
}

#[tokio::test]
async fn replace_all_on_a_50_mb_file_answers_within_seconds_without_a_diff() {
    let ws = Ws::new();
    let before = big_text(50);
    ws.write("big.txt", &before);
    let read = tool(&core_tools(), "read_file");
    ws.call(&read, json!({"path": "big.txt", "limit": 1}))
        .await
        .unwrap();
    let replace = tool(&core_tools(), "replace_in_file");
    let started = Instant::now();
    let out = ws
        .call(
            &replace,
            json!({"path": "big.txt", "old_string": "item", "new_string": "entry", "replace_all": true}),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.content
            .contains("too large to diff, applied without a diff"),
        "{}",
        &out.content[..out.content.len().min(500)]
    );
    assert!(
        out.content.len() < 1000,
        "no diff body: {}",
        out.content.len()
    );
    assert!(took < BOUND, "took {took:?}");
    assert_eq!(out.produced_files, ["big.txt"]);
    assert_eq!(ws.read("big.txt"), before.replace("item", "entry"));
}

#[tokio::test]
async fn overwriting_a_50_mb_file_answers_within_seconds_without_a_diff() {
    let ws = Ws::new();
    ws.write("big.txt", &big_text(50));
    let write = tool(&core_tools(), "write_file");
    let after = big_text(50).replace("item", "row");
    let started = Instant::now();
    let out = ws
        .call(&write, json!({"path": "big.txt", "content": after}))
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.content
            .contains("too large to diff, applied without a diff"),
        "{}",
        &out.content[..out.content.len().min(500)]
    );
    assert!(took < BOUND, "took {took:?}");
    assert_eq!(ws.read("big.txt"), after);
}

#[tokio::test]
async fn changing_every_line_of_20000_still_shows_a_diff_and_answers_quickly() {
    // Every line changes: the diff that took ~58 s is cut short by its deadline.
    let ws = Ws::new();
    let before: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    ws.write("f.txt", &before);
    let replace = tool(&core_tools(), "replace_in_file");
    let started = Instant::now();
    let out = ws
        .call(
            &replace,
            json!({"path": "f.txt", "old_string": "line", "new_string": "row", "replace_all": true}),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.content
            .starts_with("Replaced 20000 occurrences in f.txt (+20000 −20000 lines).\n--- a/f.txt"),
        "{}",
        &out.content[..300]
    );
    assert!(out.content.contains("diff cut"), "{}", out.content);
    assert!(took < BOUND, "took {took:?}");
}

#[tokio::test]
async fn an_interrupted_edit_writes_nothing() {
    let ws = Ws::new();
    ws.write("a.txt", "one\ntwo\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    for (name, args) in [
        (
            "replace_in_file",
            json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
        ),
        ("write_file", json!({"path": "a.txt", "content": "new\n"})),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n*** End Patch\n"}),
        ),
    ] {
        let t = tool(&core_tools(), name);
        let e = t
            .execute(args, ws.ctx_with(cancel.clone()))
            .await
            .unwrap_err();
        assert!(matches!(e, ToolError::Interrupted), "{name}: {e}");
        assert_eq!(ws.read("a.txt"), "one\ntwo\n", "{name}");
    }
}

#[tokio::test]
async fn a_patch_of_a_50_mb_file_answers_within_seconds_without_a_diff() {
    let ws = Ws::new();
    let before = big_text(50);
    ws.write("big.txt", &before);
    let last = before.lines().last().unwrap().to_string();
    let patch = tool(&core_tools(), "apply_patch");
    let started = Instant::now();
    let out = ws
        .call(
            &patch,
            json!({"patch": format!("*** Begin Patch\n*** Update File: big.txt\n-{last}\n+the end\n*** End of File\n*** End Patch\n")}),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(
        out.content,
        "Applied: 1 file changed.\nM big.txt (too large to diff, applied without a diff)\n"
    );
    assert!(took < BOUND, "took {took:?}");
    assert!(ws.read("big.txt").ends_with("\nthe end\n"));
}
