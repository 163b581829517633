//! What the app's settings form shows and sends back (its TypeScript bindings are the
//! app's): the provider choice, keys, models, MCP servers and the machine-wide options.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The settings as the UI edits them.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SettingsView {
    /// Selected provider.
    pub provider: String,
    /// Selected model ("" = none yet).
    pub model: String,
    /// Endpoint override ("" = the provider's default or its environment variable).
    pub base_url: String,
    /// Reasoning level ("" = the model's default).
    pub reasoning: String,
    /// UI language.
    pub language: crate::face_settings::Language,
    /// Every provider with its key state.
    pub providers: Vec<crate::keys::ProviderView>,
    /// Models of the built-in table.
    pub models: Vec<crate::llm_setup::ModelView>,
    /// MCP servers configured for the open workspace, with their state.
    pub mcp: Vec<crate::mcp_view::McpServerView>,
    /// How many turns may run at once on this machine (every window and `cairn run`).
    pub turn_limit: u32,
    /// Whether commands that run inside the sandbox run without asking (`shellPolicy =
    /// "sandbox"` in the sandbox settings, as `--shell-policy sandbox`).
    pub sandboxed_unasked: bool,
    /// Every user setting (`cairn config list`): the Settings' "All settings" list.
    pub options: Vec<SettingOption>,
    /// Where the settings file is (`config.toml` in the config folder).
    pub config_file: String,
}

pub use crate::user_config::SettingOption;

/// What an endpoint check found: the models it serves, or why it could not be reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct EndpointCheck {
    /// Whether the endpoint answered with a model list.
    pub ok: bool,
    /// The model ids it serves, sorted.
    pub models: Vec<String>,
    /// What failed, for the user.
    pub error: Option<String>,
    /// How long the check took.
    #[ts(type = "number")]
    pub ms: u64,
}

/// A settings change from the UI.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SettingsUpdate {
    /// Provider.
    pub provider: String,
    /// Model.
    pub model: String,
    /// Endpoint override ("" = default).
    pub base_url: String,
    /// Reasoning level ("" = default).
    pub reasoning: String,
    /// UI language.
    pub language: crate::face_settings::Language,
    /// Turns running at once on this machine (1–64); unchanged when absent.
    #[serde(default)]
    #[ts(optional)]
    pub turn_limit: Option<u32>,
    /// Run sandboxed commands without asking; unchanged when absent.
    #[serde(default)]
    #[ts(optional)]
    pub sandboxed_unasked: Option<bool>,
}
