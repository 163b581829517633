//! Requests a session's turn waits on (approvals, questions, plan reviews, directory grants)
//! and the approver that parks them until a face answers through the session handle.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use cairn_engine::Approver;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested,
    ElicitationAnswer, ElicitationRequested, PlanProposed, PlanReview, UserAnswer,
};
use tokio::sync::oneshot;

/// Requests of one kind waiting in the order they came, each under its `requestId`.
type Queue<T> = Mutex<VecDeque<(String, oneshot::Sender<T>)>>;

/// An answer to any pending request, for faces that answer by `requestId` alone.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestAnswer {
    /// Decides a tool call's approval (`permission_required`).
    Approval(ApprovalDecision),
    /// Answers an `ask_user_question`.
    Question(UserAnswer),
    /// Reviews a `plan_proposed`.
    Plan(PlanReview),
    /// Decides a `directory_requested`.
    Directory(DirectoryGrant),
    /// Answers an `elicitation_requested`.
    Elicitation(ElicitationAnswer),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why everything pending was denied when a session closes.
pub const CLOSED_REASON: &str = "the session was closed";

/// Shows an approval somewhere besides the face's own request list (a native dialog).
pub trait ApprovalPresenter: Send + Sync {
    /// Shows `request`; `answer` gives the user's decision when they make one there. Returns
    /// a token that [`ApprovalPresenter::dismiss`] takes when the request is answered
    /// elsewhere or dropped.
    fn present(
        &self,
        request: &ApprovalRequest,
        workspace: &std::path::Path,
        answer: Box<dyn FnOnce(ApprovalDecision) + Send>,
    ) -> Option<String>;
    /// Takes down what [`ApprovalPresenter::present`] showed.
    fn dismiss(&self, token: &str);
}

/// Who answers a session's requests.
#[derive(Clone)]
pub enum Answerer {
    /// Requests wait in the session's [`Pending`] table until a face answers them through
    /// the handle; approvals are also shown by `presenter` (first answer wins), or answered
    /// at once with `fixed` (test and benchmark hosts).
    Pending {
        /// Also shows approvals (the desktop's native dialog).
        presenter: Option<Arc<dyn ApprovalPresenter>>,
        /// Answers every approval with this decision instead of asking.
        fixed: Option<ApprovalDecision>,
    },
    /// Another approver decides everything (the CLI's terminal prompt, `--approve`).
    Custom(Arc<dyn Approver>),
}

impl Answerer {
    /// Requests wait for the face, with no other presenter.
    pub fn waiting() -> Answerer {
        Answerer::Pending {
            presenter: None,
            fixed: None,
        }
    }
}

/// Requests waiting for the user, per session.
pub struct Pending {
    approvals: Mutex<HashMap<String, (ApprovalRequest, oneshot::Sender<ApprovalDecision>)>>,
    questions: Queue<UserAnswer>,
    plans: Queue<PlanReview>,
    directories: Queue<DirectoryGrant>,
    elicitations: Queue<ElicitationAnswer>,
    closed: AtomicBool,
    /// How many approvals wait, for faces that show it (badges, a sessions board).
    waiting: tokio::sync::watch::Sender<usize>,
    /// Bumped whenever a request comes or goes (the host's change signal).
    changes: Option<Arc<tokio::sync::watch::Sender<u64>>>,
}

/// What waits for the user in one session, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waiting {
    /// Approvals of tool calls.
    pub approvals: usize,
    /// `ask_user` questions.
    pub questions: usize,
    /// Plan reviews.
    pub plans: usize,
    /// Directory requests.
    pub directories: usize,
    /// MCP servers' requests for information.
    pub elicitations: usize,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            approvals: Mutex::default(),
            questions: Mutex::default(),
            plans: Mutex::default(),
            directories: Mutex::default(),
            elicitations: Mutex::default(),
            closed: AtomicBool::new(false),
            waiting: tokio::sync::watch::channel(0).0,
            changes: None,
        }
    }
}

impl Pending {
    /// Nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Nothing pending; every change bumps `changes`.
    pub fn with_changes(changes: Arc<tokio::sync::watch::Sender<u64>>) -> Self {
        Pending {
            changes: Some(changes),
            ..Self::default()
        }
    }

    fn changed(&self) {
        if let Some(c) = &self.changes {
            c.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// What waits now (requests whose turn was interrupted are not counted).
    pub fn waiting(&self) -> Waiting {
        fn live<T>(q: &Queue<T>) -> usize {
            lock(q).iter().filter(|(_, tx)| !tx.is_closed()).count()
        }
        Waiting {
            approvals: lock(&self.approvals).len(),
            questions: live(&self.questions),
            plans: live(&self.plans),
            directories: live(&self.directories),
            elicitations: live(&self.elicitations),
        }
    }

    /// The number of approvals waiting, updated as requests come and go.
    pub fn approvals_waiting(&self) -> tokio::sync::watch::Receiver<usize> {
        self.waiting.subscribe()
    }

    fn count(
        &self,
        approvals: &HashMap<String, (ApprovalRequest, oneshot::Sender<ApprovalDecision>)>,
    ) {
        self.waiting.send_replace(approvals.len());
        self.changed();
    }

    /// Answers the approval of tool call `req_id`; false when it is no longer pending.
    pub fn answer_approval(&self, req_id: &str, decision: ApprovalDecision) -> bool {
        let mut approvals = lock(&self.approvals);
        let found = approvals.remove(req_id);
        self.count(&approvals);
        match found {
            Some((_, tx)) => tx.send(decision).is_ok(),
            None => false,
        }
    }

    /// The request of a pending approval.
    pub fn approval_request(&self, req_id: &str) -> Option<ApprovalRequest> {
        lock(&self.approvals).get(req_id).map(|(r, _)| r.clone())
    }

    /// Tool-call ids of approvals still waiting.
    pub fn pending_approvals(&self) -> Vec<String> {
        lock(&self.approvals).keys().cloned().collect()
    }

    /// Answers the pending question `request_id`, or the oldest one when `None`; false when
    /// no such question waits.
    pub fn answer_question(&self, request_id: Option<&str>, answer: UserAnswer) -> bool {
        let sent = send_to(&self.questions, request_id, answer);
        self.changed();
        sent
    }

    /// Answers the pending plan review `request_id`, or the oldest one when `None`.
    pub fn answer_plan(&self, request_id: Option<&str>, review: PlanReview) -> bool {
        let sent = send_to(&self.plans, request_id, review);
        self.changed();
        sent
    }

    /// Answers the pending directory request `request_id`, or the oldest one when `None`.
    pub fn answer_directory(&self, request_id: Option<&str>, grant: DirectoryGrant) -> bool {
        let sent = send_to(&self.directories, request_id, grant);
        self.changed();
        sent
    }

    /// Answers the pending elicitation `request_id`, or the oldest one when `None`.
    pub fn answer_elicitation(&self, request_id: Option<&str>, answer: ElicitationAnswer) -> bool {
        let sent = send_to(&self.elicitations, request_id, answer);
        self.changed();
        sent
    }

    /// Answers the pending request `request_id`, whatever its kind; false when no request of
    /// that kind waits under that id.
    pub fn answer(&self, request_id: &str, answer: RequestAnswer) -> bool {
        match answer {
            RequestAnswer::Approval(decision) => {
                let call = lock(&self.approvals)
                    .iter()
                    .find(|(_, (r, _))| r.request_id == request_id)
                    .map(|(call, _)| call.clone());
                call.is_some_and(|call| self.answer_approval(&call, decision))
            }
            RequestAnswer::Question(a) => self.answer_question(Some(request_id), a),
            RequestAnswer::Plan(r) => self.answer_plan(Some(request_id), r),
            RequestAnswer::Directory(g) => self.answer_directory(Some(request_id), g),
            RequestAnswer::Elicitation(a) => self.answer_elicitation(Some(request_id), a),
        }
    }

    /// The `requestId`s of everything waiting (approvals in no particular order, then
    /// questions, plans and directory requests oldest first).
    pub fn pending_request_ids(&self) -> Vec<String> {
        fn live<T>(q: &Queue<T>) -> Vec<String> {
            lock(q)
                .iter()
                .filter(|(_, tx)| !tx.is_closed())
                .map(|(id, _)| id.clone())
                .collect()
        }
        let mut ids: Vec<String> = lock(&self.approvals)
            .values()
            .map(|(r, _)| r.request_id.clone())
            .collect();
        ids.extend(live(&self.questions));
        ids.extend(live(&self.plans));
        ids.extend(live(&self.directories));
        ids.extend(live(&self.elicitations));
        ids
    }

    /// Denies everything pending now and everything asked from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let mut approvals = lock(&self.approvals);
        for (_, (_, tx)) in approvals.drain() {
            let _ = tx.send(ApprovalDecision::Deny);
        }
        self.count(&approvals);
        drop(approvals);
        for (_, tx) in lock(&self.questions).drain(..) {
            let _ = tx.send(UserAnswer::Declined {
                reason: CLOSED_REASON.into(),
            });
        }
        for (_, tx) in lock(&self.plans).drain(..) {
            let _ = tx.send(PlanReview::Rejected {
                feedback: CLOSED_REASON.into(),
            });
        }
        for (_, tx) in lock(&self.directories).drain(..) {
            let _ = tx.send(DirectoryGrant::Denied {
                reason: CLOSED_REASON.into(),
            });
        }
        for (_, tx) in lock(&self.elicitations).drain(..) {
            let _ = tx.send(ElicitationAnswer::Cancel);
        }
        self.changed();
    }

    /// Whether [`Pending::close`] ran.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// Sends `value` to the waiter `request_id` (the oldest live one when `None`); waiters whose
/// turn was interrupted (their receiver is gone) are dropped on the way.
fn send_to<T>(queue: &Queue<T>, request_id: Option<&str>, value: T) -> bool {
    let mut q = lock(queue);
    q.retain(|(_, tx)| !tx.is_closed());
    let at = match request_id {
        Some(id) => q.iter().position(|(r, _)| r == id),
        None => (!q.is_empty()).then_some(0),
    };
    match at.and_then(|i| q.remove(i)) {
        Some((_, tx)) => tx.send(value).is_ok(),
        None => false,
    }
}

async fn wait<T>(
    pending: &Pending,
    queue: &Queue<T>,
    request_id: &str,
    closed: impl Fn() -> T,
) -> T {
    if pending.is_closed() {
        return closed();
    }
    let (tx, rx) = oneshot::channel();
    lock(queue).push_back((request_id.to_string(), tx));
    pending.changed();
    let answer = rx.await.unwrap_or_else(|_| closed());
    pending.changed();
    answer
}

/// Removes an approval when its future is dropped (interrupt) and takes its dialog down.
struct ApprovalGuard<'a> {
    approver: &'a PendingApprover,
    req_id: String,
    token: Option<String>,
}

impl Drop for ApprovalGuard<'_> {
    fn drop(&mut self) {
        let pending = &self.approver.pending;
        let mut approvals = lock(&pending.approvals);
        approvals.remove(&self.req_id);
        pending.count(&approvals);
        drop(approvals);
        if let (Some(token), Some(p)) = (&self.token, &self.approver.presenter) {
            p.dismiss(token);
        }
    }
}

/// The [`Approver`] of [`Answerer::Pending`]: parks every request in a [`Pending`] table.
pub struct PendingApprover {
    pending: Arc<Pending>,
    presenter: Option<Arc<dyn ApprovalPresenter>>,
    fixed: Option<ApprovalDecision>,
    workspace: PathBuf,
}

impl PendingApprover {
    /// An approver parking requests in `pending`, showing approvals with `presenter`.
    pub fn new(
        pending: Arc<Pending>,
        presenter: Option<Arc<dyn ApprovalPresenter>>,
        fixed: Option<ApprovalDecision>,
        workspace: PathBuf,
    ) -> Self {
        PendingApprover {
            pending,
            presenter,
            fixed,
            workspace,
        }
    }
}

#[async_trait]
impl Approver for PendingApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        if let Some(d) = self.fixed {
            return d;
        }
        if self.pending.is_closed() {
            return ApprovalDecision::Deny;
        }
        let (tx, rx) = oneshot::channel();
        let req_id = request.req_id.clone();
        {
            let mut approvals = lock(&self.pending.approvals);
            approvals.insert(req_id.clone(), (request.clone(), tx));
            self.pending.count(&approvals);
        }
        let mut guard = ApprovalGuard {
            approver: self,
            req_id: req_id.clone(),
            token: None,
        };
        if let Some(presenter) = &self.presenter {
            let pending = self.pending.clone();
            guard.token = presenter.present(
                &request,
                &self.workspace,
                Box::new(move |decision| {
                    pending.answer_approval(&req_id, decision);
                }),
            );
        }
        // A dropped sender (session closed mid-way) counts as a denial.
        let decision = rx.await.unwrap_or(ApprovalDecision::Deny);
        drop(guard);
        decision
    }

    fn asks_a_person(&self) -> bool {
        self.fixed.is_none()
    }

    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        wait(
            &self.pending,
            &self.pending.questions,
            &question.request_id,
            || UserAnswer::Declined {
                reason: CLOSED_REASON.into(),
            },
        )
        .await
    }

    async fn review_plan(&self, plan: PlanProposed) -> PlanReview {
        wait(&self.pending, &self.pending.plans, &plan.request_id, || {
            PlanReview::Rejected {
                feedback: CLOSED_REASON.into(),
            }
        })
        .await
    }

    async fn elicit(&self, request: ElicitationRequested) -> ElicitationAnswer {
        wait(
            &self.pending,
            &self.pending.elicitations,
            &request.request_id,
            || ElicitationAnswer::Cancel,
        )
        .await
    }

    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        wait(
            &self.pending,
            &self.pending.directories,
            &request.request_id,
            || DirectoryGrant::Denied {
                reason: CLOSED_REASON.into(),
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Shows approvals by recording them; answers at once with `answer` when given.
    #[derive(Default)]
    struct FakePresenter {
        answer: Option<ApprovalDecision>,
        shown: Mutex<Vec<String>>,
        dismissed: Mutex<Vec<String>>,
    }

    impl ApprovalPresenter for FakePresenter {
        fn present(
            &self,
            request: &ApprovalRequest,
            _workspace: &std::path::Path,
            answer: Box<dyn FnOnce(ApprovalDecision) + Send>,
        ) -> Option<String> {
            lock(&self.shown).push(request.req_id.clone());
            if let Some(d) = self.answer {
                answer(d);
            }
            Some(request.req_id.clone())
        }
        fn dismiss(&self, token: &str) {
            lock(&self.dismissed).push(token.to_string());
        }
    }

    fn request(id: &str) -> ApprovalRequest {
        ApprovalRequest {
            task_id: "t".into(),
            req_id: id.into(),
            request_id: format!("rq_{id}"),
            name: "run_shell".into(),
            arguments: serde_json::json!({"command": "cargo test"}),
            reason: "run_shell runs a command: cargo test".into(),
            category: "shell".into(),
            always_allow: None,
        }
    }

    fn plan(text: &str, id: &str) -> PlanProposed {
        PlanProposed {
            plan: text.into(),
            request_id: id.into(),
        }
    }

    fn question(id: &str) -> AskUserQuestion {
        AskUserQuestion {
            task_id: "t".into(),
            request_id: id.into(),
            question: format!("question {id}?"),
            options: vec![],
            allow_text: true,
            multi: false,
        }
    }

    fn approver(
        presenter: Option<Arc<FakePresenter>>,
        fixed: Option<ApprovalDecision>,
    ) -> (Arc<Pending>, PendingApprover) {
        let pending = Arc::new(Pending::new());
        let p = presenter.map(|p| p as Arc<dyn ApprovalPresenter>);
        let a = PendingApprover::new(pending.clone(), p, fixed, "/w/proj".into());
        (pending, a)
    }

    #[tokio::test]
    async fn the_presenter_answers_and_its_dialog_is_taken_down() {
        let presenter = Arc::new(FakePresenter {
            answer: Some(ApprovalDecision::AlwaysCommand),
            ..Default::default()
        });
        let (pending, a) = approver(Some(presenter.clone()), None);
        assert_eq!(
            a.approve(request("c1")).await,
            ApprovalDecision::AlwaysCommand
        );
        assert_eq!(*lock(&presenter.shown), ["c1"]);
        assert_eq!(*lock(&presenter.dismissed), ["c1"]);
        assert!(pending.pending_approvals().is_empty());
    }

    #[tokio::test]
    async fn the_face_answers_and_the_dialog_is_dismissed() {
        let presenter = Arc::new(FakePresenter::default());
        let (pending, a) = approver(Some(presenter.clone()), None);
        let p = pending.clone();
        let answer = tokio::spawn(async move {
            while p.pending_approvals().is_empty() {
                tokio::task::yield_now().await;
            }
            assert!(p.approval_request("c2").is_some());
            assert!(p.answer_approval("c2", ApprovalDecision::Once));
            assert!(!p.answer_approval("c2", ApprovalDecision::Deny));
        });
        assert_eq!(a.approve(request("c2")).await, ApprovalDecision::Once);
        answer.await.unwrap();
        assert_eq!(*lock(&presenter.dismissed), ["c2"]);
    }

    #[tokio::test]
    async fn closing_denies_what_waits_and_what_comes_later() {
        let (pending, a) = approver(None, None);
        let a = Arc::new(a);
        let (a1, a2) = (a.clone(), a.clone());
        let approval = tokio::spawn(async move { a1.approve(request("c3")).await });
        let question = tokio::spawn(async move {
            a2.ask_user(AskUserQuestion {
                task_id: "t".into(),
                request_id: "q1".into(),
                question: "which?".into(),
                options: vec![],
                allow_text: true,
                multi: false,
            })
            .await
        });
        while pending.pending_approvals().is_empty() || lock(&pending.questions).is_empty() {
            tokio::task::yield_now().await;
        }
        pending.close();
        assert_eq!(approval.await.unwrap(), ApprovalDecision::Deny);
        assert!(matches!(
            question.await.unwrap(),
            UserAnswer::Declined { .. }
        ));
        assert_eq!(a.approve(request("c4")).await, ApprovalDecision::Deny);
        assert!(matches!(
            a.review_plan(plan("p", "p1")).await,
            PlanReview::Rejected { .. }
        ));
    }

    #[tokio::test]
    async fn an_interrupted_approval_leaves_nothing_pending() {
        let presenter = Arc::new(FakePresenter::default());
        let (pending, a) = approver(Some(presenter.clone()), None);
        {
            let fut = a.approve(request("c5"));
            futures::pin_mut!(fut);
            // Polled once (the request is parked), then dropped as an interrupt drops it.
            assert!(futures::poll!(fut.as_mut()).is_pending());
            assert_eq!(pending.pending_approvals(), ["c5"]);
        }
        assert!(pending.pending_approvals().is_empty());
        assert_eq!(*lock(&presenter.dismissed), ["c5"]);
    }

    #[tokio::test]
    async fn fixed_answers_never_wait_nor_show() {
        let presenter = Arc::new(FakePresenter::default());
        let (_, allow) = approver(Some(presenter.clone()), Some(ApprovalDecision::Once));
        let (_, deny) = approver(Some(presenter.clone()), Some(ApprovalDecision::Deny));
        assert_eq!(allow.approve(request("a")).await, ApprovalDecision::Once);
        assert_eq!(deny.approve(request("b")).await, ApprovalDecision::Deny);
        assert!(lock(&presenter.shown).is_empty());
    }

    #[tokio::test]
    async fn questions_plans_and_directories_are_answered_in_order() {
        let (pending, a) = approver(None, None);
        let a = Arc::new(a);
        let a1 = a.clone();
        let plan = tokio::spawn(async move { a1.review_plan(plan("do it", "p2")).await });
        let a2 = a.clone();
        let dir = tokio::spawn(async move {
            a2.grant_directory(DirectoryRequested {
                reason: "docs".into(),
                path: "/srv/docs".into(),
                writable: false,
                request_id: "d1".into(),
            })
            .await
        });
        while lock(&pending.plans).is_empty() || lock(&pending.directories).is_empty() {
            tokio::task::yield_now().await;
        }
        assert!(pending.answer_plan(None, PlanReview::Accepted));
        assert!(pending.answer_directory(None, DirectoryGrant::Granted { writable: false }));
        assert!(!pending.answer_question(None, UserAnswer::Declined { reason: "x".into() }));
        assert_eq!(plan.await.unwrap(), PlanReview::Accepted);
        assert_eq!(
            dir.await.unwrap(),
            DirectoryGrant::Granted { writable: false }
        );
    }

    #[tokio::test]
    async fn the_second_of_two_questions_is_answered_first_by_its_request_id() {
        let (pending, a) = approver(None, None);
        let a = Arc::new(a);
        let (a1, a2) = (a.clone(), a.clone());
        let first = tokio::spawn(async move { a1.ask_user(question("q-first")).await });
        while lock(&pending.questions).is_empty() {
            tokio::task::yield_now().await;
        }
        let second = tokio::spawn(async move { a2.ask_user(question("q-second")).await });
        while lock(&pending.questions).len() < 2 {
            tokio::task::yield_now().await;
        }
        assert_eq!(pending.pending_request_ids(), ["q-first", "q-second"]);
        let answer = |text: &str| UserAnswer::Answered {
            selected: vec![],
            text: text.into(),
        };
        assert!(pending.answer("q-second", RequestAnswer::Question(answer("two"))));
        assert_eq!(second.await.unwrap(), answer("two"));
        assert!(!first.is_finished());
        // An unknown id, or an answer of another kind, answers nothing.
        assert!(!pending.answer("q-second", RequestAnswer::Question(answer("again"))));
        assert!(!pending.answer("q-first", RequestAnswer::Plan(PlanReview::Accepted)));
        assert_eq!(pending.pending_request_ids(), ["q-first"]);
        assert!(pending.answer("q-first", RequestAnswer::Question(answer("one"))));
        assert_eq!(first.await.unwrap(), answer("one"));
        assert!(pending.pending_request_ids().is_empty());
    }

    #[tokio::test]
    async fn an_approval_is_answered_by_its_request_id() {
        let (pending, a) = approver(None, None);
        let p = pending.clone();
        let answer = tokio::spawn(async move {
            while p.pending_approvals().is_empty() {
                tokio::task::yield_now().await;
            }
            assert_eq!(p.pending_request_ids(), ["rq_c6"]);
            assert!(!p.answer("c6", RequestAnswer::Approval(ApprovalDecision::Deny)));
            assert!(p.answer("rq_c6", RequestAnswer::Approval(ApprovalDecision::Once)));
        });
        assert_eq!(a.approve(request("c6")).await, ApprovalDecision::Once);
        answer.await.unwrap();
    }
}
