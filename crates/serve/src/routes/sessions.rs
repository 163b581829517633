//! Sessions: create, list, get, patch, close.

use axum::extract::{Path, Query};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json as AxJson;
use cairn_protocol::Mode;
use cairn_runtime::VcsMode;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;

use crate::body::{Json, OptJson};
use crate::config::ApprovePolicy;
use crate::error::{from_store, ApiError};
use crate::state::{Ctx, OpenRequest};

/// `POST /v1/sessions` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateBody {
    workspace: String,
    #[serde(default)]
    mode: Option<Mode>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    approve: Option<SessionApprove>,
    #[serde(default)]
    allow_commands: Vec<String>,
    #[serde(default)]
    max_iterations: Option<u32>,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    vcs: Option<Vcs>,
    #[serde(default)]
    worktree: Option<Value>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum SessionApprove {
    Ask,
    Deny,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Vcs {
    Auto,
    Off,
}

/// `POST /v1/sessions`.
pub async fn create(app: Ctx, Json(body): Json<CreateBody>) -> Result<Response, ApiError> {
    if body.worktree.is_some() {
        return Err(ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            "not_implemented",
            "worktree sessions are not served yet",
        ));
    }
    if body.max_iterations == Some(0) || body.context_window == Some(0) {
        return Err(ApiError::invalid(
            "maxIterations and contextWindow must be above 0",
        ));
    }
    let mut workspace = PathBuf::from(&body.workspace);
    if let Some(t) = &app.tenant {
        if body.base_url.is_some() {
            return Err(ApiError::invalid(
                "baseUrl is the tenant's provider's, not a request's",
            ));
        }
        // Inside the tenant's root after resolving symlinks and `..`.
        workspace = t.root.join(&workspace);
        let inside = workspace
            .canonicalize()
            .map(|w| w.starts_with(&t.root))
            .unwrap_or(false);
        if !inside {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "workspace_forbidden",
                "the workspace is outside this tenant's root",
            ));
        }
    }
    if !workspace.is_dir() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_workspace",
            format!("{} is not a folder", body.workspace),
        ));
    }
    let live = app
        .open(OpenRequest {
            workspace: Some(workspace),
            mode: body.mode,
            model: body.model,
            provider: body.provider,
            base_url: body.base_url,
            approve: body.approve.map(|a| match a {
                SessionApprove::Ask => ApprovePolicy::Ask,
                SessionApprove::Deny => ApprovePolicy::Deny,
            }),
            allow_commands: body.allow_commands,
            max_iterations: body.max_iterations,
            context_window: body.context_window,
            vcs: match body.vcs {
                Some(Vcs::Off) => VcsMode::Off,
                _ => VcsMode::Auto,
            },
            name: body.name,
            session_id: None,
        })
        .await?;
    let view = app.view_live(&live);
    let mut resp = (StatusCode::CREATED, AxJson(view)).into_response();
    if let Ok(v) = format!("/v1/sessions/{}", live.id()).parse() {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    Ok(resp)
}

/// `GET /v1/sessions` query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    workspace: Option<String>,
    limit: Option<usize>,
}

/// `GET /v1/sessions`: stored and open sessions, newest first.
pub async fn list(app: Ctx, Query(q): Query<ListQuery>) -> Result<AxJson<Value>, ApiError> {
    let limit = q.limit.unwrap_or(200);
    if limit == 0 {
        return Err(ApiError::invalid("limit must be at least 1"));
    }
    let workspace = q.workspace.map(|w| {
        std::path::Path::new(&w)
            .canonicalize()
            .map(|p| p.display().to_string())
            .unwrap_or(w)
    });
    let a = app.clone();
    let ws = workspace.clone();
    let stored = tokio::task::spawn_blocking(move || {
        let store = cairn_runtime::SessionStore::new(&a.state_dir);
        let query = cairn_runtime::SessionQuery {
            search: None,
            workspace: ws,
        };
        store.search(&query).map(|list| {
            list.into_iter()
                .filter(|s| a.live(&s.id).is_none())
                .filter_map(|s| store.load(&s.id).ok())
                .map(|saved| a.view_stored(&saved))
                .collect::<Vec<_>>()
        })
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(from_store)?;
    let mut all: Vec<Value> = app
        .lives()
        .iter()
        .map(|l| app.view_live(l))
        .filter(|v| {
            workspace
                .as_deref()
                .is_none_or(|w| v["workspace"].as_str() == Some(w))
        })
        .collect();
    all.extend(stored);
    all.sort_by(|a, b| {
        b["updatedAt"]
            .as_str()
            .unwrap_or("")
            .cmp(a["updatedAt"].as_str().unwrap_or(""))
    });
    all.truncate(limit);
    Ok(AxJson(json!({ "sessions": all })))
}

/// The view of session `id`, open or stored, without opening it.
pub async fn view(app: &Ctx, id: &str) -> Result<Value, ApiError> {
    if let Some(l) = app.live(id) {
        return Ok(app.view_live(&l));
    }
    cairn_runtime::store::validate_id(id).map_err(|_| ApiError::no_session(id))?;
    let store = cairn_runtime::SessionStore::new(&app.state_dir);
    let saved = store.load(id).map_err(from_store)?;
    Ok(app.view_stored(&saved))
}

/// `GET /v1/sessions/{id}`.
pub async fn get(app: Ctx, Path(id): Path<String>) -> Result<AxJson<Value>, ApiError> {
    view(&app, &id).await.map(AxJson)
}

/// `PATCH /v1/sessions/{id}` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchBody {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    mode: Option<Mode>,
    #[serde(default)]
    model: Option<String>,
}

/// `PATCH /v1/sessions/{id}`: name, mode, model (from the next turn).
pub async fn patch(
    app: Ctx,
    Path(id): Path<String>,
    Json(body): Json<PatchBody>,
) -> Result<AxJson<Value>, ApiError> {
    let live = app.open_stored(&id).await?;
    if let Some(name) = body.name {
        if name.trim().is_empty() {
            return Err(ApiError::invalid("name must not be empty"));
        }
        live.handle.rename(name.trim()).map_err(from_store)?;
        let named =
            json!({"type": "session_named", "data": {"name": name.trim(), "source": "user"}});
        live.hub.publish("session_named", &named.to_string());
    }
    if let Some(mode) = body.mode {
        live.handle.set_mode(mode);
    }
    if let Some(model) = body.model {
        if model.trim().is_empty() {
            return Err(ApiError::invalid("model must not be empty"));
        }
        live.handle.set_model(model.trim());
    }
    if live.handle.saved().turns == 0 {
        return Ok(AxJson(app.view_live(&live)));
    }
    if let Err(e) = live.handle.save().await {
        tracing::warn!(error = %e, "saving the patched session");
    }
    Ok(AxJson(app.view_live(&live)))
}

/// `POST /v1/sessions/{id}/close` body (optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloseBody {}

/// `POST /v1/sessions/{id}/close`.
pub async fn close(
    app: Ctx,
    Path(id): Path<String>,
    OptJson(CloseBody {}): OptJson<CloseBody>,
) -> Result<AxJson<Value>, ApiError> {
    if app.live(&id).is_none() {
        // Not open: nothing to close, but it must exist.
        return view(&app, &id).await.map(AxJson);
    }
    app.close(&id).await?;
    view(&app, &id).await.map(AxJson).or_else(|e| {
        // A session that never ran a turn is forgotten when it closes.
        if e.code == "session_not_found" {
            Ok(AxJson(json!({"id": id, "state": "closed", "turns": 0})))
        } else {
            Err(e)
        }
    })
}
