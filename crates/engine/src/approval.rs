//! The host boundary: who answers approvals, questions, plans and directory requests.

use async_trait::async_trait;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested,
    ElicitationAnswer, ElicitationRequested, PlanProposed, PlanReview, UserAnswer,
};

/// A fresh opaque id for a request a face answers (`requestId` on `permission_required`,
/// `ask_user_question`, `plan_proposed` and `directory_requested`).
pub fn new_request_id() -> String {
    format!("rq_{}", uuid::Uuid::new_v4().simple())
}

/// Why an elicitation was declined where nobody can be asked.
pub const NO_USER_TO_ELICIT: &str =
    "no user can be asked in this session (no terminal, or a fixed --approve policy)";

/// Answers what the engine cannot decide alone (terminal prompt, native dialog, UI, fixed
/// policy, test script). Only `approve` is required; the others default to a headless answer.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decides one tool call. Dropping the future (interrupt) counts as a denial.
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision;

    /// Answers an `ask_user` question; headless hosts decline.
    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        let _ = question;
        UserAnswer::Declined {
            reason: "no user is available to answer questions in this session; decide yourself and say what you assumed".into(),
        }
    }

    /// Reviews a proposed plan; headless hosts cannot (the plan is shown in the output and
    /// the work waits for the user's next message).
    async fn review_plan(&self, plan: PlanProposed) -> PlanReview {
        let _ = plan;
        PlanReview::Unreviewed {
            reason: "no user is available to review plans in this session".into(),
        }
    }

    /// Whether a person answers (not a fixed policy): what only a person may allow (an MCP
    /// server using the model) is refused otherwise.
    fn asks_a_person(&self) -> bool {
        true
    }

    /// Why a [`ApprovalDecision::Deny`] from this approver was given, for the model and the
    /// events.
    fn deny_reason(&self) -> String {
        "denied by the user".into()
    }

    /// Answers an MCP server's request for information (`elicitation/create`); headless hosts
    /// decline and say why.
    async fn elicit(&self, request: ElicitationRequested) -> ElicitationAnswer {
        let _ = request;
        ElicitationAnswer::Decline {
            reason: NO_USER_TO_ELICIT.into(),
        }
    }

    /// Decides a request for access to a directory outside the workspace; headless hosts deny.
    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        let _ = request;
        DirectoryGrant::Denied {
            reason: "no user is available to grant access outside the workspace".into(),
        }
    }
}

/// An approver that always gives the same answer (`--approve allow|deny`).
#[derive(Debug, Clone, Copy)]
pub struct FixedApprover(pub ApprovalDecision);

#[async_trait]
impl Approver for FixedApprover {
    async fn approve(&self, _request: ApprovalRequest) -> ApprovalDecision {
        self.0
    }

    fn asks_a_person(&self) -> bool {
        false
    }

    fn deny_reason(&self) -> String {
        "denied: this run denies every approval (--approve deny, the default without a \
         terminal)"
            .into()
    }
}
