//! Interaction tools: `todo_write`, `ask_user`, `propose_plan`, `request_directory`. They act
//! through the session's host (events to the UI, answers from the user) and run without an
//! approval prompt; none of them changes files.

mod ask;
mod directory;
mod plan;
mod todo;

use cairn_protocol::{RiskLevel, ToolMeta};

pub use ask::AskUser;
pub use directory::RequestDirectory;
pub use plan::ProposePlan;
pub use todo::{TodoWrite, MAX_TODOS};

/// Metadata of an interactive tool: no side effects on files, no approval prompt.
pub(crate) fn interactive_meta(category: &str) -> ToolMeta {
    ToolMeta {
        category: category.to_string(),
        risk: RiskLevel::Low,
        capabilities: vec!["interact".into()],
        requires_approval: false,
        mutating: false,
        timeout_ms: None,
        max_output_chars: None,
        source: "internal".into(),
    }
}
