//! The checks every request passes first, in this order: `Origin` (browser pages only from
//! allowed origins), `Host` (on TCP: the listening address), the bearer token (all routes
//! but `GET /healthz` and preflights). Also what every response carries: `Cache-Control:
//! no-store`, CORS headers for allowed origins, and JSON errors for `405`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::{App, Caller};
use crate::token;

/// Runs the checks, then the route.
pub async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let origin = match req.headers().get(header::ORIGIN) {
        None => None,
        Some(o) => {
            let text = o.to_str().unwrap_or("");
            let tenant_origin = app
                .tenants
                .iter()
                .any(|t| t.allow_origins.iter().any(|a| a == text));
            if text == "null" || !(app.cfg.allow_origins.iter().any(|a| a == text) || tenant_origin)
            {
                return finish(
                    ApiError::new(
                        StatusCode::FORBIDDEN,
                        "origin_forbidden",
                        "this Origin may not call the server (see --allow-origin)",
                    )
                    .into_response(),
                    None,
                );
            }
            Some(o.clone())
        }
    };
    if let Some(port) = app.port {
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let ok = [
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
            format!("localhost:{port}"),
        ]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host));
        if !ok {
            return finish(
                ApiError::new(
                    StatusCode::FORBIDDEN,
                    "host_forbidden",
                    "the Host header must name the listening address",
                )
                .into_response(),
                origin,
            );
        }
    }
    if req.method() == Method::OPTIONS && origin.is_some() {
        let mut resp = StatusCode::NO_CONTENT.into_response();
        let h = resp.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("Authorization, Content-Type, Last-Event-ID"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, PATCH, DELETE, OPTIONS"),
        );
        return finish(resp, origin);
    }
    let open = req.method() == Method::GET && req.uri().path() == "/healthz";
    if !open && !authorized(&app, &req) {
        return finish(
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "send Authorization: Bearer <token>",
            )
            .into_response(),
            origin,
        );
    }
    let mut req = req;
    if !open {
        let caller = caller(&app, &req);
        // A tenant's page may only come from that tenant's origins (or the server's).
        if let (Some(o), Some(t)) = (&origin, &caller) {
            let text = o.to_str().unwrap_or("");
            if !app.cfg.allow_origins.iter().any(|a| a == text)
                && !t.allow_origins.iter().any(|a| a == text)
            {
                return finish(
                    ApiError::new(
                        StatusCode::FORBIDDEN,
                        "origin_forbidden",
                        "this Origin may not call the server (see --allow-origin)",
                    )
                    .into_response(),
                    None,
                );
            }
        }
        req.extensions_mut().insert(Caller(caller));
    }
    let resp = next.run(req).await;
    finish(as_json_error(resp).await, origin)
}

/// A plain-text rejection of the router's extractors (a bad query, a path parameter of the
/// wrong type) becomes the JSON error shape.
async fn as_json_error(resp: Response) -> Response {
    let plain = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/plain"));
    if !resp.status().is_client_error() || !plain {
        return resp;
    }
    let status = resp.status();
    let text = axum::body::to_bytes(resp.into_body(), 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let (status, code) = match status {
        StatusCode::NOT_FOUND => (status, "not_found"),
        StatusCode::PAYLOAD_TOO_LARGE => (status, "body_too_large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (status, "unsupported_media_type"),
        _ => (StatusCode::BAD_REQUEST, "invalid_request"),
    };
    ApiError::new(status, code, text).into_response()
}

fn bearer(req: &Request) -> Option<&str> {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

/// Whether the request carries a valid token (the server's, or a tenant's).
fn authorized(app: &App, req: &Request) -> bool {
    let Some(given) = bearer(req) else {
        return false;
    };
    if app.tenants.is_empty() {
        token::same(given.as_bytes(), app.token.as_bytes())
    } else {
        crate::tenants::select(&app.tenants, given).is_some()
    }
}

/// The tenant the token selects (`None` in single-user mode).
fn caller(app: &App, req: &Request) -> Option<std::sync::Arc<crate::tenants::Tenant>> {
    crate::tenants::select(&app.tenants, bearer(req)?).cloned()
}

/// Headers every response carries; a bare `405` becomes the JSON error.
fn finish(mut resp: Response, origin: Option<HeaderValue>) -> Response {
    if resp.status() == StatusCode::METHOD_NOT_ALLOWED
        && resp.headers().get(header::CONTENT_TYPE).is_none()
    {
        let allow = resp.headers().get(header::ALLOW).cloned();
        resp = ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this route does not take that method",
        )
        .into_response();
        if let Some(a) = allow {
            resp.headers_mut().insert(header::ALLOW, a);
        }
    }
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(o) = origin {
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    resp
}
