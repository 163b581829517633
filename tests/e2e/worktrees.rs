//! E2E: worktree sessions in one window, with a real git repository as the workspace. The
//! folder's session and two sessions in git worktrees Cairn creates from the board stream at
//! the same time; the worktree session that asks for an approval while the other one is shown
//! badges its board row and raises one notification naming it (the recording notifier).
//! Its review shows the worktree's diff; inline comments on a line reach that session's next
//! request at the mock (the comment's text and file:line); "Apply to folder" changes the
//! folder's file as a change-turn of the folder session, and that turn's Undo in the
//! timeline brings the file back.

use super::*;
use cairn_testkit::git;

const NOTES: &str = "one\ntwo\nthree\n";
const ALPHA_NOTES: &str = "one\nTWO\nthree\nfour\n";
const COMMENT: &str = "Keep this line lowercase, as the rest of the file.";

fn row(id: &str) -> String {
    format!("[data-testid=session-item][data-session-id='{id}']")
}

pub(super) fn group(name: &str) -> String {
    format!("[data-testid=worktree-group][data-worktree='{name}']")
}

/// Waits until the board row of `id` is in one of `states`.
async fn wait_state(c: &Client, id: &str, states: &[&str]) {
    let list = serde_json::to_string(states).unwrap();
    wait_js(
        c,
        &format!("session {id} {states:?}"),
        &format!(
            "const r = document.querySelector({}); return r !== null && {list}.includes(r.dataset.state)",
            serde_json::to_string(&row(id)).unwrap()
        ),
    )
    .await;
}

/// Creates worktree `name` from the board's form and waits for its (empty) session.
pub(super) async fn new_worktree(c: &Client, name: &str) {
    click(c, "[data-testid=new-worktree]").await;
    let input = find(c, "[data-testid=worktree-name]").await;
    input.send_keys(name).await.unwrap();
    click(c, "[data-testid=worktree-create]").await;
    wait_js(
        c,
        "the worktree form to close",
        "return document.querySelector('[data-testid=worktree-form]') === null",
    )
    .await;
    wait_css(c, &group(name)).await;
    wait_js(
        c,
        "an empty transcript for the worktree session",
        "return document.querySelectorAll('[data-testid=user-message]').length === 0",
    )
    .await;
}

/// A long answer that trickles in, so the sessions overlap.
fn trickle(text: &str) -> Reply {
    Reply::text(text)
        .chunk_size(4)
        .delay_between_chunks(Duration::from_millis(120))
}

/// The text of every message of a request body.
fn request_text(body: &serde_json::Value) -> String {
    body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folder_and_two_worktree_sessions_stream_at_once_review_comments_reach_the_agent_and_apply_is_undone(
) {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            // 1. The folder's session talks for a while.
            trickle(&"The folder session explains the repository slowly. ".repeat(6)),
            // 2. Alpha thinks aloud, then asks to edit notes.txt in its worktree.
            Reply::text("Alpha looks at the notes before changing them at all.")
                .chunk_size(2)
                .delay_between_chunks(Duration::from_millis(120))
                .with_tool_call(
                    "call_alpha",
                    "write_file",
                    json!({"path": "notes.txt", "content": ALPHA_NOTES}),
                ),
            // 3. Bravo streams long enough to be running throughout.
            trickle(&"Bravo keeps talking while Alpha waits for you. ".repeat(8)),
            // 4. Alpha after its approval.
            Reply::text("Alpha changed the notes."),
            // 5. Alpha's answer to the review.
            Reply::text("Addressed the review comment."),
            // 6. The folder's session changes a file after the apply and its undo.
            Reply::tool_call(
                "call_done",
                "write_file",
                json!({"path": "done.txt", "content": "done\n"}),
            ),
            Reply::text("Wrote done.txt."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("repo");
    git::repo_with(&ws, &[("notes.txt", NOTES), ("README.md", "# Repo\n")]);
    seed_recent(state.path(), &ws, json!({}));
    let notes = state.path().join("notifications.jsonl");
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_NOTIFIER",
            Some(&notes.display().to_string()),
        ),
        "CAIRN_WORKTREES_DIR",
        Some(&trees.path().display().to_string()),
    );
    let srv = server.clone();
    let w = ws.clone();
    let notes_file = notes.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        find(&c, "[data-testid=new-worktree]:not([disabled])").await;

        // The folder's session starts.
        send(&c, "Explain the repository").await;
        srv.wait_for_requests(1, Duration::from_secs(20)).await;
        let folder = shown_id(&c).await;

        // Alpha: a worktree session, started while the folder's streams.
        new_worktree(&c, "alpha").await;
        send(&c, "Uppercase the second note").await;
        srv.wait_for_requests(2, Duration::from_secs(20)).await;
        let alpha = shown_id(&c).await;
        // Running, it is pinned on top of the board, naming its worktree.
        find(&c, &format!("{}[data-worktree='alpha']", row(&alpha))).await;

        // Bravo: another worktree session; it is shown from now on.
        new_worktree(&c, "bravo").await;
        send(&c, "Talk for a while").await;
        srv.wait_for_requests(3, Duration::from_secs(20)).await;
        let bravo = shown_id(&c).await;
        find(&c, &format!("{}[data-worktree='bravo']", row(&bravo))).await;
        assert!(folder != alpha && alpha != bravo && folder != bravo);

        // Three sessions of one window stream at once (alpha may already wait for you).
        wait_state(&c, &folder, &["running"]).await;
        wait_state(&c, &bravo, &["running"]).await;
        wait_state(&c, &alpha, &["running", "approval"]).await;

        // Alpha's approval arrives while bravo is shown: a badge on its row and one
        // notification naming it.
        wait_state(&c, &alpha, &["approval"]).await;
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
        wait_state(&c, &bravo, &["running"]).await;
        screenshot(&c, "worktree-board.png").await;

        // The badge opens alpha; approved on its card, it writes in its own worktree only.
        click(&c, &format!("{} [data-testid=session-badge]", row(&alpha))).await;
        wait_css(&c, &card("write_file", "awaiting")).await;
        let crumb = last_text(&c, "[data-testid=worktree-crumb]").await;
        assert!(
            crumb.contains("alpha"),
            "the header names the worktree: {crumb}"
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
        wait_state(&c, &alpha, &["idle"]).await;
        assert_eq!(std::fs::read_to_string(w.join("notes.txt")).unwrap(), NOTES);
        // The board counts alpha's changed and unapplied file.
        wait_css(
            &c,
            &format!(
                "{} [data-testid=worktree-unapplied][data-count='1']",
                group("alpha")
            ),
        )
        .await;

        // The review: notes.txt's diff; a comment on its new line 2.
        click(
            &c,
            &format!("{} [data-testid=worktree-review]", group("alpha")),
        )
        .await;
        let file = "[data-testid=worktree-review] [data-testid=review-file][data-path='notes.txt']";
        find(&c, file).await;
        let diff = text_of(&c, &format!("{file} [data-testid=review-diff]")).await;
        assert!(diff.contains("+TWO") && diff.contains("-two"), "{diff}");
        click(
            &c,
            &format!("{file} [data-testid=diff-line][data-kind=add][data-new-no='2']"),
        )
        .await;
        let text = find(&c, "[data-testid=comment-text]").await;
        text.send_keys(COMMENT).await.unwrap();
        click(&c, "[data-testid=comment-save]").await;
        find(&c, "[data-testid=review-comment][data-line='2']").await;
        screenshot(&c, "worktree-review.png").await;

        // "Send to agent": the comment is alpha's next turn, and reaches its request.
        click(&c, "[data-testid=review-send]").await;
        let requests = srv.wait_for_requests(5, Duration::from_secs(20)).await;
        let last = request_text(&requests[4].body);
        assert!(last.contains(COMMENT), "{last}");
        assert!(last.contains("notes.txt:2"), "{last}");
        assert!(last.contains("TWO"), "the commented line is quoted: {last}");
        wait_turns(&c, "completed", 2).await;
        assert_eq!(shown_id(&c).await, alpha);

        // Apply to folder, from the folder's session: the folder's file changes, as a
        // change-turn of that session.
        click(&c, &format!("{} [data-testid=session-open]", row(&folder))).await;
        wait_js(
            &c,
            "the folder session's transcript",
            "const t = document.querySelector('[data-testid=user-message]'); \
             return t !== null && t.textContent.includes('Explain the repository')",
        )
        .await;
        wait_turns(&c, "completed", 1).await;
        click(
            &c,
            &format!("{} [data-testid=worktree-review]", group("alpha")),
        )
        .await;
        find(&c, file).await;
        click(&c, "[data-testid=worktree-apply]").await;
        let result = text_of(&c, "[data-testid=apply-result]").await;
        assert_eq!(
            count(&c, "[data-testid=apply-conflict]").await,
            0,
            "{result}"
        );
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            ALPHA_NOTES
        );
        click(&c, "[data-testid=overlay-close]").await;
        wait_css(
            &c,
            &format!(
                "{} [data-testid=worktree-unapplied][data-count='0']",
                group("alpha")
            ),
        )
        .await;

        // Its Undo in the folder session's timeline brings the file back.
        let applied = "[data-testid=checkpoint][data-kind=apply]";
        find(&c, applied).await;
        let entry = last_text(&c, applied).await;
        assert!(entry.contains("notes.txt"), "{entry}");
        assert!(entry.contains("Applied worktree alpha"), "the typed name: {entry}");
        click(&c, &format!("{applied} [data-testid=checkpoint-undo]")).await;
        find(
            &c,
            "[data-testid=restore-dialog] [data-testid=restore-plan]",
        )
        .await;
        click(&c, "[data-testid=restore-confirm]").await;
        wait_js(
            &c,
            "the restore dialog to close",
            "return document.querySelector('[data-testid=restore-dialog]') === null",
        )
        .await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(w.join("notes.txt")).unwrap() != NOTES {
            assert!(
                std::time::Instant::now() < deadline,
                "the undo did not bring notes.txt back"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The folder session's next change-turn is numbered after the apply and its undo.
        send(&c, "Write done.txt").await;
        click(
            &c,
            &format!(
                "{} [data-testid=approve-once]",
                card("write_file", "awaiting")
            ),
        )
        .await;
        wait_turns(&c, "completed", 2).await;
        wait_css(&c, "[data-testid=checkpoint][data-kind=agent]").await;
        let turns = c
            .execute(
                "return Array.from(document.querySelectorAll('[data-testid=checkpoint]')).map(e => e.dataset.kind + ':' + e.dataset.turn).join(' ')",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(turns.as_str(), Some("apply:1 restore:2 agent:3"), "{turns}");
        let lines = std::fs::read_to_string(&notes_file).unwrap();
        assert_eq!(lines.lines().count(), 1, "one notification: {lines}");
    })
    .await;
    let _ = ran;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_outside_git_explains_why_it_has_no_worktrees() {
    let server = Arc::new(MockLlmServer::with_script(vec![]).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("plain");
    seed_recent(state.path(), &ws, json!({}));
    let ran = with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            find(&c, "[data-testid=new-worktree][disabled]").await;
            let why = text_of(&c, "[data-testid=worktrees-unavailable]").await;
            assert!(why.contains("git repository"), "{why}");
        },
    )
    .await;
    let _ = ran;
}

/// The folder of worktree `name` of the repository in `repo`, as git lists it.
pub(super) fn worktree_path(repo: &Path, name: &str) -> Option<std::path::PathBuf> {
    git::git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(std::path::PathBuf::from)
        .find(|p| p.file_name().is_some_and(|n| n == name))
}

/// What terminal `id`'s view shows.
async fn screen_text(c: &Client, id: &str) -> String {
    let js = format!(
        "const el = document.querySelector('[data-testid=terminal-view][data-terminal=\"{id}\"] .xterm-rows'); return el === null ? '' : el.textContent"
    );
    c.execute(&js, vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Opens worktree `name`'s review and waits for it.
pub(super) async fn open_review(c: &Client, name: &str) {
    click(c, &format!("{} [data-testid=worktree-review]", group(name))).await;
    find(c, "[data-testid=worktree-review]").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_commits_on_its_branch_opens_a_terminal_there_and_removal_protects_its_work() {
    const MESSAGE: &str = "Uppercase the second note";
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "call_gamma",
                "write_file",
                json!({"path": "notes.txt", "content": ALPHA_NOTES}),
            ),
            Reply::text("Gamma changed the notes."),
            // The proposed commit message.
            Reply::text(&format!("```\n{MESSAGE}\n\nAs the user asked.\n```")),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("repo");
    git::repo_with(&ws, &[("notes.txt", NOTES)]);
    seed_recent(state.path(), &ws, json!({}));
    // The user's worktree hooks fire from the app as from `cairn run --worktree` and `cairn
    // worktrees remove`: each appends its input (one JSON line) to a log outside the repo.
    let hook_log = state.path().join("worktree-hooks.log");
    let record = format!("cat >> '{0}'; echo >> '{0}'", hook_log.display());
    let hooks_dir = state.path().join("config/cairn");
    std::fs::create_dir_all(&hooks_dir).unwrap();
    std::fs::write(
        hooks_dir.join("hooks.json"),
        serde_json::to_vec(&json!({"hooks": {
            "WorktreeCreate": [{"hooks": [{"type": "command", "command": record}]}],
            "WorktreeRemove": [{"hooks": [{"type": "command", "command": record}]}]
        }}))
        .unwrap(),
    )
    .unwrap();
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_APPROVER",
            Some("allow"),
        ),
        "CAIRN_WORKTREES_DIR",
        Some(&trees.path().display().to_string()),
    );
    let w = ws.clone();
    let srv = server.clone();
    let log = hook_log.clone();
    let hooked = move |event: &str, name: &str| -> bool {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .any(|v| v["hook_event_name"] == event && v["worktree"]["name"] == name)
    };
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        new_worktree(&c, "gamma").await;
        assert!(
            hooked("WorktreeCreate", "gamma"),
            "the WorktreeCreate hook ran for gamma"
        );
        send(&c, "Uppercase the second note").await;
        wait_turns(&c, "completed", 1).await;
        let gamma = worktree_path(&w, "gamma").expect("git lists worktree gamma");
        assert_eq!(
            std::fs::read_to_string(gamma.join("notes.txt")).unwrap(),
            ALPHA_NOTES
        );

        // Removing it now is refused, naming the file that would be lost.
        open_review(&c, "gamma").await;
        click(&c, "[data-testid=worktree-remove]").await;
        let refusal = text_of(&c, "[data-testid=review-error]").await;
        assert!(refusal.contains("notes.txt"), "{refusal}");
        find(&c, "[data-testid=worktree-remove-force]").await;
        assert!(gamma.is_dir());

        // Commit on branch: the model's proposal (without its fences) is editable, then
        // committed on cairn/gamma.
        click(&c, "[data-testid=worktree-commit]").await;
        wait_js(
            &c,
            "the proposed commit message",
            &format!(
                "const t = document.querySelector('[data-testid=commit-message]'); \
                 return t !== null && t.value.startsWith({})",
                serde_json::to_string(MESSAGE).unwrap()
            ),
        )
        .await;
        let proposal = srv.requests()[2].body.to_string();
        assert!(proposal.contains("+TWO"), "the diff was proposed on: {proposal}");
        click(&c, "[data-testid=commit-confirm]").await;
        find(&c, "[data-testid=commit-result]").await;
        assert_eq!(
            git::git(&w, &["log", "-1", "--format=%s", "cairn/gamma"]).trim(),
            MESSAGE
        );
        wait_css(
            &c,
            &format!("{} [data-testid=worktree-unapplied][data-count='0']", group("gamma")),
        )
        .await;

        // Open terminal here: a shell in the worktree's folder, in the terminal panel.
        click(&c, "[data-testid=worktree-terminal]").await;
        find(&c, "[data-testid=terminal-panel] [data-testid=terminal-tab][data-kind=user]").await;
        let css = "[data-testid=terminal-view] textarea";
        let input = find(&c, css).await;
        input.send_keys("pwd").await.unwrap();
        input.send_keys(&Key::Enter.to_string()).await.unwrap();
        let id = c
            .execute(
                "return document.querySelector('[data-testid=terminal-tab][data-kind=user]').dataset.terminal",
                vec![],
            )
            .await
            .unwrap()
            .as_str()
            .unwrap()
            .to_string();
        let want = gamma.display().to_string();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let text = screen_text(&c, &id).await;
            if text.contains(&want) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the terminal never showed {want}: {text}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // Committed work is kept on its branch: removing it goes through, the branch stays.
        open_review(&c, "gamma").await;
        click(&c, "[data-testid=worktree-remove]").await;
        wait_js(
            &c,
            "gamma to leave the board",
            "return document.querySelector('[data-testid=worktree-group][data-worktree=gamma]') === null \
             && document.querySelector('[data-testid=worktree-review]') === null",
        )
        .await;
        assert!(!gamma.exists());
        assert!(worktree_path(&w, "gamma").is_none());
        assert!(
            hooked("WorktreeRemove", "gamma"),
            "the WorktreeRemove hook ran for gamma"
        );
        assert_eq!(
            git::git(&w, &["log", "-1", "--format=%s", "cairn/gamma"]).trim(),
            MESSAGE
        );

        // Delta holds work neither applied nor committed: refused, then "Remove anyway".
        new_worktree(&c, "delta").await;
        let delta = worktree_path(&w, "delta").expect("git lists worktree delta");
        std::fs::write(delta.join("scratch.txt"), "work in progress\n").unwrap();
        open_review(&c, "delta").await;
        find(&c, "[data-testid=review-file][data-path='scratch.txt']").await;
        click(&c, "[data-testid=worktree-remove]").await;
        let refusal = text_of(&c, "[data-testid=review-error]").await;
        assert!(refusal.contains("scratch.txt"), "{refusal}");
        assert!(
            !refusal.contains("--force") && !refusal.contains("cairn worktrees"),
            "the app's words, not the CLI's: {refusal}"
        );
        assert!(delta.is_dir());
        click(&c, "[data-testid=worktree-remove-force]").await;
        wait_js(
            &c,
            "delta to leave the board",
            "return document.querySelector('[data-testid=worktree-group][data-worktree=delta]') === null",
        )
        .await;
        assert!(!delta.exists());
    })
    .await;
    let _ = ran;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_leaves_a_file_the_folder_changed_too_and_says_why() {
    let server = Arc::new(MockLlmServer::with_script(vec![]).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("repo");
    git::repo_with(&ws, &[("notes.txt", NOTES), ("other.txt", "other\n")]);
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_WORKTREES_DIR",
        Some(&trees.path().display().to_string()),
    );
    let w = ws.clone();
    let budget_file = state.path().join("worktrees/budget");
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        new_worktree(&c, "eps").await;
        let eps = worktree_path(&w, "eps").expect("git lists worktree eps");
        // The worktree changes two files; the user changed one of them in the folder too.
        std::fs::write(eps.join("notes.txt"), ALPHA_NOTES).unwrap();
        std::fs::write(eps.join("other.txt"), "other, from the worktree\n").unwrap();
        std::fs::write(w.join("notes.txt"), "one\ntwo, mine\nthree\n").unwrap();
        open_review(&c, "eps").await;
        find(&c, "[data-testid=review-file][data-path='other.txt']").await;
        // No folder session is open in the window: the apply makes its own change-turn.
        click(&c, "[data-testid=worktree-apply]").await;
        let conflict = text_of(
            &c,
            "[data-testid=apply-conflicts] [data-testid=apply-conflict][data-path='notes.txt']",
        )
        .await;
        assert!(conflict.len() > "notes.txt: ".len(), "a reason: {conflict}");
        assert_eq!(count(&c, "[data-testid=apply-conflict]").await, 1);
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            "one\ntwo, mine\nthree\n",
            "the user's edit is left alone"
        );
        assert_eq!(
            std::fs::read_to_string(w.join("other.txt")).unwrap(),
            "other, from the worktree\n"
        );

        // Settings show what the repository's worktrees take and set their disk budget,
        // shared with `cairn` through the state dir.
        click(&c, "[data-testid=overlay-close]").await;
        click(&c, "[data-testid=open-settings]").await;
        wait_js(
            &c,
            "the worktrees' disk use in Settings",
            "const e = document.querySelector('[data-testid=worktree-usage]'); \
             return e !== null && e.textContent.includes('1 worktree takes')",
        )
        .await;
        find(&c, "[data-testid=worktree-size][data-name=eps]").await;
        c.execute(
            "const i = document.querySelector('[data-testid=worktree-budget]'); \
             const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set; \
             set.call(i, '7'); i.dispatchEvent(new Event('input', { bubbles: true }));",
            vec![],
        )
        .await
        .unwrap();
        click(&c, "[data-testid=worktree-budget-save]").await;
        wait_js(
            &c,
            "the budget to be set",
            "const e = document.querySelector('[data-testid=worktree-usage]'); \
             return e !== null && e.textContent.includes('of 7.0 GB')",
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(&budget_file).unwrap(),
            (7u64 * 1024 * 1024 * 1024).to_string(),
            "7 GB, where cairn reads it too"
        );
    })
    .await;
    let _ = ran;
}
