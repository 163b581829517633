//! E2E: keeping a worktree current and handing a chat over, in the app. A folder chat moves
//! into a new worktree with its history; the agent edits there; the folder gets a newer
//! commit, which "Update from folder" brings into the worktree; "Continue in folder" hands
//! the chat back with its whole history and applies the worktree's edit to the folder.

use super::worktrees::{group, open_review, worktree_path};
use super::*;
use cairn_testkit::git;

const EDITED: &str = "one\nTWO\nthree\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_moves_into_a_worktree_is_updated_and_continues_in_the_folder() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::text("Answer one."),
            Reply::tool_call(
                "w1",
                "write_file",
                json!({"path": "notes.txt", "content": EDITED}),
            ),
            Reply::text("Edited in the worktree."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("handrepo");
    git::repo_with(&ws, &[("notes.txt", "one\ntwo\nthree\n")]);
    seed_recent(state.path(), &ws, json!({}));
    let mut env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_WORKTREES_DIR",
        Some(&trees.path().display().to_string()),
    );
    env = with_var(env, "CAIRN_TEST_APPROVER", Some("allow"));
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "FIRST-QUESTION about notes").await;
        wait_turns(&c, "completed", 1).await;

        // The chat moves into a new worktree, its history with it.
        click(&c, "[data-testid=new-worktree]").await;
        find(&c, "[data-testid=worktree-name]")
            .await
            .send_keys("mv")
            .await
            .unwrap();
        click(&c, "[data-testid=worktree-move]").await;
        click(&c, "[data-testid=worktree-create]").await;
        wait_css(&c, &group("mv")).await;
        wait_js(
            &c,
            "the moved chat with its history",
            "return [...document.querySelectorAll('[data-testid=user-message]')].some(m => m.textContent.includes('FIRST-QUESTION'))",
        )
        .await;
        send(&c, "Uppercase the second note").await;
        wait_turns(&c, "completed", 2).await;
        let tree = worktree_path(&w, "mv").expect("git lists the worktree");
        assert_eq!(std::fs::read_to_string(tree.join("notes.txt")).unwrap(), EDITED);
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            "one\ntwo\nthree\n",
            "the folder is untouched"
        );
        // The files panel shows the worktree's checkout, not the folder.
        std::fs::write(tree.join("only-in-tree.txt"), "x\n").unwrap();
        click(&c, "[data-testid=files-refresh]").await;
        find(&c, "[data-testid=file-node][data-path='only-in-tree.txt']").await;

        // The folder moves on; Update brings its HEAD into the worktree.
        std::fs::write(w.join("later.txt"), "later\n").unwrap();
        git::git(&w, &["add", "later.txt"]);
        git::git(&w, &["commit", "-q", "-m", "later"]);
        open_review(&c, "mv").await;
        click(&c, "[data-testid=worktree-update]").await;
        let updated = text_of(&c, "[data-testid=update-result]").await;
        assert!(updated.contains("Brought in"), "{updated}");
        assert_eq!(std::fs::read_to_string(tree.join("later.txt")).unwrap(), "later\n");
        assert_eq!(std::fs::read_to_string(tree.join("notes.txt")).unwrap(), EDITED);

        // Continue in folder: the chat comes back with its whole history, the edit applied.
        click(&c, "[data-testid=worktree-handoff]").await;
        // (The board's own Review button shares the review's test id: wait on the dialog's.)
        wait_js(
            &c,
            "the review to close",
            "return document.querySelector('[data-testid=worktree-handoff]') === null",
        )
        .await;
        wait_js(
            &c,
            "the chat back in the folder with both prompts",
            "const m = [...document.querySelectorAll('[data-testid=user-message]')].map(e => e.textContent); \
             return m.some(t => t.includes('FIRST-QUESTION')) && m.some(t => t.includes('Uppercase the second note'))",
        )
        .await;
        assert_eq!(std::fs::read_to_string(w.join("notes.txt")).unwrap(), EDITED);
    })
    .await;
    let _ = ran;
}
