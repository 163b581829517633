//! E2E: a repository's git directory is never a workspace. Picking `repo/.git` in the native
//! folder chooser (what GTK's completion of `repo/` offers) shows the refusal with an
//! "Open repo instead" button, which opens the repository.

use super::*;

use cairn_testkit::git;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn picking_a_git_directory_is_refused_and_offers_the_repository() {
    let server = Arc::new(MockLlmServer::with_script(vec![]).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, repo) = named_workspace("gitrepo");
    git::repo_with(&repo, &[("README.md", "hello\n")]);
    // The picker starts beside the most recent workspace.
    seed_recent(state.path(), &repo, json!({}));
    let before = git::digest(&repo.join(".git"), &[]);
    let env = app_env(state.path(), &server, "mock-model");
    let git_dir = repo.join(".git");
    let repo_path = repo.clone();
    with_app(env, move |c| async move {
        find(&c, "[data-testid=recent-workspace]").await;
        click(&c, "[data-testid=open-folder]").await;
        let dialog = wait_window("^Open folder$").await;
        xdotool(&["windowfocus", "--sync", &dialog]).unwrap();
        // Type the folder's path into the chooser's location bar and choose it.
        xdotool(&["key", "--clearmodifiers", "ctrl+l"]).unwrap();
        xdotool(&["type", "--delay", "5", &format!("{}/", git_dir.display())]).unwrap();
        xdotool(&["key", "--clearmodifiers", "Return"]).unwrap();
        // GTK may first go into the folder typed; the next Return chooses it.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while window_visible("^Open folder$") {
            if std::time::Instant::now() > deadline {
                xdotool(&["key", "--clearmodifiers", "Return"]).unwrap();
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        find(&c, "[data-testid=workspace-error]").await;
        let message = text_of(&c, "[data-testid=workspace-error]").await;
        assert!(message.contains("git directory"), "{message}");
        assert!(
            message.contains(&repo_path.display().to_string()),
            "{message}"
        );
        let offer = format!(
            "[data-testid=open-instead][data-path='{}']",
            repo_path.display()
        );
        let label = text_of(&c, &offer).await;
        assert_eq!(label, "Open gitrepo instead");
        assert_eq!(
            git::digest(&git_dir, &[]),
            before,
            "the refused git directory changed"
        );
        screenshot(&c, "git-dir-refused.png").await;
        click(&c, &offer).await;
        find(&c, "[data-testid=composer]").await;
        wait_window("^gitrepo — Cairn$").await;
    })
    .await;
}
