//! What protects a session's commands (`turn_start.data.sandbox`, `cairn sandbox status`):
//! each layer of the sandbox, active or not, and why not.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The sandbox of a session as the user is told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SandboxReport {
    /// `enforced` (commands run inside), `off` (the user turned it off) or `unavailable`
    /// (`auto`, but no working sandbox here).
    pub state: String,
    /// Each layer, in a fixed order: `user namespaces`, `allow-list home`, `explicit
    /// environment`, `seccomp`, `new session`, `network`.
    pub layers: Vec<SandboxLayer>,
}

/// One layer of the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SandboxLayer {
    /// Its name (`seccomp`).
    pub name: String,
    /// Whether it protects this session's commands.
    pub active: bool,
    /// What it does when active; why not when not.
    pub detail: String,
}
