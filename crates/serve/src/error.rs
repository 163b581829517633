//! The one error shape: `{"error": {"code", "message"}}` as `application/json`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// An error response.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The contract's code (`session_not_found`, …).
    pub code: &'static str,
    /// Human text; never holds a key or token.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// `400 invalid_request`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// `404 session_not_found`.
    pub fn no_session(id: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "session_not_found",
            format!("no session {id}"),
        )
    }

    /// `409` with this code.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// `500 internal`.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            message.to_string(),
        )
    }

    /// `404 not_pending`.
    pub fn not_pending(id: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_pending",
            format!("request {id} no longer waits (answered, timed out or dropped)"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut resp = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

/// Maps a session-store error to a response (`session_locked` when another process has it).
pub fn from_store(e: cairn_runtime::StoreError) -> ApiError {
    match e {
        cairn_runtime::StoreError::InUse { id, .. } => ApiError::conflict(
            "session_locked",
            format!("session {id} is open in another Cairn process"),
        ),
        cairn_runtime::StoreError::NotFound { id, .. }
        | cairn_runtime::StoreError::InvalidId(id) => ApiError::no_session(&id),
        other => ApiError::internal(other),
    }
}
