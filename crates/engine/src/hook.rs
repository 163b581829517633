//! Hooks: side observers of the event stream (logs, persistence, billing) that cannot stall it.

use std::sync::Arc;

use cairn_protocol::Event;

/// Observes every event after it is queued for the main stream. Must return quickly;
/// a panic inside a hook is caught and logged, never propagated.
pub trait EngineHook: Send + Sync {
    /// Called once per event, in order.
    fn on_event(&self, event: &Event);
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
