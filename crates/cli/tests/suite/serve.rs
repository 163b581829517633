//! `cairn serve` as a process: the one stdout line, the socket's and token's permissions,
//! usage errors (exit 2), and SIGTERM ending runs cleanly (exit 0, socket removed). The
//! routes themselves are tested in `cairn-serve`'s own suite.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cairn_testkit::MockLlmServer;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

fn serve_cmd(dir: &Path, mock: &MockLlmServer, extra: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("serve")
        .arg("--token-file")
        .arg(dir.join("serve.token"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args([
            "--model",
            "m",
            "--base-url",
            &mock.base_url(),
            "--sandbox",
            "off",
        ])
        .args(extra)
        .env("OPENAI_API_KEY", "k")
        .env_remove("OPENAI_FORCE_API_MODE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    c
}

/// Sends one raw HTTP/1.1 request over the socket; returns the connection after writing.
pub(super) async fn send(
    sock: &Path,
    method: &str,
    path: &str,
    token: &str,
    body: &str,
) -> tokio::net::UnixStream {
    let mut c = tokio::net::UnixStream::connect(sock).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    c.write_all(req.as_bytes()).await.unwrap();
    c
}

pub(super) async fn call(sock: &Path, method: &str, path: &str, token: &str, body: &str) -> String {
    let mut c = send(sock, method, path, token, body).await;
    let mut out = String::new();
    c.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn serve_prints_one_line_and_sigterm_ends_runs_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let ws = cairn_testkit::temp_workspace().unwrap();
    let mock = MockLlmServer::start().await.unwrap();
    mock.hold_when_empty(true);
    let sock = dir.path().join("run").join("serve.sock");
    let listen = format!("unix:{}", sock.display());
    let mut child = serve_cmd(dir.path(), &mock, &["--listen", &listen])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the start line in time")
        .unwrap()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["listen"], listen.as_str());
    let token_file = dir.path().join("serve.token");
    assert_eq!(v["tokenFile"], token_file.display().to_string());
    assert_eq!(v["pid"], child.id().unwrap());
    assert!(v["version"].is_string());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sock), 0o600);
    assert_eq!(mode(sock.parent().unwrap()), 0o700);
    assert_eq!(mode(&token_file), 0o600);
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(token.len() >= 32);

    let created = call(
        &sock,
        "POST",
        "/v1/sessions",
        &token,
        &format!("{{\"workspace\": {:?}, \"mode\": \"auto\"}}", ws.path()),
    )
    .await;
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");
    let body = created.split("\r\n\r\n").nth(1).unwrap();
    let body = body.lines().find(|l| l.starts_with('{')).unwrap_or(body);
    let id = serde_json::from_str::<serde_json::Value>(body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A run waits on the model; the server is told to stop.
    let mut run = send(
        &sock,
        "POST",
        &format!("/v1/sessions/{id}/messages"),
        &token,
        "{\"text\": \"go\"}",
    )
    .await;
    mock.wait_for_requests(1, Duration::from_secs(20)).await;
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    let asked = Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let mut streamed = String::new();
    tokio::time::timeout(Duration::from_secs(10), run.read_to_string(&mut streamed))
        .await
        .expect("the stream ended")
        .unwrap();
    for kind in ["event: interrupted", "event: turn_end", "event: run_end"] {
        assert!(streamed.contains(kind), "{kind} missing:\n{streamed}");
    }
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exited within 10 s")
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(asked.elapsed() < Duration::from_secs(10));
    assert!(!sock.exists(), "the socket is removed");
    // Nothing else went to stdout.
    assert_eq!(lines.next_line().await.unwrap(), None);
}

#[tokio::test]
async fn serve_refuses_what_it_cannot_do_safely_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlmServer::start().await.unwrap();
    let cases: [&[&str]; 4] = [
        &["--listen", "0.0.0.0:0"],
        &["--listen", "127.0.0.1:0", "--approve", "allow"],
        &["--listen", "127.0.0.1:0", "--approval-timeout", "0"],
        &[
            "--listen",
            "127.0.0.1:0",
            "--tenants",
            "/nonexistent.json",
            "--state-dir",
            "/tmp/x",
        ],
    ];
    for extra in cases {
        let out = serve_cmd(dir.path(), &mock, extra).output().await.unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
    // A token file others can read.
    let token = dir.path().join("serve.token");
    std::fs::write(&token, "a".repeat(43)).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = serve_cmd(dir.path(), &mock, &["--listen", "127.0.0.1:0"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn reads_over_the_api_leave_the_session_to_cairn_run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = cairn_testkit::temp_workspace().unwrap();
    let mock = MockLlmServer::start().await.unwrap();
    mock.push(cairn_testkit::Reply::text("served answer"));
    let (mut child, _stdout, sock, token) = serve_on_socket(dir.path(), &mock, &[]).await;
    let id = new_session(&sock, &token, ws.path(), "auto").await;
    let streamed = call(
        &sock,
        "POST",
        &format!("/v1/sessions/{id}/messages"),
        &token,
        "{\"text\": \"first\"}",
    )
    .await;
    assert!(streamed.contains("event: run_end"), "{streamed}");
    let closed = call(
        &sock,
        "POST",
        &format!("/v1/sessions/{id}/close"),
        &token,
        "",
    )
    .await;
    assert!(closed.starts_with("HTTP/1.1 200"), "{closed}");
    // Read-only routes read the store: the session stays closed and unlocked.
    for path in [
        format!("/v1/sessions/{id}"),
        format!("/v1/sessions/{id}/messages"),
        format!("/v1/sessions/{id}/turns"),
    ] {
        let r = call(&sock, "GET", &path, &token, "").await;
        assert!(r.starts_with("HTTP/1.1 200"), "{path}: {r}");
    }
    // So `cairn run --session` can use it while the server runs.
    mock.push(cairn_testkit::Reply::text("cli answer"));
    let out = crate::common::run_auto(
        &mock.base_url(),
        ws.path(),
        &dir.path().join("state"),
        "k",
        &["--session", &id, "--json"],
        "second",
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("cli answer"));
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exited within 10 s")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

/// The server's stdout, kept open while it runs.
type Stdout = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

/// `cairn serve` on a socket in `dir` with `env`, once it printed its line; the process, its
/// stdout (kept open), the socket and the token.
async fn serve_on_socket(
    dir: &Path,
    mock: &MockLlmServer,
    env: &[(&str, &Path)],
) -> (tokio::process::Child, Stdout, std::path::PathBuf, String) {
    let sock = dir.join("run").join("serve.sock");
    let listen = format!("unix:{}", sock.display());
    let mut cmd = serve_cmd(dir, mock, &["--listen", &listen]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the start line in time")
        .unwrap()
        .unwrap();
    let token = std::fs::read_to_string(dir.join("serve.token"))
        .unwrap()
        .trim()
        .to_string();
    (child, lines, sock, token)
}

/// Creates a session on `workspace` in `mode`; its id.
async fn new_session(sock: &Path, token: &str, workspace: &Path, mode: &str) -> String {
    let body = format!("{{\"workspace\": {workspace:?}, \"mode\": {mode:?}}}");
    let created = call(sock, "POST", "/v1/sessions", token, &body).await;
    body_of(&created)["id"].as_str().unwrap().to_string()
}

/// The JSON body of a raw HTTP response.
fn body_of(resp: &str) -> serde_json::Value {
    let body = resp.split("\r\n\r\n").nth(1).unwrap_or("");
    let body = body.lines().find(|l| l.starts_with('{')).unwrap_or(body);
    serde_json::from_str(body).unwrap_or(serde_json::Value::Null)
}

/// Waits for the first waiting request at `path` (`key`: `approvals` or `questions`).
async fn first_waiting(sock: &Path, path: &str, key: &str, token: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = body_of(&call(sock, "GET", path, token, "").await);
        if let Some(first) = list[key].as_array().and_then(|a| a.first()) {
            return first.clone();
        }
        assert!(Instant::now() < deadline, "nothing waited at {path}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 42: an MCP server's form during a served turn waits as a question of kind
/// `elicitation` and is answered by its requestId; the answer reaches the server.
#[tokio::test]
async fn a_servers_form_is_a_question_answered_over_the_api() {
    let entry = match crate::common::everything::entry() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = cairn_testkit::temp_workspace().unwrap();
    let mock = MockLlmServer::with_script(vec![
        cairn_testkit::Reply::tool_call(
            "c1",
            "mcp__every__trigger-elicitation-request",
            serde_json::json!({}),
        ),
        cairn_testkit::Reply::text("Thanks."),
    ])
    .await
    .unwrap();
    let mcp = crate::common::everything::config_in(dir.path(), &entry);
    let config = dir.path().join("config");
    let env = [
        ("CAIRN_MCP_CONFIG", mcp.as_path()),
        ("CAIRN_MCP_LAZY", Path::new("off")),
        ("XDG_CONFIG_HOME", config.as_path()),
    ];
    let (mut child, _stdout, sock, token) = serve_on_socket(dir.path(), &mock, &env).await;
    let id = new_session(&sock, &token, ws.path(), "interactive").await;
    let mut run = send(
        &sock,
        "POST",
        &format!("/v1/sessions/{id}/messages"),
        &token,
        "{\"text\": \"fill in the form\"}",
    )
    .await;
    // The tool call is approved, then the server's form waits as a question.
    let approvals = format!("/v1/sessions/{id}/approvals");
    let a = first_waiting(&sock, &approvals, "approvals", &token).await;
    let rid = a["requestId"].as_str().unwrap();
    let r = call(
        &sock,
        "POST",
        &format!("{approvals}/{rid}"),
        &token,
        "{\"decision\": \"once\"}",
    )
    .await;
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let questions = format!("/v1/sessions/{id}/questions");
    let q = first_waiting(&sock, &questions, "questions", &token).await;
    assert_eq!(q["kind"], "elicitation", "{q}");
    assert_eq!(q["server"], "every", "{q}");
    assert!(q["schema"]["properties"]["name"].is_object(), "{q}");
    let rid = q["requestId"].as_str().unwrap();
    let r = call(
        &sock,
        "POST",
        &format!("{questions}/{rid}"),
        &token,
        "{\"action\": \"accept\", \"content\": {\"name\": \"Ada Lovelace\"}}",
    )
    .await;
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let mut streamed = String::new();
    tokio::time::timeout(Duration::from_secs(30), run.read_to_string(&mut streamed))
        .await
        .expect("the run ended")
        .unwrap();
    assert!(
        streamed.contains("event: elicitation_requested"),
        "{streamed}"
    );
    let sent = mock.requests()[1].body["messages"].to_string();
    assert!(sent.contains("Ada Lovelace"), "{sent}");
    assert!(sent.contains("It was a dark and stormy night."), "{sent}");
    let _ = child.kill().await;
}
