//! E2E: an app killed while a `write_file` approval waited leaves that call open; after a
//! restart, opening the session shows the resume banner, Resume asks the approval again and
//! the turn finishes (file written, turn completed).

use super::*;

fn resume_script() -> Vec<Reply> {
    vec![
        Reply::text("Hello, ready to write."),
        Reply::tool_call(
            "call_resume_w",
            "write_file",
            json!({"path": "resumed.txt", "content": "written after the restart\n"}),
        ),
        Reply::text("Wrote resumed.txt after the restart."),
    ]
}

/// Kills the app hard (SIGKILL: no shutdown, no save on close) and waits until it is gone.
async fn kill_app(state_dir: &Path) {
    let pid = app_pid(state_dir).expect("the running cairn-app process");
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -KILL {pid}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}/environ")).exists() && app_pid(state_dir) == Some(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "cairn-app {pid} did not die"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_finishes_an_approval_left_open_by_a_killed_app() {
    let server = Arc::new(MockLlmServer::with_script(resume_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("resumable");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let state_path = state.path().to_path_buf();
    let ran = with_app(env.clone(), move |c| async move {
        open_recent(&c).await;
        send(&c, "Say hello").await;
        wait_turns(&c, "completed", 1).await;
        send(&c, "Write resumed.txt").await;
        find(
            &c,
            &format!("{} [data-testid=approval]", card("write_file", "awaiting")),
        )
        .await;
        kill_app(&state_path).await;
    })
    .await;
    if !ran {
        return;
    }
    assert!(
        !ws.join("resumed.txt").exists(),
        "nothing was written before the approval"
    );

    let w = ws.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        click(&c, "[data-testid=session-open]").await;
        find(&c, "[data-testid=resume-banner]").await;
        let banner = text_of(&c, "[data-testid=resume-banner]").await;
        assert!(
            banner.contains("1 tool call was waiting when Cairn stopped"),
            "{banner}"
        );
        // The killed process's approval card no longer offers answers that nothing waits for.
        wait_css(&c, &card("write_file", "interrupted")).await;
        assert_eq!(count(&c, "[data-testid=approve-once]").await, 0);
        screenshot(&c, "resume.png").await;
        click(&c, "[data-testid=resume-calls]").await;
        // The approval is asked again; answering it runs the write and ends the turn.
        let write = card("write_file", "awaiting");
        find(&c, &format!("{write} [data-testid=approval]")).await;
        click(&c, &format!("{write} [data-testid=approve-once]")).await;
        wait_turns(&c, "completed", 2).await;
        let text = last_text(&c, "[data-testid=assistant-text]").await;
        assert!(
            text.contains("Wrote resumed.txt after the restart."),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(w.join("resumed.txt")).unwrap(),
            "written after the restart\n"
        );
        assert_eq!(count(&c, "[data-testid=resume-banner]").await, 0);
    })
    .await;
    assert_eq!(server.remaining(), 0, "every scripted reply was used");
}
