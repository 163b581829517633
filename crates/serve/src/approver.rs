//! Suspended requests with a deadline (seed §18.1, §19): approvals, questions, plan reviews
//! and directory requests wait in the session's [`Pending`] table for a client's answer by
//! `requestId`, and are denied / declined when `--approval-timeout` passes first. The
//! deadline itself is the host's ([`cairn_runtime::host::TimedApprover`]), shared with
//! `cairn run` and the app.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::Approver;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested,
    PlanProposed, PlanReview, UserAnswer,
};
use cairn_runtime::host::{Pending, PendingApprover};

/// A [`PendingApprover`] whose requests time out.
pub struct TimedApprover(cairn_runtime::host::TimedApprover);

/// The client answers through the pending table; a denial it gives is said to be its own.
struct ClientApprover(PendingApprover);

#[async_trait]
impl Approver for ClientApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        self.0.approve(request).await
    }
    fn deny_reason(&self) -> String {
        "denied by the client".into()
    }
    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        self.0.ask_user(question).await
    }
    async fn review_plan(&self, plan: PlanProposed) -> PlanReview {
        self.0.review_plan(plan).await
    }
    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        self.0.grant_directory(request).await
    }
    async fn elicit(
        &self,
        request: cairn_protocol::ElicitationRequested,
    ) -> cairn_protocol::ElicitationAnswer {
        self.0.elicit(request).await
    }
    fn asks_a_person(&self) -> bool {
        self.0.asks_a_person()
    }
}

impl TimedApprover {
    /// Parks requests in `pending` for at most `timeout`.
    pub fn new(
        pending: Arc<Pending>,
        workspace: std::path::PathBuf,
        timeout: Duration,
        root: Option<std::path::PathBuf>,
    ) -> Self {
        let inner = ClientApprover(PendingApprover::new(pending, None, None, workspace));
        TimedApprover(cairn_runtime::host::TimedApprover::new(
            Arc::new(inner),
            timeout,
            root,
        ))
    }
}

#[async_trait]
impl Approver for TimedApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        self.0.approve(request).await
    }

    fn asks_a_person(&self) -> bool {
        self.0.asks_a_person()
    }

    fn deny_reason(&self) -> String {
        self.0.deny_reason()
    }
    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        self.0.ask_user(question).await
    }
    async fn review_plan(&self, plan: PlanProposed) -> PlanReview {
        self.0.review_plan(plan).await
    }

    async fn elicit(
        &self,
        request: cairn_protocol::ElicitationRequested,
    ) -> cairn_protocol::ElicitationAnswer {
        self.0.elicit(request).await
    }

    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        self.0.grant_directory(request).await
    }
}
