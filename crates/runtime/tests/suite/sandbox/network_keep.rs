//! The asking proxy through the runtime's own sandbox (issue 35): a sandboxed command's
//! connection to a host no rule allows asks, naming its tool call; "always" keeps a
//! `Network(host)` rule for the project, so the next session reaches the host without
//! asking, while a session in another project is refused (its command's output says so).
//!
//! The bridge here is a stand-in script (this test binary has no bridge mode; the CLI's
//! suite runs the real one): it runs the command, which talks to the proxy's socket itself.

use std::path::Path;
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineConfig, FixedApprover, Session, ShellPolicy, ToolRegistry};
use cairn_policy::sandbox::{bwrap_works, SandboxMode};
use cairn_protocol::{ApprovalDecision, Event, Message, Mode};
use cairn_runtime::sandbox::{exec_environment_with, SandboxOptions};
use cairn_testkit::child;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Asks the proxy for `http://kept.test:PORT/` through its socket and prints the answer.
const PROBE: &str = r#"import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect('/tmp/.cairn-net/proxy.sock')
s.sendall(('GET http://kept.test:%s/ HTTP/1.1\r\nHost: kept.test\r\n\r\n' % sys.argv[1]).encode())
data = b''
while True:
    c = s.recv(4096)
    if not c:
        break
    data += c
print('probe-ran', data.decode())
"#;

/// Runs the probe in a session in `ws`; its output and the network asks (reqId, tool).
async fn session(
    ws: &Path,
    state: &Path,
    port: u16,
    answer: ApprovalDecision,
) -> (String, Vec<(String, String)>) {
    let opts = SandboxOptions {
        mode: SandboxMode::Required,
        ..Default::default()
    };
    let (exec, _) = exec_environment_with(ws, state, &opts).unwrap();
    let rules = cairn_runtime::permissions::load_rules(ws).unwrap();
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "a",
            "run_shell",
            json!({"command": format!("python3 probe.py {port}")}),
        ),
        FakeReply::text("done"),
    ]);
    let mut cfg = EngineConfig::new(ws.to_path_buf(), state.to_path_buf(), "m");
    cfg.mode = Mode::Auto;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    let s = Session::builder(cfg, Arc::new(llm))
        .tools(reg)
        .approver(Arc::new(FixedApprover(answer)))
        .permission_rules(rules, ShellPolicy::Approve, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("go");
    let mut asks = Vec::new();
    while let Some(ev) = stream.recv().await {
        if let Event::PermissionRequired(p) = ev {
            assert_eq!(p.name, "Network", "only the host asks: {p:?}");
            assert_eq!(p.arguments["host"], "kept.test");
            asks.push((p.req_id, p.arguments["tool"].as_str().unwrap().to_string()));
        }
    }
    let out = s
        .messages()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.content),
            _ => None,
        })
        .collect();
    (out, asks)
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("probe.py"), PROBE).unwrap();
    (dir, root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_this_project_keeps_the_host_for_the_next_session() {
    let name = child::test_name(
        module_path!(),
        "always_for_this_project_keeps_the_host_for_the_next_session",
    );
    if !child::in_child(&name) {
        if !bwrap_works() {
            assert!(
                std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
                "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
            );
            println!("SKIPPED sandbox: bubblewrap cannot run here");
            return;
        }
        // The user's rules file and the test resolver are process-wide: a child runs it.
        let perms = tempfile::tempdir().unwrap();
        let file = perms.path().join("permissions.toml").display().to_string();
        return tokio::task::block_in_place(|| {
            child::rerun_alone(
                &name,
                &[
                    ("CAIRN_PERMISSIONS_FILE", &file),
                    ("CAIRN_TEST_NET_HOSTS", "kept.test=127.0.0.1"),
                ],
            )
        });
    }
    let bridge_dir = tempfile::tempdir().unwrap();
    let bridge = bridge_dir.path().join("bridge");
    std::fs::write(
        &bridge,
        "#!/bin/sh\nwhile [ \"$#\" -gt 0 ] && [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&bridge, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert!(cairn_engine::netproxy::bridge::set_program(bridge));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let _ = c.read(&mut buf).await;
            let _ = c
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nhello-kept",
                )
                .await;
        }
    });
    let (_ws, root) = workspace();
    let state = tempfile::tempdir().unwrap();

    let (out, asks) = session(&root, state.path(), port, ApprovalDecision::AlwaysTool).await;
    assert!(out.contains("probe-ran"), "the command did not run: {out}");
    assert!(out.contains("hello-kept"), "{out}");
    assert_eq!(asks, [("a".to_string(), "run_shell".to_string())]);
    let file = std::env::var("CAIRN_PERMISSIONS_FILE").unwrap();
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(kept.contains("Network(kept.test)"), "{kept}");
    let key = cairn_runtime::permissions::project_key(&root);
    assert!(kept.contains(&key), "limited to the project: {kept}");

    // The next session of the project reaches it without asking, even under deny.
    let (out, asks) = session(&root, state.path(), port, ApprovalDecision::Deny).await;
    assert!(out.contains("hello-kept"), "{out}");
    assert!(asks.is_empty(), "{asks:?}");

    // Another project asks, and --approve deny refuses: said in the command's output.
    let (_other, other) = workspace();
    let (out, asks) = session(&other, state.path(), port, ApprovalDecision::Deny).await;
    assert!(out.contains("probe-ran"), "{out}");
    assert!(!out.contains("hello-kept"), "{out}");
    assert!(
        out.contains("Cairn's sandbox refused this connection"),
        "{out}"
    );
    assert!(
        out.contains("[sandbox network: refused kept.test:"),
        "{out}"
    );
    assert_eq!(asks.len(), 1);
}
