//! The former integration-test files, one module each.

mod agents;
mod config_scope;
mod doctor;
mod history;
mod host;
mod index;
mod layering;
mod project_rules;
mod resume;
mod rewind;
mod sandbox;
mod schema;
mod worktrees;

/// Submits `text` to `h` and starts its turn (holding a turn slot while the stream lives).
pub async fn start(
    h: &cairn_runtime::host::SessionHandle,
    text: &str,
) -> cairn_runtime::host::SlottedStream {
    use cairn_runtime::host::{Prompt, Submission};
    let Ok(Submission::Turn(turn)) = h.submit(Prompt::text(text)).await else {
        panic!("{text:?} is not a turn");
    };
    h.start_queued(turn, |_| {})
        .await
        .expect("the turn starts")
        .expect("not interrupted while waiting for a slot")
}

/// Submits `text` to `h`: the turn it makes.
pub async fn turn(h: &cairn_runtime::host::SessionHandle, text: &str) -> cairn_runtime::host::Turn {
    use cairn_runtime::host::{Prompt, Submission};
    let Ok(Submission::Turn(turn)) = h.submit(Prompt::text(text)).await else {
        panic!("{text:?} is not a turn");
    };
    turn
}
