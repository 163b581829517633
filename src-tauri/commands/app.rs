//! App-level commands: versions, start-up state and the start-up benchmark.

use tauri::{Manager, Runtime, State, Window};

use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::types::{AppInfo, Bootstrap};

/// The app's name and versions.
#[tauri::command]
pub fn app_info() -> AppInfo {
    AppInfo {
        name: "Cairn".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        protocol_version: cairn_protocol::PROTOCOL_VERSION,
    }
}

/// Everything the page needs at start: versions, settings, recent workspaces, and this
/// window's workspace if it already has one (a reloaded page).
#[tauri::command]
pub async fn bootstrap<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<Bootstrap> {
    let started = std::time::Instant::now();
    let slot = state.slot(window.label());
    crate::windows::set_title(&window, slot.workspace.as_deref());
    let workspace = match &slot.workspace {
        Some(w) => Some(super::workspace::workspace_view(&state, w)?),
        None => None,
    };
    let settings =
        super::settings::settings_view(&state, slot.workspace.as_deref(), None, false).await?;
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        since_start_ms = crate::bench::since_start_ms() as u64,
        "bootstrap answered"
    );
    Ok(Bootstrap {
        info: app_info(),
        settings,
        recent: state.settings().recent_view(),
        state_dir: state.config.state_dir.display().to_string(),
        log_dir: crate::logging::log_dir(&state.config.state_dir)
            .display()
            .to_string(),
        approvals: state.config.host,
        bench: state.config.bench,
        workspace,
    })
}

/// Benchmark marks from the page (only with `CAIRN_BENCH=1`). `first_paint` returns the
/// time since process start and, after idling, the memory of the app and its WebKit
/// processes; `done` prints the whole report on stdout and quits.
#[tauri::command]
pub async fn bench_mark<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    mark: String,
    data: serde_json::Value,
) -> IpcResult<serde_json::Value> {
    if !state.config.bench {
        return Err(IpcError::invalid(
            "benchmark marks are accepted only when CAIRN_BENCH=1",
        ));
    }
    match mark.as_str() {
        "first_paint" => {
            // The page's own first-paint time if it sent one, else now.
            let first_paint_ms = data
                .get("paintEpochMs")
                .and_then(|v| v.as_f64())
                .and_then(crate::bench::since_start_to_epoch_ms)
                .unwrap_or_else(crate::bench::since_start_ms);
            let first_content_ms = data
                .get("contentEpochMs")
                .and_then(|v| v.as_f64())
                .and_then(crate::bench::since_start_to_epoch_ms);
            // The page's timeline, as ms since process start.
            let timeline: serde_json::Map<String, serde_json::Value> = data
                .get("timeline")
                .and_then(|v| v.as_object())
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| {
                            let ms = v.as_f64().and_then(crate::bench::since_start_to_epoch_ms);
                            (k.clone(), serde_json::json!(ms))
                        })
                        .collect()
                })
                .unwrap_or_default();
            tokio::time::sleep(crate::bench::IDLE_BEFORE_RSS).await;
            let memory = crate::bench::tree_memory(std::process::id());
            Ok(serde_json::json!({
                "firstPaintMs": first_paint_ms,
                "firstContentMs": first_content_ms,
                "timeline": timeline,
                "idle": memory,
            }))
        }
        "done" => {
            println!("CAIRN_BENCH {data}");
            window.app_handle().exit(0);
            Ok(serde_json::Value::Null)
        }
        other => Err(IpcError::invalid(format!(
            "unknown benchmark mark `{other}`"
        ))),
    }
}

/// Opens a new window (its own workspace and engine session); returns its label.
#[tauri::command]
pub fn new_window<R: Runtime>(app: tauri::AppHandle<R>) -> IpcResult<String> {
    crate::windows::open_window(&app, None)
}

/// Opens an http(s) address from an answer in the system browser, after the user saw it and
/// confirmed it in the page. Nothing else is handed to the desktop's opener: a workspace
/// file opens inside Cairn (an agent-written `.desktop` file or script would run). Debug
/// builds with `CAIRN_TEST_OPENED=FILE` append the address to FILE instead (E2E tests, no
/// browser).
#[tauri::command]
pub fn open_link(url: String) -> IpcResult<()> {
    let lower = url.trim().to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(IpcError::invalid(
            "only http(s) addresses open in the browser",
        ));
    }
    if cfg!(debug_assertions) {
        if let Some(file) = std::env::var_os("CAIRN_TEST_OPENED") {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .map_err(|e| IpcError::invalid(e.to_string()))?;
            writeln!(f, "{}", url.trim()).map_err(|e| IpcError::invalid(e.to_string()))?;
            return Ok(());
        }
    }
    cairn_runtime::mcp_auth::open_web_page(url.trim()).map_err(IpcError::invalid)
}
