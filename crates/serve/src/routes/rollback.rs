//! Rollback over HTTP: change-turns, their diffs and restore, through the same runtime and
//! checkpoint calls as `cairn turns`, `cairn diff` and `cairn restore`. `turns` and `diff`
//! read the checkpoint store without opening or locking the session.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json as AxJson;
use cairn_runtime::checkpoints::{open_session_vcs, turn_json};
use cairn_vcs::{Recovery, RestoreOptions, VcsError};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::body::Json;
use crate::error::{from_store, ApiError};
use crate::state::Ctx;

fn vcs_error(e: VcsError) -> ApiError {
    match e {
        VcsError::NoSuchTurn { .. } => {
            ApiError::new(StatusCode::NOT_FOUND, "turn_not_found", e.to_string())
        }
        VcsError::PendingRestore { .. } => ApiError::conflict("restore_pending", e.to_string()),
        VcsError::NothingToRecover => ApiError::conflict("nothing_to_recover", e.to_string()),
        VcsError::PathOutside(_) => ApiError::invalid(e.to_string()),
        VcsError::NoCheckpoints(_) | VcsError::InvalidSession(_) => {
            ApiError::new(StatusCode::NOT_FOUND, "turn_not_found", e.to_string())
        }
        other => ApiError::internal(other),
    }
}

fn runtime_error(e: cairn_runtime::RuntimeError) -> ApiError {
    match e {
        cairn_runtime::RuntimeError::Store(s) => from_store(s),
        other => ApiError::internal(other),
    }
}

/// Runs blocking checkpoint work for session `id` (which must exist).
async fn blocking<T: Send + 'static>(
    app: &Ctx,
    id: &str,
    f: impl FnOnce(&Ctx, &str) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    cairn_runtime::store::validate_id(id).map_err(|_| ApiError::no_session(id))?;
    if app.live(id).is_none() {
        cairn_runtime::SessionStore::new(&app.state_dir)
            .load(id)
            .map_err(from_store)?;
    }
    let a = app.clone();
    let id = id.to_string();
    tokio::task::spawn_blocking(move || f(&a, &id))
        .await
        .map_err(ApiError::internal)?
}

/// `GET /v1/sessions/{id}/turns`.
pub async fn turns(app: Ctx, Path(id): Path<String>) -> Result<AxJson<Value>, ApiError> {
    let rows = blocking(&app, &id, |a, id| {
        let (vcs, _) = open_session_vcs(&a.state_dir, id).map_err(runtime_error)?;
        let list = vcs.listing(id, false).map_err(vcs_error)?;
        Ok(list
            .iter()
            .map(|e| turn_json(&e.record))
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(AxJson(json!({ "turns": rows })))
}

/// `GET /v1/sessions/{id}/turns/{turn}/diff`.
pub async fn diff(app: Ctx, Path((id, turn)): Path<(String, u32)>) -> Result<Response, ApiError> {
    let text = blocking(&app, &id, move |a, id| {
        let (vcs, _) = open_session_vcs(&a.state_dir, id).map_err(runtime_error)?;
        vcs.diff_turn(id, turn).map_err(vcs_error)
    })
    .await?;
    let mut resp = text.into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/x-diff; charset=utf-8"),
    );
    Ok(resp)
}

/// `POST …/restore` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RestoreBody {
    #[serde(default)]
    to_turn: Option<u32>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    force: bool,
    #[serde(default)]
    recover: Option<RecoverHow>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RecoverHow {
    Finish,
    Rollback,
}

/// `POST /v1/sessions/{id}/restore`: as `cairn restore --json`; a partial restore is still
/// `200` (check `conflicts`).
pub async fn restore(
    app: Ctx,
    Path(id): Path<String>,
    Json(body): Json<RestoreBody>,
) -> Result<AxJson<Value>, ApiError> {
    match (&body.recover, &body.to_turn) {
        (Some(_), Some(_)) => return Err(ApiError::invalid("toTurn or recover, not both")),
        (None, None) => return Err(ApiError::invalid("toTurn (or recover) is required")),
        _ => {}
    }
    if let Some(live) = app.live(&id) {
        if live.busy() || live.handle.is_busy() {
            return Err(ApiError::conflict(
                "session_busy",
                "a run is under way or queued",
            ));
        }
    }
    let report = blocking(&app, &id, move |a, id| {
        // Open here: this process holds the session's lock. Else take it as `cairn restore`
        // does (`409 session_locked` while another process has the session open).
        let (_lock, turns_now) = match a.live(id) {
            Some(l) => (None, Some(l.handle.saved().turns)),
            None => (
                Some(
                    cairn_runtime::SessionStore::new(&a.state_dir)
                        .lock(id)
                        .map_err(from_store)?,
                ),
                None,
            ),
        };
        let (mut vcs, turns) = open_session_vcs(&a.state_dir, id).map_err(runtime_error)?;
        let turns = turns_now.unwrap_or(turns);
        let report = match (body.recover, body.to_turn) {
            (Some(how), _) => vcs.recover(
                match how {
                    RecoverHow::Finish => Recovery::Finish,
                    RecoverHow::Rollback => Recovery::RollBack,
                },
                turns,
            ),
            (None, Some(to_turn)) => vcs.restore(
                id,
                turns,
                &RestoreOptions {
                    to_turn,
                    paths: body.paths,
                    dry_run: body.dry_run,
                    force: body.force,
                },
            ),
            (None, None) => return Err(ApiError::invalid("toTurn is required")),
        }
        .map_err(vcs_error)?;
        serde_json::to_value(&report).map_err(ApiError::internal)
    })
    .await?;
    Ok(AxJson(report))
}

/// `GET /v1/worktrees`: optional in v1, not served yet.
pub async fn worktrees() -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "not_implemented",
        "worktrees are not served yet",
    )
}
