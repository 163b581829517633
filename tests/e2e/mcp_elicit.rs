//! E2E: an MCP server's form (the reference server-everything, asking during its tool call)
//! renders in the chat with its fields, defaults and required marks; what the user types and
//! the defaults of what they left alone reach the server, whose answer the model then sees;
//! at 800x600 the form fits its column and Send is reachable.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_form_renders_and_its_answer_reaches_the_server() {
    const ENTRY: &str = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    let entry = match cairn_testkit::npm::installed(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/mcp/tests/npm"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-mcp-npm"),
        &["package.json", "package-lock.json"],
        ENTRY,
    ) {
        Ok(dir) => dir.join(ENTRY),
        Err(why) => {
            support::skip_or_fail(&format!("server-everything is not installed: {why}"));
            return;
        }
    };
    let tool = "mcp__every__trigger-elicitation-request";
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call("call_form", tool, json!({})),
            Reply::text("Thanks, got your details."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("forms");
    seed_recent(state.path(), &ws, json!({}));
    let mcp = state.path().join("user-mcp.json");
    std::fs::write(
        &mcp,
        json!({"mcpServers": {"every": {"command": "node", "args": [entry, "stdio"]}}}).to_string(),
    )
    .unwrap();
    let mut env = app_env(state.path(), &server, "mock-model");
    env.push(("CAIRN_MCP_CONFIG".into(), mcp.display().to_string()));
    env.push(("CAIRN_MCP_LAZY".into(), "off".into()));
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Fill in the form").await;
        click(
            &c,
            &format!("{} [data-testid=approve-once]", card(tool, "awaiting")),
        )
        .await;

        let form = "[data-testid=elicitation][data-state=pending]";
        find(&c, form).await;
        let head = text_of(&c, &format!("{form} .ask-head")).await;
        assert!(head.contains("every"), "{head}");
        // Defaults are filled in; the required field is marked.
        let first_line = find(&c, &format!("{form} [data-name=firstLine] input")).await;
        assert_eq!(
            first_line.prop("value").await.unwrap().as_deref(),
            Some("It was a dark and stormy night.")
        );
        let name_field = text_of(&c, &format!("{form} [data-name=name]")).await;
        assert!(name_field.contains("required"), "{name_field}");
        find(&c, &format!("{form} [data-name=name] input"))
            .await
            .send_keys("Ada Lovelace")
            .await
            .unwrap();
        screenshot(&c, "elicitation.png").await;
        // On a small window the form still fits its column and its buttons can be reached.
        c.set_window_size(800, 600).await.unwrap();
        wait_js(
            &c,
            "the page to be 800 px wide",
            "return Math.abs(window.innerWidth - 800) <= 16",
        )
        .await;
        let accept = format!("{form} [data-testid=elicit-accept]");
        let fits = format!(
            "const b = document.querySelector({0}); b.scrollIntoView({{block: 'center'}}); \
             const r = b.getBoundingClientRect(); \
             const card = document.querySelector({1}).getBoundingClientRect(); \
             return r.width > 0 && r.right <= window.innerWidth && card.right <= window.innerWidth",
            serde_json::to_string(&accept).unwrap(),
            serde_json::to_string(form).unwrap()
        );
        wait_js(&c, "the form to fit an 800x600 window", &fits).await;
        screenshot(&c, "elicitation-800x600.png").await;
        click(&c, &accept).await;

        find(&c, "[data-testid=elicitation][data-state=answered]").await;
        wait_turns(&c, "completed", 1).await;
    })
    .await;
    if !ran {
        return;
    }
    let sent = server.requests()[1].body["messages"].to_string();
    for part in [
        "Ada Lovelace",
        "It was a dark and stormy night.",
        "Favorite Integer: 42",
    ] {
        assert!(sent.contains(part), "{part} missing from {sent}");
    }
}
