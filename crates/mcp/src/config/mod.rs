//! MCP server configuration: the formats of `<workspace>/.agent/mcp.json` and the user-level
//! file (seed §15.2), variable expansion, imports from other tools' files, and edits.
//!
//! Loading never fails as a whole: a bad file, entry or field becomes a [`ConfigWarning`]
//! naming where it is, and everything else still loads.

mod edit;
mod expand;
mod import;
mod jsonc;
mod parse;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use edit::{add_server, remove_server, EditError};
pub use expand::{EnvLookup, NoSecrets, ProcessEnv, SecretLookup, VarContext};
pub use import::{import_sources, ImportSource};
pub use parse::parse_config_text;

/// How Cairn reaches one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    /// A child process speaking JSON-RPC lines over stdin/stdout.
    Stdio {
        /// Program to run (looked up on `PATH`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (the parent's environment is inherited).
        env: BTreeMap<String, String>,
        /// Working directory; `None` = the workspace.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (MCP 2025-03-26 and later).
    Http {
        /// Endpoint URL.
        url: String,
        /// Extra request headers (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport (MCP 2024-11-05): `GET` an event stream, `POST` messages.
    Sse {
        /// The event-stream URL.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
    /// A server built into Cairn (e.g. `ocr`).
    Builtin {
        /// Which built-in server.
        kind: String,
    },
}

impl TransportConfig {
    /// Short name for listings: `stdio`, `http`, `sse`, `builtin`.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportConfig::Stdio { .. } => "stdio",
            TransportConfig::Http { .. } => "http",
            TransportConfig::Sse { .. } => "sse",
            TransportConfig::Builtin { .. } => "builtin",
        }
    }

    /// One line describing the target, without header or environment values (they may hold secrets).
    pub fn describe(&self) -> String {
        match self {
            TransportConfig::Stdio { program, args, .. } => {
                let mut words = vec![program.clone()];
                words.extend(args.iter().cloned());
                shell_words::join(words)
            }
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => url.clone(),
            TransportConfig::Builtin { kind } => format!("built-in {kind}"),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Name as configured (tool names use a sanitised form).
    pub name: String,
    /// How to reach it; `None` only for a disabled entry that names nothing else.
    pub transport: Option<TransportConfig>,
    /// `false` when `enabled: false` or `disabled: true`.
    pub enabled: bool,
    /// Time allowed for spawn + `initialize` + first `tools/list`; `None` = manager default.
    pub startup_timeout: Option<Duration>,
    /// Time a call may go without a response or progress; `None` = manager default.
    pub call_timeout: Option<Duration>,
    /// Hard cap on one call even with progress; `None` = manager default.
    pub max_call_timeout: Option<Duration>,
    /// The file this entry came from.
    pub source: PathBuf,
    /// Why the server is held back though its file enables it (a project server the user has
    /// not trusted); `None` = start as configured.
    pub held: Option<String>,
}

/// A problem in a config file; the rest of the file still loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The file.
    pub file: PathBuf,
    /// The server entry, when the problem is inside one.
    pub entry: Option<String>,
    /// The field (dotted path inside the entry), when known.
    pub field: Option<String>,
    /// What is wrong and what happened instead.
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(e) = &self.entry {
            write!(f, ": server `{e}`")?;
        }
        if let Some(field) = &self.field {
            write!(f, ", field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Servers and warnings from one or more files.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    /// Servers in load order; names are unique.
    pub servers: Vec<ServerConfig>,
    /// Every problem found.
    pub warnings: Vec<ConfigWarning>,
}

impl LoadedConfig {
    /// Adds `other`'s servers; a server of the same name in `other` replaces ours (later wins).
    pub fn overlay(&mut self, other: LoadedConfig) {
        for s in other.servers {
            match self.servers.iter_mut().find(|x| x.name == s.name) {
                Some(existing) => *existing = s,
                None => self.servers.push(s),
            }
        }
        self.warnings.extend(other.warnings);
    }

    /// Adds servers only where no server of that name exists (imports, built-in defaults).
    pub fn fill(&mut self, other: LoadedConfig) {
        for s in other.servers {
            if !self.servers.iter().any(|x| x.name == s.name) {
                self.servers.push(s);
            }
        }
        self.warnings.extend(other.warnings);
    }

    /// The server of that name.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// `<workspace>/.agent/mcp.json`.
pub fn project_config_path(workspace: &Path) -> PathBuf {
    workspace.join(".agent").join("mcp.json")
}

/// Claude Code's project file, `<workspace>/.mcp.json` (`{"mcpServers": {…}}`).
pub fn claude_project_config_path(workspace: &Path) -> PathBuf {
    workspace.join(".mcp.json")
}

/// The user-level file: `$CAIRN_MCP_CONFIG`, else `<config dir>/cairn/mcp.json`.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_MCP_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    dirs::config_dir().map(|d| d.join("cairn").join("mcp.json"))
}

/// Loads one file; a missing file is empty and silent, an unreadable one is a warning.
pub fn load_config_file(path: &Path, vars: &VarContext<'_>) -> LoadedConfig {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_config_text(&text, path, vars),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => LoadedConfig::default(),
        Err(e) => LoadedConfig {
            servers: Vec::new(),
            warnings: vec![ConfigWarning {
                file: path.to_path_buf(),
                entry: None,
                field: None,
                message: format!("cannot read the file ({e}); no servers loaded from it"),
            }],
        },
    }
}

/// The user-level file, then the project file (project entries win by name), then servers
/// the project file imports from other tools' files, then Claude Code's project `.mcp.json`
/// (each only where the name is still free). Every server not from the user-level file is the
/// project's, and waits for the workspace trust.
pub fn load_all(workspace: &Path, user_file: Option<&Path>, vars: &VarContext<'_>) -> LoadedConfig {
    let mut all = match user_file {
        Some(p) => load_config_file(p, vars),
        None => LoadedConfig::default(),
    };
    let project_path = project_config_path(workspace);
    let project = load_config_file(&project_path, vars);
    let imports = match std::fs::read_to_string(&project_path) {
        Ok(text) => import::imports_of(&text, &project_path, workspace, vars),
        Err(_) => LoadedConfig::default(),
    };
    all.overlay(project);
    all.fill(imports);
    all.fill(load_config_file(
        &claude_project_config_path(workspace),
        vars,
    ));
    all
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn project_entries_win_over_user_entries_by_name() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".agent")).unwrap();
        let user = d.path().join("user.json");
        std::fs::write(&user, r#"{ "mcpServers": { "shared": { "command": "user-cmd" }, "mine": { "command": "m" } } }"#).unwrap();
        std::fs::write(
            project_config_path(&ws),
            r#"[ { "name": "shared", "command": "project-cmd" } ]"#,
        )
        .unwrap();
        let c = load_all(&ws, Some(&user), &VarContext::process());
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["mine", "shared"]);
        let shared = c.get("shared").unwrap();
        assert_eq!(shared.source, project_config_path(&ws));
        assert_eq!(shared.transport.as_ref().unwrap().describe(), "project-cmd");
        // Missing files are silent; unreadable ones are warnings.
        assert!(
            load_all(&d.path().join("nowhere"), None, &VarContext::process())
                .servers
                .is_empty()
        );
        let dir_as_file = load_config_file(d.path(), &VarContext::process());
        assert_eq!(dir_as_file.warnings.len(), 1);
    }
}
