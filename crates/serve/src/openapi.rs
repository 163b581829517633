//! `GET /openapi.json`: serve.md as OpenAPI 3.1, checked in beside the crate
//! (`openapi.json`); a test keeps it and the router's routes in step.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// Every route the router serves: `(method, path)` in the document's path syntax.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/healthz"),
    ("get", "/openapi.json"),
    ("post", "/v1/sessions"),
    ("get", "/v1/sessions"),
    ("get", "/v1/sessions/{id}"),
    ("patch", "/v1/sessions/{id}"),
    ("post", "/v1/sessions/{id}/close"),
    ("post", "/v1/sessions/{id}/messages"),
    ("get", "/v1/sessions/{id}/messages"),
    ("get", "/v1/sessions/{id}/events"),
    ("post", "/v1/sessions/{id}/steering"),
    ("delete", "/v1/sessions/{id}/steering/{steerId}"),
    ("post", "/v1/sessions/{id}/interrupt"),
    ("get", "/v1/sessions/{id}/approvals"),
    ("post", "/v1/sessions/{id}/approvals/{requestId}"),
    ("get", "/v1/sessions/{id}/questions"),
    ("post", "/v1/sessions/{id}/questions/{requestId}"),
    ("get", "/v1/pending"),
    ("get", "/v1/sessions/{id}/turns"),
    ("get", "/v1/sessions/{id}/turns/{turn}/diff"),
    ("post", "/v1/sessions/{id}/restore"),
    ("get", "/v1/worktrees"),
];

/// The checked-in document.
pub fn document() -> &'static str {
    include_str!("../openapi.json")
}

/// `GET /openapi.json`.
pub async fn serve() -> Response {
    let mut resp = document().into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}
