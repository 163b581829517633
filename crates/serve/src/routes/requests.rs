//! Suspended approvals and questions, listed per session and across the caller's sessions,
//! answered by `requestId`.

use std::sync::Arc;

use axum::extract::Path;
use axum::Json as AxJson;
use cairn_protocol::{AlwaysAllow, ApprovalDecision, DirectoryGrant, PlanReview, UserAnswer};
use cairn_runtime::host::RequestAnswer;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::body::Json;
use crate::error::ApiError;
use crate::live::Live;
use crate::state::Ctx;

/// The open session `id`; a stored one has nothing waiting (`None`).
async fn live_or_stored(app: &Ctx, id: &str) -> Result<Option<Arc<Live>>, ApiError> {
    match app.live(id) {
        Some(l) => Ok(Some(l)),
        None => crate::routes::sessions::view(app, id).await.map(|_| None),
    }
}

/// `GET /v1/sessions/{id}/approvals`.
pub async fn approvals(app: Ctx, Path(id): Path<String>) -> Result<AxJson<Value>, ApiError> {
    let list = live_or_stored(&app, &id)
        .await?
        .map(|l| l.waiting().0)
        .unwrap_or_default();
    Ok(AxJson(json!({ "approvals": list })))
}

/// `GET /v1/sessions/{id}/questions`.
pub async fn questions(app: Ctx, Path(id): Path<String>) -> Result<AxJson<Value>, ApiError> {
    let list = live_or_stored(&app, &id)
        .await?
        .map(|l| l.waiting().1)
        .unwrap_or_default();
    Ok(AxJson(json!({ "questions": list })))
}

/// `GET /v1/pending`: everything waiting, each with its `sessionId`.
pub async fn pending(app: Ctx) -> AxJson<Value> {
    let mut approvals = Vec::new();
    let mut questions = Vec::new();
    for live in app.lives() {
        let id = live.id();
        let (a, q) = live.waiting();
        let tag = |mut v: Value| {
            if let Value::Object(m) = &mut v {
                m.insert("sessionId".into(), json!(id));
            }
            v
        };
        approvals.extend(a.into_iter().map(tag));
        questions.extend(q.into_iter().map(tag));
    }
    AxJson(json!({"approvals": approvals, "questions": questions}))
}

/// `POST …/approvals/{requestId}` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    decision: Decision,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Decision {
    Once,
    Always,
    Deny,
}

/// `POST /v1/sessions/{id}/approvals/{requestId}`.
pub async fn approve(
    app: Ctx,
    Path((id, request_id)): Path<(String, String)>,
    Json(body): Json<DecisionBody>,
) -> Result<AxJson<Value>, ApiError> {
    let live = live_or_stored(&app, &id)
        .await?
        .ok_or_else(|| ApiError::not_pending(&request_id))?;
    if live.kind_of(&request_id) != Some("approval") {
        return Err(ApiError::not_pending(&request_id));
    }
    let decision = match body.decision {
        Decision::Once => ApprovalDecision::Once,
        Decision::Deny => ApprovalDecision::Deny,
        Decision::Always => {
            // The allowance lasts for this session only: never a project or user rule.
            let offered = live
                .always_allow(&request_id)
                .and_then(|v| serde_json::from_value::<AlwaysAllow>(v).ok());
            match offered {
                Some(a) => a.decision(),
                None => {
                    return Err(ApiError::conflict(
                        "no_allowance",
                        "this approval offers no \"always\" allowance",
                    ))
                }
            }
        }
    };
    if !live
        .pending
        .answer(&request_id, RequestAnswer::Approval(decision))
    {
        return Err(ApiError::not_pending(&request_id));
    }
    live.touch();
    Ok(AxJson(json!({"answered": true})))
}

/// `POST /v1/sessions/{id}/questions/{requestId}`: the answer is the protocol's type for
/// the request's kind.
pub async fn answer(
    app: Ctx,
    Path((id, request_id)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Result<AxJson<Value>, ApiError> {
    let live = live_or_stored(&app, &id)
        .await?
        .ok_or_else(|| ApiError::not_pending(&request_id))?;
    let wrong =
        |e: serde_json::Error| ApiError::invalid(format!("not an answer of this kind: {e}"));
    let answer = match live.kind_of(&request_id) {
        Some("question") => {
            RequestAnswer::Question(serde_json::from_value::<UserAnswer>(body).map_err(wrong)?)
        }
        Some("plan") => {
            let review = serde_json::from_value::<PlanReview>(body).map_err(wrong)?;
            if matches!(review, PlanReview::Unreviewed { .. }) {
                return Err(ApiError::invalid("a plan is accepted or rejected"));
            }
            RequestAnswer::Plan(review)
        }
        Some("directory") => {
            RequestAnswer::Directory(serde_json::from_value::<DirectoryGrant>(body).map_err(wrong)?)
        }
        Some("elicitation") => RequestAnswer::Elicitation(
            serde_json::from_value::<cairn_protocol::ElicitationAnswer>(body).map_err(wrong)?,
        ),
        _ => return Err(ApiError::not_pending(&request_id)),
    };
    if !live.pending.answer(&request_id, answer) {
        return Err(ApiError::not_pending(&request_id));
    }
    live.touch();
    Ok(AxJson(json!({"answered": true})))
}
