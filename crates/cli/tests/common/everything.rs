//! The reference MCP server-everything (the MCP crate's pinned npm package) for the CLI's
//! tests: its entry script and a user-level MCP config naming it `every`.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};

/// The server's entry script, installing it if needed; `Err` is the reason to skip.
pub fn entry() -> Result<PathBuf, String> {
    const ENTRY: &str = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    let dir = cairn_testkit::npm::installed(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/npm"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-mcp-npm"),
        &["package.json", "package-lock.json"],
        ENTRY,
    )?;
    Ok(dir.join(ENTRY))
}

/// Writes `<dir>/mcp.json` with the server as `every` (stdio); its path.
pub fn config_in(dir: &Path, entry: &Path) -> PathBuf {
    let mcp = dir.join("mcp.json");
    std::fs::write(
        &mcp,
        serde_json::json!({"mcpServers": {"every": {"command": "node", "args": [entry, "stdio"]}}})
            .to_string(),
    )
    .unwrap();
    mcp
}
