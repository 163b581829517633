//! Agent roles on disk: the user roles live in `<state dir>/agents.json` (a JSON array of
//! `{name, description, prompt, model?, provider?}`), shared by the CLI and the desktop app.

use std::path::{Path, PathBuf};

use cairn_engine::agents::{AgentDef, AgentRegistry};

use crate::error::RuntimeError;

/// The roles file of a state dir.
pub fn agents_file(state_dir: &Path) -> PathBuf {
    state_dir.join("agents.json")
}

/// The built-in roles plus the user roles saved in `state_dir` (none when the file is
/// missing). A damaged file is an error naming it; it is never overwritten.
pub fn load_agents(state_dir: &Path) -> Result<AgentRegistry, RuntimeError> {
    let path = agents_file(state_dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AgentRegistry::new()),
        Err(e) => {
            return Err(RuntimeError::Config(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    // An editor's byte-order mark, or an empty file, is not damage.
    let text = text.trim_start_matches('\u{feff}');
    if text.trim().is_empty() {
        return Ok(AgentRegistry::new());
    }
    let defs: Vec<AgentDef> = serde_json::from_str(text).map_err(|e| {
        RuntimeError::Config(format!(
            "{} is not a valid roles file ({e}); fix or remove it",
            path.display()
        ))
    })?;
    AgentRegistry::with_user_agents(defs)
        .map_err(|e| RuntimeError::Config(format!("{}: {e}", path.display())))
}

/// The project's roles in Claude Code's layout, `<workspace>/.claude/agents/*.md`: front
/// matter `name` (else the file's stem), `description`, `model`, and the body as the role's
/// prompt. `model: inherit` (the default) runs on the session's model; Claude Code's aliases
/// (`sonnet`, `opus`, `haiku`) name Anthropic models, used when the session's provider is
/// `anthropic`, else the session's model (said in a warning). `tools` is not honoured (said).
/// A name a built-in or user role has is skipped with a warning: a repository never replaces
/// a role the user relies on. They load as text, as project commands and skills do.
pub fn project_agents(workspace: &Path, provider: Option<&str>) -> (Vec<AgentDef>, Vec<String>) {
    agents_in(&workspace.join(".claude").join("agents"), provider)
}

/// The user's roles in `~/.claude/agents/*.md` (read as [`project_agents`] reads the
/// project's), once the user opted in ([`crate::claude_home`]); none otherwise.
pub fn claude_user_agents(provider: Option<&str>) -> (Vec<AgentDef>, Vec<String>) {
    match crate::claude_home::user_dir() {
        Some(dir) => agents_in(&dir.join("agents"), provider),
        None => (Vec::new(), Vec::new()),
    }
}

/// The roles of the Claude Code agent files in `dir`.
fn agents_in(dir: &Path, provider: Option<&str>) -> (Vec<AgentDef>, Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    let mut defs = Vec::new();
    let mut warnings = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            warnings.push(format!("{}: cannot be read; skipped", path.display()));
            continue;
        };
        let (front, body) = crate::front_matter::parse_lenient(&text);
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = front
            .get("name")
            .cloned()
            .filter(|n| !n.is_empty())
            .unwrap_or(stem);
        let mut def = AgentDef::new(
            &name,
            front.get("description").map(String::as_str).unwrap_or(""),
            body.trim(),
        );
        match front.get("model").map(|m| m.trim()) {
            None | Some("") | Some("inherit") => {}
            Some(alias @ ("sonnet" | "opus" | "haiku")) if provider == Some("anthropic") => {
                def = def.with_model(claude_alias(alias), Some("anthropic"));
            }
            Some(alias @ ("sonnet" | "opus" | "haiku")) => warnings.push(format!(
                "{}: model `{alias}` is Anthropic's; the role runs on the session's model",
                path.display()
            )),
            Some(other) => def = def.with_model(other, None),
        }
        if front.contains_key("tools") {
            warnings.push(format!(
                "{}: `tools` is not honoured yet; the role has the session's tools",
                path.display()
            ));
        }
        defs.push(def);
    }
    (defs, warnings)
}

/// Adds the user's Claude Code roles ([`claude_user_agents`], once opted in) and then the
/// project's ([`project_agents`]) to `agents` after the built-in and the user's own, which
/// they never replace; what is skipped is logged.
pub fn add_project_agents(agents: &mut AgentRegistry, workspace: &Path, provider: Option<&str>) {
    add_project_agents_in(
        agents,
        workspace,
        provider,
        &crate::config_scope::ConfigScope::default(),
    )
}

/// [`add_project_agents`] within `scope`: `~/.claude`'s roles only when its user config
/// applies, the project's only when its project files are read.
pub fn add_project_agents_in(
    agents: &mut AgentRegistry,
    workspace: &Path,
    provider: Option<&str>,
    scope: &crate::config_scope::ConfigScope,
) {
    let none = || (Vec::new(), Vec::new());
    for (whose, (roles, warnings)) in [
        (
            "your ~/.claude",
            if scope.user_config {
                claude_user_agents(provider)
            } else {
                none()
            },
        ),
        (
            "the project's",
            if scope.project_files() {
                project_agents(workspace, provider)
            } else {
                none()
            },
        ),
    ] {
        for w in warnings {
            tracing::warn!("roles: {w}");
        }
        for def in roles {
            let name = def.name.clone();
            if agents.get(&name).is_some() {
                tracing::warn!("roles: {whose} role `{name}` is skipped: a role has that name");
                continue;
            }
            if let Err(e) = agents.add(def) {
                tracing::warn!("roles: {whose} role `{name}` is skipped: {e}");
            }
        }
    }
}

/// The Anthropic model a Claude Code alias names.
pub(crate) fn claude_alias(alias: &str) -> &'static str {
    match alias {
        "opus" => "claude-opus-4-1",
        "haiku" => "claude-haiku-4-5",
        _ => "claude-sonnet-4-5",
    }
}

/// Refuses a role provider no run could reach: a role has no base URL of its own, so its
/// provider must be a known one.
pub fn check_role_provider(provider: &str) -> Result<(), RuntimeError> {
    if cairn_providers::preset(provider).is_some() {
        return Ok(());
    }
    let known: Vec<&str> = cairn_providers::PRESETS.iter().map(|p| p.name).collect();
    Err(RuntimeError::Config(format!(
        "unknown provider `{provider}`: use one of {}",
        known.join(", ")
    )))
}

/// Saves the user roles of `agents` to `state_dir` (atomic replace).
pub fn save_agents(state_dir: &Path, agents: &AgentRegistry) -> Result<(), RuntimeError> {
    let path = agents_file(state_dir);
    let io =
        |e: std::io::Error| RuntimeError::Config(format!("cannot write {}: {e}", path.display()));
    std::fs::create_dir_all(state_dir).map_err(io)?;
    let json = serde_json::to_string_pretty(&agents.user_agents())
        .map_err(|e| RuntimeError::Config(e.to_string()))?;
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, json + "\n")
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn roles_round_trip_and_a_missing_file_means_builtins_only() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_agents(dir.path()).unwrap().list().len(), 2);
        let mut reg = AgentRegistry::new();
        reg.add(
            AgentDef::new("analyst", "data", "You analyse data.").with_model("m", Some("openai")),
        )
        .unwrap();
        save_agents(dir.path(), &reg).unwrap();
        let back = load_agents(dir.path()).unwrap();
        assert_eq!(back.get("analyst"), reg.get("analyst"));
        assert_eq!(back.list().len(), 3);
    }

    #[test]
    fn a_damaged_file_is_a_clear_error_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(agents_file(dir.path()), "{not json").unwrap();
        let err = load_agents(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("agents.json") && err.contains("not a valid roles file"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(agents_file(dir.path())).unwrap(),
            "{not json"
        );
        std::fs::write(agents_file(dir.path()), r#"[{"name":"code","prompt":"x"}]"#).unwrap();
        let err = load_agents(dir.path()).unwrap_err().to_string();
        assert!(err.contains("built-in"), "{err}");
    }

    #[test]
    fn fields_this_version_does_not_know_survive_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            agents_file(dir.path()),
            r#"[{"name":"analyst","prompt":"p","temperature":0.2,"tags":["x"]}]"#,
        )
        .unwrap();
        let mut reg = load_agents(dir.path()).unwrap();
        reg.add(AgentDef::new("writer", "", "w")).unwrap();
        save_agents(dir.path(), &reg).unwrap();
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(agents_file(dir.path())).unwrap())
                .unwrap();
        assert_eq!(saved[0]["temperature"], 0.2);
        assert_eq!(saved[0]["tags"][0], "x");
        assert_eq!(saved[1]["name"], "writer");
        assert!(saved[1].get("extra").is_none());
    }

    #[test]
    fn an_empty_file_or_a_byte_order_mark_is_not_damage() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(agents_file(dir.path()), "  \n").unwrap();
        assert_eq!(load_agents(dir.path()).unwrap().list().len(), 2);
        std::fs::write(
            agents_file(dir.path()),
            "\u{feff}[{\"name\":\"analyst\",\"prompt\":\"p\"}]",
        )
        .unwrap();
        assert!(load_agents(dir.path()).unwrap().get("analyst").is_some());
        assert!(check_role_provider("anthropic").is_ok());
        assert!(check_role_provider("bogus")
            .unwrap_err()
            .to_string()
            .contains("unknown provider `bogus`"));
    }
}
