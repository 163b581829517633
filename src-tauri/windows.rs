//! Several windows: each one has its own workspace and engine session (keyed by its label,
//! see [`crate::state`]). New windows get a `win-…` label; the workspaces of the extra windows
//! are remembered in the settings, so they open again at the next start.

use std::path::PathBuf;

use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

use crate::error::{IpcError, IpcResult};
use crate::state::AppState;

/// Label of the window the app starts with.
pub const MAIN: &str = "main";
/// Label prefix of the windows opened later (granted by the capability's `win-*`).
pub const PREFIX: &str = "win-";

/// A fresh label for a new window.
pub fn new_label() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{PREFIX}{}", &id[..12])
}

/// Opens a new window, with `workspace` already open in it when given; its label.
pub fn open_window<R: Runtime>(
    app: &AppHandle<R>,
    workspace: Option<PathBuf>,
) -> IpcResult<String> {
    let label = new_label();
    if let Some(ws) = workspace {
        app.state::<AppState>()
            .with_slot(&label, |slot| slot.workspace = Some(ws));
    }
    WebviewWindowBuilder::new(app, &label, WebviewUrl::App("index.html".into()))
        .title("Cairn")
        .inner_size(1200.0, 800.0)
        .min_inner_size(640.0, 480.0)
        .build()
        .map_err(|e| {
            app.state::<AppState>().take_slot(&label);
            IpcError::new(
                crate::error::ErrorCode::Unavailable,
                format!("cannot open a window: {e}"),
            )
        })?;
    tracing::info!(window = %label, "window opened");
    Ok(label)
}

/// Titles a window after its workspace ("name — Cairn"), or "Cairn" without one.
pub fn set_title<R: Runtime>(window: &tauri::Window<R>, workspace: Option<&std::path::Path>) {
    let title = match workspace {
        Some(ws) => format!("{} — Cairn", crate::settings::folder_name(ws)),
        None => "Cairn".to_string(),
    };
    if let Err(e) = window.set_title(&title) {
        tracing::warn!(error = %e, "cannot set the window title");
    }
}

/// Saves which workspaces the extra windows have open (what the next start reopens).
pub fn remember(state: &AppState) {
    let open = state.extra_workspaces(MAIN);
    let result = state.update_settings(|s| s.windows = open);
    if let Err(e) = result {
        tracing::warn!(error = %e, "cannot remember the open windows");
    }
}

/// Reopens the main window's workspace and the extra windows open at the last exit (their
/// folders must still exist).
pub fn restore<R: Runtime>(app: &AppHandle<R>) {
    let settings = app.state::<AppState>().settings();
    if let Some(main) = settings.main_workspace.as_deref() {
        match cairn_runtime::resolve_workspace(std::path::Path::new(main)) {
            Ok(ws) => app
                .state::<AppState>()
                .with_slot(MAIN, |slot| slot.workspace = Some(ws)),
            Err(e) => {
                tracing::info!(workspace = main, error = %e, "not reopening the last workspace")
            }
        }
    }
    let remembered = settings.windows;
    for path in remembered {
        let path = PathBuf::from(path);
        if !path.is_dir() {
            continue;
        }
        if let Err(e) = open_window(app, Some(path)) {
            tracing::warn!(error = %e, "cannot reopen a window");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn new_labels_are_granted_and_distinct() {
        let a = new_label();
        let b = new_label();
        assert!(a.starts_with(PREFIX) && a.len() == PREFIX.len() + 12);
        assert_ne!(a, b);
    }
}
