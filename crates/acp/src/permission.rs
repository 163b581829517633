//! Every request a turn waits on becomes a `session/request_permission`: approvals with
//! Cairn's choices (allow once, always allow when offered, always in this project, reject),
//! plan reviews, directory requests and questions with options. The answer goes back by
//! the request's `requestId`; a cancelled request is a rejection, so nothing is done.

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use cairn_protocol::{
    AlwaysAllow, ApprovalDecision, DirectoryGrant, PermissionRequired, PlanReview, UserAnswer,
};
use cairn_runtime::host::{RequestAnswer, SessionHandle};

use crate::state::State;

const ONCE: &str = "allow_once";
const ALWAYS: &str = "allow_always";
const PROJECT: &str = "allow_project";
const REJECT: &str = "reject";

/// How long an answer waits for its request to be parked (the event comes first).
const PARK_WAIT: Duration = Duration::from_secs(10);

/// The options of an approval: "always" ones only when Cairn offers an allowance (never for
/// a command with operators or a catastrophic one).
pub(crate) fn options(p: &PermissionRequired) -> Vec<PermissionOption> {
    let mut out = vec![PermissionOption::new(
        ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(allow) = &p.always_allow {
        let what = match allow {
            AlwaysAllow::Tool { name } => format!("`{name}`"),
            AlwaysAllow::Command { program } => format!("`{program}` commands"),
        };
        out.push(PermissionOption::new(
            ALWAYS,
            format!("Always allow {what} in this session"),
            PermissionOptionKind::AllowAlways,
        ));
        out.push(PermissionOption::new(
            PROJECT,
            format!("Always allow {what} in this project"),
            PermissionOptionKind::AllowAlways,
        ));
    }
    out.push(PermissionOption::new(
        REJECT,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    out
}

fn selected(outcome: &RequestPermissionOutcome) -> Option<String> {
    match outcome {
        RequestPermissionOutcome::Selected(s) => Some(s.option_id.0.to_string()),
        _ => None,
    }
}

/// Asks the client about approval `p` of session `sid` (the tool call `call`) and answers
/// it; a failed request or a cancelled one denies.
pub(crate) async fn approval(
    cx: ConnectionTo<Client>,
    state: Arc<State>,
    handle: Arc<SessionHandle>,
    sid: String,
    call: ToolCallUpdate,
    p: PermissionRequired,
) {
    let request = RequestPermissionRequest::new(sid, call, options(&p));
    let answer = cx.send_request(request).block_task().await;
    let choice = match &answer {
        Ok(r) => selected(&r.outcome),
        Err(e) => {
            tracing::warn!(error = %e, "permission request failed: denied");
            None
        }
    };
    parked(&handle, &p.request_id).await;
    let done = match choice.as_deref() {
        Some(PROJECT) => match state.host.allow_in_project(&handle, &p.req_id) {
            Ok(answered) => answered,
            Err(e) => {
                tracing::warn!(error = %e, "always in this project failed: denied");
                handle.answer_approval(&p.req_id, ApprovalDecision::Deny)
            }
        },
        Some(ALWAYS) => {
            let d = p
                .always_allow
                .as_ref()
                .map_or(ApprovalDecision::Once, |a| a.decision());
            handle.answer(&p.request_id, RequestAnswer::Approval(d))
        }
        Some(ONCE) => handle.answer(
            &p.request_id,
            RequestAnswer::Approval(ApprovalDecision::Once),
        ),
        _ => handle.answer(
            &p.request_id,
            RequestAnswer::Approval(ApprovalDecision::Deny),
        ),
    };
    if !done {
        tracing::debug!(request = %p.request_id, "approval no longer waits");
    }
}

/// What a non-approval request asks, as a permission request.
pub(crate) enum Ask {
    /// A plan to accept or reject.
    Plan { request_id: String, plan: String },
    /// A folder outside the workspace.
    Directory {
        request_id: String,
        path: String,
        writable: bool,
        reason: String,
    },
    /// A question with options.
    Question {
        request_id: String,
        question: String,
        options: Vec<String>,
    },
}

/// Asks the client `ask` and answers it; anything but a chosen option declines.
pub(crate) async fn ask(
    cx: ConnectionTo<Client>,
    handle: Arc<SessionHandle>,
    sid: String,
    ask: Ask,
) {
    let (request_id, title, opts) = match &ask {
        Ask::Plan { request_id, plan } => (
            request_id.clone(),
            format!("Proposed plan:\n{plan}"),
            vec![
                PermissionOption::new("accept", "Accept the plan", PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        ),
        Ask::Directory {
            request_id,
            path,
            writable,
            reason,
        } => (
            request_id.clone(),
            format!(
                "Allow {} access to {path}? {reason}",
                if *writable { "read-write" } else { "read-only" }
            ),
            vec![
                PermissionOption::new(
                    "grant",
                    "Allow for this session",
                    PermissionOptionKind::AllowOnce,
                ),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        ),
        Ask::Question {
            request_id,
            question,
            options,
        } => {
            let mut o: Vec<PermissionOption> = options
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    PermissionOption::new(
                        format!("answer_{i}"),
                        text.clone(),
                        PermissionOptionKind::AllowOnce,
                    )
                })
                .collect();
            o.push(PermissionOption::new(
                REJECT,
                "Decline",
                PermissionOptionKind::RejectOnce,
            ));
            (request_id.clone(), question.clone(), o)
        }
    };
    let call = ToolCallUpdate::new(
        request_id.clone(),
        ToolCallUpdateFields::new()
            .title(title)
            .kind(ToolKind::Think),
    );
    let answer = cx
        .send_request(RequestPermissionRequest::new(sid, call, opts))
        .block_task()
        .await;
    let choice = answer.ok().and_then(|r| selected(&r.outcome));
    parked(&handle, &request_id).await;
    let declined = "declined in the editor".to_string();
    let reply = match (&ask, choice.as_deref()) {
        (Ask::Plan { .. }, Some("accept")) => RequestAnswer::Plan(PlanReview::Accepted),
        (Ask::Plan { .. }, _) => RequestAnswer::Plan(PlanReview::Rejected { feedback: declined }),
        (Ask::Directory { writable, .. }, Some("grant")) => {
            RequestAnswer::Directory(DirectoryGrant::Granted {
                writable: *writable,
            })
        }
        (Ask::Directory { .. }, _) => {
            RequestAnswer::Directory(DirectoryGrant::Denied { reason: declined })
        }
        (Ask::Question { options, .. }, Some(c)) if c.starts_with("answer_") => {
            let picked = c["answer_".len()..]
                .parse::<usize>()
                .ok()
                .and_then(|i| options.get(i).cloned());
            match picked {
                Some(p) => RequestAnswer::Question(UserAnswer::Answered {
                    selected: vec![p],
                    text: String::new(),
                }),
                None => RequestAnswer::Question(UserAnswer::Declined { reason: declined }),
            }
        }
        (Ask::Question { .. }, _) => {
            RequestAnswer::Question(UserAnswer::Declined { reason: declined })
        }
    };
    handle.answer(&request_id, reply);
}

/// Waits (bounded) until request `request_id` is parked in the session's table: its event
/// is emitted right before the approver is asked.
async fn parked(handle: &SessionHandle, request_id: &str) {
    let pending = handle.pending().clone();
    let mut changes = pending.approvals_waiting();
    let deadline = tokio::time::Instant::now() + PARK_WAIT;
    loop {
        if pending
            .pending_request_ids()
            .iter()
            .any(|id| id == request_id)
        {
            return;
        }
        // Questions and plans do not move the approvals count: poll them briefly.
        let step = tokio::time::Instant::now() + Duration::from_millis(20);
        let until = step.min(deadline);
        if tokio::time::timeout_at(until, changes.changed())
            .await
            .is_ok_and(|r| r.is_err())
        {
            return;
        }
        if tokio::time::Instant::now() >= deadline || !handle.is_busy() {
            return;
        }
    }
}
