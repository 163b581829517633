//! Runs and streams: post a message (attached SSE or detached), the session's event stream,
//! its history, steering and interrupt.

use std::time::Duration;

use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json as AxJson};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

use crate::body::{Json, OptJson};
use crate::error::{from_store, ApiError};
use crate::hub::{self, From};
use crate::live::{Attachment, Input};
use crate::server::Conn;
use crate::sse::{SseBody, PING};
use crate::state::{shutting_down, Ctx};

/// One attachment of a message.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AttachmentBody {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    base64: Option<String>,
}

/// `POST …/messages` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    retry: bool,
    #[serde(default)]
    resume: bool,
    #[serde(default)]
    detach: bool,
    #[serde(default)]
    attachments: Vec<AttachmentBody>,
}

fn input_of(body: MessageBody) -> Result<Input, ApiError> {
    let attachments = attachments_of(body.attachments)?;
    match (body.text, body.retry, body.resume) {
        (Some(t), false, false) if !t.trim().is_empty() => Ok(Input::Text(t, attachments)),
        (Some(_), false, false) => Err(ApiError::invalid("text is empty")),
        (None, true, false) if attachments.is_empty() => Ok(Input::Retry),
        (None, false, true) if attachments.is_empty() => Ok(Input::Resume),
        _ => Err(ApiError::invalid(
            "send exactly one of text, \"retry\": true, \"resume\": true",
        )),
    }
}

/// A message's (or steering's) attachments: `{"path"}` or `{"mediaType", "base64"}` each.
fn attachments_of(list: Vec<AttachmentBody>) -> Result<Vec<Attachment>, ApiError> {
    list.into_iter()
        .map(|a| match (a.path, a.media_type, a.base64) {
            (Some(p), None, None) => Ok(Attachment::Path(p)),
            (None, Some(media_type), Some(base64)) => Ok(Attachment::Inline { media_type, base64 }),
            _ => Err(ApiError::invalid(
                "an attachment is {\"path\"} or {\"mediaType\", \"base64\"}",
            )),
        })
        .collect()
}

/// `POST /v1/sessions/{id}/messages`.
pub async fn post(
    app: Ctx,
    Path(id): Path<String>,
    conn: Option<Extension<Conn>>,
    Json(body): Json<MessageBody>,
) -> Result<Response, ApiError> {
    if app.stopping.is_cancelled() {
        return Err(shutting_down());
    }
    let detach = body.detach;
    let input = input_of(body)?;
    let live = app.open_stored(&id).await?;
    if let Some(reason) = live.handle.blocked() {
        return Err(ApiError::conflict("not_configured", reason));
    }
    if detach {
        let (_, ahead) = live.enqueue(input, None)?;
        return Ok((
            StatusCode::ACCEPTED,
            AxJson(json!({"sessionId": live.id(), "queued": ahead})),
        )
            .into_response());
    }
    let (outlet, inlet) = hub::outlet(conn.map(|c| c.0.cancel.clone()));
    let (run, _) = live.enqueue(input, Some(outlet))?;
    let gone = live.clone();
    let body = SseBody::new(
        Vec::new(),
        inlet,
        PING,
        ": ping\n\n",
        Some(Box::new(move || gone.client_gone(run))),
    );
    Ok(body.response())
}

/// `GET …/events` query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    after: Option<String>,
    from: Option<String>,
}

/// `GET /v1/sessions/{id}/events`.
pub async fn events(
    app: Ctx,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
    conn: Option<Extension<Conn>>,
) -> Result<Response, ApiError> {
    let live = app.open_stored(&id).await?;
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or(q.after);
    let from = match (last, q.from.as_deref()) {
        (Some(id), _) => live.hub.parse_id(&id),
        (None, Some("start")) => From::Start,
        (None, Some(other)) => {
            return Err(ApiError::invalid(format!(
                "from={other}: only from=start is known"
            )))
        }
        (None, None) => From::Now,
    };
    let sub = live.hub.subscribe(from, conn.map(|c| c.0.cancel.clone()));
    let mut first = Vec::new();
    if sub.resync {
        let data = json!({"type": "resync", "data": {"reason": "expired"}});
        first.push(bytes::Bytes::from(format!(
            "event: resync\ndata: {data}\n\n"
        )));
    }
    first.extend(sub.replay);
    live.watchers.fetch_add(1, Ordering::SeqCst);
    let watched = live.clone();
    let body = SseBody::new(
        first,
        sub.inlet,
        app.cfg.keepalive.max(Duration::from_millis(10)),
        ": keepalive\n\n",
        Some(Box::new(move || {
            watched.watchers.fetch_sub(1, Ordering::SeqCst);
            watched.touch();
        })),
    );
    Ok(body.response())
}

/// `GET …/messages` query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    before: Option<usize>,
    limit: Option<usize>,
}

/// `GET /v1/sessions/{id}/messages`: the history, paged by turns, newest last; read from
/// the store when the session is not open here (never opened nor locked).
pub async fn history(
    app: Ctx,
    Path(id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> Result<AxJson<Value>, ApiError> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::invalid("limit is 1 to 500"));
    }
    cairn_runtime::store::validate_id(&id).map_err(|_| ApiError::no_session(&id))?;
    let a = app.clone();
    let page = tokio::task::spawn_blocking(move || match a.live(&id) {
        Some(l) => l.handle.history(q.before, limit),
        None => {
            let store = cairn_runtime::SessionStore::new(&a.state_dir);
            store.load(&id)?;
            store.history(&id, q.before, limit)
        }
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(from_store)?;
    let before = page.has_older().then_some(page.first);
    Ok(AxJson(json!({"messages": page.events, "before": before})))
}

/// `POST …/steering` body: the words, and attachments as a message takes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteerBody {
    text: String,
    #[serde(default)]
    attachments: Vec<AttachmentBody>,
}

/// `POST /v1/sessions/{id}/steering`.
pub async fn steer(
    app: Ctx,
    Path(id): Path<String>,
    Json(body): Json<SteerBody>,
) -> Result<AxJson<Value>, ApiError> {
    let live = app.live(&id).ok_or_else(|| idle_or_missing(&app, &id))?;
    if !live.handle.is_busy() {
        return Err(ApiError::conflict(
            "session_idle",
            "no run is under way to steer",
        ));
    }
    if body.text.trim().is_empty() {
        return Err(ApiError::invalid("text is empty"));
    }
    let attachments = attachments_of(body.attachments)?;
    let prompt = crate::runs::prompt_of(&live.handle, body.text.clone(), &attachments)
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    let pending = live
        .steer(prompt)
        .await
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    Ok(AxJson(json!({"pending": pending})))
}

fn idle_or_missing(app: &Ctx, id: &str) -> ApiError {
    let store = cairn_runtime::SessionStore::new(&app.state_dir);
    match store.load(id) {
        Ok(_) => ApiError::conflict("session_idle", "no run is under way to steer"),
        Err(e) => from_store(e),
    }
}

/// `DELETE /v1/sessions/{id}/steering/{steerId}`.
pub async fn unsteer(
    app: Ctx,
    Path((id, steer_id)): Path<(String, String)>,
) -> Result<AxJson<Value>, ApiError> {
    let Some(live) = app.live(&id) else {
        crate::routes::sessions::view(&app, &id).await?;
        return Ok(AxJson(json!({"removed": false, "pending": []})));
    };
    let (removed, pending) = live.unsteer(&steer_id);
    Ok(AxJson(json!({"removed": removed, "pending": pending})))
}

/// `POST …/interrupt` body (optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InterruptBody {
    #[serde(default)]
    drop_queued: bool,
}

/// `POST /v1/sessions/{id}/interrupt`.
pub async fn interrupt(
    app: Ctx,
    Path(id): Path<String>,
    OptJson(body): OptJson<InterruptBody>,
) -> Result<AxJson<Value>, ApiError> {
    let Some(live) = app.live(&id) else {
        crate::routes::sessions::view(&app, &id).await?;
        return Ok(AxJson(json!({"interrupted": false, "dropped": 0})));
    };
    let (interrupted, dropped) = live.interrupt(body.drop_queued);
    Ok(AxJson(
        json!({"interrupted": interrupted, "dropped": dropped}),
    ))
}
