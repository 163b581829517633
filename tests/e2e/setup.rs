//! E2E: first run. With no model and no key, the welcome screen shows a setup card: an
//! OpenAI-compatible endpoint takes a key, "Test connection" reports a dead port in words and
//! lists the models the endpoint serves, and the key entered there reaches the server's
//! Authorization header on the first turn.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_setup_card_lists_models_tests_the_connection_and_its_key_is_sent() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("Hello from the gateway.")])
            .await
            .unwrap(),
    );
    server.serve_models(&["gateway-coder", "gateway-chat"]);
    let dead_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("gateway");
    seed_recent(state.path(), &ws, json!({}));
    // A new user: no model, no key, no endpoint in the environment.
    let env = app_env(state.path(), &server, "unused");
    let env = with_var(env, "CAIRN_MODEL", None);
    let env = with_var(env, "OPENAI_API_KEY", None);
    let env = with_var(env, "OPENAI_BASE_URL", None);
    let base = server.base_url();
    let key = "sk-gateway-0123456789abcdef";
    let s = server.clone();
    let ran = with_app(env, move |c| async move {
        find(&c, "[data-testid=setup-card]").await;
        c.execute(
            "const el = document.querySelector('[data-testid=setup-provider]'); \
             el.value = 'compatible'; el.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await
        .unwrap();
        // The key field is there for an OpenAI-compatible endpoint.
        find(&c, "[data-testid=setup-key]").await.send_keys(key).await.unwrap();

        // A dead port: the test says so, in words.
        find(&c, "[data-testid=setup-base-url]")
            .await
            .send_keys(&format!("http://127.0.0.1:{dead_port}/v1"))
            .await
            .unwrap();
        click(&c, "[data-testid=setup-test]").await;
        find(&c, "[data-testid=connection-result][data-ok=false]").await;
        let said = text_of(&c, "[data-testid=connection-result]").await;
        assert!(said.contains("connection refused"), "{said}");
        assert!(said.contains(&dead_port.to_string()), "{said}");

        // The real endpoint: connected, and its models to pick from.
        find(&c, "[data-testid=setup-base-url]").await.clear().await.unwrap();
        find(&c, "[data-testid=setup-base-url]").await.send_keys(&base).await.unwrap();
        click(&c, "[data-testid=setup-test]").await;
        find(&c, "[data-testid=connection-result][data-ok=true]").await;
        let options = c
            .execute(
                "return [...document.querySelectorAll('[data-testid=setup-model-option]')].map((o) => o.value)",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(options, json!(["gateway-chat", "gateway-coder"]));
        c.execute(
            "const el = document.querySelector('select[data-testid=setup-model]'); \
             el.value = 'gateway-coder'; el.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await
        .unwrap();
        screenshot(&c, "setup.png").await;
        click(&c, "[data-testid=setup-save]").await;
        find(&c, "[data-testid=setup-summary]").await;
        let summary = text_of(&c, "[data-testid=setup-summary]").await;
        assert!(summary.contains("gateway-coder"), "{summary}");

        // The first turn goes to the gateway with the key from the card.
        open_recent(&c).await;
        send(&c, "hello gateway").await;
        wait_turns(&c, "completed", 1).await;
    })
    .await;
    if !ran {
        return;
    }
    let listed = s.model_list_requests();
    assert!(
        listed.iter().any(|r| r.bearer() == Some(key)),
        "the test sent the typed key"
    );
    let req = &s.requests()[0];
    assert_eq!(
        req.bearer(),
        Some(key),
        "the turn's Authorization header carries the key"
    );
    assert_eq!(req.body["model"], "gateway-coder");
}
