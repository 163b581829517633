//! Settings → Diagnostics: the checks of `cairn doctor` (`cairn_runtime::doctor`), one typed
//! row each, for this window's workspace.

use tauri::{Runtime, State, Window};

use crate::error::IpcResult;
use crate::state::AppState;
use crate::types::CheckRow;

/// Runs every check (`offline`: no provider endpoint or remote MCP server is asked); never
/// fails: a broken thing is a row that says what to do.
#[tauri::command]
pub async fn run_diagnostics<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    offline: bool,
) -> IpcResult<Vec<CheckRow>> {
    use cairn_runtime::doctor;
    let slot = state.slot(window.label());
    let probes = doctor::Probes {
        keys: state.keys.clone(),
        ..doctor::real_probes(doctor::settings_env())
    };
    let mut versions = vec![(
        "cairn-app".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    )];
    if let Some(bwrap) = cairn_policy::sandbox::bwrap_path() {
        versions.push(("bubblewrap".to_string(), bwrap.display().to_string()));
    }
    let opts = doctor::DoctorOptions {
        workspace: slot.workspace.clone(),
        state_dir: state.config.state_dir.clone(),
        offline,
        timeout: doctor::DEFAULT_TIMEOUT,
        versions,
    };
    Ok(doctor::run(&probes, &opts).await)
}
