//! Settings commands: provider, model, endpoint, reasoning level, language, API keys (only
//! ever written to the OS keyring) and the usage center.

use std::path::Path;
use std::sync::Arc;

use cairn_providers::secrets::ApiKey;
use tauri::{Runtime, State, Window};

use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::types::{SettingsUpdate, SettingsView, UsageReport};
use cairn_runtime::llm_setup::{catalog_models, provider_label, ProviderChoice};
use cairn_runtime::sandbox_settings::SandboxSettings;

/// The settings view; with `with_keys`, key states are read from the keyring (in parallel,
/// off the async executor), else they are `unchecked` (the start-up path never waits for
/// the keyring daemon).
pub(crate) async fn settings_view(
    state: &AppState,
    workspace: Option<&Path>,
    session: Option<&crate::runtime::SessionRuntime>,
    with_keys: bool,
) -> IpcResult<SettingsView> {
    let choice = state.provider_choice();
    let settings = state.settings();
    let providers = tokio::task::block_in_place(|| {
        cairn_runtime::keys::provider_views(
            with_keys,
            state.keys.as_ref(),
            state.config.env.as_ref(),
        )
    });
    Ok(SettingsView {
        turn_limit: state.host.turn_slots(&state.config.state_dir).limit(),
        sandboxed_unasked: SandboxSettings::load().is_ok_and(|s| s.sandboxed_unasked()),
        options: options(state, with_keys),
        config_file: state.config_file().display().to_string(),
        provider: choice.provider.clone(),
        model: choice.model,
        base_url: settings.base_url_for(&choice.provider),
        reasoning: settings.reasoning,
        language: settings.language,
        providers,
        models: catalog_models(),
        mcp: match session.and_then(cairn_runtime::mcp_view::session_servers) {
            Some(live) => live,
            None => workspace
                .map(crate::mcp::configured_servers)
                .unwrap_or_default(),
        },
    })
}

/// Every user setting with its value and source (keys from the keyring only `with_keys`).
fn options(state: &AppState, with_keys: bool) -> Vec<cairn_runtime::settings_view::SettingOption> {
    use cairn_runtime::user_config::{options_view, UserConfig};
    let cfg = UserConfig::load_paths(
        Some(state.config_file()),
        cairn_runtime::sandbox_settings::settings_path(),
    )
    .unwrap_or_else(|e| {
        tracing::warn!("settings not read: {e}");
        UserConfig::default()
    });
    let keys = with_keys.then_some(state.keys.as_ref());
    tokio::task::block_in_place(|| options_view(&cfg, state.config.env.as_ref(), keys))
}

/// Sets one setting, as `cairn config set` does: a key of `config.toml` (or `sandbox.toml`),
/// or a secret in the OS keyring.
#[tauri::command]
pub async fn set_setting<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    key: String,
    value: String,
) -> IpcResult<SettingsView> {
    let config = state.config_file();
    let keys = Arc::clone(&state.keys);
    tokio::task::spawn_blocking(move || {
        cairn_runtime::user_config::set_at(Some(config), &key, &value, keys.as_ref())
    })
    .await?
    .map_err(|e| IpcError::invalid(e.to_string()))?;
    state.reload_settings();
    get_settings(window, state).await
}

/// Removes one setting (back to its default), as `cairn config unset` does.
#[tauri::command]
pub async fn unset_setting<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    key: String,
) -> IpcResult<SettingsView> {
    let config = state.config_file();
    let keys = Arc::clone(&state.keys);
    tokio::task::spawn_blocking(move || {
        cairn_runtime::user_config::unset_at(Some(config), &key, keys.as_ref())
    })
    .await?
    .map_err(|e| IpcError::invalid(e.to_string()))?;
    state.reload_settings();
    get_settings(window, state).await
}

/// Rebuilds the LLM client of every open session (after a key changed), keeping each
/// session's provider and model.
fn refresh_sessions(state: &AppState) {
    let settings = state.settings();
    for (_, runtime) in state.open_sessions() {
        let provider = runtime.provider();
        let choice = ProviderChoice {
            base_url: settings.base_url_for(&provider),
            model: runtime.model(),
            reasoning: settings.reasoning.clone(),
            provider,
        };
        runtime.set_llm(state.llm_for(&choice));
    }
}

/// The current settings.
#[tauri::command]
pub async fn get_settings<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<SettingsView> {
    // `cairn config set` may have changed the file since.
    tokio::task::block_in_place(|| state.reload_settings());
    let slot = state.slot(window.label());
    settings_view(
        &state,
        slot.workspace.as_deref(),
        slot.session.as_deref(),
        true,
    )
    .await
}

/// Trusts a project MCP server as defined now (it starts with the next chat).
#[tauri::command]
pub async fn trust_mcp_server<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
) -> IpcResult<SettingsView> {
    let slot = state.slot(window.label());
    let ws = slot
        .workspace
        .as_deref()
        .ok_or_else(IpcError::no_workspace)?
        .to_path_buf();
    let loaded = cairn_runtime::mcp::load_config(&ws);
    cairn_runtime::trust::trust(&loaded, &ws, std::slice::from_ref(&name))
        .map_err(|e| IpcError::new(crate::error::ErrorCode::Config, e.to_string()))?;
    settings_view(&state, Some(&ws), slot.session.as_deref(), true).await
}

/// Logs in to an HTTP MCP server of the window's session that needs one (OAuth): the system
/// browser opens the authorization page, the redirect comes back to 127.0.0.1, then the
/// server reconnects and its tools appear.
#[tauri::command]
pub async fn connect_mcp_server<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
) -> IpcResult<SettingsView> {
    let slot = state.slot(window.label());
    let session = slot
        .session
        .as_deref()
        .ok_or_else(|| IpcError::invalid("Open a chat first: its MCP servers connect there."))?;
    cairn_runtime::mcp_connect::connect_in_browser(session, &name)
        .await
        .map_err(|e| IpcError::new(crate::error::ErrorCode::Config, e))?;
    settings_view(&state, slot.workspace.as_deref(), Some(session), true).await
}

/// Saves the settings; the window's session switches to the chosen provider and model.
#[tauri::command]
pub async fn save_settings<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    update: SettingsUpdate,
) -> IpcResult<SettingsView> {
    let (provider, base_url, reasoning) = cairn_runtime::face_settings::checked_choice(
        &update.provider,
        &update.base_url,
        &update.reasoning,
    )
    .map_err(IpcError::invalid)?;
    if let Some(n) = update.turn_limit {
        if !(1..=cairn_runtime::turn_slots::MAX_LIMIT).contains(&n) {
            return Err(IpcError::invalid(format!(
                "Turns at once must be between 1 and {}.",
                cairn_runtime::turn_slots::MAX_LIMIT
            )));
        }
        state
            .host
            .turn_slots(&state.config.state_dir)
            .set_limit(n)
            .map_err(|e| IpcError::new(crate::error::ErrorCode::Storage, e.to_string()))?;
    }
    if let Some(on) = update.sandboxed_unasked {
        let policy = SandboxSettings::switch_sandboxed_unasked(on)
            .map_err(|e| IpcError::new(crate::error::ErrorCode::Config, e.to_string()))?;
        state
            .open_sessions()
            .iter()
            .for_each(|(_, r)| r.set_shell_policy(policy));
    }
    state.update_settings(|s| {
        s.provider = provider.clone();
        s.model = update.model.trim().to_string();
        if base_url.is_empty() {
            s.base_urls.remove(&provider);
        } else {
            s.base_urls.insert(provider.clone(), base_url.clone());
        }
        s.reasoning = reasoning.clone();
        s.language = update.language;
    })?;
    let label = window.label().to_string();
    if let Some(runtime) = state.slot(&label).session {
        let choice = state.provider_choice();
        let llm = tokio::task::block_in_place(|| state.llm_for(&choice));
        runtime.set_llm(llm);
    }
    get_settings(window, state).await
}

/// Stores a provider's API key in the OS keyring (never on disk, never sent back).
#[tauri::command]
pub async fn set_api_key<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    provider: String,
    key: String,
) -> IpcResult<SettingsView> {
    let key = ApiKey::new(&key)?;
    let keys = Arc::clone(&state.keys);
    let name = provider.clone();
    tokio::task::spawn_blocking(move || keys.set(&name, &key)).await??;
    tracing::info!(provider = %provider, "API key stored in the keyring");
    tokio::task::block_in_place(|| refresh_sessions(&state));
    get_settings(window, state).await
}

/// Removes a provider's API key from the OS keyring.
#[tauri::command]
pub async fn remove_api_key<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    provider: String,
) -> IpcResult<SettingsView> {
    let keys = Arc::clone(&state.keys);
    let name = provider.clone();
    let removed = tokio::task::spawn_blocking(move || keys.remove(&name)).await??;
    if !removed {
        return Err(IpcError::invalid(format!(
            "There was no key for {} in the keyring.",
            provider_label(&provider)
        )));
    }
    tracing::info!(provider = %provider, "API key removed from the keyring");
    tokio::task::block_in_place(|| refresh_sessions(&state));
    get_settings(window, state).await
}

/// Requests, tokens and cost per session and day, and failed or retried requests.
#[tauri::command]
pub async fn usage_report(state: State<'_, AppState>) -> IpcResult<UsageReport> {
    let dir = state.config.state_dir.clone();
    tokio::task::spawn_blocking(move || {
        cairn_runtime::usage::report(&cairn_runtime::SessionStore::new(&dir))
    })
    .await?
    .map_err(IpcError::from)
}
