//! Native dialogs (folder picker, approval) behind a trait, so tests use a fake.
//! The Tauri implementation uses tauri-plugin-dialog (rfd, GTK 3 on Linux).

use std::path::PathBuf;
use std::sync::Arc;

use cairn_protocol::ApprovalDecision;

pub use cairn_runtime::host::prompt::{approval_prompt, shown, ApprovalPrompt};

/// Callback with an approval decision.
pub use cairn_runtime::host::attention::{ApprovalDialogs, DecisionCallback, DialogChoice};
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
    /// Where the chat card of the awaiting approval is (`None`: no card waits); an approval
    /// dialog is placed clear of it, and an open one moves off it.
    fn avoid(&self, card: Option<CardRect>) {
        let _ = card;
    }
}

/// Where a chat card is in its window's page, in CSS pixels (the page's viewport).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CardRect {
    /// Left edge in the viewport.
    pub left: f64,
    /// Top edge in the viewport.
    pub top: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
    /// The viewport's height (the page sits at the bottom of the window, under its menu bar).
    pub viewport_height: f64,
}

/// Native dialogs through tauri-plugin-dialog; usable once [`TauriDialogs::attach`] gave it
/// the app (at setup). Before that, approvals are denied and the picker returns nothing.
pub struct TauriDialogs<R: tauri::Runtime> {
    app: std::sync::OnceLock<tauri::AppHandle<R>>,
    /// The awaiting approval's chat card, which dialogs keep clear of.
    card: Arc<std::sync::Mutex<Option<CardRect>>>,
}

impl<R: tauri::Runtime> TauriDialogs<R> {
    /// Dialogs not attached to an app yet.
    pub fn new() -> Arc<Self> {
        Arc::new(TauriDialogs {
            app: std::sync::OnceLock::new(),
            card: Arc::default(),
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
    card: Option<CardRect>,
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
    if let Some(label) = &prompt.in_project {
        dialog.add_button(&mnemonic(label, 'p'), gtk::ResponseType::Apply);
    }
    dialog.add_button(&mnemonic(&prompt.deny, 'D'), gtk::ResponseType::Cancel);
    // Four buttons side by side would make the dialog as wide as four of the longest
    // ("Always allow … in this project"), wider than the room beside the card.
    let bbox = dialog
        .widget_for_response(gtk::ResponseType::Yes)
        .and_then(|b| b.parent())
        .and_then(|p| p.downcast::<gtk::ButtonBox>().ok());
    // Text wraps at a few dozen characters (long paths too): the chat card has the whole.
    if let Ok(area) = dialog.message_area().downcast::<gtk::Container>() {
        for label in area
            .children()
            .into_iter()
            .filter_map(|w| w.downcast::<gtk::Label>().ok())
        {
            label.set_max_width_chars(DIALOG_TEXT_CHARS);
            label.set_line_wrap(true);
            label.set_line_wrap_mode(gtk::pango::WrapMode::WordChar);
        }
    }
    if let Some(bbox) = bbox {
        // One under the other: a narrow dialog fits beside the card it refers to.
        bbox.set_orientation(gtk::Orientation::Vertical);
        bbox.set_layout(gtk::ButtonBoxStyle::Expand);
    }
    dialog.connect_response(move |d, response| {
        let choice = match (response, always) {
            (gtk::ResponseType::Yes, _) => DialogChoice::Decide(ApprovalDecision::Once),
            (gtk::ResponseType::No, Some(always)) => DialogChoice::Decide(always),
            (gtk::ResponseType::Apply, Some(_)) => DialogChoice::InProject,
            _ => DialogChoice::Decide(ApprovalDecision::Deny),
        };
        // Closing emits one more response (delete): only the first one answers and closes.
        let Some(f) = done.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        f(choice);
        d.close();
    });
    place_clear_of(&dialog, card);
    dialog.show_all();
    // Its size is known once shown: place it again (X11 window managers honour a move of
    // a mapped window; on Wayland the compositor decides and the card alone may be used).
    place_clear_of(&dialog, card);
}

/// Places the dialog where it does not cover `card`, the chat card it refers to (in the
/// page's CSS pixels): beside it (right, then left), above or below it, else in a corner of
/// Cairn's active window; on the screen in every case. GTK would centre a parentless dialog on
/// the screen, which is where the newest card is. Without a known card: the window's top right
/// corner, over the header and the side panel. Where nothing is clear, the least covered spot.
#[cfg(target_os = "linux")]
fn place_clear_of(dialog: &gtk::MessageDialog, card: Option<CardRect>) {
    use gtk::prelude::*;
    let main = gtk::Window::list_toplevels()
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Window>().ok())
        .filter(|w| w.is_visible() && !w.is::<gtk::MessageDialog>())
        .max_by_key(|w| (w.is_active(), w.size().0 * w.size().1));
    let Some(main) = main else { return };
    let (wx, wy) = main.position();
    let (ww, wh) = main.size();
    let (dw, dh) = dialog.size();
    let dw = dw.max(dialog.preferred_width().1);
    let dh = dh.max(dialog.preferred_height().1);
    // The monitor the window is on (its whole area; bounds are checked from 0).
    let (sw, sh) = main
        .window()
        .and_then(|w| main.display().monitor_at_window(&w))
        .map(|m| {
            use gtk::gdk::prelude::MonitorExt;
            let g = m.geometry();
            (g.x() + g.width(), g.y() + g.height())
        })
        .unwrap_or((wx + ww, wy + wh));
    let page_top = wy + wh;
    // The card on the screen, rounded outwards.
    let card = card.map(|r| {
        let top = f64::from(page_top) - r.viewport_height + r.top;
        let left = f64::from(wx) + r.left;
        (
            left.floor() as i32,
            top.floor() as i32,
            (left + r.width).ceil() as i32,
            (top + r.height).ceil() as i32,
        )
    });
    let mut spots = Vec::new();
    if let Some((l, t, r, b)) = card {
        let beside_y = t.max(wy + DIALOG_TOP).min(sh - dh);
        spots.push((r + DIALOG_MARGIN, beside_y));
        spots.push((l - dw - DIALOG_MARGIN, beside_y));
        let aligned_x = (wx + ww - dw - DIALOG_MARGIN).max(0);
        spots.push((aligned_x, t - dh - DIALOG_MARGIN));
        spots.push((aligned_x, b + DIALOG_MARGIN));
    }
    let (right, left) = ((wx + ww - dw - DIALOG_MARGIN).max(wx), wx + DIALOG_MARGIN);
    let (top, bottom) = (wy + DIALOG_TOP, (wy + wh - dh - DIALOG_MARGIN).max(wy));
    spots.extend([(right, top), (left, top), (right, bottom), (left, bottom)]);
    let on_screen = |(x, y): (i32, i32)| x >= 0 && y >= 0 && x + dw <= sw && y + dh <= sh;
    let covered = |(x, y): (i32, i32)| -> i64 {
        let Some((l, t, r, b)) = card else {
            return 0;
        };
        let w = (x + dw).min(r) - x.max(l);
        let h = (y + dh).min(b) - y.max(t);
        i64::from(w.max(0)) * i64::from(h.max(0))
    };
    let best = spots
        .iter()
        .copied()
        .find(|s| on_screen(*s) && covered(*s) == 0)
        .or_else(|| {
            spots
                .iter()
                .copied()
                .filter(|s| on_screen(*s))
                .min_by_key(|s| covered(*s))
        });
    if let Some((x, y)) = best {
        dialog.move_(x, y);
    }
}

/// Moves the open approval dialogs clear of `card` (it arrived after they opened).
#[cfg(target_os = "linux")]
fn move_open_dialogs(card: Option<CardRect>) {
    use gtk::prelude::*;
    for window in gtk::Window::list_toplevels() {
        if let Ok(dialog) = window.downcast::<gtk::MessageDialog>() {
            if dialog.title().is_some_and(|t| t.starts_with("Cairn · ")) {
                place_clear_of(&dialog, card);
            }
        }
    }
}

/// Characters a line of the dialog's text may hold before it wraps (narrow enough to sit
/// beside a chat card on a 1280-pixel screen).
#[cfg(target_os = "linux")]
const DIALOG_TEXT_CHARS: i32 = 34;
/// Pixels between the dialog and the card or the window's edge.
#[cfg(target_os = "linux")]
const DIALOG_MARGIN: i32 = 8;
/// Pixels from the window's top to the dialog (below the menu bar and the header).
#[cfg(target_os = "linux")]
const DIALOG_TOP: i32 = 64;

impl<R: tauri::Runtime> ApprovalDialogs for TauriDialogs<R> {
    /// On Linux a GTK message dialog of Cairn's own, not modal: the window behind it stays
    /// usable (scroll the transcript, press Stop, answer the chat card, which closes this).
    #[cfg(target_os = "linux")]
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
        let Some(app) = self.app() else {
            done(ApprovalDecision::Deny.into());
            return;
        };
        let done = std::sync::Arc::new(std::sync::Mutex::new(Some(done)));
        let fallback = done.clone();
        let card = self.card.clone();
        let shown = app.run_on_main_thread(move || {
            let card = *card.lock().unwrap_or_else(|e| e.into_inner());
            show_approval(prompt, done, card)
        });
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot show the approval dialog; denied");
            if let Some(f) = fallback.lock().unwrap_or_else(|e| e.into_inner()).take() {
                f(ApprovalDecision::Deny.into());
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
        use tauri_plugin_dialog::{
            DialogExt, MessageDialogButtons, MessageDialogKind, MessageDialogResult,
        };
        let Some(app) = self.app() else {
            done(ApprovalDecision::Deny.into());
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
                done(decision.into());
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
    fn avoid(&self, card: Option<CardRect>) {
        *self.card.lock().unwrap_or_else(|e| e.into_inner()) = card;
        #[cfg(target_os = "linux")]
        if let Some(app) = self.app.get() {
            if let Err(e) = app.run_on_main_thread(move || move_open_dialogs(card)) {
                tracing::warn!(error = %e, "cannot move the approval dialog off its card");
            }
        }
    }

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
        cards: Mutex<Vec<Option<CardRect>>>,
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
                cards: Mutex::default(),
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

        /// The card places told so far.
        pub fn cards(&self) -> Vec<Option<CardRect>> {
            self.cards.lock().unwrap_or_else(|e| e.into_inner()).clone()
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
                done(a.into());
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
        fn avoid(&self, card: Option<CardRect>) {
            self.cards
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(card);
        }

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
