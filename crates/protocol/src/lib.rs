//! Wire types shared by every part of Cairn: messages, events, tool schemas and approvals.
//!
//! This crate is the only contract between the engine, the CLI and the desktop UI. The
//! TypeScript bindings used by `ui/` are generated from these types (see `tests/suite/bindings.rs`).

pub mod approval;
pub mod budget;
pub mod carried;
pub mod compaction;
pub mod elicit;
pub mod event;
pub mod message;
pub mod model_switch;
pub mod run;
pub mod sandbox;
pub mod tool;

pub use approval::{
    AlwaysAllow, ApprovalDecision, ApprovalRequest, DirectoryGrant, Mode, PlanReview, UserAnswer,
};
pub use budget::BudgetWarning;
pub use carried::{CarriedRef, FileTag, MentionedFile, StoredRef};
pub use compaction::{Compacted, Compacting, CompactionKind, CompactionState};
pub use elicit::{ElicitationAnswer, ElicitationMode, ElicitationRequested};
pub use event::*;
pub use message::{ContentPart, Message, TokenUsage, ToolCall, ToolResult};
pub use model_switch::ModelSwitched;
pub use run::RunEnd;
pub use sandbox::{SandboxLayer, SandboxReport};
pub use tool::{RiskLevel, ToolKind, ToolMeta, ToolSchema, ToolStatus};

/// Version of the event and message protocol; bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 1;
