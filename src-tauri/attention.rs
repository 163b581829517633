//! A notifier for tests: records every notification (and, with `CAIRN_TEST_NOTIFIER=<file>`
//! in the E2E app, appends each one to that file as a JSON line; with
//! `CAIRN_TEST_NOTIFIER_CLICK=1` it also clicks each one, as a user would). Who gets a
//! dialog or a notification is decided by the runtime ([`cairn_runtime::host::attention`]).

pub use cairn_runtime::host::attention::{
    Attention, ClickCallback, DecisionCallback, Notification, Notifier, SessionPresenter,
};

/// The recording notifier.
#[cfg(any(test, feature = "test-support"))]
pub mod testing {
    use super::*;
    use std::sync::{Mutex, PoisonError};

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records notifications; clicks them when told to.
    #[derive(Default)]
    pub struct RecordingNotifier {
        shown: Mutex<Vec<Notification>>,
        file: Option<std::path::PathBuf>,
        click: bool,
    }

    impl RecordingNotifier {
        /// Also appends each notification to `file`; with `click`, clicks each one once
        /// recorded.
        pub fn to_file(file: std::path::PathBuf, click: bool) -> Self {
            RecordingNotifier {
                shown: Mutex::default(),
                file: Some(file),
                click,
            }
        }

        /// Notifications so far.
        pub fn shown(&self) -> Vec<Notification> {
            lock(&self.shown).clone()
        }
    }

    impl Notifier for RecordingNotifier {
        fn notify(&self, n: Notification, clicked: ClickCallback) {
            if let Some(file) = &self.file {
                use std::io::Write;
                let line = serde_json::to_string(&n).unwrap_or_default();
                let written = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(file)
                    .and_then(|mut f| writeln!(f, "{line}"));
                if let Err(e) = written {
                    tracing::warn!(error = %e, "cannot record the notification");
                }
            }
            lock(&self.shown).push(n);
            if self.click {
                // Off the caller's thread, as a click arrives from the notification service.
                std::thread::spawn(clicked);
            }
        }
    }
}
