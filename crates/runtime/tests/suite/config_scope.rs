//! A session's [`ConfigScope`]: under a tenant's scope the workspace's own hooks, rules,
//! commands, skills and MCP servers apply only when trusted, without the user's trust store;
//! the default scope keeps the trust store deciding.

use cairn_runtime::ConfigScope;
use serde_json::json;

/// A workspace with a hook, a deny rule, a command, a skill and an MCP server of its own.
fn project() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let p = ws.path();
    std::fs::create_dir_all(p.join(".agent/commands")).unwrap();
    std::fs::create_dir_all(p.join(".agents/skills/tidy")).unwrap();
    std::fs::write(
        p.join(".agent/hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        p.join(".agent/permissions.toml"),
        "[[rule]]\nrule = \"run_shell(rm:*)\"\ndecision = \"deny\"\n",
    )
    .unwrap();
    std::fs::write(p.join(".agent/commands/hello.md"), "Say hello\n").unwrap();
    std::fs::write(
        p.join(".agents/skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: tidies\n---\nTidy up.\n",
    )
    .unwrap();
    std::fs::write(
        p.join(".agent/mcp.json"),
        json!({"mcpServers": {"proj": {"command": "proj-server"}}}).to_string(),
    )
    .unwrap();
    ws
}

fn names(scope: &ConfigScope, ws: &std::path::Path) -> (usize, usize, bool, bool, bool, bool) {
    let hooks = cairn_runtime::hooks::load_in(ws, scope);
    let rules = cairn_runtime::permissions::load_rules_in(ws, scope).unwrap();
    let denies = rules
        .decide("run_shell", &json!({"command": "rm -rf x"}), ws)
        .is_some();
    let cmds = cairn_runtime::commands::load_in(ws, scope);
    let command = cmds.user.iter().any(|c| c.name == "hello");
    let skill = cairn_runtime::skills::discover_in(ws, scope)
        .0
        .iter()
        .any(|s| s.name == "tidy");
    let mcp = cairn_runtime::mcp::load_config_in(ws, scope);
    let server_runs = mcp.get("proj").is_some_and(|s| s.held.is_none());
    (
        hooks.active.len(),
        hooks.held.len(),
        denies,
        command,
        skill,
        server_runs,
    )
}

#[test]
fn a_tenant_scope_reads_project_files_only_when_trusted_and_no_trust_store() {
    let ws = project();
    let ws = ws.path().canonicalize().unwrap();
    // Not trusted: nothing of the workspace's is read as configuration.
    assert_eq!(
        names(&ConfigScope::tenant(false), &ws),
        (0, 0, false, false, false, false)
    );
    // Trusted by the tenants file: all of it applies, no trust store asked.
    assert_eq!(
        names(&ConfigScope::tenant(true), &ws),
        (1, 0, true, true, true, true)
    );
}

#[test]
fn a_tenant_session_never_holds_the_users_mcp_logins() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".agent")).unwrap();
    // A project naming the URL of a server the host user may have logged in to.
    std::fs::write(
        ws.path().join(".agent/mcp.json"),
        json!({"mcpServers": {"hosted": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}})
            .to_string(),
    )
    .unwrap();
    let tenant = ConfigScope::tenant(true);
    let loaded = cairn_runtime::mcp::load_config_in(ws.path(), &tenant);
    assert!(
        loaded.get("hosted").is_some_and(|s| s.held.is_none()),
        "the trusted project's server is loaded for the tenant"
    );
    assert!(cairn_runtime::mcp::auth_in(&loaded, &tenant).is_none());
}
