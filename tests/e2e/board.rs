//! E2E: several sessions at once in one window (the sessions board). Three sessions stream
//! at the same time and each completes with its own answer, saved in its own session;
//! switching the view never stops one and switching back shows its whole transcript. A
//! session that asks for an approval while another one is shown gives its board row a badge
//! and raises one notification naming it (recorded by the fake notifier: Xvfb has no
//! notification daemon); its native dialog waits until the user switches to it, and
//! answering its chat card lets it finish.

use super::*;

fn row(id: &str) -> String {
    format!("[data-testid=session-item][data-session-id='{id}']")
}

/// Waits until the board row of `id` is in `state`.
async fn wait_state(c: &Client, id: &str, state: &str) {
    wait_js(
        c,
        &format!("session {id} {state}"),
        &format!(
            "const r = document.querySelector({}); return r !== null && r.dataset.state === '{state}'",
            serde_json::to_string(&row(id)).unwrap()
        ),
    )
    .await;
}

/// A long answer that trickles in (about 5 s), so the sessions overlap.
fn trickle(text: &str) -> Reply {
    Reply::text(text)
        .chunk_size(4)
        .delay_between_chunks(Duration::from_millis(120))
}

/// Every assistant text of session `id`'s saved history.
fn saved_answers(state_dir: &Path, id: &str) -> String {
    let saved = std::fs::read_to_string(state_dir.join("sessions").join(id).join("state.json"))
        .unwrap_or_else(|e| panic!("session {id} was not saved: {e}"));
    let v: serde_json::Value = serde_json::from_str(&saved).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sessions_stream_at_once_and_each_keeps_its_own_answer() {
    let answers = [
        "Alpha answer: the parser reads tokens one by one and builds a tree. End of alpha.",
        "Bravo answer: the cache keeps the newest entries and drops the oldest. End of bravo.",
        "Charlie answer: the scheduler runs jobs in order of their deadlines. End of charlie.",
    ];
    let server = Arc::new(
        MockLlmServer::with_script(answers.iter().map(|a| trickle(a)).collect())
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("board");
    seed_recent(state.path(), &ws, json!({}));
    let srv = server.clone();
    let state_dir = state.path().to_path_buf();
    let ran = with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            let mut ids = Vec::new();
            for (i, prompt) in [
                "Explain the parser",
                "Explain the cache",
                "Explain the scheduler",
            ]
            .iter()
            .enumerate()
            {
                if i > 0 {
                    // A new session while the others stream: none of them stops.
                    new_chat(&c).await;
                }
                send(&c, prompt).await;
                srv.wait_for_requests(i + 1, Duration::from_secs(20)).await;
                ids.push(shown_id(&c).await);
            }
            assert_eq!(ids.len(), 3);
            assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
            // All three run at once, each shown on the board.
            for id in &ids {
                wait_state(&c, id, "running").await;
            }
            screenshot(&c, "sessions-board.png").await;

            // Back to the first one while it streams: its transcript goes on from where it
            // is (nothing was lost while it was not shown) and completes.
            click(&c, &format!("{} [data-testid=session-open]", row(&ids[0]))).await;
            wait_js(
                &c,
                "the first session's own transcript",
                "const t = document.querySelector('[data-testid=user-message]'); \
                 return t !== null && t.textContent.includes('Explain the parser')",
            )
            .await;
            wait_turns(&c, "completed", 1).await;
            let text = last_text(&c, "[data-testid=assistant-text]").await;
            assert!(text.contains(answers[0]), "first session shows: {text}");

            // The other two completed meanwhile, unseen; each shows its own whole answer.
            for (i, id) in ids.iter().enumerate() {
                wait_state(&c, id, "idle").await;
                click(&c, &format!("{} [data-testid=session-open]", row(id))).await;
                wait_js(
                    &c,
                    "the session's answer",
                    &format!(
                        "const all = document.querySelectorAll('[data-testid=assistant-text]'); \
                         return all.length === 1 && all[0].textContent.includes({})",
                        serde_json::to_string(answers[i]).unwrap()
                    ),
                )
                .await;
                wait_turns(&c, "completed", 1).await;
            }
            // Each saved session holds its own answer and none of the others'.
            for (i, id) in ids.iter().enumerate() {
                let saved = saved_answers(&state_dir, id);
                for (j, a) in answers.iter().enumerate() {
                    assert_eq!(saved.contains(a), i == j, "session {i} saved: {saved}");
                }
            }
        },
    )
    .await;
    if ran {
        assert!(server.requests().len() >= 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_of_a_session_in_the_background_badges_notifies_and_waits_for_it() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            // A thinks aloud for a while, then asks to write a file.
            Reply::text("Let me look at the plan before I change anything in it at all.")
                .chunk_size(2)
                .delay_between_chunks(Duration::from_millis(120))
                .with_tool_call(
                    "call_plan",
                    "write_file",
                    json!({"path": "plan.md", "content": "# Plan\nnew step\n"}),
                ),
            // B streams long enough to be running throughout.
            Reply::text(&"Bravo keeps talking while Alpha waits. ".repeat(20))
                .chunk_size(6)
                .delay_between_chunks(Duration::from_millis(100)),
            Reply::text("Alpha wrote the plan."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("badges");
    std::fs::write(ws.join("plan.md"), "# Plan\nold step\n").unwrap();
    seed_recent(state.path(), &ws, json!({}));
    let notes = state.path().join("notifications.jsonl");
    // Native approvals (GTK dialogs under Xvfb) and the recording notifier.
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_APPROVER",
            None,
        ),
        "CAIRN_TEST_NOTIFIER",
        Some(&notes.display().to_string()),
    );
    let srv = server.clone();
    let notes_file = notes.clone();
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Update the plan").await;
        srv.wait_for_requests(1, Duration::from_secs(20)).await;
        let alpha = shown_id(&c).await;
        // Switch to a new session B and start it while A is still thinking.
        click(&c, "[data-testid=new-chat]").await;
        send(&c, "Talk for a while").await;
        srv.wait_for_requests(2, Duration::from_secs(20)).await;
        let bravo = shown_id(&c).await;
        assert_ne!(alpha, bravo);

        // A's approval arrives while B is shown: A's row gets a badge, one notification
        // names A, and no dialog opens over B.
        wait_state(&c, &alpha, "approval").await;
        find(&c, &format!("{} [data-testid=session-badge]", row(&alpha))).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let lines = loop {
            let text = std::fs::read_to_string(&notes_file).unwrap_or_default();
            if !text.trim().is_empty() {
                break text;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no notification was recorded"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let recorded: Vec<serde_json::Value> = lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(recorded.len(), 1, "{lines}");
        assert_eq!(recorded[0]["sessionId"], alpha.as_str());
        assert!(
            recorded[0]["body"].as_str().unwrap().contains("write_file"),
            "{lines}"
        );
        assert!(
            !window_visible("allow write_file"),
            "no dialog over another session"
        );
        wait_state(&c, &bravo, "running").await;

        // The badge opens A: its approval card shows, and its native dialog with it.
        click(&c, &format!("{} [data-testid=session-badge]", row(&alpha))).await;
        find(
            &c,
            &format!("{} [data-testid=approval]", card("write_file", "awaiting")),
        )
        .await;
        wait_window("allow write_file").await;
        // Answered on the card: the dialog closes and A finishes; B was never stopped.
        click(
            &c,
            &format!(
                "{} [data-testid=approve-once]",
                card("write_file", "awaiting")
            ),
        )
        .await;
        wait_turns(&c, "completed", 1).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while window_visible("allow write_file") {
            assert!(
                std::time::Instant::now() < deadline,
                "the dialog stayed open"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        wait_state(&c, &alpha, "idle").await;
        wait_state(&c, &bravo, "idle").await;
        find(&c, &format!("{} [data-testid=session-files]", row(&alpha))).await;
        assert_eq!(
            std::fs::read_to_string(w.join("plan.md")).unwrap(),
            "# Plan\nnew step\n"
        );
        let lines = std::fs::read_to_string(&notes_file).unwrap();
        assert_eq!(lines.lines().count(), 1, "one notification: {lines}");
    })
    .await;
    let _ = ran;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicking_a_sessions_notification_opens_its_approval() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            // A thinks for a moment, then asks to write a file.
            Reply::text("Looking at the plan first.")
                .chunk_size(2)
                .delay_between_chunks(Duration::from_millis(120))
                .with_tool_call(
                    "call_plan",
                    "write_file",
                    json!({"path": "plan.md", "content": "# Plan\nnew step\n"}),
                ),
            Reply::text(&"Bravo keeps talking. ".repeat(20))
                .chunk_size(6)
                .delay_between_chunks(Duration::from_millis(100)),
            Reply::text("Alpha wrote the plan."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("clicks");
    std::fs::write(ws.join("plan.md"), "# Plan\nold step\n").unwrap();
    seed_recent(state.path(), &ws, json!({}));
    let notes = state.path().join("notifications.jsonl");
    // Native approvals, and the recording notifier clicking each notification as the user
    // would.
    let mut env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_APPROVER",
            None,
        ),
        "CAIRN_TEST_NOTIFIER",
        Some(&notes.display().to_string()),
    );
    env = with_var(env, "CAIRN_TEST_NOTIFIER_CLICK", Some("1"));
    let srv = server.clone();
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Update the plan").await;
        srv.wait_for_requests(1, Duration::from_secs(20)).await;
        let alpha = shown_id(&c).await;
        click(&c, "[data-testid=new-chat]").await;
        send(&c, "Talk for a while").await;
        srv.wait_for_requests(2, Duration::from_secs(20)).await;
        let bravo = shown_id(&c).await;
        assert_ne!(alpha, bravo);

        // A asks while B is shown: the notification's click brings A into view, at its
        // approval card.
        find(
            &c,
            &format!("{} [data-testid=approval]", card("write_file", "awaiting")),
        )
        .await;
        assert_eq!(
            shown_id(&c).await,
            alpha,
            "the click opened the asking session"
        );
        click(
            &c,
            &format!(
                "{} [data-testid=approve-once]",
                card("write_file", "awaiting")
            ),
        )
        .await;
        wait_turns(&c, "completed", 1).await;
        assert_eq!(
            std::fs::read_to_string(w.join("plan.md")).unwrap(),
            "# Plan\nnew step\n"
        );
    })
    .await;
    let _ = ran;
}
