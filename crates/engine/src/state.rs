//! The state a session shares with its turns: the conversation (locked for the length of a
//! turn) and what the session holds for every turn (config, LLM, tools, permissions, hooks,
//! queued steering, running turns).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, RwLock};

use cairn_protocol::Message;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::config::EngineConfig;
use crate::hook::EngineHook;
use crate::llm::LlmClient;
use crate::locks::{lock, read};
use crate::permission::PermissionEngine;
use crate::registry::ToolRegistry;

/// Mutable conversation state, locked for the length of a turn.
pub(crate) struct TurnState {
    pub messages: Vec<Message>,
    pub turns: u32,
    /// The last turn ended with a retriable error.
    pub retry_pending: bool,
    /// Input of the last turn, for `retry`.
    pub last_input: String,
    /// Tool calls left without a result in a restored history, for `resume`.
    pub pending: Vec<cairn_protocol::ToolCall>,
    /// Of those, the ids that had started running before the process died.
    pub pending_started: std::collections::BTreeSet<String>,
    /// Base64 image parts of the current input and its steering, sent with this turn's
    /// requests only.
    pub inline: Vec<crate::attachments::InlineAttachments>,
    /// Where the history stood at the end of each turn (for [`Session::rewind_to_turn`]).
    pub turn_marks: Vec<crate::rewind::TurnMark>,
    /// Times the current user turn went on because a `Stop` gate blocked its end.
    pub stop_continues: u32,
    /// Whether the user was told about the spending cap (80 %, or that it cannot be
    /// enforced).
    pub spend_warned: bool,
}

/// An instruction queued for the running turn, with what the user attached to it.
pub(crate) struct Steering {
    pub text: String,
    pub attached: Option<Box<crate::attachments::TurnAttachments>>,
}

impl Steering {
    /// Text only.
    pub fn text(text: impl Into<String>) -> Self {
        Steering {
            text: text.into(),
            attached: None,
        }
    }
}

/// What a session holds for all its turns.
pub(crate) struct Inner {
    pub config: RwLock<EngineConfig>,
    pub llm: RwLock<Arc<dyn LlmClient>>,
    pub registry: RwLock<ToolRegistry>,
    pub permissions: Arc<Mutex<PermissionEngine>>,
    pub todos: Arc<Mutex<Vec<cairn_protocol::TodoItem>>>,
    pub checkpointer: Option<Arc<dyn crate::checkpoint::Checkpointer>>,
    pub exec: crate::execenv::ExecEnvironment,
    pub pricing: Option<Arc<dyn crate::llm::Pricing>>,
    pub approver: RwLock<Arc<dyn Approver>>,
    /// Whether the host set an approver (else `default_approval` applies).
    pub approver_set: std::sync::atomic::AtomicBool,
    pub hooks: Vec<Arc<dyn EngineHook>>,
    /// The user's hooks, run at defined points.
    pub gate: RwLock<Option<Arc<dyn crate::gate::Gate>>>,
    /// Whether `SessionStart` ran in this process.
    pub started: std::sync::atomic::AtomicBool,
    pub state: tokio::sync::Mutex<TurnState>,
    pub steering: Mutex<VecDeque<Steering>>,
    /// Cancellation tokens of queued and running turns, by turn ticket.
    pub active: Mutex<Vec<(u64, CancellationToken)>>,
    /// `true` while no turn runs or waits (for [`crate::session::Session::idle`]).
    pub idle: tokio::sync::watch::Sender<bool>,
    pub next_ticket: std::sync::atomic::AtomicU64,
    /// What the session spent, kept up to date by its turns (`None` until a turn of this
    /// process counted the history's).
    pub spent_live: crate::spend::LiveSpent,
    /// The cap this session shares with others (a batch started together), if any.
    pub shared_cap: Mutex<Option<Arc<crate::spend::SharedCap>>>,
    /// What requests outside the turns spent (naming), for the next turn's count.
    pub spent_outside: Mutex<Vec<(cairn_protocol::TokenUsage, Option<f64>)>>,
    /// The cap changed: the next turn may warn again at 80 %.
    pub spend_rewarn: std::sync::atomic::AtomicBool,
    /// What the next turn says right after its `turn_start` (a model switch between turns).
    pub announcements: Mutex<Vec<cairn_protocol::Event>>,
    /// What compaction did so far (the reference design's `engine.compactionState`).
    pub compaction_state: Mutex<cairn_protocol::CompactionState>,
}

/// Hands the current state to the hooks (checkpointing).
pub(crate) fn save_state(inner: &Inner, state: &TurnState) {
    if inner.hooks.is_empty() {
        return;
    }
    let permissions = lock(&inner.permissions).state().clone();
    let todos = lock(&inner.todos).clone();
    let model = read(&inner.config).model.clone();
    crate::hook::notify_state(
        &inner.hooks,
        &crate::hook::StateSnapshot {
            messages: &state.messages,
            turns: state.turns,
            permissions: &permissions,
            todos: &todos,
            model: &model,
            turn_marks: &state.turn_marks,
        },
    );
}
