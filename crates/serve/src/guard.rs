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
use crate::state::App;
use crate::token;

/// Runs the checks, then the route.
pub async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let origin = match req.headers().get(header::ORIGIN) {
        None => None,
        Some(o) => {
            let text = o.to_str().unwrap_or("");
            if text == "null" || !app.cfg.allow_origins.iter().any(|a| a == text) {
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
    let resp = next.run(req).await;
    finish(resp, origin)
}

fn authorized(app: &App, req: &Request) -> bool {
    let Some(value) = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else {
        return false;
    };
    token::same(given.trim().as_bytes(), app.token.as_bytes())
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
