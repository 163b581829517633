//! What a face shows of an open session: its header state and the view it opens it with.

use cairn_protocol::{Event, Mode, TodoItem};
use serde::Serialize;
use ts_rs::TS;

use super::SessionHandle;
use crate::llm_setup::{model_view, ModelView};
use crate::store::StoreError;

/// A session opened in this window, with the events to rebuild its transcript.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SessionView {
    /// Session id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Workspace root.
    pub workspace: String,
    /// Provider name.
    pub provider: String,
    /// The model and what it can do.
    pub model: ModelView,
    /// Permission mode.
    pub mode: Mode,
    /// Turns run.
    pub turns: u32,
    /// The logged events of the newest [`VIEW_TURNS`] turns (text deltas are not logged);
    /// older ones come page by page from [`SessionHandle::history`].
    pub events: Vec<Event>,
    /// Where the older turns end (pass as `before` to the history), `null` when `events`
    /// holds the whole session.
    #[ts(type = "number | null")]
    pub history_before: Option<usize>,
    /// What the older turns used, so the meter counts the whole session.
    pub earlier_usage: EarlierUsage,
    /// The agent's todo list.
    pub todos: Vec<TodoItem>,
    /// Steering messages not yet injected.
    pub pending_steering: Vec<String>,
    /// A turn is running or queued.
    pub busy: bool,
    /// Why a turn cannot run now (no key, no model), shown instead of a failed turn.
    pub blocked: Option<String>,
    /// Tool calls left open when the process stopped (an approval was waiting); `resume_turn`
    /// finishes them, the next prompt closes them as interrupted.
    pub pending_calls: u32,
    /// Whether the session's commands run inside the OS sandbox.
    pub sandbox: SandboxView,
    /// Repository definitions left out until the user trusts them (named in a banner).
    pub skipped: Vec<crate::skipped::SkippedView>,
}

/// Turns a view holds at first; a face pages the older ones in.
pub const VIEW_TURNS: usize = 100;

/// What the turns not in a view used: the requests, tokens and cost the meter counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct EarlierUsage {
    /// LLM requests.
    pub requests: u32,
    /// Input tokens.
    #[ts(type = "number")]
    pub input: u64,
    /// Output tokens.
    #[ts(type = "number")]
    pub output: u64,
    /// Cached input tokens.
    #[ts(type = "number")]
    pub cached: u64,
    /// Priced cost in USD.
    pub cost: f64,
    /// Replies no price was known for.
    pub unpriced: u32,
}

impl EarlierUsage {
    /// What `events` used, counted as the page's meter counts them.
    pub fn of(events: &[Event]) -> Self {
        let mut u = EarlierUsage::default();
        for e in events {
            match e {
                Event::LlmRequest(_) => u.requests += 1,
                Event::AssistantMessage(m) => {
                    if let Some(usage) = &m.usage {
                        u.input += usage.input_tokens;
                        u.output += usage.output_tokens;
                        u.cached += usage.cached_input_tokens;
                        match m.cost_usd {
                            Some(c) => u.cost += c,
                            None => u.unpriced += 1,
                        }
                    }
                }
                _ => {}
            }
        }
        u
    }
}

/// The sandbox state of a session, as the header shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SandboxView {
    /// `on`, `off` (the user turned it off) or `unavailable` (no working bubblewrap here).
    pub state: String,
    /// One line saying what that means (what is writable, what is hidden).
    pub detail: String,
    /// Each layer, active or not and why (the header's tooltip): the same list as
    /// `cairn sandbox status` and `turn_start.sandbox`.
    pub layers: Vec<cairn_protocol::SandboxLayer>,
}

impl SandboxView {
    /// The view of a session's sandbox: its state and, when known, each layer.
    pub fn with_layers(
        state: &crate::sandbox::SandboxState,
        report: Option<cairn_protocol::SandboxReport>,
    ) -> Self {
        SandboxView {
            layers: report.map(|r| r.layers).unwrap_or_default(),
            ..SandboxView::of(state)
        }
    }

    /// The view of a runtime sandbox state (no layers).
    pub fn of(state: &crate::sandbox::SandboxState) -> Self {
        use crate::sandbox::SandboxState;
        let name = match state {
            SandboxState::On(_) => "on",
            SandboxState::Off => "off",
            SandboxState::Unavailable => "unavailable",
        };
        SandboxView {
            state: name.to_string(),
            detail: state.describe(),
            layers: Vec::new(),
        }
    }
}

/// The live state of the window's session (after a settings or key change).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SessionStatus {
    /// Session id.
    pub id: String,
    /// Provider name.
    pub provider: String,
    /// The model and what it can do.
    pub model: ModelView,
    /// Permission mode.
    pub mode: Mode,
    /// A turn is running or queued.
    pub busy: bool,
    /// Why a turn cannot run now.
    pub blocked: Option<String>,
    /// What is skipped for lack of trust now (trusting hooks clears their part).
    pub skipped: Vec<crate::skipped::SkippedView>,
}

/// The live state shown in the header; the hooks are read again (trusted since?), so the
/// banner and the next turn follow a trust given meanwhile.
pub fn status(h: &SessionHandle) -> SessionStatus {
    let session = h.session();
    h.assembled().refresh_hooks(&h.id(), h.workspace());
    SessionStatus {
        id: session.id(),
        provider: h.provider(),
        model: model_view(&session.model()),
        mode: session.mode(),
        busy: session.is_busy(),
        blocked: h.blocked(),
        skipped: h.assembled().skipped_now(),
    }
}

/// What the UI shows when it opens this session.
pub fn view(h: &SessionHandle) -> Result<SessionView, StoreError> {
    let saved = h.saved();
    let session = h.session();
    let all = h.store().read_events(&saved.session_id)?;
    let (page, earlier) = crate::history::newest(all, VIEW_TURNS);
    Ok(SessionView {
        id: saved.session_id,
        name: saved.name,
        workspace: h.workspace().display().to_string(),
        provider: h.provider(),
        model: model_view(&session.model()),
        mode: session.mode(),
        turns: saved.turns,
        history_before: page.has_older().then_some(page.first),
        earlier_usage: EarlierUsage::of(&earlier),
        events: page.events,
        todos: session.todos(),
        pending_steering: session.pending_steering(),
        busy: session.is_busy(),
        blocked: h.blocked(),
        pending_calls: 0,
        sandbox: SandboxView::with_layers(h.sandbox(), h.sandbox_report()),
        skipped: h.assembled().skipped_now(),
    })
}

/// [`view`] with the count of open tool calls, for opening a session.
pub async fn view_with_pending(h: &SessionHandle) -> Result<SessionView, StoreError> {
    let mut v = view(h)?;
    v.pending_calls = u32::try_from(h.pending_calls().await).unwrap_or(u32::MAX);
    Ok(v)
}

/// What a session waits for the user to answer, besides an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum AskKind {
    /// An `ask_user` question.
    Question,
    /// A plan to accept or reject.
    Plan,
    /// A folder outside the workspace to grant.
    Directory,
}

/// The live state of a session, as a sessions board shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "state", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum SessionActivity {
    /// A turn runs.
    Running,
    /// A turn waits for a turn slot: `running` turns of at most `limit` run on this machine.
    Queued {
        /// Turns running now.
        running: u32,
        /// How many may run at once.
        limit: u32,
    },
    /// Tool calls wait for the user's approval.
    Approval {
        /// How many.
        waiting: u32,
    },
    /// The turn waits for the user's answer.
    Answer {
        /// To what.
        ask: AskKind,
    },
    /// No turn runs; the last one (if any) did not fail.
    Idle,
    /// No turn runs; the last one ended with an error.
    Error,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The live state of an open session (what waits for the user comes first).
pub fn activity(h: &SessionHandle) -> SessionActivity {
    let waiting = h.pending().waiting();
    if waiting.approvals > 0 {
        return SessionActivity::Approval {
            waiting: count(waiting.approvals),
        };
    }
    let ask = if waiting.questions > 0 {
        Some(AskKind::Question)
    } else if waiting.plans > 0 {
        Some(AskKind::Plan)
    } else if waiting.directories > 0 {
        Some(AskKind::Directory)
    } else {
        None
    };
    if let Some(ask) = ask {
        return SessionActivity::Answer { ask };
    }
    if let Some(w) = h.queued() {
        return SessionActivity::Queued {
            running: w.running,
            limit: w.limit,
        };
    }
    if h.is_busy() {
        return SessionActivity::Running;
    }
    settled(h.last_status())
}

/// The state of a session with no turn running, from how its last turn ended.
pub fn settled(last: Option<cairn_protocol::TurnStatus>) -> SessionActivity {
    match last {
        Some(cairn_protocol::TurnStatus::Error) => SessionActivity::Error,
        _ => SessionActivity::Idle,
    }
}

/// The state of session `id` in `host`: live when it is open there, else from how its last
/// turn in this process ended.
pub fn activity_in(host: &super::Host, id: &str) -> SessionActivity {
    match host.get(id) {
        Some(h) => activity(&h),
        None => settled(host.last_status(id)),
    }
}

/// How many files each of `sessions` changed since it started, from its checkpoints
/// (blocking: it opens the checkpoint store of `workspace` once for all of them). Sessions
/// with no checkpoint, or whose checkpoints cannot be read, are left out.
pub fn changed_files(
    state_dir: &std::path::Path,
    workspace: &std::path::Path,
    sessions: &[String],
) -> std::collections::HashMap<String, u32> {
    let config = cairn_vcs::VcsConfig {
        watch: false,
        ..cairn_vcs::VcsConfig::default()
    };
    let mut out = std::collections::HashMap::new();
    let vcs = match cairn_vcs::Vcs::open(state_dir, workspace, config) {
        Ok(v) => v,
        Err(e) => {
            tracing::info!(error = %e, "no checkpoint store for the board's file counts");
            return out;
        }
    };
    for id in sessions {
        if let Ok(files) = vcs.changes_since_start(id) {
            out.insert(id.clone(), count(files.len()));
        }
    }
    out
}
