//! Saved sessions for the memory benchmark, written with the store's own types (what the app
//! reads when a session is opened): a checkpoint with its history and an event log.

use std::path::Path;

use cairn_protocol::{
    AssistantMessage, ContentPart, Event, IterationEnd, Message, TokenUsage, ToolCall,
    ToolFinished, ToolKind, ToolProposed, ToolResult, ToolStarted, ToolStatus, TurnEnd, TurnStart,
    TurnStatus,
};
use cairn_runtime::store::{EngineHook, PermissionState};
use cairn_runtime::store::{SavedSession, SessionStore};

/// Events of one seeded turn (see [`turn_events`]).
pub const EVENTS_PER_TURN: usize = 9;

fn usage() -> Option<TokenUsage> {
    Some(TokenUsage {
        input_tokens: 1200,
        output_tokens: 180,
        ..TokenUsage::default()
    })
}

fn reply_text(turn: usize) -> String {
    format!(
        "Module **m{turn}** parses its input and writes `out_{turn}.json`.\n\n\
         - it reads the configuration once\n- it keeps the last 16 results\n\n\
         ```rust\nfn step_{turn}(x: u32) -> u32 {{\n    x.wrapping_mul({turn})\n}}\n```\n"
    )
}

/// One turn as the engine logs it: the question, a reply calling `read_file`, the call, its
/// result, and the final answer.
fn turn_events(session: &str, turn: usize) -> Vec<Event> {
    let task = format!("task-{turn}");
    let call = format!("call-{turn}");
    let at = "2026-11-30T10:00:00.000Z".to_string();
    vec![
        Event::TurnStart(TurnStart {
            task_id: task.clone(),
            input: format!("Question {turn}: what does module m{turn} do?"),
            attachment_count: None,
            attachments: None,
            session_id: session.to_string(),
            turn: turn as u32,
            source: Default::default(),
            worktree: None,
            sandbox: None,
        }),
        Event::AssistantMessage(AssistantMessage {
            text: format!("Let me read `src/m{turn}.rs` first."),
            reasoning: String::new(),
            tool_calls: vec!["read_file".into()],
            usage: usage(),
            cost_usd: None,
            req_id: format!("{task}-r1"),
            task_id: task.clone(),
            log_time: at.clone(),
        }),
        Event::ToolProposed(ToolProposed {
            req_id: call.clone(),
            name: "read_file".into(),
            arguments: serde_json::json!({ "path": format!("src/m{turn}.rs") }),
            task_id: task.clone(),
            kind: ToolKind::default(),
            subject: Some(format!("src/m{turn}.rs")),
        }),
        Event::ToolStarted(ToolStarted {
            task_id: task.clone(),
            req_id: call.clone(),
            name: "read_file".into(),
            start_time: Some(at.clone()),
        }),
        Event::ToolFinished(ToolFinished {
            task_id: task.clone(),
            req_id: call,
            name: "read_file".into(),
            status: ToolStatus::Ok,
            reason: None,
            duration: Some(3),
            result_preview: Some(format!("pub fn step_{turn}(x: u32) -> u32 {{ … }}")),
            kind: ToolKind::default(),
            truncated: false,
            attachments: Vec::new(),
            stale_files: Vec::new(),
            unchanged: false,
        }),
        Event::IterationEnd(IterationEnd {
            iteration: 1,
            task_id: task.clone(),
        }),
        Event::AssistantMessage(AssistantMessage {
            text: reply_text(turn),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            usage: usage(),
            cost_usd: None,
            req_id: format!("{task}-r2"),
            task_id: task.clone(),
            log_time: at,
        }),
        Event::IterationEnd(IterationEnd {
            iteration: 2,
            task_id: task.clone(),
        }),
        Event::TurnEnd(TurnEnd {
            status: TurnStatus::Completed,
            iterations: 2,
            produced_files: Vec::new(),
            task_id: task,
            usage: usage(),
            cost_usd: None,
        }),
    ]
}

/// The history of one seeded turn (what the model saw).
fn turn_messages(turn: usize) -> Vec<Message> {
    let call = format!("call-{turn}");
    vec![
        Message::user(format!("Question {turn}: what does module m{turn} do?")),
        Message::Assistant {
            content: vec![ContentPart::Text {
                text: format!("Let me read `src/m{turn}.rs` first."),
            }],
            tool_calls: vec![ToolCall {
                id: call.clone(),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/m{turn}.rs\"}}"),
            }],
            usage: usage(),
        },
        Message::Tool(ToolResult {
            call_id: call,
            name: "read_file".into(),
            content: format!(
                "pub fn step_{turn}(x: u32) -> u32 {{\n    x.wrapping_mul({turn})\n}}\n"
            ),
            status: ToolStatus::Ok,
            images: Vec::new(),
        }),
        Message::Assistant {
            content: vec![ContentPart::Text {
                text: reply_text(turn),
            }],
            tool_calls: Vec::new(),
            usage: usage(),
        },
    ]
}

/// The text of the last turn's question, to find it on screen.
pub fn question(turn: usize) -> String {
    format!("Question {turn}: what does module m{turn} do?")
}

/// Writes session `id` of `workspace` with `turns` completed turns; returns how many events
/// its log holds.
pub fn session(state_dir: &Path, workspace: &Path, id: &str, name: &str, turns: usize) -> usize {
    let store = SessionStore::new(state_dir);
    let log = store.event_log(id).expect("the seeded session's event log");
    let mut messages = Vec::with_capacity(turns * 4);
    let mut events = 0;
    for turn in 1..=turns {
        for event in turn_events(id, turn) {
            log.on_event(&event);
            events += 1;
        }
        messages.extend(turn_messages(turn));
    }
    assert!(log.failure().is_none(), "seeding {id}: {:?}", log.failure());
    let at = cairn_runtime::store::now();
    store
        .save(&SavedSession {
            session_id: id.to_string(),
            name: name.to_string(),
            name_source: "user".into(),
            workspace: workspace.canonicalize().unwrap().display().to_string(),
            model: "bench-model".into(),
            provider: "openai".into(),
            messages,
            permissions: PermissionState::default(),
            turns: turns as u32,
            todos: Vec::new(),
            usage: TokenUsage::default(),
            cost_usd: 0.0,
            created_at: at.clone(),
            updated_at: at,
            protocol_version: cairn_protocol::PROTOCOL_VERSION,
            turn_marks: Vec::new(),
            worktree: None,
        })
        .expect("the seeded session's checkpoint");
    assert_eq!(
        store.read_events(id).unwrap().len(),
        events,
        "every seeded event reads back"
    );
    events
}
