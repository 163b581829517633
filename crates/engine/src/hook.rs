//! Hooks: side observers of the event stream (logs, persistence, billing) that cannot stall it.

use std::sync::Arc;

use cairn_protocol::Event;

/// Observes every event after it is queued for the main stream. Must return quickly;
/// a panic inside a hook is caught and logged, never propagated.
pub trait EngineHook: Send + Sync {
    /// Called once per event, in order.
    fn on_event(&self, event: &Event);

    /// Called with the whole session state at safe points (input accepted, each iteration's
    /// end, turn end): what a persistence hook checkpoints.
    fn on_state(&self, state: &StateSnapshot<'_>) {
        let _ = state;
    }

    /// Called before a conversation rewind truncates the history, with what it removes; an
    /// error (e.g. the removed turns could not be archived) cancels the rewind.
    fn on_rewind(&self, rewind: &crate::rewind::RewindSnapshot<'_>) -> Result<(), String> {
        let _ = rewind;
        Ok(())
    }

    /// The first write this hook could not make since the last [`EngineHook::end_turn`]
    /// (a failed save is sticky): the engine runs no further LLM call or tool in the turn.
    fn failure(&self) -> Option<String> {
        None
    }

    /// The turn's final flush, after its last state was handed over and before `turn_end`:
    /// a hook whose writes failed during the turn makes a last attempt to record it (e.g.
    /// into reserved space) and returns why the turn must end with `error`; it then starts
    /// the next turn with a clean slate.
    fn end_turn(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The session state at a safe point: history valid for the next request.
#[derive(Debug, Clone, Copy)]
pub struct StateSnapshot<'a> {
    /// Full history.
    pub messages: &'a [cairn_protocol::Message],
    /// Turns run (the current one included).
    pub turns: u32,
    /// Permission mode and session allowlists.
    pub permissions: &'a crate::permission::PermissionState,
    /// The agent's todo list.
    pub todos: &'a [cairn_protocol::TodoItem],
    /// Current model id.
    pub model: &'a str,
    /// Where the history stood at the end of each turn (for rewinding the conversation).
    pub turn_marks: &'a [crate::rewind::TurnMark],
}

/// Gives each hook the state snapshot, isolating panics.
pub(crate) fn notify_state(hooks: &[Arc<dyn EngineHook>], state: &StateSnapshot<'_>) {
    for h in hooks {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.on_state(state)));
        if r.is_err() {
            tracing::warn!("a hook panicked while saving state; ignored");
        }
    }
}

/// Asks each hook to prepare for a rewind; the first error (or panic) cancels it.
pub(crate) fn notify_rewind(
    hooks: &[Arc<dyn EngineHook>],
    rewind: &crate::rewind::RewindSnapshot<'_>,
) -> Result<(), String> {
    for h in hooks {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.on_rewind(rewind))) {
            Ok(r) => r?,
            Err(_) => return Err("a hook panicked while keeping the removed turns".into()),
        }
    }
    Ok(())
}

/// The first sticky write failure any hook reports.
pub(crate) fn failure(hooks: &[Arc<dyn EngineHook>]) -> Option<String> {
    hooks.iter().find_map(|h| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.failure())).unwrap_or(None)
    })
}

/// Runs every hook's final flush of a turn; the reasons of those that failed, joined.
pub(crate) fn end_turn(hooks: &[Arc<dyn EngineHook>]) -> Result<(), String> {
    let mut errors = Vec::new();
    for h in hooks {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.end_turn())) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push("a hook panicked while saving the turn".into()),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Calls each hook, isolating panics.
pub(crate) fn notify(hooks: &[Arc<dyn EngineHook>], event: &Event) {
    for h in hooks {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.on_event(event)));
        if r.is_err() {
            tracing::warn!(event = event.type_name(), "a hook panicked; ignored");
        }
    }
}
