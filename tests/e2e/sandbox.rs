//! E2E: the sandbox in the app. "Run sandboxed commands without asking" in Settings is
//! `--shell-policy sandbox`: before it, a command that writes asks; once it is on, the same
//! kind of command runs unasked inside the sandbox in the open chat, and the switch is kept
//! in the user's `sandbox.toml` (the one settings file the CLI reads too). A sandboxed
//! command's network ask is answered in the chat, through the app's own proxy bridge.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_switch_lets_sandboxed_commands_run_unasked() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "call_s1",
                "run_shell",
                json!({"command": "touch first.txt"}),
            ),
            Reply::text("Asked first."),
            Reply::tool_call(
                "call_s2",
                "run_shell",
                json!({"command": "touch second.txt"}),
            ),
            Reply::text("Ran unasked."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("switch");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let file = state.path().join("config/cairn/sandbox.toml");
    let w = ws.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        // Before: a command that writes waits for an answer (denied here).
        send(&c, "make the first file").await;
        let shell = card("run_shell", "awaiting");
        click(&c, &format!("{shell} [data-testid=approve-deny]")).await;
        wait_turns(&c, "completed", 1).await;
        assert!(!w.join("first.txt").exists());
        find(&c, "[data-testid=sandbox-pill][data-state=on]").await;

        // The switch, off by default, turned on and saved.
        click(&c, "[data-testid=open-settings]").await;
        let switch = find(&c, "[data-testid=sandboxed-unasked]").await;
        assert!(!switch.is_selected().await.unwrap(), "off by default");
        switch.click().await.unwrap();
        click(&c, "[data-testid=settings-save]").await;
        find(&c, "[data-testid=settings] .saved").await;
        let kept = std::fs::read_to_string(&file).unwrap();
        assert!(kept.contains("shellPolicy = \"sandbox\""), "{kept}");
        click(&c, "[data-testid=overlay-close]").await;

        // After: the same kind of command runs unasked, inside the sandbox.
        send(&c, "make the second file").await;
        wait_turns(&c, "completed", 2).await;
        assert!(w.join("second.txt").exists());
        assert_eq!(count(&c, "[data-testid=approval]").await, 0);
    })
    .await;
}

/// A one-page HTTP server on 127.0.0.1 (the test resolver maps `unlisted.test` to it);
/// returns its port.
fn page_server(body: &'static str) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(reply.as_bytes());
        }
    });
    port
}

/// The network ask of a sandboxed command reaches the chat as the command's approval,
/// naming the host: denied, the command's output says Cairn refused the connection;
/// allowed once, the page arrives (through the app's own proxy bridge inside the sandbox).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_commands_network_ask_is_answered_in_the_chat() {
    let port = page_server("hello-through-the-proxy");
    let fetch = |file: &str| json!({"command": format!("curl -s --max-time 20 http://unlisted.test:{port}/ > {file}; echo ran")});
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call("call_n1", "run_shell", fetch("denied.txt")),
            Reply::text("Refused."),
            Reply::tool_call("call_n2", "run_shell", fetch("allowed.txt")),
            Reply::text("Fetched."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("netask");
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_NET_HOSTS",
        Some("unlisted.test=127.0.0.1"),
    );
    let w = ws.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        for (prompt, answer, turns) in [
            ("fetch it", "approve-deny", 1),
            ("fetch it again", "approve-once", 2),
        ] {
            send(&c, prompt).await;
            // The command itself writes a file: it asks first.
            let shell = card("run_shell", "awaiting");
            click(&c, &format!("{shell} [data-testid=approve-once]")).await;
            // Then its connection asks, naming the host.
            let ask = format!("{shell} [data-testid=approval]");
            wait_js(
                &c,
                "the network ask",
                &format!(
                    "const a = document.querySelector({}); return a !== null && a.textContent.includes('unlisted.test')",
                    serde_json::to_string(&ask).unwrap()
                ),
            )
            .await;
            click(&c, &format!("{shell} [data-testid={answer}]")).await;
            wait_turns(&c, "completed", turns).await;
        }
        let read = |f: &str| std::fs::read_to_string(w.join(f)).unwrap_or_default();
        assert!(
            read("denied.txt").contains("Cairn's sandbox refused this connection"),
            "{}",
            read("denied.txt")
        );
        assert_eq!(read("allowed.txt"), "hello-through-the-proxy");
    })
    .await;
}
