//! Eight `cairn run` sessions in one workspace at once, each writing its own files with a file
//! tool and a shell command, while the user edits too: each turn claims only its own changes,
//! and each restore removes only its own work and reports everyone else's.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use super::{cairn, lines, KEY};

const N: usize = 8;
/// Sessions 1..=EXCLUSIVE run their command alone; the others run theirs all at once.
const EXCLUSIVE: usize = 4;
const WAIT: Duration = Duration::from_secs(60);

fn spawn(server: &MockLlmServer, ws: &Path, state: &Path, i: usize) -> Child {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--mode", "auto", "--model", "m", "--json"])
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg(format!("session {i}: write your files"))
        .env("OPENAI_API_KEY", KEY)
        .env("CAIRN_SANDBOX", "off")
        .env_remove("CAIRN_STATE_DIR")
        .env_remove("OPENAI_FORCE_API_MODE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// Waits until `server` got `n` requests (the agent finished what came before and asks
/// for its next step: none of its tools runs).
async fn at_request(server: &MockLlmServer, n: usize) {
    let got = server.wait_for_requests(n, WAIT).await.len();
    assert!(got >= n, "the agent made {got} of {n} requests");
}

/// Ends the run; returns its session id.
async fn finish(mut child: Child) -> String {
    let mut out = String::new();
    let mut err = String::new();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let (a, b, status) = tokio::time::timeout(WAIT, async {
        tokio::join!(
            so.read_to_string(&mut out),
            se.read_to_string(&mut err),
            child.wait()
        )
    })
    .await
    .expect("cairn run finished in time");
    a.unwrap();
    b.unwrap();
    assert_eq!(status.unwrap().code(), Some(0), "stderr: {err}");
    let first = &lines(&out)[0];
    first["data"]["sessionId"].as_str().unwrap().to_string()
}

fn file(i: usize) -> String {
    format!("p{i}-file.txt")
}

fn shell(i: usize) -> String {
    format!("p{i}-sh.txt")
}

async fn restore(sid: &str, state: &Path, force: bool) -> (i32, Value) {
    let mut args = vec![
        "restore",
        "--session",
        sid,
        "--to-turn",
        "0",
        "--state-dir",
        state.to_str().unwrap(),
        "--json",
    ];
    if force {
        args.push("--force");
    }
    let out = cairn(&args, &[]).await;
    let report: Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {} / {}", out.stdout, out.stderr));
    (out.code, report)
}

fn conflict(report: &Value, path: &str) -> Option<String> {
    report["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == path)
        .map(|c| c["reason"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_sessions_claim_and_restore_only_their_own_work() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let gate = tempfile::tempdir().unwrap();
    let (w, s) = (ws.path(), st.path());
    std::fs::write(w.join("user-notes.md"), "the user's notes\n").unwrap();
    // All N sessions run their turns at once: the machine-wide turn limit (default 4) is
    // raised for this state dir, as Settings → Turns at once does.
    std::fs::create_dir_all(s.join("turn-slots")).unwrap();
    std::fs::write(s.join("turn-slots/limit"), N.to_string()).unwrap();

    let mut servers = Vec::new();
    let mut children = Vec::new();
    for i in 1..=N {
        let server = MockLlmServer::start().await.unwrap();
        server.hold_when_empty(true);
        // 1. Every session's file tool at once.
        server.push(Reply::tool_call(
            "w1",
            "write_file",
            json!({"path": file(i), "content": format!("session {i}\n")}),
        ));
        children.push(spawn(&server, w, s, i));
        servers.push(server);
    }
    for server in &servers {
        at_request(server, 2).await;
    }
    // 2. Commands that run alone, one session after the other.
    for i in 1..=EXCLUSIVE {
        let server = &servers[i - 1];
        server.push(Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": format!("printf 'session {i}\\n' > {}", shell(i))}),
        ));
        at_request(server, 3).await;
    }
    // 3. Commands that overlap: each writes only once every one of them runs (all their
    //    windows are open), and ends only once all of them have written.
    let others = N - EXCLUSIVE;
    let started = tempfile::tempdir().unwrap();
    for i in EXCLUSIVE + 1..=N {
        let command = format!(
            "touch {s}/{i} && until [ \"$(ls {s} | wc -l)\" -ge {others} ]; do sleep 0.02; done && \
             printf 'session {i}\\n' > {} && touch {g}/{i} && until [ \"$(ls {g} | wc -l)\" -ge {others} ]; do sleep 0.02; done",
            shell(i),
            s = started.path().display(),
            g = gate.path().display(),
        );
        servers[i - 1].push(Reply::tool_call(
            "c1",
            "run_shell",
            json!({ "command": command }),
        ));
    }
    for server in &servers[EXCLUSIVE..] {
        at_request(server, 3).await;
    }
    // 4. The user edits while every agent waits for its model: no command runs.
    std::fs::write(w.join("user-notes.md"), "edited by the user\n").unwrap();
    std::fs::write(w.join("user-new.md"), "the user's new file\n").unwrap();
    for server in &servers {
        server.push(Reply::text("done"));
    }
    let mut sids = Vec::new();
    for child in children {
        sids.push(finish(child).await);
    }

    // Each turn lists only its own files; never a temp file.
    let sd = s.to_str().unwrap();
    let mut foreign: Vec<Vec<Value>> = Vec::new();
    for (k, sid) in sids.iter().enumerate() {
        let i = k + 1;
        let out = cairn(
            &["turns", "--session", sid, "--state-dir", sd, "--json"],
            &[],
        )
        .await;
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(!out.stdout.contains("cairn-tmp"), "{}", out.stdout);
        let turns = lines(&out.stdout);
        assert_eq!(turns.len(), 1, "{}", out.stdout);
        let mut expected = vec![file(i)];
        if i <= EXCLUSIVE {
            expected.push(shell(i));
        }
        assert_eq!(turns[0]["files"], json!(expected), "session {i}");
        let others = turns[0]["others"].as_array().unwrap();
        foreign.push(others.clone());
        let by = |p: &str| {
            others
                .iter()
                .find(|o| o["path"] == p)
                .map(|o| o["by"].clone())
        };
        assert_eq!(by("user-notes.md"), Some(json!("outside")), "{others:?}");
        assert_eq!(by("user-new.md"), Some(json!("outside")), "{others:?}");
        if i > EXCLUSIVE {
            assert_eq!(by(&shell(i)), Some(json!("uncertain")), "{others:?}");
        }
        let diff = cairn(
            &["diff", "--session", sid, "--turn", "1", "--state-dir", sd],
            &[],
        )
        .await;
        assert!(diff.stdout.contains(&file(i)), "{}", diff.stdout);
        assert!(!diff.stdout.contains("user-notes.md"), "{}", diff.stdout);
        let j = if i == 1 { 2 } else { 1 };
        assert!(!diff.stdout.contains(&file(j)), "{}", diff.stdout);
    }

    // Sessions with overlapping commands restore first, without --force: their own files go,
    // uncertain and everyone else's stay.
    for i in EXCLUSIVE + 1..=N {
        let present: Vec<String> = (1..=N)
            .filter(|j| *j != i)
            .flat_map(|j| [file(j), shell(j)])
            .filter(|p| w.join(p).exists())
            .collect();
        let (code, report) = restore(&sids[i - 1], s, false).await;
        // Every other session's file this turn saw appear is reported, as that session's.
        for o in &foreign[i - 1] {
            let p = o["path"].as_str().unwrap();
            if o["by"] == "session" && w.join(p).exists() {
                assert!(
                    conflict(&report, p).is_some_and(|r| r.contains("session")),
                    "{p}: {report}"
                );
            }
        }
        assert_eq!(code, 1, "conflicts are left: {report}");
        assert!(!w.join(file(i)).exists(), "session {i}: {report}");
        assert!(w.join(shell(i)).exists(), "session {i}: {report}");
        assert!(
            conflict(&report, &shell(i)).is_some_and(|r| r.contains("uncertain")),
            "{report}"
        );
        for p in &present {
            assert!(
                w.join(p).exists(),
                "session {i}'s restore deleted {p}: {report}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(w.join("user-notes.md")).unwrap(),
            "edited by the user\n"
        );
        assert!(w.join("user-new.md").exists());
        for p in ["user-notes.md", "user-new.md"] {
            assert!(
                conflict(&report, p).is_some_and(|r| r.contains("outside the agent's commands")),
                "{p}: {report}"
            );
        }
        assert!(!report.to_string().contains("cairn-tmp"), "{report}");
    }
    // The others restore with --force: it overwrites the user's edits and uncertain paths,
    // never another session's files.
    for i in 1..=EXCLUSIVE {
        let present: Vec<String> = (1..=N)
            .filter(|j| *j != i)
            .flat_map(|j| [file(j), shell(j)])
            .filter(|p| w.join(p).exists())
            .collect();
        let (_, report) = restore(&sids[i - 1], s, true).await;
        assert!(!w.join(file(i)).exists(), "session {i}: {report}");
        assert!(!w.join(shell(i)).exists(), "session {i}: {report}");
        for p in &present {
            assert!(
                w.join(p).exists(),
                "session {i}'s forced restore deleted {p}: {report}"
            );
        }
        for j in EXCLUSIVE + 1..=N {
            assert!(
                !w.join(file(j)).exists(),
                "session {i}'s forced restore brought back session {j}'s removed file: {report}"
            );
        }
    }
}

/// The snapshot a side effect depends on cannot be stored (its in-progress marker cannot be
/// written): the tool does not run, the turn ends with an `error` event and exit 1.
#[tokio::test(flavor = "multi_thread")]
async fn a_checkpoint_that_cannot_be_stored_fails_the_turn_before_the_tool_runs() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let (w, s) = (ws.path(), st.path());
    let server = MockLlmServer::with_script(vec![Reply::text("hello")])
        .await
        .unwrap();
    let child = spawn(&server, w, s, 1);
    let sid = finish(child).await;
    let store = cairn_vcs::store_dir(&s.canonicalize().unwrap(), &w.canonicalize().unwrap());
    std::fs::create_dir_all(
        store
            .join("sessions")
            .join(format!("{sid}.pending"))
            .join("x"),
    )
    .unwrap();

    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "w1",
            "write_file",
            json!({"path": "never.txt", "content": "must not be written\n"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let base = server.base_url();
    let out = cairn(
        &[
            "run",
            "--mode",
            "auto",
            "--model",
            "m",
            "--json",
            "--base-url",
            &base,
            "--workspace",
            w.to_str().unwrap(),
            "--state-dir",
            s.to_str().unwrap(),
            "--session",
            &sid,
            "write it",
        ],
        &[("CAIRN_SANDBOX", "off")],
    )
    .await;
    assert_eq!(
        out.code, 1,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    assert!(
        !w.join("never.txt").exists(),
        "the tool ran without its snapshot"
    );
    let events = lines(&out.stdout);
    let of = |t: &str| events.iter().filter(|e| e["type"] == t).collect::<Vec<_>>();
    let finished = of("tool_finished");
    assert_eq!(finished.len(), 1, "{}", out.stdout);
    assert_eq!(finished[0]["data"]["status"], "error");
    let errors = of("error");
    assert!(
        errors
            .iter()
            .any(|e| e["data"]["error_type"] == "checkpoint"
                && e["data"]["error"].as_str().unwrap().contains("did not run")),
        "{}",
        out.stdout
    );
    let end = of("turn_end");
    assert_eq!(
        end.last().unwrap()["data"]["status"],
        "error",
        "{}",
        out.stdout
    );
}
