//! Helpers shared by the runtime's integration tests.

use std::path::Path;

use cairn_protocol::Mode;
use cairn_runtime::{RunOptions, VcsMode};

/// Options for a session in `ws` with state under `state`: the mock model, interactive mode,
/// no checkpoints; `session` resumes that session.
pub fn opts(ws: &Path, state: &Path, session: Option<String>) -> RunOptions {
    RunOptions {
        workspace: Some(ws.to_path_buf()),
        state_dir: Some(state.to_path_buf()),
        session_id: session,
        model: Some("mock-model".into()),
        mode: Some(Mode::Interactive),
        vcs: VcsMode::Off,
        ..Default::default()
    }
}
