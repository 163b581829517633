//! Suspended requests with a deadline (seed §18.1, §19): approvals, questions, plan reviews
//! and directory requests wait in the session's [`Pending`] table for a client's answer by
//! `requestId`, and are denied / declined when `--approval-timeout` passes first.

use std::sync::atomic::{AtomicUsize, Ordering};
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
pub struct TimedApprover {
    inner: PendingApprover,
    timeout: Duration,
    /// Approvals denied by the timeout whose reason was not asked yet.
    timed_out: AtomicUsize,
    /// A tenant's root: directory grants outside it are refused.
    root: Option<std::path::PathBuf>,
}

impl TimedApprover {
    /// Parks requests in `pending` for at most `timeout`.
    pub fn new(
        pending: Arc<Pending>,
        workspace: std::path::PathBuf,
        timeout: Duration,
        root: Option<std::path::PathBuf>,
    ) -> Self {
        TimedApprover {
            inner: PendingApprover::new(pending, None, None, workspace),
            timeout,
            timed_out: AtomicUsize::new(0),
            root,
        }
    }

    fn expired(&self) -> String {
        format!("no answer within {} s", self.timeout.as_secs())
    }
}

#[async_trait]
impl Approver for TimedApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        match tokio::time::timeout(self.timeout, self.inner.approve(request)).await {
            Ok(d) => d,
            Err(_) => {
                self.timed_out.fetch_add(1, Ordering::SeqCst);
                ApprovalDecision::Deny
            }
        }
    }

    fn asks_a_person(&self) -> bool {
        self.inner.asks_a_person()
    }

    fn deny_reason(&self) -> String {
        let took = self
            .timed_out
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        match took {
            Ok(_) => self.expired(),
            Err(_) => "denied by the client".into(),
        }
    }

    async fn ask_user(&self, question: AskUserQuestion) -> UserAnswer {
        tokio::time::timeout(self.timeout, self.inner.ask_user(question))
            .await
            .unwrap_or_else(|_| UserAnswer::Declined {
                reason: self.expired(),
            })
    }

    async fn review_plan(&self, plan: PlanProposed) -> PlanReview {
        tokio::time::timeout(self.timeout, self.inner.review_plan(plan))
            .await
            .unwrap_or_else(|_| PlanReview::Rejected {
                feedback: self.expired(),
            })
    }

    async fn elicit(
        &self,
        request: cairn_protocol::ElicitationRequested,
    ) -> cairn_protocol::ElicitationAnswer {
        tokio::time::timeout(self.timeout, self.inner.elicit(request))
            .await
            .unwrap_or_else(|_| cairn_protocol::ElicitationAnswer::Decline {
                reason: self.expired(),
            })
    }

    async fn grant_directory(&self, request: DirectoryRequested) -> DirectoryGrant {
        if let Some(root) = &self.root {
            let path = std::path::Path::new(&request.path);
            let inside = path
                .canonicalize()
                .map(|p| p.starts_with(root))
                .unwrap_or(false);
            if !inside {
                return DirectoryGrant::Denied {
                    reason: "outside this tenant's root".into(),
                };
            }
        }
        tokio::time::timeout(self.timeout, self.inner.grant_directory(request))
            .await
            .unwrap_or_else(|_| DirectoryGrant::Denied {
                reason: self.expired(),
            })
    }
}
