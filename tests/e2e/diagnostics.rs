//! E2E: Settings → Diagnostics (issue 46) runs `cairn doctor`'s checks from the app: a
//! provider refusing the key (the mock answers 401) is a problem row with what to do, the
//! workspace's project hooks wait for trust, and the key is nowhere in the page.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_show_the_doctors_rows_with_what_to_do() {
    let server = Arc::new(MockLlmServer::start().await.unwrap());
    server.refuse_models(401);
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("doctored");
    std::fs::create_dir_all(ws.join(".agent")).unwrap();
    std::fs::write(
        ws.join(".agent/hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    )
    .unwrap();
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let mock = server.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        click(&c, "[data-testid=open-settings]").await;
        // Nothing runs until asked: the checks start servers and ask endpoints.
        find(&c, "[data-testid=diagnostics]").await;
        assert_eq!(count(&c, "[data-testid=diagnostics-row]").await, 0);
        click(&c, "[data-testid=diagnostics-run]").await;
        let endpoint = "[data-testid=diagnostics-row][data-group=provider][data-status=problem]";
        let row = text_of(&c, endpoint).await;
        assert!(row.contains("refused the API key"), "{row}");
        assert!(
            row.contains("→ Replace the openai key in Settings → API key"),
            "the typed fix in the app's words: {row}"
        );
        let trust = text_of(&c, "[data-testid=diagnostics-row][data-group=trust]").await;
        assert!(trust.contains("1 hook"), "{trust}");
        assert!(trust.contains("then trust the project"), "{trust}");
        // What to do is worded by the app: no Cairn command in any row's fix.
        let fixes: Vec<String> = c
            .execute(
                "return [...document.querySelectorAll('[data-testid=diagnostics-fix]')]\
                 .map(e => e.textContent)",
                vec![],
            )
            .await
            .unwrap()
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect();
        assert!(fixes.len() >= 2, "{fixes:?}");
        for f in &fixes {
            assert!(!f.contains("cairn "), "a CLI command in the app: {f}");
        }
        for group in ["sandbox", "keyring", "desktop", "state", "version"] {
            find(
                &c,
                &format!("[data-testid=diagnostics-row][data-group={group}]"),
            )
            .await;
        }
        let summary = text_of(&c, "[data-testid=diagnostics-summary]").await;
        assert!(summary.contains("problem"), "{summary}");
        assert!(
            !c.source().await.unwrap().contains(KEY),
            "the key is not in the page"
        );
        c.execute(
            "document.querySelector('[data-testid=diagnostics-summary]').scrollIntoView()",
            vec![],
        )
        .await
        .unwrap();
        screenshot(&c, "diagnostics.png").await;
    })
    .await;
    assert!(
        mock.model_list_requests().len() <= 1,
        "one model listing per provider"
    );
}
