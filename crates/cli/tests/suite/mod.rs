//! The former integration-test files, one module each.

mod agents;
mod always_allow;
mod checkpoints;
mod cli_run;
mod conflict_guard;
mod conformance;
mod context;
mod crash;
mod credentials;
mod git_dir;
mod hooks;
mod human_output;
mod mcp;
mod mcp_login;
mod own_session;
mod permissions;
mod resume;
mod sandbox_flag;
mod serve;
mod serve_tenants;
mod session_lock;
mod sessions_index;
mod skills;
mod slash;
mod turn_slots;
mod worktrees;
