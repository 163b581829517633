//! `"import": ["claude-desktop", "cursor", "vscode", "path/to/file.json"]` in the project
//! config: servers from other tools' files, loaded through the same parser.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::expand::VarContext;
use super::{jsonc, load_config_file, ConfigWarning, LoadedConfig};

/// Where an import comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    /// Claude Desktop's `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor's `.cursor/mcp.json` (workspace first, then home).
    Cursor,
    /// VS Code's `.vscode/mcp.json` in the workspace.
    VsCode,
    /// Any other file.
    File(PathBuf),
}

impl ImportSource {
    /// Parses one `import` item.
    pub fn parse(item: &str, workspace: &Path) -> ImportSource {
        match item
            .trim()
            .to_ascii_lowercase()
            .replace(['_', ' '], "-")
            .as_str()
        {
            "claude-desktop" | "claude" => ImportSource::ClaudeDesktop,
            "cursor" => ImportSource::Cursor,
            "vscode" | "vs-code" | "code" => ImportSource::VsCode,
            _ => {
                let p = PathBuf::from(item.trim());
                ImportSource::File(if p.is_absolute() {
                    p
                } else {
                    workspace.join(p)
                })
            }
        }
    }

    /// Candidate files, most specific first.
    pub fn candidates(&self, workspace: &Path) -> Vec<PathBuf> {
        match self {
            ImportSource::ClaudeDesktop => dirs::config_dir()
                .map(|d| vec![d.join("Claude").join("claude_desktop_config.json")])
                .unwrap_or_default(),
            ImportSource::Cursor => {
                let mut v = vec![workspace.join(".cursor").join("mcp.json")];
                if let Some(h) = dirs::home_dir() {
                    v.push(h.join(".cursor").join("mcp.json"));
                }
                v
            }
            ImportSource::VsCode => vec![workspace.join(".vscode").join("mcp.json")],
            ImportSource::File(p) => vec![p.clone()],
        }
    }
}

/// Every known source with its candidate files (for `cairn mcp list` and the UI).
pub fn import_sources(workspace: &Path) -> Vec<(ImportSource, Vec<PathBuf>)> {
    [
        ImportSource::ClaudeDesktop,
        ImportSource::Cursor,
        ImportSource::VsCode,
    ]
    .into_iter()
    .map(|s| {
        let c = s.candidates(workspace);
        (s, c)
    })
    .collect()
}

/// The servers the project config's `import` key names (earlier imports win by name).
pub(super) fn imports_of(
    project_text: &str,
    project_path: &Path,
    workspace: &Path,
    vars: &VarContext<'_>,
) -> LoadedConfig {
    let mut out = LoadedConfig::default();
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(&jsonc::strip(project_text)) else {
        return out;
    };
    let items: Vec<String> = match top.get("import") {
        None | Some(Value::Null) => return out,
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => {
            let mut v = Vec::new();
            for (i, it) in a.iter().enumerate() {
                match it {
                    Value::String(s) => v.push(s.clone()),
                    _ => out.warnings.push(warning(
                        project_path,
                        &format!("import[{i}]"),
                        "expected a string; ignored",
                    )),
                }
            }
            v
        }
        Some(_) => {
            out.warnings.push(warning(
                project_path,
                "import",
                "expected a string or a list of strings; ignored",
            ));
            return out;
        }
    };
    let vars = VarContext {
        workspace: Some(workspace),
        ..*vars
    };
    for item in items {
        let source = ImportSource::parse(&item, workspace);
        let candidates = source.candidates(workspace);
        match candidates.iter().find(|p| p.is_file()) {
            Some(path) => out.fill(load_config_file(path, &vars)),
            None => out.warnings.push(warning(
                project_path,
                "import",
                &format!(
                    "`{item}`: no config file found (looked at {}); nothing imported",
                    candidates
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
    out
}

fn warning(file: &Path, field: &str, message: &str) -> ConfigWarning {
    ConfigWarning {
        file: file.to_path_buf(),
        entry: None,
        field: Some(field.to_string()),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::{load_all, NoSecrets, ProcessEnv};

    #[test]
    fn project_imports_vscode_and_a_file_and_wins_by_name() {
        let ws = tempfile::tempdir().unwrap();
        let w = ws.path();
        std::fs::create_dir_all(w.join(".agent")).unwrap();
        std::fs::create_dir_all(w.join(".vscode")).unwrap();
        std::fs::write(
            w.join(".agent/mcp.json"),
            r#"{ "import": ["vscode", "other.json", "cursor"], "servers": { "mine": { "command": "mine" } } }"#,
        )
        .unwrap();
        std::fs::write(
            w.join(".vscode/mcp.json"),
            r#"{ "servers": { "mine": { "type": "stdio", "command": "theirs" }, "vs": { "type": "stdio", "command": "vs", "args": ["${workspaceFolder}"] } } }"#,
        )
        .unwrap();
        std::fs::write(
            w.join("other.json"),
            r#"{ "mcpServers": { "o": { "command": "o" } } }"#,
        )
        .unwrap();
        let cx = VarContext {
            env: &ProcessEnv,
            secrets: &NoSecrets,
            workspace: None,
        };
        let c = load_all(w, None, &cx);
        let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["mine", "vs", "o"]);
        match c.get("mine").unwrap().transport.as_ref().unwrap() {
            crate::config::TransportConfig::Stdio { program, .. } => assert_eq!(program, "mine"),
            other => panic!("{other:?}"),
        }
        match c.get("vs").unwrap().transport.as_ref().unwrap() {
            crate::config::TransportConfig::Stdio { args, .. } => {
                assert_eq!(args, &[w.display().to_string()])
            }
            other => panic!("{other:?}"),
        }
        // Cursor: only a warning when neither the workspace nor the home file exists.
        if !dirs::home_dir().is_some_and(|h| h.join(".cursor/mcp.json").exists()) {
            assert!(
                c.warnings.iter().any(|w| w.message.contains("`cursor`")),
                "{:?}",
                c.warnings
            );
        }
    }
}
