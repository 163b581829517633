//! The app's commands through Tauri's IPC layer on the mock runtime (no display needed),
//! against a scripted mock LLM server: workspaces, sessions, turns, approvals answered from
//! the chat, keys, settings, usage, capabilities and window isolation.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_app::dialogs::testing::FakeDialogs;
use cairn_app::state::{AppConfig, AppState};
use cairn_app::types::ApprovalHost;
use cairn_providers::secrets::MemoryKeyStore;
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody, InvokeResponseBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};

mod attachments;
mod history;
mod project_rules;
mod rewind;

const KEY: &str = "sk-test-key-abcdef-123456";

struct Harness {
    app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    state_dir: tempfile::TempDir,
    workspace: tempfile::TempDir,
    /// The fake native dialogs the app uses.
    dialogs: Arc<FakeDialogs>,
}

/// The real app (real config and capabilities) on the mock runtime, with `env` as its
/// environment, an in-memory key store and fake dialogs.
fn harness(env: &[(&str, &str)], host: ApprovalHost) -> Harness {
    let state_dir = tempfile::tempdir().unwrap();
    let workspace = cairn_testkit::temp_workspace().unwrap();
    let mut vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    // The app's settings live in the config folder: the test's own, beside the state dir.
    vars.entry("CAIRN_CONFIG_FILE".into()).or_insert_with(|| {
        state_dir
            .path()
            .join("config/config.toml")
            .display()
            .to_string()
    });
    let dialogs =
        Arc::new(FakeDialogs::answering(None).with_folder(Some(workspace.path().to_path_buf())));
    let config = AppConfig {
        state_dir: state_dir.path().to_path_buf(),
        host,
        bench: false,
        env: Arc::new(move |k: &str| vars.get(k).cloned()),
        dialogs: Some(dialogs.clone()),
        keys: Some(Arc::new(MemoryKeyStore::new())),
        notifier: Some(Arc::new(
            cairn_app::attention::testing::RecordingNotifier::default(),
        )),
    };
    let app = cairn_app::register(mock_builder(), config)
        .build(tauri::generate_context!())
        .expect("the app builds on the mock runtime");
    let window = window(&app, "main");
    Harness {
        app,
        window,
        state_dir,
        workspace,
        dialogs,
    }
}

/// A webview window on the mock runtime (config windows are created only when the app runs).
fn window(app: &tauri::App<MockRuntime>, label: &str) -> WebviewWindow<MockRuntime> {
    tauri::WebviewWindowBuilder::new(app, label, Default::default())
        .build()
        .unwrap()
}

fn invoke_raw(
    window: &WebviewWindow<MockRuntime>,
    cmd: &str,
    body: Value,
) -> Result<InvokeResponseBody, Value> {
    get_ipc_response(
        window,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
}

fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, body: Value) -> Result<Value, String> {
    invoke_raw(window, cmd, body)
        .map(|r| r.deserialize::<Value>().unwrap())
        .map_err(|e| match e {
            Value::String(s) => s,
            other => other.to_string(),
        })
}

fn ok(window: &WebviewWindow<MockRuntime>, cmd: &str, body: Value) -> Value {
    invoke(window, cmd, body).unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
}

/// Opens the harness's workspace and starts a session in it; the session's id.
fn open_new_session(h: &Harness) -> String {
    ok(
        &h.window,
        "open_workspace",
        json!({"path": h.workspace.path()}),
    );
    ok(&h.window, "new_session", json!({}))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn env_for(server: &MockLlmServer) -> Vec<(&'static str, String)> {
    vec![
        ("CAIRN_MODEL", "mock-model".to_string()),
        ("OPENAI_BASE_URL", server.base_url()),
        ("OPENAI_API_KEY", KEY.to_string()),
    ]
}

fn refs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, s)| (*k, s.as_str())).collect()
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pending_approvals(h: &Harness) -> Vec<String> {
    h.app
        .state::<AppState>()
        .slot("main")
        .session
        .map(|s| s.pending().pending_approvals())
        .unwrap_or_default()
}

#[test]
fn app_info_reports_name_and_versions() {
    let h = harness(&[], ApprovalHost::Ui);
    let info = ok(&h.window, "app_info", json!({}));
    assert_eq!(
        info,
        json!({
            "name": "Cairn",
            "version": env!("CARGO_PKG_VERSION"),
            "protocolVersion": cairn_protocol::PROTOCOL_VERSION,
        })
    );
}

#[test]
fn open_link_opens_only_web_addresses() {
    let h = harness(&[], ApprovalHost::Ui);
    // A workspace file, a launcher or another scheme never reaches the desktop's opener.
    for url in [
        "file:///etc/passwd",
        "src/app.py",
        "tools/run.desktop",
        "javascript:alert(1)",
        "ftp://example.com/x",
    ] {
        let error = invoke(&h.window, "open_link", json!({ "url": url })).unwrap_err();
        assert!(error.contains("only http(s)"), "{url}: {error}");
    }
}

#[test]
fn windows_outside_the_capability_cannot_call_commands() {
    let h = harness(&[], ApprovalHost::Ui);
    let other = window(&h.app, "other");
    let error = invoke(&other, "app_info", json!({})).unwrap_err();
    assert!(error.contains("not allowed"), "{error}");
}

#[test]
fn the_capability_grants_exactly_cairns_commands() {
    let text = std::fs::read_to_string(
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("capabilities/main.json"),
    )
    .unwrap();
    let cap: Value = serde_json::from_str(&text).unwrap();
    let granted: Vec<String> = cap["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = cairn_app::commands::COMMANDS
        .iter()
        .map(|c| format!("allow-{}", c.replace('_', "-")))
        .collect();
    assert_eq!(
        granted, expected,
        "no plugin (fs, shell, dialog) permission, every command granted"
    );
}

#[test]
fn the_picker_and_refusals_of_root_and_home() {
    let h = harness(&[], ApprovalHost::Ui);
    let picked = ok(&h.window, "pick_folder", json!({}));
    assert_eq!(picked, json!(h.workspace.path().display().to_string()));
    let err = invoke(&h.window, "open_workspace", json!({"path": "/"})).unwrap_err();
    assert!(err.contains("refusing `/`"), "{err}");
    if let Some(home) = dirs::home_dir().filter(|h| h.is_dir()) {
        let err = invoke(&h.window, "open_workspace", json!({"path": home})).unwrap_err();
        assert!(err.contains("home folder"), "{err}");
    }
    let err = invoke(&h.window, "open_workspace", json!({"path": "/no/such/dir"})).unwrap_err();
    assert!(err.contains("not usable"), "{err}");
    let w = ok(
        &h.window,
        "open_workspace",
        json!({"path": h.workspace.path()}),
    );
    assert_eq!(w["sessions"], json!([]));
    let boot = ok(&h.window, "bootstrap", json!({}));
    assert_eq!(boot["recent"][0]["path"], w["path"]);
    assert_eq!(boot["workspace"]["path"], w["path"]);
    assert_eq!(boot["approvals"], "ui");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_runs_and_its_session_is_listed_renamed_resumed_and_deleted() {
    let server =
        MockLlmServer::with_script(vec![Reply::text("Hello **there**.").with_usage(120, 30)])
            .await
            .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        ok(
            &h.window,
            "open_workspace",
            json!({"path": h.workspace.path()}),
        );
        let view = ok(&h.window, "new_session", json!({}));
        assert_eq!(view["blocked"], Value::Null, "{view}");
        assert_eq!(view["model"]["id"], "mock-model");
        let id = view["id"].as_str().unwrap().to_string();
        let end = ok(
            &h.window,
            "run_turn",
            json!({"text": "Say hello", "onEvent": "__CHANNEL__:7"}),
        );
        assert_eq!(
            end,
            json!({"kind": "ended", "status": "completed", "turns": 1, "steeringTurns": 0})
        );
        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].api_key(), Some(KEY));

        let list = ok(&h.window, "list_sessions", json!({}));
        assert_eq!(list["sessions"][0]["id"], id.as_str());
        assert_eq!(list["sessions"][0]["turns"], 1);
        ok(
            &h.window,
            "rename_session",
            json!({"id": id, "name": "Greeting"}),
        );
        let list = ok(&h.window, "list_sessions", json!({}));
        assert_eq!(list["sessions"][0]["name"], "Greeting");
        assert!(invoke(&h.window, "rename_session", json!({"id": id, "name": "  "})).is_err());

        let usage = ok(&h.window, "usage_report", json!({}));
        assert_eq!(usage["total"]["requests"], 1);
        assert_eq!(usage["total"]["inputTokens"], 120);

        // Resuming rebuilds the transcript from the session's event log.
        ok(&h.window, "new_session", json!({}));
        let resumed = ok(&h.window, "open_session", json!({"id": id}));
        let types: Vec<&str> = resumed["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(
            types.contains(&"turn_start") && types.contains(&"assistant_message"),
            "{types:?}"
        );
        assert_eq!(resumed["turns"], 1);
        // Nothing was left open: no banner, and resuming runs nothing.
        assert_eq!(resumed["pendingCalls"], 0);
        let end = ok(
            &h.window,
            "resume_turn",
            json!({"onEvent": "__CHANNEL__:8"}),
        );
        assert_eq!(end, json!({"kind": "not_started"}));
        assert_eq!(server.requests().len(), 1, "resume sent no request");

        ok(&h.window, "delete_session", json!({"id": id}));
        let list = ok(&h.window, "list_sessions", json!({}));
        assert_eq!(list["sessions"], json!([]));
        assert!(invoke(&h.window, "delete_session", json!({"id": id})).is_err());
        assert!(!h.state_dir.path().join("sessions").join(&id).exists());
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_answered_from_the_chat_with_a_diff_preview() {
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "call_w1",
            "write_file",
            json!({"path": "notes.txt", "content": "hello\n"}),
        ),
        Reply::tool_call(
            "call_l1",
            "run_shell",
            json!({"command": "cp -v notes.txt copy.txt"}),
        ),
        Reply::text("Wrote it."),
    ])
    .await
    .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        std::fs::write(h.workspace.path().join("notes.txt"), "old\n").unwrap();
        ok(
            &h.window,
            "open_workspace",
            json!({"path": h.workspace.path()}),
        );
        ok(&h.window, "new_session", json!({}));
        let w = h.window.clone();
        let run = std::thread::spawn(move || {
            ok(
                &w,
                "run_turn",
                json!({"text": "write notes", "onEvent": "__CHANNEL__:9"}),
            )
        });
        wait_for("the approval", || !pending_approvals(&h).is_empty());
        let req_id = pending_approvals(&h)[0].clone();
        let diff = ok(&h.window, "edit_preview", json!({"reqId": req_id}));
        let diff = diff.as_str().unwrap();
        assert!(diff.contains("-old") && diff.contains("+hello"), "{diff}");
        let answered = ok(
            &h.window,
            "answer_approval",
            json!({"reqId": req_id, "decision": "always_tool"}),
        );
        assert_eq!(answered, json!(true));
        wait_for("the shell approval", || {
            pending_approvals(&h).iter().any(|id| id == "call_l1")
        });
        assert_eq!(
            ok(&h.window, "edit_preview", json!({"reqId": "call_l1"})),
            Value::Null,
            "no diff for a command"
        );
        ok(
            &h.window,
            "answer_approval",
            json!({"reqId": "call_l1", "decision": "always_command"}),
        );
        assert_eq!(run.join().unwrap()["status"], "completed");
        assert_eq!(
            std::fs::read_to_string(h.workspace.path().join("notes.txt")).unwrap(),
            "hello\n"
        );
        let result = ok(&h.window, "tool_result", json!({"callId": req_id}));
        assert!(result.as_str().unwrap().contains("notes.txt"), "{result}");
        let rules = ok(&h.window, "permission_rules", json!({}));
        assert_eq!(rules["tools"], json!(["write_file"]));
        assert_eq!(rules["commands"], json!(["cp"]));
        assert!(rules["persistent"].is_array());
        let rules = ok(&h.window, "revoke_tool", json!({"name": "write_file"}));
        assert_eq!(rules["tools"], json!([]));
        assert!(invoke(&h.window, "revoke_tool", json!({"name": "write_file"})).is_err());
        let rules = ok(&h.window, "revoke_command", json!({"program": "cp"}));
        assert_eq!(rules["commands"], json!([]));
        assert!(invoke(&h.window, "revoke_rule", json!({"text": "no such rule"})).is_err());
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_window_denies_the_approval_interrupts_and_saves() {
    let server = MockLlmServer::with_script(vec![Reply::tool_call(
        "call_s1",
        "run_shell",
        json!({"command": "echo hi > out.txt"}),
    )])
    .await
    .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        let id = open_new_session(&h);
        let w = h.window.clone();
        let run = std::thread::spawn(move || {
            invoke(
                &w,
                "run_turn",
                json!({"text": "run it", "onEvent": "__CHANNEL__:3"}),
            )
        });
        wait_for("the approval", || !pending_approvals(&h).is_empty());
        let session = h.app.state::<AppState>().slot("main").session.unwrap();
        // What the window's close request runs (the mock runtime has no event loop to send
        // it): with a session running it asks first; "cancel" keeps everything running.
        let state = h.app.state::<AppState>();
        assert_eq!(cairn_app::running_sessions(&state, Some("main")), 1);
        assert_eq!(cairn_app::running_sessions(&state, Some("win-other")), 0);
        h.dialogs.set_confirm(false);
        let agreed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let a = agreed.clone();
        cairn_app::ask_before_stopping(
            &state,
            1,
            false,
            Box::new(move || a.store(true, std::sync::atomic::Ordering::SeqCst)),
        );
        assert!(!agreed.load(std::sync::atomic::Ordering::SeqCst));
        assert!(!session.is_closed());
        h.dialogs.set_confirm(true);
        let a = agreed.clone();
        cairn_app::ask_before_stopping(
            &state,
            1,
            false,
            Box::new(move || a.store(true, std::sync::atomic::Ordering::SeqCst)),
        );
        assert!(agreed.load(std::sync::atomic::Ordering::SeqCst));
        let asked = h.dialogs.confirms();
        assert_eq!(asked.len(), 2);
        assert!(
            asked[0].starts_with("1 session is still working"),
            "{asked:?}"
        );
        let closing = cairn_app::close_window_session(&state, "main").unwrap();
        tauri::async_runtime::block_on(closing).unwrap();
        assert!(session.is_closed());
        let end = run.join().unwrap().unwrap();
        assert_eq!(end["kind"], "ended", "{end}");
        assert_eq!(end["status"], "interrupted", "{end}");
        assert!(
            !h.workspace.path().join("out.txt").exists(),
            "denied command did not run"
        );
        assert!(h.app.state::<AppState>().slot("main").session.is_none());
        let saved = cairn_runtime::SessionStore::new(h.state_dir.path())
            .load(&id)
            .unwrap();
        assert_eq!(saved.turns, 1);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_key_the_session_is_blocked_with_a_clear_message_until_one_is_stored() {
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let base = server.base_url();
    let env = [
        ("CAIRN_MODEL", "mock-model"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    tokio::task::block_in_place(|| {
        let h = harness(&env, ApprovalHost::Ui);
        ok(
            &h.window,
            "open_workspace",
            json!({"path": h.workspace.path()}),
        );
        let view = ok(&h.window, "new_session", json!({}));
        let blocked = view["blocked"].as_str().unwrap();
        assert!(
            blocked.contains("No API key") && blocked.contains("OpenAI"),
            "{blocked}"
        );
        let err = invoke(
            &h.window,
            "run_turn",
            json!({"text": "hi", "onEvent": "__CHANNEL__:1"}),
        )
        .unwrap_err();
        assert!(err.contains("No API key"), "{err}");
        assert!(server.requests().is_empty(), "no request without a key");

        let settings = invoke_raw(
            &h.window,
            "set_api_key",
            json!({"provider": "openai", "key": KEY}),
        )
        .unwrap();
        let text = String::from_utf8_lossy(
            settings
                .deserialize::<Value>()
                .unwrap()
                .to_string()
                .as_bytes(),
        )
        .to_string();
        assert!(!text.contains("abcdef"), "the key never comes back: {text}");
        let settings: Value = serde_json::from_str(&text).unwrap();
        let openai = settings["providers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "openai")
            .unwrap()
            .clone();
        assert_eq!(
            openai["key"],
            json!({"state": "stored", "masked": "••••••••3456"})
        );
        let status = ok(&h.window, "session_status", json!({}));
        assert_eq!(status["blocked"], Value::Null, "{status}");
        assert_eq!(
            ok(
                &h.window,
                "run_turn",
                json!({"text": "hi", "onEvent": "__CHANNEL__:2"})
            )["status"],
            "completed"
        );
        assert_eq!(server.requests()[0].api_key(), Some(KEY));

        ok(&h.window, "remove_api_key", json!({"provider": "openai"}));
        let status = ok(&h.window, "session_status", json!({}));
        assert!(status["blocked"].as_str().unwrap().contains("No API key"));
        assert!(invoke(&h.window, "remove_api_key", json!({"provider": "openai"})).is_err());
    });
}

/// The Settings' "All settings" list is `cairn config`'s: each key with its source, set and
/// unset in the same config.toml (secrets in the keyring), bad keys and values refused.
#[test]
fn every_setting_is_listed_with_its_source_and_edited_in_the_config_file() {
    let h = harness(&[("CAIRN_VISION_PROVIDER", "anthropic")], ApprovalHost::Ui);
    let option = |s: &Value, key: &str| {
        s["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("{key} listed"))
    };
    let s = ok(&h.window, "get_settings", json!({}));
    assert_eq!(option(&s, "vision.model")["source"], "default");
    let env = option(&s, "vision.provider");
    assert_eq!(
        (env["source"].clone(), env["env"].clone()),
        (json!("env"), json!("CAIRN_VISION_PROVIDER"))
    );
    let s = ok(
        &h.window,
        "set_setting",
        json!({"key": "vision.model", "value": "gpt-4o"}),
    );
    let vision = option(&s, "vision.model");
    assert_eq!(
        (vision["value"].clone(), vision["source"].clone()),
        (json!("gpt-4o"), json!("file"))
    );
    let config = h.state_dir.path().join("config/config.toml");
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("model = \"gpt-4o\""));
    // A secret goes to the keyring, never the file, and comes back masked.
    let s = ok(
        &h.window,
        "set_setting",
        json!({"key": "web_search.brave_key", "value": "brave-0123456789abcdef"}),
    );
    let key = option(&s, "web_search.brave_key");
    assert_eq!(key["source"], "keyring");
    assert!(!key.to_string().contains("brave-0123"), "{key}");
    assert!(!std::fs::read_to_string(&config)
        .unwrap()
        .contains("brave-0123"));
    assert!(invoke(
        &h.window,
        "set_setting",
        json!({"key": "no.such", "value": "1"})
    )
    .is_err());
    assert!(invoke(
        &h.window,
        "set_setting",
        json!({"key": "retries", "value": "x"})
    )
    .is_err());
    let s = ok(&h.window, "unset_setting", json!({"key": "vision.model"}));
    assert_eq!(option(&s, "vision.model")["source"], "default");
    assert_eq!(s["configFile"], config.display().to_string());
}

/// The vault page: entries per role, values never sent back, the old state-dir vault
/// migrated (said) on first sight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vault_page_lists_sets_and_removes_entries_and_migrates_the_old_file() {
    tokio::task::block_in_place(|| {
        let h = harness(&[], ApprovalHost::Ui);
        std::fs::write(
            h.state_dir.path().join("vault.toml"),
            "OLD_TOKEN = \"old-value-123\"\n",
        )
        .unwrap();
        let v = ok(&h.window, "vault_list", json!({}));
        assert!(v["notice"].as_str().unwrap().contains("moved"), "{v}");
        assert_eq!(v["entries"][0]["name"], "OLD_TOKEN");
        assert_eq!(v["entries"][0]["roles"], json!(["*"]));
        let v = ok(
            &h.window,
            "vault_set",
            json!({"name": "DEPLOY", "value": "deploy-secret-9", "roles": ["code", " "]}),
        );
        assert!(!v.to_string().contains("deploy-secret"), "{v}");
        let deploy = v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "DEPLOY")
            .unwrap()
            .clone();
        assert_eq!(deploy["roles"], json!(["code"]));
        assert_eq!(deploy["store"], "keyring");
        assert!(invoke(
            &h.window,
            "vault_set",
            json!({"name": "PATH", "value": "x", "roles": []})
        )
        .is_err());
        let v = ok(&h.window, "vault_remove", json!({"name": "DEPLOY"}));
        assert_eq!(v["entries"].as_array().unwrap().len(), 1);
        assert!(invoke(&h.window, "vault_remove", json!({"name": "DEPLOY"})).is_err());
    });
}

#[test]
fn settings_are_validated_saved_and_restored() {
    let h = harness(&[], ApprovalHost::Ui);
    let update = |provider: &str, base: &str, reasoning: &str| {
        json!({"update": {"provider": provider, "model": "llama3.1:8b", "baseUrl": base,
                          "reasoning": reasoning, "language": "zh"}})
    };
    assert!(invoke(&h.window, "save_settings", update("nope", "", "")).is_err());
    assert!(invoke(&h.window, "save_settings", update("ollama", "ftp://x", "")).is_err());
    assert!(invoke(&h.window, "save_settings", update("ollama", "", "extreme")).is_err());
    let s = ok(
        &h.window,
        "save_settings",
        update("ollama", "http://127.0.0.1:11434/v1", "high"),
    );
    assert_eq!(s["provider"], "ollama");
    assert_eq!(s["language"], "zh");
    assert_eq!(s["baseUrl"], "http://127.0.0.1:11434/v1");
    let ollama = s["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "ollama")
        .unwrap()
        .clone();
    assert_eq!(ollama["kind"], "local");
    assert_eq!(ollama["key"]["state"], "not_needed");
    assert!(s["models"].as_array().unwrap().len() > 5);
    // The preferences are keys of the config folder's config.toml (what `cairn config`
    // edits), not of the state dir.
    let config = h.state_dir.path().join("config/config.toml");
    let file = std::fs::read_to_string(&config).unwrap();
    assert!(file.contains("model = \"llama3.1:8b\""), "{file}");
    assert!(!h.state_dir.path().join("desktop.json").exists());
    // A fresh app on another state dir reads them back: --state-dir does not change them.
    let elsewhere = tempfile::tempdir().unwrap();
    let again = cairn_app::settings::SettingsFile::for_user(config, Some(elsewhere.path())).load();
    assert_eq!(again.provider, "ollama");
}

#[test]
fn answers_without_a_session_are_clear_errors() {
    let h = harness(&[], ApprovalHost::Ui);
    let err = invoke(&h.window, "interrupt", json!({})).unwrap_err();
    assert!(err.contains("No session"), "{err}");
    let err = invoke(
        &h.window,
        "resume_turn",
        json!({"onEvent": "__CHANNEL__:9"}),
    )
    .unwrap_err();
    assert!(err.contains("No session"), "{err}");
    let err = invoke(
        &h.window,
        "answer_approval",
        json!({"reqId": "x", "decision": "once"}),
    )
    .unwrap_err();
    assert!(err.contains("No session"), "{err}");
    let err = invoke(
        &h.window,
        "bench_mark",
        json!({"mark": "first_paint", "data": null}),
    )
    .unwrap_err();
    assert!(err.contains("CAIRN_BENCH"), "{err}");
}

#[test]
fn the_files_panel_lists_folders_honouring_gitignore_and_refuses_escapes() {
    let h = harness(&[], ApprovalHost::Ui);
    let ws = h.workspace.path();
    std::fs::write(ws.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("build/out.bin"), "x").unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.join("escape")).unwrap();
    let err = invoke(&h.window, "list_dir", json!({"path": ""})).unwrap_err();
    assert!(err.contains("No workspace"), "{err}");
    ok(&h.window, "open_workspace", json!({"path": ws}));

    let root = ok(&h.window, "list_dir", json!({"path": ""}));
    let names: Vec<&str> = root["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"src") && names.contains(&".gitignore"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"build"),
        "ignored folder listed: {names:?}"
    );
    let src = ok(&h.window, "list_dir", json!({"path": "src"}));
    assert_eq!(src["entries"][0]["path"], "src/lib.rs");
    for bad in ["..", "../", "src/../..", "/etc"] {
        let err = invoke(&h.window, "list_dir", json!({"path": bad})).unwrap_err();
        assert!(err.contains("inside the workspace"), "{bad}: {err}");
    }
    let err = invoke(&h.window, "list_dir", json!({"path": "escape"})).unwrap_err();
    assert!(err.contains("outside the workspace"), "{err}");

    let index = ok(&h.window, "workspace_files", json!({}));
    assert_eq!(index["files"], json!([".gitignore", "src/lib.rs"]));

    // The watcher belongs to the window's slot and stops with the workspace.
    let status = ok(
        &h.window,
        "watch_files",
        json!({"onEvent": "__CHANNEL__:21"}),
    );
    assert_eq!(status, json!({"watching": true, "error": null}));
    let state = h.app.state::<AppState>();
    assert!(state.slot("main").files.is_some());
    assert!(
        state.slot("other").files.is_none(),
        "no watcher for other windows"
    );
    ok(&h.window, "close_workspace", json!({}));
    assert!(state.slot("main").files.is_none());
}
