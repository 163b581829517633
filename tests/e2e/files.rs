//! E2E: the files panel and what a prompt carries. The tree hides ignored files, expands
//! folders on demand and refreshes when the test creates a file on disk; a file the agent
//! wrote is marked; `@` + part of a name completes it (Esc closes the list only), and the
//! picked file's content reaches the model; images pasted and dropped into the prompt reach
//! the model too and show as thumbnails on the user's message.

use super::*;

fn files_script() -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "call_w1",
            "write_file",
            json!({"path": "agent.txt", "content": "written by the agent\n"}),
        ),
        Reply::text("I wrote agent.txt."),
        Reply::text("The note says the secret word is cairnstone."),
        Reply::text("Two pictures of a small cairn."),
        Reply::text(&"slowly ".repeat(40))
            .chunk_size(7)
            .delay_between_chunks(Duration::from_millis(100)),
    ]
}

/// The composer's current text.
async fn composer_value(c: &Client) -> String {
    c.execute(
        "return document.querySelector('[data-testid=composer]').value",
        vec![],
    )
    .await
    .unwrap()
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Draws a small PNG in the page and hands it to the prompt as a synthetic `kind` event
/// (`paste` with `clipboardData`, or `drop` with `dataTransfer`) holding it as a File.
fn inject_image_js(kind: &str, name: &str, colour: &str) -> String {
    let (prop, target) = if kind == "paste" {
        ("clipboardData", "[data-testid=composer]")
    } else {
        ("dataTransfer", "[data-testid=composer-form]")
    };
    format!(
        r#"
        const c = document.createElement('canvas');
        c.width = 96; c.height = 96;
        const g = c.getContext('2d');
        g.fillStyle = '#f3e6d1'; g.fillRect(0, 0, 96, 96);
        g.fillStyle = '{colour}';
        [[48, 74, 30, 12], [48, 52, 22, 10], [48, 33, 15, 8], [48, 18, 9, 6]].forEach(([x, y, rx, ry]) => {{
          g.beginPath(); g.ellipse(x, y, rx, ry, 0, 0, Math.PI * 2); g.fill();
        }});
        const bin = atob(c.toDataURL('image/png').split(',')[1]);
        const bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        const file = new File([bytes], '{name}', {{ type: 'image/png' }});
        let dt;
        try {{ dt = new DataTransfer(); dt.items.add(file); }}
        catch (e) {{ dt = {{ files: [file], types: ['Files'] }}; }}
        const ev = new Event('{kind}', {{ bubbles: true, cancelable: true }});
        Object.defineProperty(ev, '{prop}', {{ value: dt }});
        document.querySelector('{target}').dispatchEvent(ev);
        return dt.files.length;
        "#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_panel_refreshes_mentions_attach_files_and_images_reach_the_model() {
    let server = Arc::new(MockLlmServer::with_script(files_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("field-notes");
    std::fs::write(ws.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(ws.join("build/output.bin"), "ignored").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(ws.join("README.md"), "# field notes\n").unwrap();
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        Some("allow"),
    );
    let s = server.clone();
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        // The tree: ignored folder left out, folders expand on demand.
        find(&c, "[data-testid=files-panel] [data-testid=file-node][data-path='src']").await;
        find(&c, "[data-testid=file-node][data-path='README.md']").await;
        assert_eq!(count(&c, "[data-testid=file-node][data-path='build']").await, 0);
        assert_eq!(count(&c, "[data-testid=file-node][data-path='src/main.rs']").await, 0);
        click(&c, "[data-testid=file-node][data-path='src']").await;
        find(&c, "[data-testid=file-node][data-path='src/main.rs']").await;
        assert_eq!(count(&c, "[data-testid=files-watch-error]").await, 0, "the watcher runs");

        // A file created on disk shows up without a refresh click (the watcher).
        tokio::time::sleep(Duration::from_millis(600)).await;
        std::fs::write(w.join("notes-from-test.md"), "The secret word is cairnstone.\n").unwrap();
        find(&c, "[data-testid=file-node][data-path='notes-from-test.md']").await;

        // A file the agent writes appears and is marked as changed in this session.
        send(&c, "Write agent.txt").await;
        wait_turns(&c, "completed", 1).await;
        find(&c, "[data-testid=file-node][data-path='agent.txt'][data-changed=true]").await;
        assert_eq!(
            count(&c, "[data-testid=file-node][data-path='README.md'][data-changed=true]").await,
            0
        );
        screenshot(&c, "files.png").await;

        // `@` opens the completion list; Esc closes it (and nothing else).
        let composer = find(&c, "[data-testid=composer]").await;
        composer.send_keys("Summarise @zz").await.unwrap();
        find(&c, "[data-testid=mention-list]").await;
        composer.send_keys(&Key::Escape.to_string()).await.unwrap();
        wait_js(
            &c,
            "the mention list to close",
            "return document.querySelector('[data-testid=mention-list]') === null",
        )
        .await;
        assert_eq!(composer_value(&c).await, "Summarise @zz", "Esc kept the text");
        let back = Key::Backspace.to_string();
        composer.send_keys(&back.repeat(3)).await.unwrap();
        composer.send_keys("@notes-fr").await.unwrap();
        find(&c, "[data-testid=mention-option][data-path='notes-from-test.md']").await;
        let first = c
            .execute(
                "return document.querySelector('[data-testid=mention-option][aria-selected=true]').dataset.path",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(first, json!("notes-from-test.md"), "best match first");
        composer.send_keys(&Key::Enter.to_string()).await.unwrap();
        wait_js(
            &c,
            "the pick",
            "return document.querySelector('[data-testid=composer]').value === 'Summarise @notes-from-test.md '",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=mention-list]").await, 0);
        composer.send_keys("please").await.unwrap();
        composer.send_keys(&Key::Enter.to_string()).await.unwrap();
        wait_turns(&c, "completed", 2).await;
        find(&c, "[data-testid=message-file][data-path='notes-from-test.md']").await;
        let shown = last_text(&c, "[data-testid=user-message]").await;
        assert!(shown.contains("Summarise @notes-from-test.md please"), "{shown}");
        assert!(!shown.contains("cairnstone"), "the transcript shows no raw dump: {shown}");
        let sent = s.requests();
        let with_file = sent
            .iter()
            .map(|r| r.body.to_string())
            .find(|b| b.contains("<file path=\\\"notes-from-test.md\\\">"));
        let with_file = with_file.expect("a request carried the mentioned file");
        assert!(with_file.contains("The secret word is cairnstone."), "{with_file}");

        // Images: one pasted, one dropped; both wait as thumbnails, then go with the prompt.
        let n = c.execute(&inject_image_js("paste", "pasted.png", "#8a6d3b"), vec![]).await.unwrap();
        assert_eq!(n, json!(1));
        find(&c, "[data-testid=pending-image]").await;
        c.execute(&inject_image_js("drop", "dropped.png", "#2f7d4f"), vec![]).await.unwrap();
        wait_js(
            &c,
            "two pending images",
            "return document.querySelectorAll('[data-testid=pending-image]').length === 2",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=attach-error]").await, 0);
        send(&c, "What is in these pictures?").await;
        wait_turns(&c, "completed", 3).await;
        wait_js(
            &c,
            "two thumbnails on the message",
            "const imgs = [...document.querySelectorAll('[data-testid=message-image]')]; \
             return imgs.length === 2 && imgs.every(i => i.src.startsWith('data:image/png;base64,') && i.complete && i.naturalWidth === 96)",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=pending-image]").await, 0);
        let last = s.requests().last().unwrap().body.to_string();
        assert!(
            last.contains("image_url") || last.contains("input_image"),
            "the last request carries images"
        );
        assert_eq!(last.matches("data:image/png;base64,").count(), 2, "both images sent");
        screenshot(&c, "attachments.png").await;

        // Reopened, the session shows the thumbnails again (read back from its attachments).
        click(&c, "[data-testid=new-chat]").await;
        wait_js(
            &c,
            "an empty chat",
            "return document.querySelector('[data-testid=message-image]') === null",
        )
        .await;
        click(&c, "[data-testid=session-item] [data-testid=session-open]").await;
        wait_js(
            &c,
            "the thumbnails after reopening",
            "const imgs = [...document.querySelectorAll('[data-testid=message-image]')]; \
             return imgs.length === 2 && imgs.every(i => i.src.startsWith('data:image/png;base64,'))",
        )
        .await;
        find(&c, "[data-testid=message-file][data-path='notes-from-test.md']").await;

        // While a turn runs, Esc with the list open closes the list and does not stop the turn.
        send(&c, "Tell me slowly").await;
        find(&c, "[data-testid=stop]").await;
        let composer = find(&c, "[data-testid=composer]").await;
        composer.send_keys("@").await.unwrap();
        find(&c, "[data-testid=mention-list]").await;
        composer.send_keys(&Key::Escape.to_string()).await.unwrap();
        wait_js(
            &c,
            "the mention list to close",
            "return document.querySelector('[data-testid=mention-list]') === null",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=stop]").await, 1, "the turn still runs");
        composer.send_keys(&Key::Backspace.to_string()).await.unwrap();
        wait_turns(&c, "completed", 4).await;
        assert_eq!(turn_ends(&c).await, ["completed"; 4], "no turn was interrupted");
    })
    .await;
    if !ran {
        return;
    }
}
