//! E2E: two windows, each with its own workspace and engine, stream two turns at the same
//! time without mixing events; the second window is reopened at the next start.

use fantoccini::wd::WindowHandle;

use super::*;

fn slow(word: &str) -> Reply {
    Reply::text(&format!("{word} ").repeat(30))
        .chunk_size(5)
        .delay_between_chunks(Duration::from_millis(80))
}

async fn other_window(c: &Client, main: &WindowHandle) -> WindowHandle {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let all = c.windows().await.unwrap();
        if let Some(h) = all.into_iter().find(|h| h != main) {
            return h;
        }
        assert!(std::time::Instant::now() < deadline, "no second window");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn open_path(c: &Client, ws: &Path) {
    click(
        c,
        &format!(
            "[data-testid=recent-workspace][data-path='{}']",
            ws.display()
        ),
    )
    .await;
    find(c, "[data-testid=composer]").await;
}

/// Texts of every element matching `css`.
async fn texts(c: &Client, css: &str) -> Vec<String> {
    let js = format!(
        "return [...document.querySelectorAll({})].map((e) => e.textContent)",
        serde_json::to_string(css).unwrap()
    );
    let v = c.execute(&js, vec![]).await.unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap_or_default().to_string())
        .collect()
}

async fn streaming(c: &Client) {
    wait_css(c, "[data-testid=assistant-message][data-streaming=true]").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_windows_stream_at_once_without_mixing_and_are_reopened() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![slow("Alpha"), slow("Beta")])
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_a_dir, alpha) = named_workspace("alpha");
    let (_b_dir, beta) = named_workspace("beta");
    std::fs::write(
        state.path().join("desktop.json"),
        serde_json::to_vec(&json!({"recent": [
            {"path": alpha, "openedAt": minutes_ago(3)},
            {"path": beta, "openedAt": minutes_ago(5)},
        ]}))
        .unwrap(),
    )
    .unwrap();
    let env = app_env(state.path(), &server, "mock-model");
    let (a, b) = (alpha.clone(), beta.clone());
    let ran = with_app(env.clone(), move |c| async move {
        let main = c.window().await.unwrap();
        open_path(&c, &a).await;
        click(&c, "[data-testid=new-window]").await;
        let second = other_window(&c, &main).await;
        c.switch_to_window(second.clone()).await.unwrap();
        open_path(&c, &b).await;

        c.switch_to_window(main.clone()).await.unwrap();
        send(&c, "Question for alpha").await;
        streaming(&c).await;
        c.switch_to_window(second.clone()).await.unwrap();
        send(&c, "Question for beta").await;
        streaming(&c).await;
        // Both turns stream at the same time.
        c.switch_to_window(main.clone()).await.unwrap();
        streaming(&c).await;

        wait_turns(&c, "completed", 1).await;
        assert_eq!(
            texts(&c, "[data-testid=user-message] .msg-text").await,
            ["Question for alpha"]
        );
        let said = texts(&c, "[data-testid=assistant-text]").await;
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("Alpha") && !said[0].contains("Beta"),
            "{said:?}"
        );
        assert_eq!(text_of(&c, "[data-testid=workspace-name]").await, "alpha");

        c.switch_to_window(second.clone()).await.unwrap();
        wait_turns(&c, "completed", 1).await;
        assert_eq!(
            texts(&c, "[data-testid=user-message] .msg-text").await,
            ["Question for beta"]
        );
        let said = texts(&c, "[data-testid=assistant-text]").await;
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("Beta") && !said[0].contains("Alpha"),
            "{said:?}"
        );
        assert_eq!(text_of(&c, "[data-testid=workspace-name]").await, "beta");
    })
    .await;
    if !ran {
        return;
    }
    // The next start reopens the second window with its workspace.
    with_app(env, move |c| async move {
        let main = c.window().await.unwrap();
        let second = other_window(&c, &main).await;
        c.switch_to_window(second).await.unwrap();
        assert_eq!(text_of(&c, "[data-testid=workspace-name]").await, "beta");
        find(&c, "[data-testid=composer]").await;
    })
    .await;
}
