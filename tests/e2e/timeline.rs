//! E2E: the turn-by-turn timeline. Three turns change files (the third through the shell);
//! the user edits a file outside the app; "Restore to here" on turn 1 shows the dry run (the
//! user's file as a conflict), restores, and its "Restored to checkpoint 1" entry is undone.

use super::*;

fn timeline_script() -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "call_w1",
            "write_file",
            json!({"path": "notes.txt", "content": "v1\n"}),
        ),
        Reply::text("Turn one wrote notes.txt."),
        Reply::tool_call(
            "call_w2",
            "write_file",
            json!({"path": "notes.txt", "content": "v1\nv2\n"}),
        )
        .with_tool_call(
            "call_w3",
            "write_file",
            json!({"path": "extra.txt", "content": "extra from turn two\n"}),
        ),
        Reply::text("Turn two added a line and extra.txt."),
        Reply::tool_call(
            "call_sh",
            "run_shell",
            json!({"command": "printf 'v3\\n' >> notes.txt && printf 'from the shell\\n' > shell.txt"}),
        ),
        Reply::text("Turn three ran the shell."),
    ]
}

fn read(ws: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(ws.join(name)).ok()
}

/// Waits until the timeline shows `n` checkpoints.
async fn wait_checkpoints(c: &Client, n: usize) {
    let js = format!("return document.querySelectorAll('[data-testid=checkpoint]').length >= {n}");
    wait_js(c, &format!("{n} checkpoint(s)"), &js).await;
}

/// Confirms the open restore dialog once its dry run is shown; returns the plan's text.
async fn confirm_restore(c: &Client) -> String {
    find(c, "[data-testid=restore-dialog] [data-testid=restore-plan]").await;
    let plan = text_of(c, "[data-testid=restore-plan]").await;
    click(c, "[data-testid=restore-confirm]").await;
    wait_js(
        c,
        "the restore dialog to close",
        "return document.querySelector('[data-testid=restore-dialog]') === null",
    )
    .await;
    plan
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeline_restores_to_a_turn_keeps_user_edits_and_undoes_the_restore() {
    let server = Arc::new(MockLlmServer::with_script(timeline_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("notebook");
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        Some("allow"),
    );
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Write the first note").await;
        wait_turns(&c, "completed", 1).await;
        send(&c, "Add a second line and an extra file").await;
        wait_turns(&c, "completed", 2).await;
        send(&c, "Append through the shell").await;
        wait_turns(&c, "completed", 3).await;
        wait_checkpoints(&c, 3).await;
        assert_eq!(read(&w, "notes.txt").as_deref(), Some("v1\nv2\nv3\n"));
        assert_eq!(read(&w, "shell.txt").as_deref(), Some("from the shell\n"));
        // The third turn's marker names the files the shell changed, with line counts.
        let third = last_text(&c, "[data-testid=checkpoint][data-turn='3']").await;
        assert!(
            third.contains("shell.txt") && third.contains("notes.txt"),
            "{third}"
        );
        assert!(third.contains("+2"), "{third}");
        // Changes this session: every file, with revert buttons.
        wait_css(
            &c,
            "[data-testid=changes-panel] [data-testid=change][data-path='shell.txt']",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=change]").await, 3);
        screenshot(&c, "timeline.png").await;

        // The diff of turn 2, per file.
        click(
            &c,
            "[data-testid=checkpoint][data-turn='2'] [data-testid=checkpoint-open]",
        )
        .await;
        find(
            &c,
            "[data-testid=diff-dialog] [data-testid=diff-file][data-path='extra.txt']",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=diff-file]").await, 2);
        let notes = text_of(&c, "[data-testid=diff-file][data-path='notes.txt']").await;
        assert!(notes.contains("+v2"), "{notes}");
        screenshot(&c, "diff.png").await;
        click(&c, "[data-testid=overlay-close]").await;

        // The user edits a file outside the app after turn 3.
        std::fs::write(w.join("extra.txt"), "my own edit\n").unwrap();

        // Restore to turn 1: the dry run lists what is written, deleted and kept.
        click(
            &c,
            "[data-testid=checkpoint][data-turn='1'] [data-testid=checkpoint-restore]",
        )
        .await;
        let plan = confirm_restore(&c).await;
        assert!(
            plan.contains("notes.txt") && plan.contains("shell.txt"),
            "{plan}"
        );
        assert!(
            plan.contains("extra.txt"),
            "the user's edit is reported: {plan}"
        );
        assert!(
            !plan.contains("--force") && plan.contains("Overwrite my own edits"),
            "GUI words, no CLI flag: {plan}"
        );
        wait_css(&c, "[data-testid=checkpoint][data-kind=restore]").await;
        assert_eq!(read(&w, "notes.txt").as_deref(), Some("v1\n"));
        assert_eq!(read(&w, "shell.txt"), None);
        assert_eq!(
            read(&w, "extra.txt").as_deref(),
            Some("my own edit\n"),
            "a conflict is kept"
        );
        let entry = text_of(&c, "[data-testid=restored-entry]").await;
        assert!(entry.contains("Restored to checkpoint 1"), "{entry}");
        // Every entry shows the number the CLI uses (`cairn turns`, `--to-turn N`): the
        // restore's own change-turn and the user's edits are numbered, not hidden (issue 45).
        let numbered = c
            .execute(
                "return [...document.querySelectorAll('[data-testid=checkpoint]')].every((e) => { \
                   const n = e.querySelector('[data-testid=checkpoint-number]'); \
                   return n === null ? e.dataset.kind === 'agent' : n.textContent.startsWith(e.dataset.turn + ' '); })",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(numbered, json!(true), "each entry shows its checkpoint number");
        // The restore is announced where the user looks, with its Undo.
        let toast = text_of(&c, "[data-testid=toast]").await;
        assert!(
            toast.contains("Restored to checkpoint 1") && toast.contains("Undo"),
            "{toast}"
        );
        click(&c, "[data-testid=toast-close]").await;
        wait_js(
            &c,
            "the toast dismissed",
            "return document.querySelector('[data-testid=toast]') === null",
        )
        .await;
        // The user's own edit got a checkpoint of its own, before the restore's.
        let mine = c
            .execute(
                "return document.querySelector('[data-testid=checkpoint][data-kind=user]').textContent",
                vec![],
            )
            .await
            .unwrap();
        let mine = mine.as_str().unwrap_or_default();
        assert!(
            mine.contains("Your edits before the restore · 1 file") && mine.contains("extra.txt"),
            "{mine}"
        );

        // Undo the restore: turn 3's state is back, the user's file still kept.
        click(
            &c,
            "[data-testid=checkpoint][data-kind=restore] [data-testid=checkpoint-undo]",
        )
        .await;
        confirm_restore(&c).await;
        wait_checkpoints(&c, 6).await;
        assert_eq!(read(&w, "notes.txt").as_deref(), Some("v1\nv2\nv3\n"));
        assert_eq!(read(&w, "shell.txt").as_deref(), Some("from the shell\n"));
        assert_eq!(read(&w, "extra.txt").as_deref(), Some("my own edit\n"));

        // Restore one chosen file from a diff: notes.txt back to turn 2.
        click(
            &c,
            "[data-testid=checkpoint][data-turn='2'] [data-testid=checkpoint-open]",
        )
        .await;
        click(
            &c,
            "[data-testid=diff-file][data-path='notes.txt'] [data-testid=diff-file-pick]",
        )
        .await;
        click(&c, "[data-testid=diff-restore-selected]").await;
        let plan = confirm_restore(&c).await;
        assert!(!plan.contains("shell.txt"), "only the chosen file: {plan}");
        wait_checkpoints(&c, 7).await;
        assert_eq!(read(&w, "notes.txt").as_deref(), Some("v1\nv2\n"));
        assert_eq!(read(&w, "shell.txt").as_deref(), Some("from the shell\n"));
    })
    .await;
    if !ran {
        return;
    }
}
