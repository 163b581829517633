//! `--sandbox-network proxy` (the default) with real bubblewrap and the real bridge (`cairn
//! __net-bridge`): a command reaches an allowed host through the proxy (host names mapped
//! to 127.0.0.1 by the development build's test resolver, which never resolves a real
//! name and logs every name asked); an unlisted host asks, naming its tool call, is refused
//! under `--approve deny` with a clear message in the output, and is never resolved;
//! 127.0.0.1 of another server and 169.254.169.254 are refused unless `--allow-domain`
//! names them; a tool that resolves names itself gets the sandbox hint.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::super::{cairn, sandbox_or_skip, world, World};

/// A server answering every request with `body`; counts the requests.
async fn server(body: &'static str) -> (u16, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = l.accept().await {
            h.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = c.read(&mut buf).await;
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = c.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, hits)
}

/// Runs `command` as one `run_shell` call (`a`) in auto mode under `--approve deny`, with the
/// test resolver; the JSON events and the tool's whole result as the model got it.
async fn run(
    w: &World,
    command: &str,
    extra: &[&str],
    log: &std::path::Path,
) -> (Vec<Value>, String) {
    let calls = vec![Reply::tool_call(
        "a",
        "run_shell",
        json!({ "command": command }),
    )];
    run_calls(w, calls, extra, log).await
}

/// [`run`] with these tool calls.
async fn run_calls(
    w: &World,
    mut calls: Vec<Reply>,
    extra: &[&str],
    log: &std::path::Path,
) -> (Vec<Value>, String) {
    calls.push(Reply::text("done"));
    let llm = MockLlmServer::with_script(calls).await.unwrap();
    let out = cairn("auto")
        .args(["run", "--json", "--model", "m", "--mode", "auto"])
        .args(["--sandbox", "required", "--approve", "deny"])
        .args(extra)
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("--base-url")
        .arg(llm.base_url())
        .arg("go")
        .env(
            "CAIRN_TEST_NET_HOSTS",
            "allowed.test=127.0.0.1,unlisted.test=127.0.0.1",
        )
        .env("CAIRN_TEST_NET_LOG", log)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    // The second request to the model carries the tool's result.
    let requests = llm.requests();
    let result = requests
        .last()
        .map(|r| r.body.to_string())
        .unwrap_or_default()
        .replace("\\n", "\n");
    (events, result)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proxy_lets_allowed_hosts_through_asks_for_the_rest_and_refuses_local_addresses() {
    if !sandbox_or_skip() {
        return;
    }
    let w = world();
    let (port, hits) = server("hello-from-allowed").await;
    let (other, other_hits) = server("hello-from-loopback").await;
    let log = w.state.join("resolved.log");
    let curl = |url: &str, file: &str| {
        format!("curl -s --max-time 20 {url} > {file}; echo \"{file} $?\" >> codes.txt; ")
    };
    let command = format!(
        "{}{}{}{}curl -s --max-time 20 https://unlisted.test:{port}/ > tls.txt; \
         env | grep -i _proxy= | sort > env.txt; echo ran",
        curl(&format!("http://allowed.test:{port}/x"), "allowed.txt"),
        curl(&format!("http://unlisted.test:{port}/"), "unlisted.txt"),
        curl(&format!("http://127.0.0.1:{other}/"), "loopback.txt"),
        curl("http://169.254.169.254/latest/meta-data/", "metadata.txt"),
    );
    let (events, out) = run(&w, &command, &["--allow-domain", "allowed.test"], &log).await;
    let read = |f: &str| std::fs::read_to_string(w.ws.join(f)).unwrap_or_default();
    assert!(out.contains("ran"), "the command did not run: {out}");
    assert_eq!(read("allowed.txt"), "hello-from-allowed", "{out}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "only the allowed request arrived"
    );
    assert!(
        read("unlisted.txt").contains("Cairn's sandbox refused this connection"),
        "{}",
        read("unlisted.txt")
    );
    for f in ["loopback.txt", "metadata.txt"] {
        assert!(
            read(f).contains("refused unless a rule names the address"),
            "{f}: {}",
            read(f)
        );
    }
    assert_eq!(other_hits.load(Ordering::SeqCst), 0);
    let env = read("env.txt");
    for k in ["HTTP_PROXY", "https_proxy", "ALL_PROXY"] {
        assert!(env.contains(&format!("{k}=")), "{k} missing: {env}");
    }
    // The unlisted host asked (twice: plain and CONNECT), naming its tool call, each ask
    // with a request id of its own; refused under --approve deny, and said in the output.
    let asks: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "permission_required" && e["data"]["name"] == "Network")
        .collect();
    assert_eq!(asks.len(), 2, "{events:?}");
    for a in &asks {
        assert_eq!(a["data"]["reqId"], "a");
        assert_eq!(a["data"]["arguments"]["host"], "unlisted.test");
        assert_eq!(a["data"]["arguments"]["tool"], "run_shell");
        assert!(a["data"]["requestId"].as_str().unwrap().starts_with("rq_"));
    }
    assert_ne!(asks[0]["data"]["requestId"], asks[1]["data"]["requestId"]);
    assert!(
        out.contains(&format!(
            "[sandbox network: refused unlisted.test:{port} was not allowed"
        )),
        "{out}"
    );
    assert!(out.contains("169.254.169.254:80"), "{out}");
    // Names were resolved only once allowed: never the unlisted one.
    let resolved = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(resolved.lines().any(|l| l == "allowed.test"), "{resolved}");
    assert!(!resolved.contains("unlisted.test"), "{resolved}");

    // A rule naming the address lets the loopback server through.
    let again = curl(&format!("http://127.0.0.1:{other}/"), "loopback2.txt");
    run(&w, &again, &["--allow-domain", "127.0.0.1"], &log).await;
    assert_eq!(read("loopback2.txt"), "hello-from-loopback");
    assert_eq!(other_hits.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_that_resolves_names_itself_gets_the_sandbox_hint() {
    if !sandbox_or_skip() {
        return;
    }
    let w = world();
    let log = w.state.join("resolved.log");
    let (_, out) = run(
        &w,
        "curl -sS --noproxy '*' --max-time 10 http://allowed.test/ ; echo code=$?; exit 6",
        &[],
        &log,
    )
    .await;
    assert!(out.contains("Could not resolve host"), "{out}");
    assert!(out.contains("code=6"), "curl did not try: {out}");
    assert!(out.contains("names are not resolved"), "{out}");
    assert!(std::fs::read_to_string(&log).unwrap_or_default().is_empty());
}

/// The bridge sits between bubblewrap and a PTY command: the command keeps its terminal
/// and the proxy variables, a refused connection is said in its output, and Ctrl-C through
/// `input_command` still interrupts it.
#[tokio::test(flavor = "multi_thread")]
async fn a_pty_command_behind_the_bridge_keeps_its_terminal_and_ctrl_c() {
    if !sandbox_or_skip() {
        return;
    }
    let w = world();
    let log = w.state.join("resolved.log");
    let program = "trap 'echo got-ctrl-c; exit 7' INT; \
                   curl -s --max-time 10 http://unlisted.test/ > /dev/null; \
                   echo armed $HTTPS_PROXY; \
                   test -r /dev/tty && echo has-tty; while :; do sleep 0.1; done";
    let calls = vec![
        Reply::tool_call(
            "a",
            "exec_command",
            json!({"command": program, "yield_ms": 1500}),
        ),
        Reply::tool_call(
            "b",
            "input_command",
            json!({"session_id": "cmd-1", "input": "\u{3}", "yield_ms": 10000}),
        ),
    ];
    let (_, out) = run_calls(&w, calls, &[], &log).await;
    assert!(out.contains("armed http://127.0.0.1:3128"), "{out}");
    assert!(out.contains("has-tty"), "{out}");
    // The refusal of its connection is in the session's output.
    assert!(
        out.contains("[sandbox network: refused unlisted.test:80 was not allowed"),
        "{out}"
    );
    assert!(
        out.contains("(SIGINT)") || out.contains("exit code: 7") || out.contains("got-ctrl-c"),
        "Ctrl-C did not interrupt it: {out}"
    );
}

/// A deny rule wins over `--allow-domain`, and the name is never resolved.
#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_wins_before_anything_is_resolved() {
    if !sandbox_or_skip() {
        return;
    }
    let w = world();
    let log = w.state.join("resolved.log");
    let rules = w.state.join("permissions.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nrule = \"Network(*.test)\"\ndecision = \"deny\"\n",
    )
    .unwrap();
    let llm = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "a",
            "run_shell",
            json!({"command": "curl -s --max-time 10 http://allowed.test/ > denied.txt; echo ran"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = cairn("auto")
        .args(["run", "--json", "--model", "m", "--mode", "auto"])
        .args(["--sandbox", "required", "--approve", "allow"])
        .args(["--allow-domain", "allowed.test"])
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("--base-url")
        .arg(llm.base_url())
        .arg("go")
        .env("CAIRN_PERMISSIONS_FILE", &rules)
        .env("CAIRN_TEST_NET_HOSTS", "allowed.test=127.0.0.1")
        .env("CAIRN_TEST_NET_LOG", &log)
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let denied = std::fs::read_to_string(w.ws.join("denied.txt")).unwrap();
    assert!(
        denied.contains("allowed.test is denied by the rule `Network(*.test)`"),
        "{denied}"
    );
    assert!(std::fs::read_to_string(&log).unwrap_or_default().is_empty());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("permission_required"),
        "a deny rule never asks: {stdout}"
    );
}
