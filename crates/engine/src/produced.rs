//! What a tool call wrote, recorded the moment the write happens, and the gate that keeps a
//! call the turn gave up on (interrupted, timed out) from writing afterwards.
//!
//! A tool that changes files runs each write through `ToolContext::write_files`: the write
//! only starts while the call is live (not cancelled, not abandoned), and its paths count as
//! produced as soon as it succeeds, so a call interrupted after its write (while it builds its
//! diff, say) still reports them and the edit stays in the turn's change-set.

use std::sync::Mutex;

use crate::locks::lock;
use crate::tool_error::ToolError;

/// The writes of one tool call and whether it may still write.
#[derive(Debug, Default)]
pub(crate) struct WriteLog {
    state: Mutex<LogState>,
}

#[derive(Debug, Default)]
struct LogState {
    /// Workspace-relative paths written so far, in order, without repeats.
    paths: Vec<String>,
    /// Set when the engine stopped waiting for the call: no write starts after it.
    closed: bool,
}

impl WriteLog {
    /// Runs `write` unless the log is closed; records `paths` when it succeeds. The lock is
    /// held during the write, so [`WriteLog::close`] waits for a write in progress.
    pub(crate) fn run<T>(
        &self,
        live: bool,
        paths: &[String],
        write: impl FnOnce() -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let mut state = lock(&self.state);
        if state.closed || !live {
            return Err(ToolError::Interrupted);
        }
        let out = write()?;
        for p in paths {
            if !state.paths.contains(p) {
                state.paths.push(p.clone());
            }
        }
        Ok(out)
    }

    /// Closes the log (waiting for a write in progress) and returns the paths written.
    pub(crate) fn close(&self) -> Vec<String> {
        let mut state = lock(&self.state);
        state.closed = true;
        state.paths.clone()
    }
}

/// `first` followed by the paths of `more` it does not have yet.
pub(crate) fn merged(mut first: Vec<String>, more: Vec<String>) -> Vec<String> {
    for p in more {
        if !first.contains(&p) {
            first.push(p);
        }
    }
    first
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn records_successful_writes_and_refuses_after_close() {
        let log = WriteLog::default();
        let a = vec!["a".to_string()];
        assert_eq!(log.run(true, &a, || Ok(1)).unwrap(), 1);
        let failed: Result<(), _> =
            log.run(true, &["b".into()], || Err(ToolError::Failed("x".into())));
        assert!(failed.is_err());
        assert!(matches!(
            log.run(false, &["c".into()], || Ok(())),
            Err(ToolError::Interrupted)
        ));
        assert_eq!(log.close(), a);
        let mut ran = false;
        let after = log.run(true, &["d".into()], || {
            ran = true;
            Ok(())
        });
        assert!(matches!(after, Err(ToolError::Interrupted)) && !ran);
        assert_eq!(log.close(), a);
    }

    #[test]
    fn merging_keeps_order_without_repeats() {
        let m = merged(vec!["a".into(), "b".into()], vec!["b".into(), "c".into()]);
        assert_eq!(m, ["a", "b", "c"]);
    }
}
