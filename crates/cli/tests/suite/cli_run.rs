//! `cairn run` end to end against the scripted mock LLM server.

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_testkit::{Fault, MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::common::json_run::*;

#[tokio::test(flavor = "multi_thread")]
async fn list_read_write_shell_answer_in_auto_mode() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "remember the milk\n").unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "list_files", json!({"path": "."})),
        Reply::tool_call("c2", "read_file", json!({"path": "notes.txt"})),
        Reply::tool_call(
            "c3",
            "write_file",
            json!({"path": "out/hello.txt", "content": "hello from cairn\n"}),
        ),
        Reply::tool_call(
            "c4",
            "run_shell",
            json!({"command": "cat out/hello.txt && echo SHELL-MARK-42"}),
        ),
        Reply::text("All done: wrote out/hello.txt.").chunk_size(5),
    ])
    .await
    .unwrap();
    let r = run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--mode", "auto", "--json", "do it"],
    ))
    .await;
    last_is_turn_end(&r, "completed");
    assert_eq!(r.events[0]["type"], "turn_start");
    assert_eq!(r.events[0]["data"]["turn"], 1);
    assert!(r.events[0]["data"]["sessionId"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    let finished = of_type(&r.events, "tool_finished");
    let names: Vec<_> = finished
        .iter()
        .map(|f| f["data"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["list_files", "read_file", "write_file", "run_shell"]
    );
    assert!(
        finished.iter().all(|f| f["data"]["status"] == "ok"),
        "{finished:?}"
    );
    assert!(of_type(&r.events, "permission_required").is_empty());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/hello.txt")).unwrap(),
        "hello from cairn\n"
    );
    let end = r.events.last().unwrap();
    assert_eq!(end["data"]["produced_files"], json!(["out/hello.txt"]));
    // What the model saw: the listing, the file, and the shell output.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let seen = reqs[4].body.to_string();
    assert!(seen.contains("notes.txt"));
    assert!(seen.contains("remember the milk"));
    assert!(
        seen.contains("SHELL-MARK-42"),
        "shell output reached the model"
    );
    assert_eq!(reqs[0].bearer(), Some(KEY));
    let text: String = of_type(&r.events, "assistant_delta")
        .iter()
        .map(|d| d["data"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "All done: wrote out/hello.txt.");
}

#[tokio::test(flavor = "multi_thread")]
async fn interactive_deny_refuses_the_write_and_completes() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "w",
            "write_file",
            json!({"path": "nope.txt", "content": "x"}),
        ),
        Reply::text("Understood, I will not write it."),
    ])
    .await
    .unwrap();
    let r = run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &[
            "--mode",
            "interactive",
            "--approve",
            "deny",
            "--json",
            "write nope.txt",
        ],
    ))
    .await;
    last_is_turn_end(&r, "completed");
    let pr = of_type(&r.events, "permission_required");
    assert_eq!(pr.len(), 1);
    assert_eq!(pr[0]["data"]["name"], "write_file");
    // The opaque id faces answer the request by, beside the tool call's reqId.
    let request_id = pr[0]["data"]["requestId"].as_str().unwrap_or_default();
    assert!(request_id.starts_with("rq_"), "{}", pr[0]);
    assert_ne!(pr[0]["data"]["requestId"], pr[0]["data"]["reqId"]);
    let f = of_type(&r.events, "tool_finished");
    assert_eq!(f[0]["data"]["status"], "denied");
    assert!(!ws.path().join("nope.txt").exists());
    let seen = server.requests()[1].body.to_string();
    assert!(seen.contains("denied"), "the model learns it was denied");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_tty_approvals_default_to_deny() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("s", "run_shell", json!({"command": "touch made.txt"})),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let r = run_ok(cmd(ws.path(), state.path(), &server, &["--json", "touch"])).await;
    let finished = &of_type(&r.events, "tool_finished")[0]["data"];
    assert_eq!(finished["status"], "denied");
    // Not blamed on a user who was never asked.
    let reason = finished["reason"].as_str().unwrap();
    assert!(
        reason.contains("this run denies every approval") && !reason.contains("user"),
        "{reason}"
    );
    assert!(!ws.path().join("made.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn unauthorized_ends_fast_with_a_clear_message_and_no_key_anywhere() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::fault(Fault::unauthorized())])
        .await
        .unwrap();
    let t0 = Instant::now();
    let r = run(cmd(ws.path(), state.path(), &server, &["--json", "hi"])).await;
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(r.code, 1);
    last_is_turn_end(&r, "error");
    let err = of_type(&r.events, "error");
    assert_eq!(err[0]["data"]["error_type"], "auth");
    assert!(err[0]["data"]["error"]
        .as_str()
        .unwrap()
        .contains("API key"));
    assert!(of_type(&r.events, "llm_retry").is_empty());
    assert_eq!(server.requests().len(), 1);
    assert!(!r.stdout.contains(KEY) && !r.stderr.contains(KEY));
    for entry in walk(state.path()) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(!text.contains(KEY), "key leaked into {}", entry.display());
    }
    // Human output says it plainly too.
    server.push(Reply::fault(Fault::unauthorized()));
    let r = run(cmd(ws.path(), state.path(), &server, &["hi"])).await;
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("API key"), "{}", r.stderr);
    assert!(!r.stderr.contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn transient_faults_are_retried_and_the_turn_completes() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::fault(Fault::server_error()),
        Reply::text("partial answer that breaks")
            .chunk_size(4)
            .then_fault(Fault::DropMidStream),
        Reply::text("recovered"),
    ])
    .await
    .unwrap();
    let r = run_ok(cmd(ws.path(), state.path(), &server, &["--json", "hi"])).await;
    last_is_turn_end(&r, "completed");
    let retries = of_type(&r.events, "llm_retry");
    assert_eq!(retries.len(), 2);
    let msg = of_type(&r.events, "assistant_message");
    assert_eq!(msg.last().unwrap()["data"]["text"], "recovered");
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_retry_after_is_honoured() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::fault(Fault::rate_limited(1)),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let t0 = Instant::now();
    let r = run_ok(cmd(ws.path(), state.path(), &server, &["--json", "hi"])).await;
    assert!(t0.elapsed() >= Duration::from_secs(1));
    let retries = of_type(&r.events, "llm_retry");
    assert_eq!(retries[0]["data"]["waitMs"], 1000);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_megabyte_command_output_reaches_the_model_budgeted() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "big",
            "run_shell",
            json!({"command": "echo FIRST-LINE; printf '%2600000s' | tr ' ' x; echo; echo LAST-LINE"}),
        ),
        Reply::text("seen it"),
    ])
    .await
    .unwrap();
    run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--mode", "auto", "--json", "big"],
    ))
    .await;
    let reqs = server.requests();
    let body = &reqs[1].body;
    let tool_msg = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    let content = tool_msg["content"].as_str().unwrap();
    assert!(content.len() < 40_000, "budgeted: {} chars", content.len());
    assert!(content.starts_with("FIRST-LINE"));
    assert!(content.contains("LAST-LINE"));
    assert!(content.contains("chars omitted"));
    let saved = walk(state.path())
        .into_iter()
        .find(|p| p.to_string_lossy().contains("tool-results"))
        .expect("the full output was saved");
    assert!(content.contains(&saved.display().to_string()));
    assert!(std::fs::metadata(&saved).unwrap().len() > 2_600_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_during_a_long_command_interrupts_cleanly_and_kills_the_tree() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let marker = "299.75";
    let server = MockLlmServer::with_script(vec![Reply::tool_call(
        "s",
        "run_shell",
        // One child leaves the process group and the session (setsid): it must die too.
        json!({"command": format!("(setsid sleep {marker} &); sleep {marker} & sleep {marker}")}),
    )])
    .await
    .unwrap();
    let mut c = cmd(
        ws.path(),
        state.path(),
        &server,
        &["--mode", "auto", "--json", "sleep"],
    );
    let mut child = c.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut events: Vec<Value> = Vec::new();
    // Wait for the command to start.
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(l) = lines.next_line().await.unwrap() {
            let v: Value = serde_json::from_str(&l).unwrap();
            let started = v["type"] == "tool_started";
            events.push(v);
            if started {
                break;
            }
        }
    })
    .await
    .expect("tool started");
    // Give the shell a moment to spawn its children.
    let t_spawn = Instant::now();
    while count_procs(marker) < 3 && t_spawn.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(count_procs(marker) >= 3, "the sleeps are running");
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    let t0 = Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    while let Some(l) = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("output keeps coming")
        .unwrap()
    {
        events.push(serde_json::from_str(&l).unwrap());
    }
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t0.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    let types: Vec<_> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(&types[types.len() - 2..], &["interrupted", "turn_end"]);
    assert_eq!(events.last().unwrap()["data"]["status"], "interrupted");
    let f = events
        .iter()
        .find(|e| e["type"] == "tool_finished")
        .unwrap();
    assert_eq!(f["data"]["status"], "interrupted");
    let t_gone = Instant::now();
    while count_procs(marker) > 0 && t_gone.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(count_procs(marker), 0, "no child process survives");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_model_is_a_usage_error() {
    let ws = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--json", "hi", "--workspace"])
        .arg(ws.path())
        .env_remove("OPENAI_MODEL")
        .env_remove("CAIRN_MODEL")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--model"), "{err}");
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_flags_and_workspaces_are_usage_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--mode", "yolo", "hi"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--model", "m", "--workspace", "/", "hi"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing"));
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "run",
            "--model",
            "m",
            "--workspace",
            "/definitely/not/here",
            "hi",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // An empty prompt is refused before any session is created.
    let state = tempfile::tempdir().unwrap();
    for empty in ["", "  \n "] {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["run", "--model", "m", "--state-dir"])
            .arg(state.path())
            .arg(empty)
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{empty:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("the prompt is empty"));
    }
    assert!(!state.path().join("sessions").exists());
    // Limits of 0 are refused, not ignored.
    for flag in ["--max-iterations", "--context-window"] {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["run", "--model", "m", "--state-dir"])
            .arg(state.path())
            .args([flag, "0", "hi"])
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(flag),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn max_iterations_exits_3() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "list_files", json!({})),
        Reply::tool_call("b", "list_files", json!({})),
    ])
    .await
    .unwrap();
    let r = run(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--max-iterations", "2", "--json", "loop"],
    ))
    .await;
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    last_is_turn_end(&r, "max_iterations_exceeded");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_listed_and_resumed() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
    ])
    .await
    .unwrap();
    let r = run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--json", "remember 7"],
    ))
    .await;
    let id = r.events[0]["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sessions", "--json", "--state-dir"])
        .arg(state.path())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["id"], id.as_str());
    assert_eq!(line["turns"], 1);
    assert_eq!(line["model"], "mock-model");
    assert_eq!(line["name"], "remember 7");
    let r = run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--session", &id, "--json", "what number?"],
    ))
    .await;
    assert_eq!(r.events[0]["data"]["turn"], 2);
    assert_eq!(r.events[0]["data"]["sessionId"], id.as_str());
    let body = server.requests()[1].body.to_string();
    assert!(body.contains("remember 7") && body.contains("first answer"));
    // An unknown session is a clear usage error.
    let r = run(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--session", "no-such-session", "hi"],
    ))
    .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no-such-session"));
}

fn count_procs(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let status = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // Zombies (state Z) are dead already; PID 1 here may not reap them.
            let zombie = status
                .split(") ")
                .nth(1)
                .is_some_and(|s| s.starts_with('Z'));
            !zombie
                && cmdline.split(|b| *b == 0).any(|a| a == marker.as_bytes())
                && cmdline.starts_with(b"sleep")
        })
        .count()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn stalled_and_malformed_streams_are_retried_then_reported() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::text("never finishes").then_fault(Fault::Stall(Duration::from_secs(20))),
        Reply::fault(Fault::MalformedChunk),
        Reply::text("fine now"),
    ])
    .await
    .unwrap();
    let mut c = cmd(ws.path(), state.path(), &server, &["--json", "hi"]);
    c.env("OPENAI_STREAM_IDLE_MS", "300");
    let t0 = Instant::now();
    let r = run(c).await;
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let retries = of_type(&r.events, "llm_retry");
    assert_eq!(retries.len(), 2);
    assert!(retries[0]["data"]["reason"]
        .as_str()
        .unwrap()
        .starts_with("timeout"));
    assert!(retries[1]["data"]["reason"]
        .as_str()
        .unwrap()
        .starts_with("malformed"));
    last_is_turn_end(&r, "completed");

    // Three stalls in a row: the retries run out and the turn ends with a retriable error.
    for _ in 0..3 {
        server.push(Reply::fault(Fault::Stall(Duration::from_secs(20))));
    }
    let mut c = cmd(ws.path(), state.path(), &server, &["--json", "again"]);
    c.env("OPENAI_STREAM_IDLE_MS", "200");
    let r = run(c).await;
    assert_eq!(r.code, 1);
    let err = of_type(&r.events, "error");
    assert_eq!(err[0]["data"]["error_type"], "timeout");
    assert_eq!(err[0]["data"]["retriable"], true);
    last_is_turn_end(&r, "error");
}

#[tokio::test(flavor = "multi_thread")]
async fn context_length_exceeded_ends_the_turn_with_a_clear_error() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::fault(Fault::ContextLengthExceeded)])
        .await
        .unwrap();
    let r = run(cmd(ws.path(), state.path(), &server, &["--json", "huge"])).await;
    assert_eq!(r.code, 1);
    let err = of_type(&r.events, "error");
    assert_eq!(err[0]["data"]["error_type"], "context_length_exceeded");
    assert_eq!(server.requests().len(), 1, "not blindly retried");
    last_is_turn_end(&r, "error");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_during_the_llm_stream_interrupts_within_seconds() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text(&"slow words ".repeat(200))
        .chunk_size(5)
        .delay_between_chunks(Duration::from_millis(50))])
    .await
    .unwrap();
    let mut child = cmd(ws.path(), state.path(), &server, &["--json", "talk"])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events: Vec<Value> = Vec::new();
    while let Some(l) = lines.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&l).unwrap();
        let delta = v["type"] == "assistant_delta";
        events.push(v);
        if delta {
            break;
        }
    }
    let t0 = Instant::now();
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    while let Some(l) = lines.next_line().await.unwrap() {
        events.push(serde_json::from_str(&l).unwrap());
    }
    let status = child.wait().await.unwrap();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(status.code(), Some(130));
    let types: Vec<_> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(&types[types.len() - 2..], &["interrupted", "turn_end"]);
    assert_eq!(events.last().unwrap()["data"]["status"], "interrupted");
}
