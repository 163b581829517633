//! The Settings' vault page: variables for the agent's commands, per role, as `cairn vault`
//! keeps them (values in the OS keyring, or sealed in the config folder; never sent back).

use std::sync::Arc;

use tauri::State;

use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::types::VaultView;
use cairn_runtime::vault::Vault;

/// The user's vault: the config folder of the app's settings, the app's key store.
fn vault(state: &AppState) -> Vault {
    let config = state.config_file();
    let folder = config
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| state.config.state_dir.clone());
    Vault::open(&folder, Some(Arc::clone(&state.keys)))
}

fn err(e: impl std::fmt::Display) -> IpcError {
    IpcError::invalid(e.to_string())
}

/// The view after `notice`; the old state-dir vault is migrated first (said once).
fn view(state: &AppState, notice: Option<String>) -> IpcResult<VaultView> {
    let v = vault(state);
    let migrated = v.migrate_legacy(&state.config.state_dir).map_err(err)?;
    Ok(VaultView {
        entries: v.list().map_err(err)?,
        notice: migrated.or(notice),
    })
}

/// The vault's entries (never their values).
#[tauri::command]
pub async fn vault_list(state: State<'_, AppState>) -> IpcResult<VaultView> {
    tokio::task::block_in_place(|| view(&state, None))
}

/// Sets an entry for `roles` (empty = every role).
#[tauri::command]
pub async fn vault_set(
    state: State<'_, AppState>,
    name: String,
    value: String,
    roles: Vec<String>,
) -> IpcResult<VaultView> {
    tokio::task::block_in_place(|| {
        let roles: Vec<String> = roles
            .iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect();
        let (_, note) = vault(&state)
            .set(name.trim(), &value, &roles)
            .map_err(err)?;
        view(&state, note)
    })
}

/// Removes an entry and its value.
#[tauri::command]
pub async fn vault_remove(state: State<'_, AppState>, name: String) -> IpcResult<VaultView> {
    tokio::task::block_in_place(|| {
        if !vault(&state).remove(&name).map_err(err)? {
            return Err(err(format!("no vault entry `{name}`")));
        }
        view(&state, None)
    })
}
