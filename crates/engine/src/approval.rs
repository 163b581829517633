//! The approver boundary: who answers "may this tool call run?".

use async_trait::async_trait;
use cairn_protocol::{ApprovalDecision, ApprovalRequest};

/// Answers approval requests (terminal prompt, native dialog, fixed policy, test script).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decides one request. Dropping the future (interrupt) counts as a denial.
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision;
}

/// An approver that always gives the same answer (`--approve allow|deny`).
#[derive(Debug, Clone, Copy)]
pub struct FixedApprover(pub ApprovalDecision);

#[async_trait]
impl Approver for FixedApprover {
    async fn approve(&self, _request: ApprovalRequest) -> ApprovalDecision {
        self.0
    }
}
