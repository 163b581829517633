//! What the user attaches to a message through IPC: `@file` mentions reach the model as
//! file blocks (bad ones are refused), pasted images reach it and read back only in their
//! session.

use super::*;

/// The user message text of the last captured request (every text part joined).
fn last_user_text(server: &MockLlmServer) -> String {
    let reqs = server.requests();
    let body = &reqs.last().unwrap().body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mentioned_files_reach_the_model_and_bad_mentions_are_refused() {
    let server = MockLlmServer::with_script(vec![Reply::text("Read it.")])
        .await
        .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        let ws = h.workspace.path();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").unwrap();
        std::fs::write(ws.join("blob.bin"), b"\x00\x01binary").unwrap();
        std::fs::write(ws.join("big.txt"), "x".repeat(300 * 1024)).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "TOP SECRET").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), ws.join("sneaky.txt"))
            .unwrap();
        ok(&h.window, "open_workspace", json!({"path": ws}));
        ok(&h.window, "new_session", json!({}));
        let secret = outside.path().join("secret.txt").display().to_string();
        for (text, why) in [
            ("read @../secret.txt".to_string(), "inside the workspace"),
            (format!("read @{secret}"), "inside the workspace"),
            ("read @sneaky.txt".to_string(), "outside the workspace"),
            ("read @blob.bin".to_string(), "binary"),
            ("read @big.txt".to_string(), "limited to 256 KB"),
        ] {
            let err = invoke(
                &h.window,
                "run_turn",
                json!({"text": text, "onEvent": "__CHANNEL__:31"}),
            )
            .unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
        assert!(server.requests().is_empty(), "refused turns sent nothing");
        let end = ok(
            &h.window,
            "run_turn",
            json!({"text": "What does @src/lib.rs return? ask @team", "onEvent": "__CHANNEL__:32"}),
        );
        assert_eq!(end["status"], "completed", "{end}");
        let sent = last_user_text(&server);
        assert!(
            sent.contains("<file path=\"src/lib.rs\">\npub fn answer() -> u32 { 42 }\n</file>"),
            "{sent}"
        );
        assert!(!sent.contains("TOP SECRET"));
        // The transcript's event keeps the typed text; the file is named in the refs.
        let view = ok(
            &h.window,
            "open_session",
            json!({"id": ok(&h.window, "session_status", json!({}))["id"]}),
        );
        let start = view["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "turn_start")
            .unwrap()
            .clone();
        assert_eq!(
            start["data"]["input"],
            "What does @src/lib.rs return? ask @team"
        );
        assert_eq!(start["data"]["attachments"][0]["kind"], "file");
        assert_eq!(start["data"]["attachments"][0]["path"], "src/lib.rs");
    });
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-tiny-test-image";

fn png_upload(name: &str) -> Value {
    json!({"name": name, "mimeType": "image/png",
           "dataUrl": cairn_runtime::attach::to_data_url("image/png", PNG)})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pasted_images_reach_the_model_and_read_back_only_in_their_session() {
    let server = MockLlmServer::with_script(vec![Reply::text("A tiny image.")])
        .await
        .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        let id = open_new_session(&h);
        let five: Vec<Value> = (0..5).map(|i| png_upload(&format!("{i}.png"))).collect();
        let refused = [
            (json!(five), "at most 4 images"),
            (
                json!([{"name": "x.svg", "mimeType": "image/svg+xml",
                        "dataUrl": "data:image/svg+xml;base64,PHN2Zy8+"}]),
                "only PNG, JPEG",
            ),
            (
                json!([{"name": "big.png", "mimeType": "image/png",
                        "dataUrl": cairn_runtime::attach::to_data_url("image/png", &vec![7u8; 10 * 1024 * 1024 + 1])}]),
                "10 MB",
            ),
        ];
        for (images, why) in refused {
            let err = invoke(
                &h.window,
                "run_turn",
                json!({"text": "look", "images": images, "onEvent": "__CHANNEL__:41"}),
            )
            .unwrap_err();
            assert!(err.contains(why), "{why}: {err}");
        }
        assert!(server.requests().is_empty());
        let end = ok(
            &h.window,
            "run_turn",
            json!({"text": "what is this?", "images": [png_upload("")], "onEvent": "__CHANNEL__:42"}),
        );
        assert_eq!(end["status"], "completed", "{end}");
        let body = server.requests()[0].body.to_string();
        assert!(
            body.contains("image_url") || body.contains("input_image"),
            "{body}"
        );
        assert!(body.contains(&cairn_runtime::attach::to_data_url("image/png", PNG)));

        let dir = h
            .state_dir
            .path()
            .join("sessions")
            .join(&id)
            .join("attachments");
        let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
        let stored = format!("attachments/{}", file.file_name().to_string_lossy());
        assert!(stored.ends_with("image-1.png"), "{stored}");
        let url = ok(&h.window, "read_attachment", json!({"path": stored}));
        assert_eq!(
            url,
            json!(cairn_runtime::attach::to_data_url("image/png", PNG))
        );
        for bad in [
            "state.json",
            "../state.json",
            "attachments/../state.json",
            "/etc/passwd",
        ] {
            let err = invoke(&h.window, "read_attachment", json!({"path": bad})).unwrap_err();
            assert!(err.contains("not an attachment path"), "{bad}: {err}");
        }
        // Another session of the window cannot read it.
        ok(&h.window, "new_session", json!({}));
        let err = invoke(&h.window, "read_attachment", json!({"path": stored})).unwrap_err();
        assert!(err.contains("no attachment"), "{err}");
    });
}
