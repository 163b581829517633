//! The terminal manager and the terminal tools: real shells on pseudo-terminals, per project.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::ToolError;
use cairn_tools::terminal::TerminalError;
use cairn_tools::{terminal_tools, TerminalManager, TerminalOptions, TerminalSource};
use common::{gone_within, tool, Ws};
use serde_json::json;

/// Polls `read` until it contains `want` (5 s at most).
async fn wait_for(m: &TerminalManager, project: &str, id: &str, want: &str) -> String {
    let start = Instant::now();
    loop {
        let text = m.read(project, id, 200).unwrap();
        if text.contains(want) || start.elapsed() > Duration::from_secs(5) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

#[tokio::test]
async fn a_users_terminal_is_read_as_plain_text_by_its_project_only() {
    let ws = Ws::new();
    let m = Arc::new(TerminalManager::new());
    let a = m
        .open("project-a", TerminalOptions::shell(&ws.root))
        .unwrap();
    assert!(a.running && a.id.starts_with("term-"));
    let mut raw = m.subscribe("project-a", &a.id).unwrap();
    m.write(
        "project-a",
        &a.id,
        b"printf '\\033[1;32m%s\\033[0m\\n' \"$((40+2)) OK\"; echo line$((1+1)); echo line$((1+2))\n",
    )
    .await
    .unwrap();
    let text = wait_for(&m, "project-a", &a.id, "line3").await;
    assert!(
        text.contains("42 OK") && text.contains("\nline3"),
        "{text:?}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "escape codes must be stripped: {text:?}"
    );
    // The UI gets the raw bytes, colours included.
    let mut got = Vec::new();
    while let Ok(Ok(chunk)) = tokio::time::timeout(Duration::from_millis(300), raw.recv()).await {
        got.extend_from_slice(&chunk);
    }
    assert!(
        String::from_utf8_lossy(&got).contains("\u{1b}[1;32m"),
        "{got:?}"
    );
    let tail = m.read("project-a", &a.id, 2).unwrap();
    assert_eq!(tail.lines().count(), 2, "{tail:?}");

    // Project B sees nothing of A's terminals.
    assert!(m.list("project-b").is_empty());
    assert!(matches!(
        m.read("project-b", &a.id, 10),
        Err(TerminalError::NotFound(_))
    ));
    assert!(m.write("project-b", &a.id, b"rm -rf /\n").await.is_err());
    let b_tools = terminal_tools(m.clone(), "project-b");
    let out = ws
        .call(&tool(&b_tools, "terminal_list"), json!({}))
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "The user has no terminals open in this project."
    );
    let e = ws
        .call(
            &tool(&b_tools, "terminal_read"),
            json!({"terminal_id": a.id}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
    assert!(e.to_string().contains("(open terminals: none)"), "{e}");

    // Project A's tools list and read it.
    let a_tools = terminal_tools(m.clone(), "project-a");
    let out = ws
        .call(&tool(&a_tools, "terminal_list"), json!({}))
        .await
        .unwrap();
    assert!(
        out.content.starts_with(&format!("{}  bash", a.id)) || out.content.contains(&a.id),
        "{}",
        out.content
    );
    assert!(out.content.contains("running"), "{}", out.content);
    let out = ws
        .call(
            &tool(&a_tools, "terminal_read"),
            json!({"terminal_id": a.id, "tail_lines": 3}),
        )
        .await
        .unwrap();
    assert!(out.content.contains("line3"), "{}", out.content);

    // Closing stops the shell and the jobs the user started from it.
    m.write("project-a", &a.id, b"sleep 1000 & echo bg=$((0))$!\n")
        .await
        .unwrap();
    let text = wait_for(&m, "project-a", &a.id, "bg=0").await;
    let job: u32 = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("bg=0"))
        .next_back()
        .unwrap_or_else(|| panic!("no job pid in {text:?}"))
        .trim()
        .parse()
        .unwrap();
    assert!(common::alive(job));
    let pid = a.pid.unwrap();
    m.close("project-a", &a.id).await.unwrap();
    assert!(gone_within(pid, Duration::from_secs(5)).await);
    assert!(
        gone_within(job, Duration::from_secs(5)).await,
        "background job {job} survived"
    );
    assert!(m.list("project-a").is_empty());
}

#[tokio::test]
async fn resize_and_exit_are_visible() {
    let ws = Ws::new();
    let m = TerminalManager::new();
    let t = m
        .open(
            "p",
            TerminalOptions {
                argv: vec!["/bin/sh".into()],
                title: Some("dev server".into()),
                ..TerminalOptions::shell(&ws.root)
            },
        )
        .unwrap();
    assert_eq!(t.title, "dev server");
    m.resize("p", &t.id, 91, 17).unwrap();
    m.write("p", &t.id, b"stty size; exit 4\n").await.unwrap();
    let text = wait_for(&m, "p", &t.id, "17 91").await;
    assert!(text.contains("17 91"), "{text:?}");
    let start = Instant::now();
    while m.list("p")[0].running && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let info = &m.list("p")[0];
    assert!(!info.running);
    assert_eq!(info.exit.as_deref(), Some("[exit code: 4]"));
}

#[tokio::test]
async fn dropping_the_manager_kills_every_terminal() {
    let ws = Ws::new();
    let m = TerminalManager::new();
    let a = m.open("p1", TerminalOptions::shell(&ws.root)).unwrap();
    let b = m.open("p2", TerminalOptions::shell(&ws.root)).unwrap();
    let pids = [a.pid.unwrap(), b.pid.unwrap()];
    drop(m);
    for pid in pids {
        assert!(
            gone_within(pid, Duration::from_secs(5)).await,
            "{pid} survived"
        );
    }
}
