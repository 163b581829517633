//! Typed IPC commands of the desktop app.

use std::time::Duration;

use cairn_protocol::{
    AssistantMessage, Event, TextDelta, TokenUsage, TurnEnd, TurnStart, TurnStatus,
};
use serde::Serialize;
use tauri::ipc::Channel;
use ts_rs::TS;

/// What the UI shows in its header: product name, app version and protocol version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct AppInfo {
    /// Product name ("Cairn").
    pub name: String,
    /// App version (the Cargo package version).
    pub version: String,
    /// [`cairn_protocol::PROTOCOL_VERSION`] this build speaks.
    pub protocol_version: u32,
}

/// The app's name and versions.
#[tauri::command]
pub fn app_info() -> AppInfo {
    AppInfo {
        name: "Cairn".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        protocol_version: cairn_protocol::PROTOCOL_VERSION,
    }
}

/// Pause between two streamed deltas, so the UI visibly renders a stream.
const DELTA_PAUSE: Duration = Duration::from_millis(30);

/// Streams one demo turn for `input` through `on_event`: `turn_start`, several
/// `assistant_delta`s, `assistant_message` and `turn_end` (completed).
///
/// Stands in for a real engine turn until the session runtime is wired in; errors only when
/// the channel to the page is gone.
#[tauri::command]
pub async fn ping_events(input: String, on_event: Channel<Event>) -> Result<(), String> {
    for event in demo_turn(&input, &next_task_id()) {
        let pause = matches!(event, Event::AssistantDelta(_));
        on_event
            .send(event)
            .map_err(|error| format!("event channel closed: {error}"))?;
        if pause {
            tokio::time::sleep(DELTA_PAUSE).await;
        }
    }
    Ok(())
}

/// The reply text of the demo turn, split into the chunks streamed as deltas.
pub fn demo_reply_chunks(input: &str) -> Vec<String> {
    let words = input.split_whitespace().count();
    vec![
        "Hello from the Rust backend. ".to_string(),
        "The engine is not connected yet, ".to_string(),
        "so this reply was streamed as protocol events ".to_string(),
        "through a Tauri channel, ".to_string(),
        "one assistant_delta at a time. ".to_string(),
        format!(
            "Your prompt had {words} word{}.",
            if words == 1 { "" } else { "s" }
        ),
    ]
}

/// The full event sequence of one demo turn.
pub fn demo_turn(input: &str, task_id: &str) -> Vec<Event> {
    let req_id = format!("{task_id}-r1");
    let chunks = demo_reply_chunks(input);
    let text = chunks.concat();
    let mut events = vec![Event::TurnStart(TurnStart {
        task_id: task_id.to_string(),
        input: input.to_string(),
        attachment_count: None,
        attachments: None,
        session_id: "demo".to_string(),
        turn: 1,
    })];
    events.extend(chunks.into_iter().map(|chunk| {
        Event::AssistantDelta(TextDelta {
            text: chunk,
            req_id: req_id.clone(),
            task_id: task_id.to_string(),
        })
    }));
    events.push(Event::AssistantMessage(AssistantMessage {
        usage: Some(TokenUsage {
            input_tokens: input.split_whitespace().count() as u64,
            output_tokens: text.split_whitespace().count() as u64,
            cached_input_tokens: 0,
            reasoning_tokens: 0,
        }),
        text,
        reasoning: String::new(),
        tool_calls: Vec::new(),
        req_id,
        task_id: task_id.to_string(),
        log_time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    }));
    events.push(Event::TurnEnd(TurnEnd {
        status: TurnStatus::Completed,
        iterations: 1,
        produced_files: Vec::new(),
        task_id: task_id.to_string(),
    }));
    events
}

/// A fresh turn id.
fn next_task_id() -> String {
    format!("demo-{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_turn_is_a_complete_turn() {
        let events = demo_turn("hi there", "t1");
        let types: Vec<&str> = events.iter().map(Event::type_name).collect();
        assert_eq!(types.first(), Some(&"turn_start"));
        assert_eq!(types.last(), Some(&"turn_end"));
        assert!(types.iter().filter(|t| **t == "assistant_delta").count() >= 3);
        let streamed: String = events
            .iter()
            .filter_map(|e| match e {
                Event::AssistantDelta(d) => Some(d.text.as_str()),
                _ => None,
            })
            .collect();
        let Some(Event::AssistantMessage(message)) = events.get(events.len() - 2) else {
            panic!("assistant_message is not second to last: {types:?}");
        };
        assert_eq!(message.text, streamed);
        assert!(streamed.ends_with("Your prompt had 2 words."));
        let Some(Event::TurnEnd(end)) = events.last() else {
            panic!("no turn_end");
        };
        assert_eq!(end.status, TurnStatus::Completed);
    }
}
