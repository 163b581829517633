//! One trust for what a repository can run: trusting a workspace records its project MCP
//! servers ([`crate::mcp_trust`]) and its hooks ([`crate::hooks`]) as they are defined now.

use std::path::Path;

use cairn_mcp::LoadedConfig;

/// Whether the project server `name` of `workspace` is trusted as it is defined now.
pub fn trusted_now(workspace: &Path, name: &str) -> bool {
    crate::mcp::load_config(workspace)
        .get(name)
        .is_some_and(|s| s.held.is_none())
}

/// Trusts the current definitions of the project servers named (all when `names` is empty);
/// returns the names trusted.
pub fn trust(
    loaded: &LoadedConfig,
    workspace: &Path,
    names: &[String],
) -> Result<Vec<String>, String> {
    let path = crate::mcp_trust::trust_path().ok_or("no user config dir on this system")?;
    let user = cairn_mcp::user_config_path();
    let mut done = crate::mcp_trust::trust_in(loaded, workspace, names, &path, user.as_deref())?;
    // Trusting the whole workspace covers its hooks too (one trust for what it can run).
    if names.is_empty() && crate::hooks::trust(workspace)? {
        done.push(crate::hooks::TRUST_ENTRY.to_string());
    }
    Ok(done)
}
