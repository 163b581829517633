//! Assembles Cairn sessions for the CLI and the desktop app: resolves the workspace, state
//! dir, model and provider, registers the built-in tools, restores and persists sessions.

pub mod agents;
pub mod attach;
/// Secrets sealed away from child processes at start (read back by name only).
pub use cairn_engine::secret_env;
/// The sandbox's network proxy and bridge (binaries call `netproxy::bridge::main_if_bridge`).
pub use cairn_netproxy as netproxy;
mod assemble;
pub mod bench;
pub mod checkpoints;
pub mod claude_home;
pub mod claude_rules;
pub mod commands;
pub mod config_scope;
/// `cairn doctor` and the app's Diagnostics: every check, behind probes with fakes.
pub mod doctor;
pub mod endpoint_models;
pub mod error;
pub mod extensions;
pub mod face_settings;
pub mod front_matter;
pub mod git_dir;
pub mod history;
pub mod history_search;
pub mod hooks;
pub mod host;
pub mod index;
pub mod instructions;
pub mod keys;
pub mod llm_setup;
pub mod mcp;
pub mod mcp_auth;
pub mod mcp_connect;
pub mod mcp_editor;
pub mod mcp_instructions;
pub mod mcp_mentions;
pub mod mcp_trust;
pub mod mcp_view;
pub mod mentions;
pub mod naming;
pub mod permissions;
pub mod problem;
pub mod project_file;
pub mod rebuild;
pub mod reserve;
pub mod reserved;
pub mod sandbox;
pub mod sandbox_net;
pub mod sandbox_settings;
pub mod schema;
pub mod settings_view;
pub mod skills;
pub mod skipped;
pub mod spend_env;
pub mod store;
pub mod timeline;
pub mod tooling;
/// One trust for what a repository can run (its MCP servers and hooks).
pub mod trust;
pub mod turn_slots;
pub mod usage;
/// The user's settings: one file, one precedence (flag > environment > file > default).
pub mod user_config;
/// The vault: per-role variables for commands, values in the keyring (or a sealed file).
pub mod vault;
pub mod workspace;
pub mod worktrees;

pub use assemble::{
    agent_type_from_env, compaction_config, default_state_dir, lang_from_env, open_session,
    resolve_model, resolve_workspace, sandbox_report, Assembled, RunOptions,
};
pub use checkpoints::VcsMode;
pub use config_scope::{ConfigScope, ProjectTrust};
pub use error::RuntimeError;
pub use index::{SessionIndex, SessionQuery};
pub use llm_setup::build_llm;
pub use store::{lock, permission_seal, rewind, rewind_read};
pub use store::{SavedSession, SessionPersister, SessionStore, SessionSummary, StoreError};
pub use tooling::{subagent_limits_from_env, tools_with_agents, tools_with_subagents, SEEN_FILES};
