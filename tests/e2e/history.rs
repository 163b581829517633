//! E2E: a long session opens with its newest 100 turns; scrolling near the top pages the older
//! ones in above them (the view kept on its rows), and "Show earlier turns" does too, a page at
//! a time, until the first question is there and the button is gone (the runtime's history
//! API behind `session_history`).

use super::*;

#[path = "../../benches/app_memory/seed.rs"]
#[allow(dead_code)]
pub(super) mod seed;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_session_pages_its_older_turns_in_on_request() {
    let server = Arc::new(MockLlmServer::with_script(vec![]).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("long");
    let ws = ws.canonicalize().unwrap();
    seed::session(state.path(), &ws, "long-e2e", "A long session", 230);
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        click(
            &c,
            "[data-testid=session-item][data-session-id='long-e2e'] [data-testid=session-open]",
        )
        .await;
        let last = serde_json::to_string(&seed::question(230)).unwrap();
        wait_js(
            &c,
            "the newest question",
            &format!(
                "const all = document.querySelectorAll('[data-testid=user-message]'); \
                 return all.length > 0 && all[all.length - 1].textContent.includes({last})"
            ),
        )
        .await;
        // The meter counts the whole session (the seeder's 2 replies of 1,380 tokens a turn).
        let tokens = text_of(&c, "[data-testid=meter-tokens]").await;
        assert_eq!(tokens, "635k", "{tokens}");
        let first = serde_json::to_string(&seed::question(1)).unwrap();
        let has_first = format!(
            "return [...document.querySelectorAll('[data-testid=user-message]')]\
             .some((m) => m.textContent.includes({first}))"
        );
        let before: bool = c
            .execute(&has_first, vec![])
            .await
            .unwrap()
            .as_bool()
            .unwrap();
        assert!(!before, "the first turn is not loaded at open");
        // Two pages (turns 31–130, then 1–30), each waited for: the transcript's list of
        // turn ends (every loaded turn, shown or not) grows by the page. The first comes by
        // itself when the view nears the top; the second by the button (the fallback).
        c.execute(
            "document.querySelector('[data-testid=transcript]').scrollTop = 0; return true",
            vec![],
        )
        .await
        .unwrap();
        wait_js(
            &c,
            "200 turns loaded by scrolling up",
            "const t = document.querySelector('[data-testid=transcript]'); \
             return t.dataset.turnEnds.split(' ').length === 200",
        )
        .await;
        // The view stayed on the rows it showed (it did not jump to the older page's top).
        let top: f64 = c
            .execute(
                "return document.querySelector('[data-testid=transcript]').scrollTop",
                vec![],
            )
            .await
            .unwrap()
            .as_f64()
            .unwrap();
        assert!(top > 1000.0, "the view kept its place: scrollTop {top}");
        click(&c, "[data-testid=load-earlier]").await;
        wait_js(
            &c,
            "230 turns loaded",
            "const t = document.querySelector('[data-testid=transcript]'); \
             return t.dataset.turnEnds.split(' ').length === 230",
        )
        .await;
        wait_js(
            &c,
            "no older page left",
            "return document.querySelector('[data-testid=load-earlier]') === null",
        )
        .await;
        let s = serde_json::to_string(&seed::question(1)).unwrap();
        wait_js(
            &c,
            "the first question at the top",
            &format!(
                "const s = document.querySelector('[data-testid=transcript]'); s.scrollTop = 0; \
                 return [...document.querySelectorAll('[data-testid=user-message]')]\
                 .some((m) => m.textContent.includes({s}))"
            ),
        )
        .await;
        assert_eq!(
            text_of(&c, "[data-testid=meter-tokens]").await,
            tokens,
            "loading older turns does not count them twice"
        );
    })
    .await;
    let _ = ran;
}
