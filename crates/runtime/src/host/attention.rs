//! Approvals when a face runs several sessions: only a session a window shows gets its
//! native dialog (besides its chat card), one dialog at a time; a request of a session no
//! window shows waits, gives its board row a badge and raises an OS notification
//! ([`Notifier`]); its dialog shows when the user switches to it. The dialogs and the
//! notifications are the face's ([`ApprovalDialogs`], [`Notifier`]); who gets them is
//! decided here, for every face.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use cairn_protocol::{ApprovalDecision, ApprovalRequest};
use serde::{Deserialize, Serialize};

use super::prompt::{approval_prompt, ApprovalPrompt};
use super::{ApprovalPresenter, Host};

/// What the user pressed in an approval dialog: the same choices as the chat card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogChoice {
    /// Allow once, always allow (for the session), or deny.
    Decide(ApprovalDecision),
    /// Always allow it in this project: the rule is kept in the user's settings (as the
    /// card's "in this project"), then the call runs.
    InProject,
}

impl From<ApprovalDecision> for DialogChoice {
    fn from(d: ApprovalDecision) -> Self {
        DialogChoice::Decide(d)
    }
}

/// Callback with the user's choice on an approval dialog.
pub type DecisionCallback = Box<dyn FnOnce(DialogChoice) + Send>;

/// A face's approval dialogs (the desktop's native ones; a fake in tests).
pub trait ApprovalDialogs: Send + Sync {
    /// Shows an approval dialog that does not block the window; `done` gets the answer
    /// (closing it = deny).
    fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback);
    /// Closes an approval dialog answered elsewhere (in the chat, or by an interrupt).
    fn dismiss(&self, title: &str);
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One OS notification: a session no window shows needs the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// The session that asks.
    pub session_id: String,
    /// Its name ("Untitled session" while it has none).
    pub session_name: String,
    /// The headline: which session asks.
    pub title: String,
    /// What it asks (the approval's title).
    pub body: String,
}

/// Called when the user clicks a notification (where the desktop supports it).
pub type ClickCallback = Box<dyn FnOnce() + Send>;

/// Raises OS notifications.
pub trait Notifier: Send + Sync {
    /// Shows `n`; `clicked` runs if the user clicks it.
    fn notify(&self, n: Notification, clicked: ClickCallback);
}

/// A notifier that shows nothing (no notification service).
pub struct NoNotifier;

impl Notifier for NoNotifier {
    fn notify(&self, n: Notification, _clicked: ClickCallback) {
        tracing::info!(session = %n.session_id, "notification (not shown): {}", n.body);
    }
}

type Answer = Arc<Mutex<Option<DecisionCallback>>>;

/// An approval not shown in a dialog yet.
struct Queued {
    token: String,
    session: String,
    prompt: ApprovalPrompt,
    answer: Answer,
}

#[derive(Default)]
struct Inner {
    /// The session each window shows.
    viewed: HashMap<String, String>,
    /// The approval whose dialog is open.
    shown: Option<Queued>,
    /// Approvals waiting for their dialog, oldest first.
    queue: VecDeque<Queued>,
    next: u64,
}

/// What to do after the table changed, outside its lock (a fake dialog answers at once).
enum Act {
    Show(String, ApprovalPrompt, Answer),
    Dismiss(String),
}

/// Decides which approval gets the one native dialog, and who is notified.
pub struct Attention {
    dialogs: Option<Arc<dyn ApprovalDialogs>>,
    notifier: Arc<dyn Notifier>,
    inner: Mutex<Inner>,
    /// Runs when a notification is clicked: open that session (set by the app at setup).
    on_click: OnceLock<Box<dyn Fn(String) + Send + Sync>>,
}

impl Attention {
    /// Dialogs through `dialogs` (`None`: chat cards only), notifications through `notifier`.
    pub fn new(
        dialogs: Option<Arc<dyn ApprovalDialogs>>,
        notifier: Arc<dyn Notifier>,
    ) -> Arc<Self> {
        Arc::new(Attention {
            dialogs,
            notifier,
            inner: Mutex::default(),
            on_click: OnceLock::new(),
        })
    }

    /// What a click on a session's notification does.
    pub fn on_click(&self, f: impl Fn(String) + Send + Sync + 'static) {
        let _ = self.on_click.set(Box::new(f));
    }

    /// Window `label` now shows `session` (`None`: none). A dialog of a session no window
    /// shows any more goes back to the queue; a queued one of the shown session opens.
    pub fn set_viewed(self: &Arc<Self>, label: &str, session: Option<String>) {
        let mut acts = Vec::new();
        {
            let mut inner = lock(&self.inner);
            match session {
                Some(id) => inner.viewed.insert(label.to_string(), id),
                None => inner.viewed.remove(label),
            };
            let hidden = inner
                .shown
                .as_ref()
                .is_some_and(|s| !inner.viewed.values().any(|v| v == &s.session));
            if hidden {
                if let Some(s) = inner.shown.take() {
                    // Its dialog's own callback must not answer (closing it denies).
                    let answer = lock(&s.answer).take();
                    acts.push(Act::Dismiss(s.prompt.title.clone()));
                    inner.queue.push_front(Queued {
                        answer: Arc::new(Mutex::new(answer)),
                        ..s
                    });
                }
            }
            self.pump(&mut inner, &mut acts);
        }
        self.run(acts);
    }

    /// Whether some window shows `session`.
    pub fn is_viewed(&self, session: &str) -> bool {
        lock(&self.inner).viewed.values().any(|v| v == session)
    }

    /// Sessions with an approval waiting for its dialog (not the one shown).
    pub fn queued_sessions(&self) -> Vec<String> {
        lock(&self.inner)
            .queue
            .iter()
            .map(|q| q.session.clone())
            .collect()
    }

    fn pump(self: &Arc<Self>, inner: &mut Inner, acts: &mut Vec<Act>) {
        if inner.shown.is_some() || self.dialogs.is_none() {
            return;
        }
        let Some(i) = inner
            .queue
            .iter()
            .position(|q| inner.viewed.values().any(|v| v == &q.session))
        else {
            return;
        };
        let Some(q) = inner.queue.remove(i) else {
            return;
        };
        acts.push(Act::Show(
            q.token.clone(),
            q.prompt.clone(),
            q.answer.clone(),
        ));
        inner.shown = Some(q);
    }

    fn run(self: &Arc<Self>, acts: Vec<Act>) {
        let Some(dialogs) = &self.dialogs else {
            return;
        };
        for act in acts {
            match act {
                Act::Dismiss(title) => dialogs.dismiss(&title),
                Act::Show(token, prompt, answer) => {
                    let me = Arc::downgrade(self);
                    dialogs.approval(
                        prompt,
                        Box::new(move |decision: DialogChoice| {
                            // Taken back (its session is no longer shown): closing the
                            // dialog answers nothing.
                            let Some(f) = lock(&answer).take() else {
                                return;
                            };
                            f(decision);
                            // Answered (or closed by the user): the next one may show.
                            if let Some(me) = me.upgrade() {
                                me.finished(&token, false);
                            }
                        }),
                    );
                }
            }
        }
    }

    /// Request `token` no longer waits: its dialog closes (`dismiss`) or it leaves the queue.
    fn finished(self: &Arc<Self>, token: &str, dismiss: bool) {
        let mut acts = Vec::new();
        {
            let mut inner = lock(&self.inner);
            if inner.shown.as_ref().is_some_and(|s| s.token == token) {
                if let Some(s) = inner.shown.take() {
                    if dismiss {
                        acts.push(Act::Dismiss(s.prompt.title));
                    }
                }
            } else {
                inner.queue.retain(|q| q.token != token);
            }
            self.pump(&mut inner, &mut acts);
        }
        self.run(acts);
    }

    /// A request of `session` (named `name`): shown at once when a window shows the session
    /// and no other dialog is open; else queued, with a notification when no window shows
    /// it. Returns its token for [`Attention::dismiss`].
    pub fn present(
        self: &Arc<Self>,
        session: &str,
        name: &str,
        prompt: ApprovalPrompt,
        answer: DecisionCallback,
    ) -> String {
        let mut acts = Vec::new();
        let (token, viewed) = {
            let mut inner = lock(&self.inner);
            inner.next += 1;
            let token = format!("approval-{}", inner.next);
            let viewed = inner.viewed.values().any(|v| v == session);
            inner.queue.push_back(Queued {
                token: token.clone(),
                session: session.to_string(),
                prompt: prompt.clone(),
                answer: Arc::new(Mutex::new(Some(answer))),
            });
            self.pump(&mut inner, &mut acts);
            (token, viewed)
        };
        self.run(acts);
        if !viewed {
            let session_name = if name.is_empty() {
                "Untitled session".to_string()
            } else {
                name.to_string()
            };
            let me = Arc::downgrade(self);
            let id = session.to_string();
            self.notifier.notify(
                Notification {
                    session_id: session.to_string(),
                    title: format!("{session_name} needs your approval"),
                    session_name,
                    body: prompt.title,
                },
                Box::new(move || {
                    if let Some(f) = me.upgrade().as_ref().and_then(|m| m.on_click.get()) {
                        f(id);
                    }
                }),
            );
        }
        token
    }

    /// Request `token` was answered elsewhere (the chat card) or dropped (an interrupt).
    pub fn dismiss(self: &Arc<Self>, token: &str) {
        self.finished(token, true);
    }
}

/// The presenter of one session: its approvals go through the window's [`Attention`].
pub struct SessionPresenter {
    attention: Arc<Attention>,
    /// The session's id, known once it is open.
    pub session: Arc<OnceLock<String>>,
    host: Weak<Host>,
}

impl SessionPresenter {
    /// A presenter for a session about to open in `host`.
    pub fn new(attention: Arc<Attention>, host: &Arc<Host>) -> Self {
        SessionPresenter {
            attention,
            session: Arc::new(OnceLock::new()),
            host: Arc::downgrade(host),
        }
    }
}

impl ApprovalPresenter for SessionPresenter {
    fn present(
        &self,
        request: &ApprovalRequest,
        workspace: &Path,
        answer: Box<dyn FnOnce(ApprovalDecision) + Send>,
    ) -> Option<String> {
        let folder = crate::face_settings::folder_name(workspace);
        let prompt = approval_prompt(request, &folder, workspace);
        let id = self.session.get().cloned().unwrap_or_default();
        let name = self
            .host
            .upgrade()
            .and_then(|h| h.get(&id))
            .map(|h| h.saved().name)
            .unwrap_or_default();
        let (host, session, req_id) = (self.host.clone(), id.clone(), request.req_id.clone());
        let allowance = request.always_allow.as_ref().map(|a| a.decision());
        let choice: DecisionCallback = Box::new(move |choice| match choice {
            DialogChoice::Decide(d) => answer(d),
            DialogChoice::InProject => {
                let kept = host
                    .upgrade()
                    .and_then(|h| h.get(&session).map(|s| (h, s)))
                    .map(|(h, s)| h.allow_in_project(&s, &req_id));
                match kept {
                    Some(Ok(_)) => {}
                    // The rule could not be kept: the call still gets the session's
                    // allowance the user chose over "once" (never more).
                    other => {
                        tracing::warn!(
                            ?other,
                            "the project rule was not kept; allowed for the session"
                        );
                        answer(allowance.unwrap_or(ApprovalDecision::Once));
                    }
                }
            }
        });
        Some(self.attention.present(&id, &name, prompt, choice))
    }

    fn dismiss(&self, token: &str) {
        self.attention.dismiss(token);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Records the dialogs shown and dismissed; answers each at once when told to.
    struct FakeDialogs {
        answer: Option<ApprovalDecision>,
        shown: Mutex<Vec<ApprovalPrompt>>,
        dismissed: Mutex<Vec<String>>,
    }

    impl FakeDialogs {
        fn answering(answer: Option<ApprovalDecision>) -> Self {
            FakeDialogs {
                answer,
                shown: Mutex::default(),
                dismissed: Mutex::default(),
            }
        }
        fn shown(&self) -> Vec<ApprovalPrompt> {
            lock(&self.shown).clone()
        }
        fn dismissed(&self) -> Vec<String> {
            lock(&self.dismissed).clone()
        }
    }

    impl ApprovalDialogs for FakeDialogs {
        fn approval(&self, prompt: ApprovalPrompt, done: DecisionCallback) {
            lock(&self.shown).push(prompt);
            if let Some(a) = self.answer {
                done(a.into());
            }
        }
        fn dismiss(&self, title: &str) {
            lock(&self.dismissed).push(title.to_string());
        }
    }

    /// Records notifications.
    #[derive(Default)]
    struct RecordingNotifier {
        shown: Mutex<Vec<Notification>>,
    }

    impl RecordingNotifier {
        fn shown(&self) -> Vec<Notification> {
            lock(&self.shown).clone()
        }
    }

    impl Notifier for RecordingNotifier {
        fn notify(&self, n: Notification, _clicked: ClickCallback) {
            lock(&self.shown).push(n);
        }
    }

    fn prompt(title: &str) -> ApprovalPrompt {
        ApprovalPrompt {
            title: title.into(),
            message: String::new(),
            allow_once: "Allow once".into(),
            always: None,
            in_project: None,
            deny: "Deny".into(),
        }
    }

    fn answer(log: &Arc<Mutex<Vec<DialogChoice>>>) -> DecisionCallback {
        let log = log.clone();
        Box::new(move |d| lock(&log).push(d))
    }

    #[test]
    fn one_dialog_at_a_time_for_the_shown_session_others_notify_and_wait() {
        let dialogs = Arc::new(FakeDialogs::answering(None));
        let notes = Arc::new(RecordingNotifier::default());
        let att = Attention::new(Some(dialogs.clone()), notes.clone());
        let got = Arc::new(Mutex::new(Vec::new()));
        att.set_viewed("main", Some("a".into()));

        let a1 = att.present("a", "A", prompt("a1"), answer(&got));
        let _a2 = att.present("a", "A", prompt("a2"), answer(&got));
        let b1 = att.present("b", "", prompt("b1"), answer(&got));
        // One dialog (a1); b's request notified once, naming it.
        assert_eq!(
            dialogs
                .shown()
                .iter()
                .map(|p| p.title.clone())
                .collect::<Vec<_>>(),
            ["a1"]
        );
        let shown = notes.shown();
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].session_id, "b");
        assert_eq!(shown[0].session_name, "Untitled session");
        assert_eq!(shown[0].body, "b1");

        // a1 answered in the chat: its dialog closes and a2's opens.
        att.dismiss(&a1);
        assert_eq!(dialogs.dismissed(), ["a1"]);
        assert_eq!(dialogs.shown().len(), 2);
        assert_eq!(dialogs.shown()[1].title, "a2");

        // Switching to b takes a2's dialog down unanswered and shows b1's.
        att.set_viewed("main", Some("b".into()));
        assert_eq!(dialogs.dismissed(), ["a1", "a2"]);
        assert_eq!(dialogs.shown()[2].title, "b1");
        assert!(
            lock(&got).is_empty(),
            "nothing was answered by taking a dialog down"
        );
        assert_eq!(att.queued_sessions(), ["a"]);
        att.dismiss(&b1);
        // a is not shown: its request stays queued, no dialog.
        assert_eq!(dialogs.shown().len(), 3);
    }

    #[test]
    fn a_dialog_answer_reaches_the_request_and_opens_the_next() {
        let dialogs = Arc::new(FakeDialogs::answering(Some(ApprovalDecision::Once)));
        let att = Attention::new(
            Some(dialogs.clone()),
            Arc::new(RecordingNotifier::default()),
        );
        let got = Arc::new(Mutex::new(Vec::new()));
        att.present("a", "A", prompt("a1"), answer(&got));
        assert!(dialogs.shown().is_empty(), "no window shows a");
        att.set_viewed("main", Some("a".into()));
        assert_eq!(*lock(&got), [DialogChoice::Decide(ApprovalDecision::Once)]);
    }

    #[test]
    fn without_dialogs_only_notifications() {
        let notes = Arc::new(RecordingNotifier::default());
        let att = Attention::new(None, notes.clone());
        let got = Arc::new(Mutex::new(Vec::new()));
        att.set_viewed("main", Some("a".into()));
        let t = att.present("a", "A", prompt("a1"), answer(&got));
        att.present("b", "B", prompt("b1"), answer(&got));
        assert_eq!(notes.shown().len(), 1);
        assert_eq!(notes.shown()[0].title, "B needs your approval");
        att.dismiss(&t);
        assert_eq!(att.queued_sessions(), ["b"]);
    }
}
