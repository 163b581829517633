//! The desktop approver: approvals go to a native dialog and to the in-chat card at once
//! (the first answer wins); questions, plans and directory requests wait for the UI.
//! Closing the window resolves everything still pending as denied.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use cairn_engine::Approver;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested,
    PlanReview, UserAnswer,
};
use tokio::sync::oneshot;

use crate::dialogs::{approval_prompt, NativeDialogs};
use crate::types::ApprovalHost;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why everything pending was denied when a window closes.
const CLOSED_REASON: &str = "the window was closed";

/// Requests waiting for the user, per session.
#[derive(Default)]
pub struct Pending {
    approvals: Mutex<HashMap<String, (ApprovalRequest, oneshot::Sender<ApprovalDecision>)>>,
    questions: Mutex<VecDeque<oneshot::Sender<UserAnswer>>>,
    plans: Mutex<VecDeque<oneshot::Sender<PlanReview>>>,
    directories: Mutex<VecDeque<oneshot::Sender<DirectoryGrant>>>,
    closed: AtomicBool,
}

impl Pending {
    /// Nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers the approval of tool call `req_id`; false when it is no longer pending.
    pub fn answer_approval(&self, req_id: &str, decision: ApprovalDecision) -> bool {
        match lock(&self.approvals).remove(req_id) {
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

    /// Answers the oldest pending question; false when none waits.
    pub fn answer_question(&self, answer: UserAnswer) -> bool {
        pop_send(&self.questions, answer)
    }

    /// Answers the oldest pending plan review.
    pub fn answer_plan(&self, review: PlanReview) -> bool {
        pop_send(&self.plans, review)
    }

    /// Answers the oldest pending directory request.
    pub fn answer_directory(&self, grant: DirectoryGrant) -> bool {
        pop_send(&self.directories, grant)
    }

    /// Denies everything pending now and everything asked from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for (_, (_, tx)) in lock(&self.approvals).drain() {
            let _ = tx.send(ApprovalDecision::Deny);
        }
        for tx in lock(&self.questions).drain(..) {
            let _ = tx.send(UserAnswer::Declined {
                reason: CLOSED_REASON.into(),
            });
        }
        for tx in lock(&self.plans).drain(..) {
            let _ = tx.send(PlanReview::Rejected {
                feedback: CLOSED_REASON.into(),
            });
        }
        for tx in lock(&self.directories).drain(..) {
            let _ = tx.send(DirectoryGrant::Denied {
                reason: CLOSED_REASON.into(),
            });
        }
    }

    /// Whether [`Pending::close`] ran.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

fn pop_send<T>(queue: &Mutex<VecDeque<oneshot::Sender<T>>>, value: T) -> bool {
    let mut q = lock(queue);
    // Skip waiters whose turn was interrupted (their receiver is gone).
    while let Some(tx) = q.pop_front() {
        if !tx.is_closed() {
            return tx.send(value).is_ok();
        }
    }
    false
}

/// Removes an approval when its future is dropped (interrupt) and closes its dialog.
struct ApprovalGuard<'a> {
    approver: &'a DesktopApprover,
    req_id: String,
    title: Option<String>,
}

impl Drop for ApprovalGuard<'_> {
    fn drop(&mut self) {
        lock(&self.approver.pending.approvals).remove(&self.req_id);
        if let Some(title) = &self.title {
            self.approver.dialogs.dismiss(title);
        }
    }
}

/// The desktop app's [`Approver`].
pub struct DesktopApprover {
    pending: Arc<Pending>,
    dialogs: Arc<dyn NativeDialogs>,
    host: ApprovalHost,
    /// Workspace folder name, shown in dialog titles.
    workspace_name: String,
    /// Workspace root, for diff previews.
    workspace: std::path::PathBuf,
}

impl DesktopApprover {
    /// An approver answering through `dialogs` and the UI, per `host`.
    pub fn new(
        pending: Arc<Pending>,
        dialogs: Arc<dyn NativeDialogs>,
        host: ApprovalHost,
        workspace: std::path::PathBuf,
    ) -> Self {
        DesktopApprover {
            pending,
            dialogs,
            host,
            workspace_name: crate::settings::folder_name(&workspace),
            workspace,
        }
    }
}

#[async_trait]
impl Approver for DesktopApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        match self.host {
            ApprovalHost::Allow => return ApprovalDecision::Once,
            ApprovalHost::Deny => return ApprovalDecision::Deny,
            ApprovalHost::Native | ApprovalHost::Ui => {}
        }
        if self.pending.is_closed() {
            return ApprovalDecision::Deny;
        }
        let (tx, rx) = oneshot::channel();
        let req_id = request.req_id.clone();
        lock(&self.pending.approvals).insert(req_id.clone(), (request.clone(), tx));
        let mut guard = ApprovalGuard {
            approver: self,
            req_id: req_id.clone(),
            title: None,
        };
        if self.host == ApprovalHost::Native {
            let prompt = approval_prompt(&request, &self.workspace_name, &self.workspace);
            guard.title = Some(prompt.title.clone());
            let pending = self.pending.clone();
            self.dialogs.approval(
                prompt,
                Box::new(move |decision| {
                    pending.answer_approval(&req_id, decision);
                }),
            );
        }
        // A dropped sender (window closed mid-way) counts as a denial.
        let decision = rx.await.unwrap_or(ApprovalDecision::Deny);
        drop(guard);
        decision
    }

    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        let _ = question;
        let declined = || UserAnswer::Declined {
            reason: CLOSED_REASON.into(),
        };
        if self.pending.is_closed() {
            return declined();
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending.questions).push_back(tx);
        rx.await.unwrap_or_else(|_| declined())
    }

    async fn review_plan(&self, plan: String) -> PlanReview {
        let _ = plan;
        let rejected = || PlanReview::Rejected {
            feedback: CLOSED_REASON.into(),
        };
        if self.pending.is_closed() {
            return rejected();
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending.plans).push_back(tx);
        rx.await.unwrap_or_else(|_| rejected())
    }

    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        let _ = request;
        let denied = || DirectoryGrant::Denied {
            reason: CLOSED_REASON.into(),
        };
        if self.pending.is_closed() {
            return denied();
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending.directories).push_back(tx);
        rx.await.unwrap_or_else(|_| denied())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::dialogs::testing::FakeDialogs;

    fn request(id: &str) -> ApprovalRequest {
        ApprovalRequest {
            task_id: "t".into(),
            req_id: id.into(),
            name: "run_shell".into(),
            arguments: serde_json::json!({"command": "cargo test"}),
            reason: "run_shell runs a command: cargo test".into(),
            category: "shell".into(),
            always_allow: Some(cairn_protocol::AlwaysAllow::Command {
                program: "cargo".into(),
            }),
        }
    }

    fn approver(host: ApprovalHost, dialogs: Arc<FakeDialogs>) -> (Arc<Pending>, DesktopApprover) {
        let pending = Arc::new(Pending::new());
        let a = DesktopApprover::new(pending.clone(), dialogs, host, "/w/proj".into());
        (pending, a)
    }

    #[tokio::test]
    async fn the_native_dialog_answers_and_names_tool_command_and_reason() {
        let dialogs = Arc::new(FakeDialogs::answering(Some(
            ApprovalDecision::AlwaysCommand,
        )));
        let (pending, a) = approver(ApprovalHost::Native, dialogs.clone());
        assert_eq!(
            a.approve(request("c1")).await,
            ApprovalDecision::AlwaysCommand
        );
        let shown = dialogs.shown();
        assert_eq!(shown.len(), 1);
        assert!(shown[0].title.contains("run_shell"), "{:?}", shown[0]);
        assert!(shown[0].message.contains("cargo test"), "{:?}", shown[0]);
        assert!(
            shown[0].message.contains("runs a command"),
            "{:?}",
            shown[0]
        );
        assert!(pending.pending_approvals().is_empty());
    }

    #[tokio::test]
    async fn the_chat_card_answers_and_the_dialog_is_dismissed() {
        let dialogs = Arc::new(FakeDialogs::answering(None));
        let (pending, a) = approver(ApprovalHost::Native, dialogs.clone());
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
        assert_eq!(dialogs.dismissed().len(), 1);
    }

    #[tokio::test]
    async fn closing_denies_what_waits_and_what_comes_later() {
        let dialogs = Arc::new(FakeDialogs::answering(None));
        let (pending, a) = approver(ApprovalHost::Ui, dialogs.clone());
        let a = Arc::new(a);
        let (a1, a2) = (a.clone(), a.clone());
        let approval = tokio::spawn(async move { a1.approve(request("c3")).await });
        let question = tokio::spawn(async move {
            a2.ask_user(AskUserQuestion {
                task_id: "t".into(),
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
            a.review_plan("p".into()).await,
            PlanReview::Rejected { .. }
        ));
        assert!(dialogs.shown().is_empty(), "ui host shows no native dialog");
    }

    #[tokio::test]
    async fn an_interrupted_approval_leaves_nothing_pending() {
        let dialogs = Arc::new(FakeDialogs::answering(None));
        let (pending, a) = approver(ApprovalHost::Native, dialogs.clone());
        let r = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            a.approve(request("c5")),
        )
        .await;
        assert!(r.is_err());
        assert!(pending.pending_approvals().is_empty());
        assert_eq!(dialogs.dismissed().len(), 1);
    }

    #[tokio::test]
    async fn fixed_hosts_never_wait() {
        let dialogs = Arc::new(FakeDialogs::answering(None));
        let (_, allow) = approver(ApprovalHost::Allow, dialogs.clone());
        let (_, deny) = approver(ApprovalHost::Deny, dialogs.clone());
        assert_eq!(allow.approve(request("a")).await, ApprovalDecision::Once);
        assert_eq!(deny.approve(request("b")).await, ApprovalDecision::Deny);
        assert!(dialogs.shown().is_empty());
    }

    #[tokio::test]
    async fn questions_plans_and_directories_are_answered_in_order() {
        let dialogs = Arc::new(FakeDialogs::answering(None));
        let (pending, a) = approver(ApprovalHost::Native, dialogs);
        let a = Arc::new(a);
        let a1 = a.clone();
        let plan = tokio::spawn(async move { a1.review_plan("do it".into()).await });
        let a2 = a.clone();
        let dir = tokio::spawn(async move {
            a2.grant_directory(DirectoryRequested {
                reason: "docs".into(),
                path: "/srv/docs".into(),
                writable: false,
            })
            .await
        });
        while lock(&pending.plans).is_empty() || lock(&pending.directories).is_empty() {
            tokio::task::yield_now().await;
        }
        assert!(pending.answer_plan(PlanReview::Accepted));
        assert!(pending.answer_directory(DirectoryGrant::Granted { writable: false }));
        assert!(!pending.answer_question(UserAnswer::Declined { reason: "x".into() }));
        assert_eq!(plan.await.unwrap(), PlanReview::Accepted);
        assert_eq!(
            dir.await.unwrap(),
            DirectoryGrant::Granted { writable: false }
        );
    }
}
