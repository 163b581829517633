//! `cairn acp` as a process: JSON-RPC lines on stdin/stdout, SIGINT interrupts without
//! exiting, the end of stdin ends it cleanly, no key is an `auth_required` pointing to
//! `cairn auth set`.

use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Lines<BufReader<ChildStdout>>,
    next: u64,
}

impl Agent {
    /// `cairn acp` against `mock` (`None`: the provider's own endpoint, which needs a key).
    fn start(state: &std::path::Path, mock: Option<&MockLlmServer>, key: bool) -> Agent {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.arg("acp")
            .arg("--state-dir")
            .arg(state)
            .args(["--model", "m"]);
        if let Some(mock) = mock {
            c.args(["--base-url", &mock.base_url()]);
        }
        c.args(["--sandbox", "off"])
            .env("CAIRN_KEYSTORE", "memory")
            .env_remove("OPENAI_API_KEY")
            .env_remove("CAIRN_LOG")
            .env_remove("OPENAI_FORCE_API_MODE")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("CAIRN_PROVIDER")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if key {
            c.env("OPENAI_API_KEY", "k");
        }
        let mut child = c.spawn().unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap()).lines();
        Agent {
            child,
            stdin,
            out,
            next: 1,
        }
    }

    async fn send(&mut self, v: Value) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(format!("{v}\n").as_bytes()).await.unwrap();
        s.flush().await.unwrap();
    }

    /// Sends request `method` and returns its response (notifications before it are skipped).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(20), self.out.next_line())
                .await
                .expect("a line")
                .unwrap()
                .expect("the agent is still there");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }

    async fn session(&mut self, ws: &std::path::Path) -> Value {
        self.request("initialize", json!({"protocolVersion": 1}))
            .await;
        self.request("session/new", json!({"cwd": ws, "mcpServers": []}))
            .await
    }
}

#[tokio::test]
async fn sigint_interrupts_the_turn_but_never_exits_and_stdin_end_exits_cleanly() {
    let mock = MockLlmServer::start().await.unwrap();
    let ws = cairn_testkit::temp_workspace().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut a = Agent::start(state.path(), Some(&mock), true);
    let s = a.session(ws.path()).await;
    let sid = s["result"]["sessionId"].as_str().unwrap().to_string();
    a.request(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "auto"}),
    )
    .await;
    mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": "sleep 60"}),
    ));
    let id = a.next;
    a.next += 1;
    a.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "wait"}]}}),
    )
    .await;
    // A terminal client sends SIGINT to the agent's process group while a command runs.
    let mut asked = false;
    let response = loop {
        let line = tokio::time::timeout(Duration::from_secs(20), a.out.next_line())
            .await
            .expect("a line")
            .unwrap()
            .expect("the agent is still there");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["method"] == "session/request_permission" {
            let rid = v["id"].clone();
            a.send(json!({"jsonrpc": "2.0", "id": rid,
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}))
                .await;
        }
        let update = &v["params"]["update"];
        if !asked
            && update["sessionUpdate"] == "tool_call_update"
            && update["status"] == "in_progress"
        {
            asked = true;
            let pid = nix::unistd::Pid::from_raw(a.child.id().unwrap() as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        }
        if v["id"] == id && v.get("method").is_none() {
            break v;
        }
    };
    assert!(asked, "the command ran");
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    // Still serving after SIGINT.
    mock.push(Reply::text("still here"));
    let r = a
        .request(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    // The end of stdin ends the process with status 0, the session saved.
    drop(a.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(10), a.child.wait())
        .await
        .expect("exits")
        .unwrap();
    assert!(status.success(), "{status}");
    let saved = cairn_runtime::SessionStore::new(state.path())
        .load(&sid)
        .unwrap();
    assert_eq!(saved.turns, 2);
}

#[tokio::test]
async fn without_a_key_session_new_is_auth_required_pointing_to_cairn_auth_set() {
    let ws = cairn_testkit::temp_workspace().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut a = Agent::start(state.path(), None, false);
    let r = a.session(ws.path()).await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cairn auth set"),
        "{r}"
    );
    let r = a
        .request("authenticate", json!({"methodId": "cairn-auth-set"}))
        .await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
}

#[tokio::test]
async fn stdin_end_then_sigterm_at_once_ends_cleanly_with_the_session_saved() {
    let mock = MockLlmServer::start().await.unwrap();
    let ws = cairn_testkit::temp_workspace().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut a = Agent::start(state.path(), Some(&mock), true);
    let s = a.session(ws.path()).await;
    let sid = s["result"]["sessionId"].as_str().unwrap().to_string();
    mock.push(Reply::text("one"));
    let r = a
        .request(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    a.request(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "plan"}),
    )
    .await;
    // As terminal clients close: stdin ends, SIGTERM follows right away.
    drop(a.stdin.take());
    let pid = nix::unistd::Pid::from_raw(a.child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), a.child.wait())
        .await
        .expect("exits")
        .unwrap();
    assert!(status.success(), "{status}");
    let saved = cairn_runtime::SessionStore::new(state.path())
        .load(&sid)
        .unwrap();
    assert_eq!(saved.turns, 1);
    assert_eq!(saved.permissions.mode, cairn_protocol::Mode::Plan);
}
