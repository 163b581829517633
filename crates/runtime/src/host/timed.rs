//! Requests with a deadline (seed §18.1, §19), one implementation for every face: approvals
//! are denied, questions and plan reviews declined, directory requests refused when no answer
//! comes within the timeout (`cairn serve --approval-timeout`, `cairn run --approval-timeout`,
//! the `approval_timeout` setting the app reads). A tenant's root bounds directory grants.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::Approver;
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested,
    PlanProposed, PlanReview, UserAnswer,
};

/// An [`Approver`] whose requests time out.
pub struct TimedApprover {
    inner: Arc<dyn Approver>,
    timeout: Duration,
    /// Approvals denied by the timeout whose reason was not asked yet.
    timed_out: AtomicUsize,
    /// A tenant's root: directory grants outside it are refused.
    root: Option<std::path::PathBuf>,
}

impl TimedApprover {
    /// Gives `inner` at most `timeout` per request; directory grants outside `root` (when
    /// given) are refused without asking.
    pub fn new(
        inner: Arc<dyn Approver>,
        timeout: Duration,
        root: Option<std::path::PathBuf>,
    ) -> Self {
        TimedApprover {
            inner,
            timeout,
            timed_out: AtomicUsize::new(0),
            root,
        }
    }

    fn expired(&self) -> String {
        format!("no answer within {} s", self.timeout.as_secs())
    }
}

/// The approval timeout a session of `scope` gets when its face set none: the
/// `approval_timeout` setting (`CAIRN_APPROVAL_TIMEOUT`, seconds; 0 or none = no timeout).
pub fn default_approval_timeout(scope: &crate::config_scope::ConfigScope) -> Option<Duration> {
    if !scope.user_config {
        return None;
    }
    crate::user_config::var("CAIRN_APPROVAL_TIMEOUT")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
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

    fn deny_reason(&self) -> String {
        let took = self
            .timed_out
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        match took {
            Ok(_) => self.expired(),
            Err(_) => self.inner.deny_reason(),
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

    fn asks_a_person(&self) -> bool {
        self.inner.asks_a_person()
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
