//! Native dialogs (folder picker, approval) behind a trait, so tests use a fake.
//! The Tauri implementation uses tauri-plugin-dialog (rfd, GTK 3 on Linux).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_protocol::{AlwaysAllow, ApprovalDecision, ApprovalRequest};

/// Longest command or path shown in a dialog (longer ones are cut with `…`).
const MAX_SHOWN: usize = 600;

/// Callback with an approval decision.
pub type DecisionCallback = Box<dyn FnOnce(ApprovalDecision) + Send>;
/// Callback with the chosen folder (`None` = cancelled).
pub type FolderCallback = Box<dyn FnOnce(Option<PathBuf>) + Send>;

/// What an approval dialog shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPrompt {
    /// Window title and headline (unique per workspace and tool; used to dismiss it).
    pub title: String,
    /// Body: the command or path and the engine's reason.
    pub message: String,
    /// Label of the "allow once" button.
    pub allow_once: String,
    /// Label of the "always allow" button and what it grants (the program for plain shell
    /// commands, else the tool); `None` when no allowance is offered (shell operators).
    pub always: Option<(String, ApprovalDecision)>,
    /// Label of the "deny" button.
    pub deny: String,
}

/// Native dialogs of the desktop app.
pub trait NativeDialogs: Send + Sync {
    /// Shows a modal approval dialog; `done` gets the answer (closing it = deny).
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback);
    /// Closes an approval dialog answered elsewhere (in the chat, or by an interrupt).
    fn dismiss(&self, title: &str);
    /// Shows the native folder picker.
    fn pick_folder(&self, start: Option<PathBuf>, done: FolderCallback);
}

/// Removes NUL bytes (GTK cannot show them) and cuts long text.
pub fn shown(text: &str) -> String {
    let clean: String = text.chars().filter(|c| *c != '\0').collect();
    if clean.chars().count() <= MAX_SHOWN {
        return clean;
    }
    let mut cut: String = clean.chars().take(MAX_SHOWN).collect();
    cut.push('…');
    cut
}

/// Builds the dialog for one approval request: names the tool, the command or path and the
/// engine's reason.
pub fn approval_prompt(
    req: &ApprovalRequest,
    workspace_name: &str,
    workspace: &Path,
) -> ApprovalPrompt {
    let args = &req.arguments;
    let str_arg = |k: &str| args.get(k).and_then(|v| v.as_str()).map(shown);
    let mut body = Vec::new();
    // The allowance the engine offers, the same as the chat card's.
    let always = req.always_allow.as_ref().map(|a| {
        let label = match a {
            AlwaysAllow::Tool { name } => format!("Always allow {}", shown(name)),
            AlwaysAllow::Command { program } => format!("Always allow `{}`", shown(program)),
        };
        (label, a.decision())
    });
    if let Some(cmd) = str_arg("command") {
        body.push(format!("Command:\n    {cmd}"));
        if let Some(cwd) = str_arg("cwd") {
            body.push(format!("In: {cwd}"));
        }
    }
    if let Some(path) = str_arg("path") {
        let abs = if Path::new(&path).is_absolute() {
            PathBuf::from(&path)
        } else {
            workspace.join(&path)
        };
        body.push(format!("File: {}", abs.display()));
        if let Some(content) = args.get("content").and_then(|v| v.as_str()) {
            body.push(format!("Writes {} line(s).", content.lines().count()));
        }
    }
    if body.is_empty() {
        let text = serde_json::to_string_pretty(args).unwrap_or_default();
        body.push(format!("Arguments:\n{}", shown(&text)));
    }
    body.push(format!("Why Cairn asks: {}", shown(&req.reason)));
    body.push("The chat shows the same request in context.".to_string());
    ApprovalPrompt {
        title: shown(&format!("Cairn · {workspace_name}: allow {}?", req.name)),
        message: body.join("\n\n"),
        allow_once: "Allow once".into(),
        always,
        deny: "Deny".into(),
    }
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

impl<R: tauri::Runtime> NativeDialogs for TauriDialogs<R> {
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
        use tauri_plugin_dialog::{
            DialogExt, MessageDialogButtons, MessageDialogKind, MessageDialogResult,
        };
        let once = mnemonic(&prompt.allow_once, 'A');
        let deny = mnemonic(&prompt.deny, 'D');
        let always = prompt
            .always
            .map(|(label, decision)| (mnemonic(&label, 'l'), decision));
        let Some(app) = self.app() else {
            done(ApprovalDecision::Deny);
            return;
        };
        let o = once.clone();
        let (buttons, a) = match always {
            Some((label, decision)) => (
                MessageDialogButtons::YesNoCancelCustom(once, label.clone(), deny),
                Some((label, decision)),
            ),
            None => (MessageDialogButtons::OkCancelCustom(once, deny), None),
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
                    (MessageDialogResult::Custom(label), _) if label == o => ApprovalDecision::Once,
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
pub mod testing {
    use super::*;
    use std::sync::Mutex;

    /// Records what would have been shown.
    pub struct FakeDialogs {
        answer: Option<ApprovalDecision>,
        shown: Mutex<Vec<ApprovalPrompt>>,
        dismissed: Mutex<Vec<String>>,
        folder: Mutex<Option<PathBuf>>,
    }

    impl FakeDialogs {
        /// Approvals answered with `answer` at once (`None` = left open).
        pub fn answering(answer: Option<ApprovalDecision>) -> Self {
            FakeDialogs {
                answer,
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

    impl NativeDialogs for FakeDialogs {
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

    fn req(name: &str, args: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            task_id: "t".into(),
            req_id: "c".into(),
            name: name.into(),
            always_allow: cairn_engine::permission::always_allow(name, &args),
            arguments: args,
            reason: "because".into(),
            category: "x".into(),
        }
    }

    #[test]
    fn shells_offer_to_always_allow_the_program() {
        let p = approval_prompt(
            &req(
                "run_shell",
                serde_json::json!({"command": "cargo test -p x"}),
            ),
            "proj",
            Path::new("/w/proj"),
        );
        assert_eq!(p.title, "Cairn · proj: allow run_shell?");
        assert!(p.message.contains("cargo test -p x") && p.message.contains("because"));
        assert_eq!(
            p.always,
            Some((
                "Always allow `cargo`".to_string(),
                ApprovalDecision::AlwaysCommand
            ))
        );
        // A command with operators: no allowance on offer (not the whole shell tool).
        let p = approval_prompt(
            &req("run_shell", serde_json::json!({"command": "ls | sh"})),
            "proj",
            Path::new("/w/proj"),
        );
        assert_eq!(p.always, None);
    }

    #[test]
    fn writes_name_the_absolute_path_and_text_is_made_safe() {
        let p = approval_prompt(
            &req(
                "write_file",
                serde_json::json!({"path": "src/a\u{0}.rs", "content": "a\nb\n"}),
            ),
            "proj",
            Path::new("/w/proj"),
        );
        assert!(
            p.message.contains("File: /w/proj/src/a.rs"),
            "{}",
            p.message
        );
        assert!(p.message.contains("Writes 2 line(s)."));
        assert!(!p.message.contains('\0'));
        assert_eq!(
            p.always,
            Some((
                "Always allow write_file".to_string(),
                ApprovalDecision::AlwaysTool
            ))
        );
        let long = "x".repeat(5000);
        assert!(shown(&long).chars().count() == MAX_SHOWN + 1);
    }

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
