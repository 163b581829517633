//! Request bodies: JSON objects sent as `application/json` (else `415`), at most 1 MiB
//! (`413`, from `Content-Length` before reading and counted while reading), unknown fields
//! refused (`400 invalid_request`).

use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// The largest request body.
pub const MAX_BODY: usize = 1024 * 1024;

/// A JSON body that must be there.
pub struct Json<T>(pub T);

/// A JSON body that may be absent (`close`, `interrupt`): `T::default()` then.
pub struct OptJson<T>(pub T);

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("request bodies are at most {MAX_BODY} bytes"),
    )
}

/// Reads the body as a JSON object (`None`: no body at all).
async fn read_object(req: Request) -> Result<Option<serde_json::Value>, ApiError> {
    let headers = req.headers();
    let length: Option<usize> = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    if length.is_some_and(|n| n > MAX_BODY) {
        return Err(too_large());
    }
    let chunked = headers.contains_key(header::TRANSFER_ENCODING);
    if length.unwrap_or(0) == 0 && !chunked {
        return Ok(None);
    }
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json_type {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as application/json",
        ));
    }
    let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY)
        .await
        .map_err(|_| too_large())?;
    if bytes.is_empty() {
        return Ok(None);
    }
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(Some(v)),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            "the body is not a JSON object",
        )),
    }
}

fn typed<T: DeserializeOwned>(v: serde_json::Value) -> Result<T, ApiError> {
    serde_json::from_value(v).map_err(|e| ApiError::invalid(e.to_string()))
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        match read_object(req).await? {
            Some(v) => typed(v).map(Json),
            None => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                "this route needs a JSON object body",
            )),
        }
    }
}

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        match read_object(req).await? {
            Some(v) => typed(v).map(OptJson),
            None => Ok(OptJson(T::default())),
        }
    }
}
