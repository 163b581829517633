//! Approval inheritance: a child asks its parent's approver, and every request names the
//! child that asks.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested,
    PlanProposed, PlanReview, UserAnswer,
};

use crate::approval::Approver;

/// Forwards a child's approvals, questions, plans and directory requests to the parent's
/// approver, each prefixed with `[subagent <role> <id>]`.
pub struct ChildApprover {
    parent: Arc<dyn Approver>,
    label: String,
}

impl ChildApprover {
    /// Wraps the parent's approver for the child `agent` with session id `origin`.
    pub fn new(parent: Arc<dyn Approver>, agent: &str, origin: &str) -> Self {
        ChildApprover {
            parent,
            label: format!("[subagent {agent} {origin}]"),
        }
    }

    /// The prefix this approver adds (`[subagent <role> <id>]`).
    pub fn label(&self) -> &str {
        &self.label
    }

    fn tag(&self, text: &str) -> String {
        format!("{} {text}", self.label)
    }
}

#[async_trait]
impl Approver for ChildApprover {
    async fn approve(&self, mut request: ApprovalRequest) -> ApprovalDecision {
        request.reason = self.tag(&request.reason);
        self.parent.approve(request).await
    }

    async fn ask_user(&self, mut question: AskUserQuestion) -> UserAnswer {
        question.question = self.tag(&question.question);
        self.parent.ask_user(question).await
    }

    async fn review_plan(&self, mut plan: PlanProposed) -> PlanReview {
        plan.plan = self.tag(&plan.plan);
        self.parent.review_plan(plan).await
    }

    fn deny_reason(&self) -> String {
        self.parent.deny_reason()
    }

    fn asks_a_person(&self) -> bool {
        self.parent.asks_a_person()
    }

    async fn elicit(
        &self,
        mut request: cairn_protocol::ElicitationRequested,
    ) -> cairn_protocol::ElicitationAnswer {
        request.message = self.tag(&request.message);
        self.parent.elicit(request).await
    }

    async fn grant_directory(&self, mut request: DirectoryRequested) -> DirectoryGrant {
        request.reason = self.tag(&request.reason);
        self.parent.grant_directory(request).await
    }
}
