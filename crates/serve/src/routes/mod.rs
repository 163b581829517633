//! The routes of serve.md, each a thin mapping to host calls.

mod messages;
mod requests;
mod rollback;
mod sessions;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::Router;

use crate::error::ApiError;
use crate::state::App;

/// Every route, guarded.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({"ok": true})) }),
        )
        .route("/openapi.json", get(crate::openapi::serve))
        .route("/v1/sessions", post(sessions::create).get(sessions::list))
        .route(
            "/v1/sessions/{id}",
            get(sessions::get).patch(sessions::patch),
        )
        .route("/v1/sessions/{id}/close", post(sessions::close))
        .route(
            "/v1/sessions/{id}/messages",
            post(messages::post).get(messages::history),
        )
        .route("/v1/sessions/{id}/events", get(messages::events))
        .route("/v1/sessions/{id}/steering", post(messages::steer))
        .route(
            "/v1/sessions/{id}/steering/{steer_id}",
            delete(messages::unsteer),
        )
        .route("/v1/sessions/{id}/interrupt", post(messages::interrupt))
        .route("/v1/sessions/{id}/approvals", get(requests::approvals))
        .route(
            "/v1/sessions/{id}/approvals/{request_id}",
            post(requests::approve),
        )
        .route("/v1/sessions/{id}/questions", get(requests::questions))
        .route(
            "/v1/sessions/{id}/questions/{request_id}",
            post(requests::answer),
        )
        .route("/v1/pending", get(requests::pending))
        .route("/v1/sessions/{id}/turns", get(rollback::turns))
        .route("/v1/sessions/{id}/turns/{turn}/diff", get(rollback::diff))
        .route("/v1/sessions/{id}/restore", post(rollback::restore))
        .route("/v1/worktrees", get(rollback::worktrees))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            crate::guard::guard,
        ))
        .with_state(app)
}
