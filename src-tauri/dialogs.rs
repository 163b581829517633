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
    /// Shows an approval dialog that does not block the window; `done` gets the answer
    /// (closing it = deny).
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

/// Lines of an edit's diff a dialog shows (the chat card has the whole diff).
const DIFF_LINES_SHOWN: usize = 14;

/// "Changes: +a −b lines" and the first changed lines of a unified diff.
fn diff_summary(diff: &str) -> String {
    let is_header = |l: &str| l.starts_with("+++") || l.starts_with("---") || l.starts_with("***");
    let added = diff
        .lines()
        .filter(|l| l.starts_with('+') && !is_header(l))
        .count();
    let removed = diff
        .lines()
        .filter(|l| l.starts_with('-') && !is_header(l))
        .count();
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !is_header(l))
        .collect();
    let mut out = format!("Changes: +{added} −{removed} lines");
    for line in changed.iter().take(DIFF_LINES_SHOWN) {
        out.push_str("\n    ");
        out.push_str(&shown(&line.chars().take(120).collect::<String>()));
    }
    if changed.len() > DIFF_LINES_SHOWN {
        out.push_str(&format!(
            "\n    … {} more",
            changed.len() - DIFF_LINES_SHOWN
        ));
    }
    out
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
    if let Some(diff) = crate::preview::edit_preview(workspace, req) {
        body.push(diff_summary(&diff));
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

impl<R: tauri::Runtime> NativeDialogs for TauriDialogs<R> {
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
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// What the built-in tool `name` asks permission for (only `run_shell` runs commands).
    fn subject(name: &str, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        match name {
            "run_shell" => cairn_engine::PermissionSubject::command(
                cairn_engine::CommandRun::from_shell_args(args),
            ),
            _ => cairn_engine::PermissionSubject::none(),
        }
    }

    fn req(name: &str, args: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            task_id: "t".into(),
            req_id: "c".into(),
            name: name.into(),
            always_allow: cairn_engine::permission::always_allow(name, &subject(name, &args)),
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
    fn an_edit_shows_a_short_summary_of_its_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "keep\nold line\n").unwrap();
        let lines: String = (0..30).map(|i| format!("new {i}\n")).collect();
        let p = approval_prompt(
            &req(
                "write_file",
                serde_json::json!({"path": "notes.txt", "content": format!("keep\n{lines}")}),
            ),
            "proj",
            dir.path(),
        );
        assert!(p.message.contains("Changes: +30 −1 lines"), "{}", p.message);
        assert!(p.message.contains("-old line"), "{}", p.message);
        assert!(p.message.contains("+new 0"), "{}", p.message);
        assert!(p.message.contains("… 17 more"), "{}", p.message);
        assert!(!p.message.contains("+new 29"), "{}", p.message);
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
