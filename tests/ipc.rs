//! The app's commands through Tauri's IPC layer, on the mock runtime (no display needed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use cairn_protocol::{Event, TurnStatus};
use tauri::ipc::{CallbackFn, Channel, InvokeBody, InvokeResponseBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindow;

/// The real app (real config and capabilities) on the mock runtime.
fn app() -> tauri::App<MockRuntime> {
    cairn_app::register(mock_builder())
        .build(tauri::generate_context!())
        .expect("the app builds on the mock runtime")
}

/// A webview window on the mock runtime (config windows are created only when the app runs).
fn window(app: &tauri::App<MockRuntime>, label: &str) -> WebviewWindow<MockRuntime> {
    tauri::WebviewWindowBuilder::new(app, label, Default::default())
        .build()
        .unwrap()
}

fn invoke(
    window: &WebviewWindow<MockRuntime>,
    cmd: &str,
    body: serde_json::Value,
) -> Result<InvokeResponseBody, serde_json::Value> {
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

#[test]
fn app_info_reports_name_and_versions() {
    let app = app();
    let window = window(&app, "main");
    let info: serde_json::Value = invoke(&window, "app_info", serde_json::json!({}))
        .unwrap()
        .deserialize()
        .unwrap();
    assert_eq!(
        info,
        serde_json::json!({
            "name": "Cairn",
            "version": env!("CARGO_PKG_VERSION"),
            "protocolVersion": cairn_protocol::PROTOCOL_VERSION,
        })
    );
}

#[test]
fn ping_events_accepts_a_page_channel() {
    let app = app();
    let window = window(&app, "main");
    let body = serde_json::json!({ "input": "hi", "onEvent": "__CHANNEL__:42" });
    let response = invoke(&window, "ping_events", body).unwrap();
    let value: serde_json::Value = response.deserialize().unwrap();
    assert_eq!(value, serde_json::Value::Null);
}

#[test]
fn ping_events_requires_its_channel() {
    let app = app();
    let window = window(&app, "main");
    let error = invoke(&window, "ping_events", serde_json::json!({ "input": "hi" })).unwrap_err();
    assert!(error.to_string().contains("onEvent"), "{error}");
}

#[test]
fn ping_events_streams_one_complete_turn_in_order() {
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let channel = Channel::new(move |body: InvokeResponseBody| {
        let event: Event = body
            .deserialize()
            .expect("every message is a protocol event");
        sink.lock().unwrap().push(event);
        Ok(())
    });
    tauri::async_runtime::block_on(cairn_app::commands::ping_events(
        "list the files".into(),
        channel,
    ))
    .unwrap();

    let events = received.lock().unwrap();
    let types: Vec<&str> = events.iter().map(Event::type_name).collect();
    let deltas = types.iter().filter(|t| **t == "assistant_delta").count();
    assert_eq!(types.len(), deltas + 3, "{types:?}");
    assert_eq!(types[0], "turn_start");
    assert_eq!(types[types.len() - 2], "assistant_message");
    assert_eq!(types[types.len() - 1], "turn_end");
    let Event::TurnStart(start) = &events[0] else {
        unreachable!()
    };
    assert_eq!(start.input, "list the files");
    let Event::TurnEnd(end) = &events[events.len() - 1] else {
        unreachable!()
    };
    assert_eq!(end.status, TurnStatus::Completed);
    assert!(events.iter().all(|e| match e {
        Event::TurnStart(x) => x.task_id == start.task_id,
        Event::AssistantDelta(x) => x.task_id == start.task_id,
        Event::AssistantMessage(x) => x.task_id == start.task_id,
        Event::TurnEnd(x) => x.task_id == start.task_id,
        _ => false,
    }));
}

#[test]
fn ping_events_fails_when_the_page_is_gone() {
    let channel = Channel::new(|_body: InvokeResponseBody| Err(tauri::Error::WebviewNotFound));
    let result =
        tauri::async_runtime::block_on(cairn_app::commands::ping_events("hi".into(), channel));
    assert!(result.unwrap_err().contains("event channel closed"));
}

#[test]
fn windows_outside_the_capability_cannot_call_commands() {
    let app = app();
    let other = window(&app, "other");
    let error = invoke(&other, "app_info", serde_json::json!({})).unwrap_err();
    assert!(error.to_string().contains("not allowed"), "{error}");
}
