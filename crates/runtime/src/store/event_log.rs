//! The session's event log: every event (except text deltas) appended to
//! `<session dir>/events.jsonl`, one `write` per line, so a killed process loses at most the
//! line being written.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use cairn_engine::EngineHook;
use cairn_protocol::Event;

use crate::store::{SessionStore, StoreError};

impl SessionStore {
    /// A hook appending every event (except text deltas) to the session's `events.jsonl`.
    pub fn event_log(&self, id: &str) -> Result<EventLog, StoreError> {
        let dir = self.session_dir(id)?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| StoreError::from_io(format!("creating {}", dir.display()), e))?;
        let path = dir.join("events.jsonl");
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| StoreError::from_io(format!("opening {}", path.display()), e))?;
        // A process killed mid-line left a torn last line: end it, so the next event starts
        // a line of its own (the torn one is skipped when read).
        if !ends_with_newline(&mut file) {
            file.write_all(b"\n")
                .map_err(|e| StoreError::from_io(format!("appending to {}", path.display()), e))?;
        }
        Ok(EventLog {
            out: Mutex::new(file),
            path,
            failure: Mutex::new(None),
            torn: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// Appends events to a JSONL file, one `write` per line, so a killed process loses at most
/// the line being written.
pub struct EventLog {
    out: Mutex<File>,
    path: PathBuf,
    /// The first append that failed since the last turn's end (sticky).
    failure: Mutex<Option<String>>,
    /// A failed append may have left part of a line: the next one starts a new line.
    torn: std::sync::atomic::AtomicBool,
}

impl EventLog {
    /// The first append that failed since [`EventLog::take_failure`].
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reports and clears the sticky append failure.
    pub fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

impl EngineHook for EventLog {
    fn on_rewind(&self, rewind: &cairn_engine::rewind::RewindSnapshot<'_>) -> Result<(), String> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        crate::store::rewind::rewind_log(&self.path, &mut out, rewind).map_err(|e| e.to_string())
    }

    fn on_event(&self, event: &Event) {
        if matches!(event, Event::AssistantDelta(_) | Event::ReasoningDelta(_)) {
            return;
        }
        let Ok(mut line) = serde_json::to_string(event) else {
            return;
        };
        line.push('\n');
        use std::sync::atomic::Ordering;
        if self.torn.load(Ordering::SeqCst) {
            line.insert(0, '\n');
        }
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        match out.write_all(line.as_bytes()) {
            Ok(()) => self.torn.store(false, Ordering::SeqCst),
            Err(e) => {
                tracing::warn!(error = %e, "could not append to the session event log");
                self.torn.store(true, Ordering::SeqCst);
                let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
                failure.get_or_insert_with(|| {
                    format!(
                        "could not append to the session event log {}: {e}",
                        self.path.display()
                    )
                });
            }
        }
    }
}

/// Whether `file` is empty or ends with a newline (unreadable counts as yes).
fn ends_with_newline(file: &mut File) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut last = [0u8; 1];
    match file.seek(SeekFrom::End(-1)) {
        Ok(_) => file
            .read_exact(&mut last)
            .map(|_| last[0] == b'\n')
            .unwrap_or(true),
        // Empty (cannot seek before the start).
        Err(_) => true,
    }
}
