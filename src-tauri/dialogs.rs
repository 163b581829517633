//! Native dialogs (folder picker, approval) behind a trait, so tests use a fake.
//! The Tauri implementation uses tauri-plugin-dialog (rfd, GTK 3 on Linux).

use std::path::PathBuf;
use std::sync::Arc;

use cairn_protocol::ApprovalDecision;

pub use cairn_runtime::host::prompt::{approval_prompt, shown, ApprovalPrompt};

/// Callback with an approval decision.
pub use cairn_runtime::host::attention::{ApprovalDialogs, DecisionCallback};
/// Callback with the chosen folder (`None` = cancelled).
pub type FolderCallback = Box<dyn FnOnce(Option<PathBuf>) + Send>;
/// Callback with a confirmation's answer (`true` = go ahead).
pub type ConfirmCallback = Box<dyn FnOnce(bool) + Send>;

/// Native dialogs of the desktop app: the approval dialogs the runtime routes
/// ([`ApprovalDialogs`]), the folder picker and confirmations.
pub trait NativeDialogs: ApprovalDialogs {
    /// Shows the native folder picker.
    fn pick_folder(&self, start: Option<PathBuf>, done: FolderCallback);
    /// Asks the user to confirm `message` (`yes` labels the button that goes ahead);
    /// closing the dialog cancels.
    fn confirm(&self, title: &str, message: &str, yes: &str, done: ConfirmCallback);
}

/// Native dialogs through tauri-plugin-dialog; usable once [`TauriDialogs::attach`] gave it
/// the app (at setup). Before that, approvals are denied and the picker returns nothing.
pub struct TauriDialogs<R: tauri::Runtime> {
    app: std::sync::OnceLock<tauri::AppHandle<R>>,
}

impl<R: tauri::Runtime> TauriDialogs<R> {
    /// Dialogs not attached to an app yet.
    pub fn new() -> Arc<Self> {
        Arc::new(TauriDialogs {
            app: std::sync::OnceLock::new(),
        })
    }

    /// Attaches the running app.
    pub fn attach(&self, app: tauri::AppHandle<R>) {
        let _ = self.app.set(app);
    }

    fn app(&self) -> Option<&tauri::AppHandle<R>> {
        let app = self.app.get();
        if app.is_none() {
            tracing::error!("a native dialog was requested before the app was set up");
        }
        app
    }
}

/// A GTK button label with a mnemonic (`_A`), dynamic underscores escaped.
fn mnemonic(label: &str, key: char) -> String {
    if !cfg!(target_os = "linux") {
        return label.to_string();
    }
    let escaped = label.replace('_', "__");
    match escaped.find(key) {
        Some(i) => format!("{}_{}", &escaped[..i], &escaped[i..]),
        None => escaped,
    }
}

/// Builds and shows one non-modal approval dialog (on the GTK main thread); `done` is called
/// once, with the button pressed (closing the dialog, or its dismissal, denies).
#[cfg(target_os = "linux")]
fn show_approval(
    prompt: ApprovalPrompt,
    done: std::sync::Arc<std::sync::Mutex<Option<DecisionCallback>>>,
) {
    use gtk::prelude::*;
    let dialog = gtk::MessageDialog::new(
        None::<&gtk::Window>,
        gtk::DialogFlags::empty(),
        gtk::MessageType::Warning,
        gtk::ButtonsType::None,
        &prompt.title,
    );
    dialog.set_title(&prompt.title);
    dialog.set_secondary_text(Some(&prompt.message));
    dialog.set_modal(false);
    dialog.set_keep_above(true);
    dialog.add_button(&mnemonic(&prompt.allow_once, 'A'), gtk::ResponseType::Yes);
    let always = prompt.always.map(|(label, decision)| {
        dialog.add_button(&mnemonic(&label, 'l'), gtk::ResponseType::No);
        decision
    });
    dialog.add_button(&mnemonic(&prompt.deny, 'D'), gtk::ResponseType::Cancel);
    dialog.connect_response(move |d, response| {
        let decision = match (response, always) {
            (gtk::ResponseType::Yes, _) => ApprovalDecision::Once,
            (gtk::ResponseType::No, Some(always)) => always,
            _ => ApprovalDecision::Deny,
        };
        // Closing emits one more response (delete): only the first one answers and closes.
        let Some(f) = done.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        f(decision);
        d.close();
    });
    dialog.show_all();
}

impl<R: tauri::Runtime> ApprovalDialogs for TauriDialogs<R> {
    /// On Linux a GTK message dialog of Cairn's own, not modal: the window behind it stays
    /// usable (scroll the transcript, press Stop, answer the chat card, which closes this).
    #[cfg(target_os = "linux")]
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
        let Some(app) = self.app() else {
            done(ApprovalDecision::Deny);
            return;
        };
        let done = std::sync::Arc::new(std::sync::Mutex::new(Some(done)));
        let fallback = done.clone();
        let shown = app.run_on_main_thread(move || show_approval(prompt, done));
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot show the approval dialog; denied");
            if let Some(f) = fallback.lock().unwrap_or_else(|e| e.into_inner()).take() {
                f(ApprovalDecision::Deny);
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
        use tauri_plugin_dialog::{
            DialogExt, MessageDialogButtons, MessageDialogKind, MessageDialogResult,
        };
        let Some(app) = self.app() else {
            done(ApprovalDecision::Deny);
            return;
        };
        let once = prompt.allow_once.clone();
        let (buttons, a) = match prompt.always {
            Some((label, decision)) => (
                MessageDialogButtons::YesNoCancelCustom(once.clone(), label.clone(), prompt.deny),
                Some((label, decision)),
            ),
            None => (
                MessageDialogButtons::OkCancelCustom(once.clone(), prompt.deny),
                None,
            ),
        };
        app.dialog()
            .message(prompt.message)
            .title(prompt.title)
            .kind(MessageDialogKind::Warning)
            .buttons(buttons)
            .show_with_result(move |result| {
                let decision = match (result, &a) {
                    (MessageDialogResult::Yes | MessageDialogResult::Ok, _) => {
                        ApprovalDecision::Once
                    }
                    (MessageDialogResult::No, Some((_, always))) => *always,
                    (MessageDialogResult::Custom(label), _) if label == once => {
                        ApprovalDecision::Once
                    }
                    (MessageDialogResult::Custom(label), Some((l, always))) if label == *l => {
                        *always
                    }
                    _ => ApprovalDecision::Deny,
                };
                done(decision);
            });
    }

    fn dismiss(&self, title: &str) {
        #[cfg(target_os = "linux")]
        {
            let title = title.to_string();
            let Some(app) = self.app() else { return };
            let r = app.run_on_main_thread(move || {
                use gtk::prelude::*;
                for window in gtk::Window::list_toplevels() {
                    if let Ok(dialog) = window.downcast::<gtk::MessageDialog>() {
                        if dialog.title().as_deref() == Some(title.as_str()) {
                            dialog.response(gtk::ResponseType::DeleteEvent);
                        }
                    }
                }
            });
            if let Err(e) = r {
                tracing::warn!(error = %e, "cannot close an answered approval dialog");
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = title;
    }
}

impl<R: tauri::Runtime> NativeDialogs for TauriDialogs<R> {
    fn confirm(&self, title: &str, message: &str, yes: &str, done: ConfirmCallback) {
        use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
        let Some(app) = self.app() else {
            done(false);
            return;
        };
        app.dialog()
            .message(message)
            .title(title)
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(
                yes.to_string(),
                "Cancel".to_string(),
            ))
            .show(done);
    }

    fn pick_folder(&self, start: Option<PathBuf>, done: FolderCallback) {
        use tauri_plugin_dialog::DialogExt;
        let Some(app) = self.app() else {
            done(None);
            return;
        };
        let mut builder = app.dialog().file().set_title("Open folder");
        if let Some(dir) = start.filter(|d| d.is_dir()) {
            builder = builder.set_directory(dir);
        }
        builder.pick_folder(move |picked| {
            done(picked.and_then(|p| p.into_path().ok()));
        });
    }
}

/// A fake for tests: records prompts and answers with a fixed decision (or never).
#[cfg(any(test, feature = "test-support"))]
pub mod testing {
    use super::*;
    use std::sync::Mutex;

    /// Records what would have been shown.
    pub struct FakeDialogs {
        answer: Option<ApprovalDecision>,
        confirm: Mutex<bool>,
        confirms: Mutex<Vec<String>>,
        shown: Mutex<Vec<ApprovalPrompt>>,
        dismissed: Mutex<Vec<String>>,
        folder: Mutex<Option<PathBuf>>,
    }

    impl FakeDialogs {
        /// Approvals answered with `answer` at once (`None` = left open).
        pub fn answering(answer: Option<ApprovalDecision>) -> Self {
            FakeDialogs {
                answer,
                confirm: Mutex::new(true),
                confirms: Mutex::default(),
                shown: Mutex::default(),
                dismissed: Mutex::default(),
                folder: Mutex::default(),
            }
        }

        /// The folder picker will return this.
        pub fn with_folder(self, folder: Option<PathBuf>) -> Self {
            *self.folder.lock().unwrap_or_else(|e| e.into_inner()) = folder;
            self
        }

        /// Confirmations are answered with `yes` (`true` unless set).
        pub fn set_confirm(&self, yes: bool) {
            *self.confirm.lock().unwrap_or_else(|e| e.into_inner()) = yes;
        }

        /// The messages of the confirmations asked so far.
        pub fn confirms(&self) -> Vec<String> {
            self.confirms
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        }

        /// Prompts shown so far.
        pub fn shown(&self) -> Vec<ApprovalPrompt> {
            self.shown.lock().unwrap_or_else(|e| e.into_inner()).clone()
        }

        /// Titles dismissed so far.
        pub fn dismissed(&self) -> Vec<String> {
            self.dismissed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        }
    }

    impl ApprovalDialogs for FakeDialogs {
        fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
            self.shown
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(prompt);
            if let Some(a) = self.answer {
                done(a);
            }
        }

        fn dismiss(&self, title: &str) {
            self.dismissed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(title.to_string());
        }
    }

    impl NativeDialogs for FakeDialogs {
        fn confirm(&self, _title: &str, message: &str, _yes: &str, done: ConfirmCallback) {
            self.confirms
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(message.to_string());
            let yes = *self.confirm.lock().unwrap_or_else(|e| e.into_inner());
            done(yes);
        }

        fn pick_folder(&self, _start: Option<PathBuf>, done: FolderCallback) {
            done(
                self.folder
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_escape_underscores() {
        if cfg!(target_os = "linux") {
            assert_eq!(mnemonic("Allow once", 'A'), "_Allow once");
            assert_eq!(
                mnemonic("Always allow `my_tool`", 'l'),
                "A_lways allow `my__tool`"
            );
        }
    }
}
