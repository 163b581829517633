//! `cairn turns`, `cairn diff` and `cairn restore` end to end: a shell-made turn driven by the
//! mock LLM server, listed, diffed, restored, redone; the user's `.git` untouched throughout.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::git::git;
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

mod attribution;

const KEY: &str = "sk-test-checkpoints-0123456789";

mod interrupted_edits;

/// Every path, mode and byte under a folder.
fn digest(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.is_dir() {
            stack.extend(std::fs::read_dir(&d).unwrap().flatten().map(|e| e.path()));
        }
        files.push(d);
    }
    files.sort();
    let mut acc = Vec::new();
    for f in files {
        acc.extend_from_slice(f.as_os_str().as_bytes());
        if f.is_file() {
            acc.extend_from_slice(&std::fs::read(&f).unwrap());
        }
        acc.push(0);
    }
    format!(
        "{:x}",
        acc.iter()
            .fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(*b))
                .wrapping_mul(0x100000001b3))
    )
}

fn tree(ws: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for rel in ["a.txt", "b.txt", "out/new.txt", "notes.log"] {
        if let Ok(s) = std::fs::read_to_string(ws.join(rel)) {
            out.insert(rel.to_string(), s);
        }
    }
    out
}

pub(super) struct Out {
    pub(super) code: i32,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

impl Out {
    /// The JSON events of a `--json` run's stdout.
    pub(super) fn events(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// The arguments of `cairn run -w WS --state-dir STATE --base-url BASE --model m --mode MODE
/// --json EXTRA… PROMPT`.
pub(super) fn run_json_args(
    ws: &std::path::Path,
    state: &std::path::Path,
    base: &str,
    mode: &str,
    extra: &[&str],
    prompt: &str,
) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "-w",
        &ws.display().to_string(),
        "--state-dir",
        &state.display().to_string(),
        "--base-url",
        base,
        "--model",
        "m",
        "--mode",
        mode,
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(prompt.to_string());
    args
}

pub(super) async fn cairn(args: &[&str], envs: &[(&str, &str)]) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(args)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("CAIRN_MODEL")
        .env_remove("CAIRN_STATE_DIR")
        .env("OPENAI_API_KEY", KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(60), c.output())
        .await
        .expect("cairn finished in time")
        .expect("cairn ran");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// Runs one `cairn run --json` turn against a scripted server; returns the session id.
async fn run_turn(
    ws: &Path,
    state: &Path,
    script: Vec<Reply>,
    prompt: &str,
    extra: &[&str],
) -> String {
    let server = MockLlmServer::with_script(script).await.unwrap();
    let base = server.base_url();
    let mut args = vec![
        "run",
        "--workspace",
        ws.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--mode",
        "auto",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    let out = cairn(&args, &[]).await;
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    let first: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "turn_start");
    first["data"]["sessionId"].as_str().unwrap().to_string()
}

pub(super) fn lines(s: &str) -> Vec<Value> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_turn_listed_diffed_restored_and_redone() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let (w, s) = (ws.path(), st.path());
    git(w, &["init", "-q"]);
    std::fs::write(w.join("a.txt"), "original\n").unwrap();
    std::fs::write(w.join("b.txt"), "to be removed\n").unwrap();
    std::fs::write(w.join(".gitignore"), "*.log\n").unwrap();
    git(w, &["add", "-A"]);
    git(w, &["commit", "-q", "-m", "init"]);
    git(w, &["tag", "v0"]);
    let dot_git = digest(&w.join(".git"));
    let start = tree(w);

    let sid = run_turn(
        w,
        s,
        vec![
            Reply::tool_call(
                "c1",
                "run_shell",
                json!({"command": "printf 'changed\\n' > a.txt && rm b.txt && mkdir -p out && printf 'new\\n' > out/new.txt"}),
            ),
            Reply::text("done"),
        ],
        "edit through the shell",
        &[],
    )
    .await;
    let after_turn = tree(w);
    assert_eq!(after_turn["a.txt"], "changed\n");

    // A turn without changes takes no number.
    let sid2 = run_turn(
        w,
        s,
        vec![Reply::text("just talking")],
        "a question",
        &["--session", &sid],
    )
    .await;
    assert_eq!(sid2, sid);

    let sd = s.to_str().unwrap();
    let turns = cairn(
        &["turns", "--session", &sid, "--state-dir", sd, "--json"],
        &[],
    )
    .await;
    assert_eq!(turns.code, 0, "{}", turns.stderr);
    let t = lines(&turns.stdout);
    assert_eq!(t.len(), 1, "{}", turns.stdout);
    assert_eq!(t[0]["turn"], 1);
    assert_eq!(t[0]["sessionTurn"], 1);
    assert_eq!(t[0]["files"], json!(["a.txt", "b.txt", "out/new.txt"]));
    assert_eq!(t[0]["summary"], "edit through the shell");
    assert!(t[0]["at"].as_str().is_some_and(|a| a.contains('T')));

    let diff = cairn(
        &["diff", "--session", &sid, "--turn", "1", "--state-dir", sd],
        &[],
    )
    .await;
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    assert!(
        diff.stdout.contains("-original\n+changed\n"),
        "{}",
        diff.stdout
    );
    assert!(diff.stdout.contains("+++ b/out/new.txt"), "{}", diff.stdout);

    // A file the user makes after the turn, ignored by .gitignore: never touched.
    std::fs::write(w.join("notes.log"), "mine\n").unwrap();
    let dry = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "0",
            "--dry-run",
            "--json",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    let d: Value = serde_json::from_str(dry.stdout.trim()).unwrap();
    assert_eq!(d["restored"], json!(["a.txt", "b.txt"]));
    assert_eq!(d["overwritten"], json!(["a.txt"]));
    assert_eq!(d["deleted"], json!(["out/new.txt"]));
    assert_eq!(d["missing"], json!([]));
    assert_eq!(d["dryRun"], true);
    assert_eq!(tree(w)["a.txt"], "changed\n", "dry run changes nothing");

    let undo = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "0",
            "--json",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(undo.code, 0, "{}", undo.stderr);
    let u: Value = serde_json::from_str(undo.stdout.trim()).unwrap();
    assert_eq!(u["turn"], 2);
    let mut expected = start.clone();
    expected.insert("notes.log".into(), "mine\n".into());
    assert_eq!(tree(w), expected);
    assert!(!w.join("out").exists(), "the folder the agent made is gone");

    // Redo: the restore is change-turn 2; restoring to turn 1 brings the agent's work back.
    let redo = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "1",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(redo.code, 0, "{}", redo.stderr);
    assert!(redo.stdout.contains("overwrote  a.txt"), "{}", redo.stdout);
    let mut expected = after_turn.clone();
    expected.insert("notes.log".into(), "mine\n".into());
    assert_eq!(tree(w), expected);
    let turns = cairn(
        &["turns", "--session", &sid, "--state-dir", sd, "--json"],
        &[],
    )
    .await;
    let kinds: Vec<_> = lines(&turns.stdout)
        .iter()
        .map(|t| t["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        vec![json!("agent"), json!("restore"), json!("restore")]
    );

    // A user edit after the last snapshot is reported and kept; the dry run says so with the
    // same exit status.
    std::fs::write(w.join("a.txt"), "the user's edit\n").unwrap();
    let plan = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "0",
            "--dry-run",
            "--json",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(plan.code, 1, "{}", plan.stderr);
    assert!(
        plan.stderr.contains("would be left alone"),
        "{}",
        plan.stderr
    );
    let kept = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "0",
            "--json",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(
        kept.code, 1,
        "a partial restore is not a success: {}",
        kept.stderr
    );
    assert!(kept.stderr.contains("left alone"), "{}", kept.stderr);
    let k: Value = serde_json::from_str(kept.stdout.trim()).unwrap();
    assert_eq!(k["conflicts"][0]["path"], "a.txt");
    assert_eq!(
        std::fs::read_to_string(w.join("a.txt")).unwrap(),
        "the user's edit\n"
    );

    assert_eq!(
        digest(&w.join(".git")),
        dot_git,
        "the user's .git is byte-for-byte unchanged"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn vcs_off_records_nothing_and_bad_requests_exit_2() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let (w, s) = (ws.path(), st.path());
    let sid = run_turn(
        w,
        s,
        vec![
            Reply::tool_call(
                "c1",
                "write_file",
                json!({"path": "x.txt", "content": "x\n"}),
            ),
            Reply::text("ok"),
        ],
        "write x",
        &["--vcs", "off"],
    )
    .await;
    let sd = s.to_str().unwrap();
    let turns = cairn(
        &["turns", "--session", &sid, "--state-dir", sd, "--json"],
        &[],
    )
    .await;
    assert_eq!(turns.code, 0, "{}", turns.stderr);
    assert!(turns.stdout.trim().is_empty(), "{}", turns.stdout);
    let r = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "0",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no checkpoints"), "{}", r.stderr);
    assert!(w.join("x.txt").exists());

    let sid = run_turn(
        w,
        s,
        vec![
            Reply::tool_call(
                "c1",
                "write_file",
                json!({"path": "y.txt", "content": "y\n"}),
            ),
            Reply::text("ok"),
        ],
        "write y",
        &[],
    )
    .await;
    let d = cairn(
        &["diff", "--session", &sid, "--turn", "9", "--state-dir", sd],
        &[],
    )
    .await;
    assert_eq!(d.code, 2);
    assert!(d.stderr.contains("no change-turn 9"), "{}", d.stderr);
    let u = cairn(
        &["turns", "--session", "no-such-session", "--state-dir", sd],
        &[],
    )
    .await;
    assert_eq!(u.code, 2);
    let bad = cairn(&["run", "--vcs", "sometimes", "x"], &[]).await;
    assert_eq!(bad.code, 2);
    let usage = cairn(
        &[
            "checkpoints",
            "usage",
            "--workspace",
            w.to_str().unwrap(),
            "--state-dir",
            sd,
            "--json",
        ],
        &[],
    )
    .await;
    assert_eq!(usage.code, 0, "{}", usage.stderr);
    let u: Value = serde_json::from_str(usage.stdout.trim()).unwrap();
    assert_eq!(u["sessions"], 1);
    assert!(u["bytes"].as_u64().unwrap() > 0);
    assert_eq!(u["overBudget"], false);
    // A folder that never had a checkpoint: nothing to measure, and nothing is created.
    let fresh = tempfile::tempdir().unwrap();
    let fresh_state = tempfile::tempdir().unwrap();
    let none = cairn(
        &[
            "checkpoints",
            "usage",
            "--workspace",
            fresh.path().to_str().unwrap(),
            "--state-dir",
            fresh_state.path().to_str().unwrap(),
            "--json",
        ],
        &[],
    )
    .await;
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert_eq!(none.stdout.trim(), r#"{"store":null}"#);
    assert_eq!(std::fs::read_dir(fresh_state.path()).unwrap().count(), 0);
    let gc = cairn(
        &[
            "checkpoints",
            "gc",
            "--workspace",
            w.to_str().unwrap(),
            "--state-dir",
            sd,
            "--json",
        ],
        &[],
    )
    .await;
    assert_eq!(gc.code, 0, "{}", gc.stderr);
    let g: Value = serde_json::from_str(gc.stdout.trim()).unwrap();
    assert_eq!(g["droppedSessions"], json!([]));
    let rec = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--recover",
            "finish",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(rec.code, 2);
    assert!(
        rec.stderr.contains("no interrupted restore"),
        "{}",
        rec.stderr
    );
}

/// Both copies of a session's checkpoint damaged: the session is rebuilt from its event log
/// (listed, continued with its history, but `interactive` with no grants), and its
/// change-turns stay listable, diffable and restorable.
#[tokio::test]
async fn a_session_whose_checkpoint_is_unreadable_is_rebuilt_from_its_event_log() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.join("a.txt"), "before\n").unwrap();
    let id = run_turn(
        ws,
        state.path(),
        vec![
            Reply::tool_call(
                "c1",
                "write_file",
                json!({"path": "a.txt", "content": "after\n"}),
            ),
            Reply::text("done"),
        ],
        "change a",
        &[],
    )
    .await;
    let dir = state.path().join("sessions").join(&id);
    std::fs::write(dir.join("state.json"), "{\"sessionId\": trunc").unwrap();
    std::fs::write(dir.join("state.json.bak"), "garbage").unwrap();
    let st = state.path().to_str().unwrap();

    // Still listed.
    let listed = cairn(&["sessions", "--state-dir", st, "--json"], &[]).await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let rows = lines(&listed.stdout);
    assert_eq!(rows.len(), 1, "{}", listed.stdout);
    assert_eq!(rows[0]["id"], id.as_str());
    assert_eq!(rows[0]["turns"], 1);

    // Continued: the history reaches the model; the mode is not the saved `auto`.
    let server = MockLlmServer::with_script(vec![Reply::text("going on")])
        .await
        .unwrap();
    let base = server.base_url();
    let run = cairn(
        &[
            "run",
            "--state-dir",
            st,
            "--session",
            &id,
            "--base-url",
            &base,
            "--json",
            "go on",
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("rebuilt from its event log") && run.stderr.contains("`interactive`"),
        "{}",
        run.stderr
    );
    let history = server.requests()[0].body["messages"].to_string();
    for seen in ["change a", "write_file", "a.txt", "done", "go on"] {
        assert!(history.contains(seen), "{seen} missing: {history}");
    }
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(saved["permissions"]["mode"], "interactive", "{saved}");
    assert_eq!(saved["permissions"]["allow_commands"], json!([]), "{saved}");
    assert_eq!(saved["turns"], 2);
    assert_eq!(
        saved["workspace"],
        ws.canonicalize().unwrap().to_str().unwrap()
    );
    // The damaged copies are kept.
    assert_eq!(
        std::fs::read_to_string(dir.join("state.json.bak.corrupt")).unwrap(),
        "garbage"
    );
    // Noted once: the next run opens the rebuilt checkpoint as any other.
    server.push(Reply::text("again"));
    let again = cairn(
        &[
            "run",
            "--state-dir",
            st,
            "--session",
            &id,
            "--base-url",
            &base,
            "--json",
            "more",
        ],
        &[],
    )
    .await;
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(!again.stderr.contains("rebuilt"), "{}", again.stderr);

    let turns = cairn(&["turns", "--state-dir", st, "--session", &id], &[]).await;
    assert_eq!(turns.code, 0, "{}", turns.stderr);
    assert!(turns.stdout.contains("a.txt"), "{}", turns.stdout);
    let diff = cairn(
        &["diff", "--state-dir", st, "--session", &id, "--turn", "1"],
        &[],
    )
    .await;
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    assert!(diff.stdout.contains("+after"), "{}", diff.stdout);
    let restore = cairn(
        &[
            "restore",
            "--state-dir",
            st,
            "--session",
            &id,
            "--to-turn",
            "0",
        ],
        &[],
    )
    .await;
    assert_eq!(restore.code, 0, "{}", restore.stderr);
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "before\n"
    );
}

/// Makes a folder immutable (`chattr +i`, as root) until dropped.
struct Immutable(PathBuf);

impl Immutable {
    /// `None` (reason printed) where the file system or user cannot; on CI a failure.
    fn set(dir: &Path) -> Option<Immutable> {
        let out = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .output();
        let why = match out {
            Ok(o) if o.status.success() => return Some(Immutable(dir.to_path_buf())),
            Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
            Err(e) => e.to_string(),
        };
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "chattr +i does not work on CI: {why}"
        );
        eprintln!("skipped: chattr +i does not work here ({why})");
        None
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// A restore that cannot write one of its files stops half-way, and its first error already
/// says how to finish or roll it back.
#[tokio::test]
async fn the_first_error_of_a_restore_that_stops_half_way_names_recover() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("a.txt"), "a before\n").unwrap();
    std::fs::write(ws.join("sub/b.txt"), "b before\n").unwrap();
    let id = run_turn(
        ws,
        state.path(),
        vec![
            Reply::tool_call(
                "c1",
                "write_file",
                json!({"path": "a.txt", "content": "a after\n"}),
            )
            .with_tool_call(
                "c2",
                "write_file",
                json!({"path": "sub/b.txt", "content": "b after\n"}),
            ),
            Reply::text("done"),
        ],
        "change both",
        &[],
    )
    .await;
    let st = state.path().to_str().unwrap();
    let restore = |extra: &'static [&'static str]| {
        let mut args = vec!["restore", "--state-dir", st, "--session", id.as_str()];
        args.extend_from_slice(extra);
        args
    };
    {
        let Some(_frozen) = Immutable::set(&ws.join("sub")) else {
            return;
        };
        let first = cairn(&restore(&["--to-turn", "0"]), &[]).await;
        assert_eq!(first.code, 1, "{}", first.stderr);
        assert!(
            first.stderr.contains(&format!(
                "cairn restore --session {id} --recover finish|rollback"
            )),
            "{}",
            first.stderr
        );
        // Half-restored: a.txt is back, sub/b.txt could not be.
        assert_eq!(
            std::fs::read_to_string(ws.join("a.txt")).unwrap(),
            "a before\n"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("sub/b.txt")).unwrap(),
            "b after\n"
        );
    }
    let finish = cairn(&restore(&["--recover", "finish"]), &[]).await;
    assert_eq!(finish.code, 0, "{}", finish.stderr);
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/b.txt")).unwrap(),
        "b before\n"
    );
}
