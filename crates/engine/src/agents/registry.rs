//! The role table (seed §16.2): built-in `code` / `cowork` plus user roles, each a name,
//! description, system prompt and optional model; one role is current. In memory only: the
//! caller persists [`AgentRegistry::user_agents`] (e.g. `agents.json`).

use serde::{Deserialize, Serialize};

use crate::prompt::{
    build_instructions, build_role_instructions, AgentType, Environment, Lang, ProjectNote,
};

/// Names of the built-in roles.
pub const BUILTIN_AGENTS: [&str; 2] = ["code", "cowork"];

/// Longest accepted role name.
const MAX_NAME_LEN: usize = 64;

/// Why a role operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// No role of that name.
    #[error("unknown agent `{name}` (available: {available})")]
    Unknown {
        /// The requested name.
        name: String,
        /// Comma-separated names that exist.
        available: String,
    },
    /// A role of that name exists already.
    #[error("an agent named `{0}` already exists")]
    Duplicate(String),
    /// Built-in roles cannot be changed or removed.
    #[error("`{0}` is a built-in agent and cannot be changed or removed")]
    Builtin(String),
    /// The name is empty, too long or has characters other than letters, digits, `-`, `_`.
    #[error("invalid agent name `{0}`: use 1-64 letters, digits, `-` or `_`")]
    InvalidName(String),
    /// A user role needs a prompt.
    #[error("agent `{0}` needs a non-empty prompt")]
    EmptyPrompt(String),
    /// A provider was given without a model.
    #[error("agent `{0}`: a provider needs a model id as well")]
    ProviderWithoutModel(String),
}

/// One role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDef {
    /// Unique name (`code`, `cowork`, `analyst`, ...).
    pub name: String,
    /// One line telling the model (and the user) what this role is for.
    #[serde(default)]
    pub description: String,
    /// The role's own system prompt; empty for built-ins (they use the prompt files).
    #[serde(default)]
    pub prompt: String,
    /// Model id this role runs on; `None` = the session's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Provider of `model`; `None` = the session's provider. Needs `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Fields this version does not know (another Cairn's), kept when the file is rewritten.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl AgentDef {
    /// A user role with a name, description and prompt.
    pub fn new(name: &str, description: &str, prompt: &str) -> Self {
        AgentDef {
            name: name.to_string(),
            description: description.to_string(),
            prompt: prompt.to_string(),
            model: None,
            provider: None,
            extra: serde_json::Map::new(),
        }
    }

    /// Sets the role's model (and optionally its provider).
    pub fn with_model(mut self, model: &str, provider: Option<&str>) -> Self {
        self.model = Some(model.to_string());
        self.provider = provider.map(str::to_string);
        self
    }

    /// Whether this is `code` or `cowork`.
    pub fn is_builtin(&self) -> bool {
        BUILTIN_AGENTS.contains(&self.name.as_str())
    }
}

/// Changes to a user role; `None` leaves a field as it is, `Some(None)` clears the model or
/// provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentPatch {
    /// New description.
    pub description: Option<String>,
    /// New prompt.
    pub prompt: Option<String>,
    /// New model (or cleared).
    pub model: Option<Option<String>>,
    /// New provider (or cleared).
    pub provider: Option<Option<String>>,
}

/// The role table with the current role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRegistry {
    agents: Vec<AgentDef>,
    current: String,
}

impl Default for AgentRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentRegistry {
    /// The built-in roles, `code` current.
    pub fn new() -> Self {
        let builtin = |name: &str, description: &str| AgentDef {
            name: name.into(),
            description: description.into(),
            prompt: String::new(),
            model: None,
            provider: None,
            extra: serde_json::Map::new(),
        };
        AgentRegistry {
            agents: vec![
                builtin(
                    "code",
                    "Coding assistant: reads, changes and tests code in the workspace.",
                ),
                builtin(
                    "cowork",
                    "General collaboration: writing, research, planning and files.",
                ),
            ],
            current: "code".into(),
        }
    }

    /// The built-ins plus these user roles (each validated; the first error is returned).
    pub fn with_user_agents(user: Vec<AgentDef>) -> Result<Self, AgentError> {
        let mut reg = Self::new();
        for def in user {
            reg.add(def)?;
        }
        Ok(reg)
    }

    /// Adds a user role.
    pub fn add(&mut self, def: AgentDef) -> Result<(), AgentError> {
        if def.is_builtin() {
            return Err(AgentError::Builtin(def.name));
        }
        validate(&def)?;
        if self.get(&def.name).is_some() {
            return Err(AgentError::Duplicate(def.name));
        }
        self.agents.push(def);
        Ok(())
    }

    /// Changes a user role.
    pub fn update(&mut self, name: &str, patch: AgentPatch) -> Result<&AgentDef, AgentError> {
        let unknown = self.unknown(name);
        let def = self
            .agents
            .iter_mut()
            .find(|a| a.name == name)
            .ok_or(unknown)?;
        if def.is_builtin() {
            return Err(AgentError::Builtin(name.to_string()));
        }
        let mut next = def.clone();
        if let Some(d) = patch.description {
            next.description = d;
        }
        if let Some(p) = patch.prompt {
            next.prompt = p;
        }
        if let Some(m) = patch.model {
            next.model = m;
        }
        if let Some(p) = patch.provider {
            next.provider = p;
        }
        validate(&next)?;
        *def = next;
        Ok(def)
    }

    /// Removes a user role; when it was current, `code` becomes current.
    pub fn remove(&mut self, name: &str) -> Result<AgentDef, AgentError> {
        let i = self
            .agents
            .iter()
            .position(|a| a.name == name)
            .ok_or_else(|| self.unknown(name))?;
        if self.agents[i].is_builtin() {
            return Err(AgentError::Builtin(name.to_string()));
        }
        if self.current == name {
            self.current = "code".into();
        }
        Ok(self.agents.remove(i))
    }

    /// Makes a role current.
    pub fn switch(&mut self, name: &str) -> Result<&AgentDef, AgentError> {
        let found = self.require(name)?.name.clone();
        self.current = found;
        Ok(self.current())
    }

    /// The current role.
    pub fn current(&self) -> &AgentDef {
        self.get(&self.current).unwrap_or_else(|| &self.agents[0])
    }

    /// A role by name.
    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// A role by name, or a clear error naming the roles that exist.
    pub fn require(&self, name: &str) -> Result<&AgentDef, AgentError> {
        self.get(name).ok_or_else(|| self.unknown(name))
    }

    /// Every role, built-ins first.
    pub fn list(&self) -> &[AgentDef] {
        &self.agents
    }

    /// The user roles (what the caller persists).
    pub fn user_agents(&self) -> Vec<AgentDef> {
        self.agents
            .iter()
            .filter(|a| !a.is_builtin())
            .cloned()
            .collect()
    }

    /// The system prompt of a role: built-ins use their prompt files, user roles their own
    /// prompt plus the built-in safety rules; both end with the environment and project notes.
    pub fn build_system_prompt(
        &self,
        name: &str,
        lang: Lang,
        env: &Environment,
        notes: &[ProjectNote],
    ) -> Result<String, AgentError> {
        let def = self.require(name)?;
        Ok(match def.name.as_str() {
            "code" => build_instructions(AgentType::Code, lang, env, notes),
            "cowork" => build_instructions(AgentType::Cowork, lang, env, notes),
            _ => build_role_instructions(&def.prompt, lang, env, notes),
        })
    }

    fn unknown(&self, name: &str) -> AgentError {
        AgentError::Unknown {
            name: name.to_string(),
            available: self
                .agents
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

fn validate(def: &AgentDef) -> Result<(), AgentError> {
    let n = &def.name;
    if n.is_empty()
        || n.len() > MAX_NAME_LEN
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(AgentError::InvalidName(n.clone()));
    }
    if def.prompt.trim().is_empty() {
        return Err(AgentError::EmptyPrompt(n.clone()));
    }
    let blank = |o: &Option<String>| o.as_ref().is_some_and(|s| s.trim().is_empty());
    if blank(&def.model) || blank(&def.provider) || (def.provider.is_some() && def.model.is_none())
    {
        return Err(AgentError::ProviderWithoutModel(n.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn builtins_add_update_switch_remove() {
        let mut reg = AgentRegistry::new();
        assert_eq!(reg.current().name, "code");
        reg.add(AgentDef::new(
            "analyst",
            "data analysis",
            "You are a data analyst.",
        ))
        .unwrap();
        assert_eq!(
            reg.add(AgentDef::new("analyst", "x", "y")),
            Err(AgentError::Duplicate("analyst".into()))
        );
        let patch = AgentPatch {
            model: Some(Some("deepseek-chat".into())),
            ..Default::default()
        };
        assert_eq!(
            reg.update("analyst", patch).unwrap().model.as_deref(),
            Some("deepseek-chat")
        );
        assert_eq!(reg.switch("analyst").unwrap().name, "analyst");
        assert_eq!(reg.current().name, "analyst");
        assert!(matches!(
            reg.switch("nobody"),
            Err(AgentError::Unknown { .. })
        ));
        assert_eq!(
            reg.current().name,
            "analyst",
            "a failed switch changes nothing"
        );
        assert_eq!(reg.user_agents().len(), 1);
        reg.remove("analyst").unwrap();
        assert_eq!(reg.current().name, "code");
        assert_eq!(
            reg.remove("cowork"),
            Err(AgentError::Builtin("cowork".into()))
        );
    }

    #[test]
    fn bad_roles_are_refused_with_clear_errors() {
        let mut reg = AgentRegistry::new();
        assert!(matches!(
            reg.add(AgentDef::new("bad name", "", "p")),
            Err(AgentError::InvalidName(_))
        ));
        assert!(matches!(
            reg.add(AgentDef::new("empty", "", "  ")),
            Err(AgentError::EmptyPrompt(_))
        ));
        let mut half = AgentDef::new("half", "", "p");
        half.provider = Some("anthropic".into());
        assert!(matches!(
            reg.add(half),
            Err(AgentError::ProviderWithoutModel(_))
        ));
        assert!(matches!(
            reg.add(AgentDef::new("code", "", "p")),
            Err(AgentError::Builtin(_))
        ));
        reg.add(AgentDef::new("ok", "", "p")).unwrap();
        let clear_prompt = AgentPatch {
            prompt: Some(String::new()),
            ..Default::default()
        };
        assert!(reg.update("ok", clear_prompt).is_err());
        assert_eq!(
            reg.get("ok").unwrap().prompt,
            "p",
            "a refused update changes nothing"
        );
        assert_eq!(reg.list().len(), 3);
    }

    #[test]
    fn system_prompts_per_role() {
        let mut reg = AgentRegistry::new();
        reg.add(AgentDef::new("poet", "", "ROLE-PROMPT: write haiku"))
            .unwrap();
        let env = Environment {
            workspace: "/w".into(),
            ..Default::default()
        };
        let notes = [ProjectNote {
            source: "AGENTS.md".into(),
            text: "NOTE-1".into(),
        }];
        let poet = reg
            .build_system_prompt("poet", Lang::En, &env, &notes)
            .unwrap();
        assert!(poet.starts_with("ROLE-PROMPT: write haiku"));
        assert!(poet.contains("NOTE-1") && poet.contains("- Workspace: /w"));
        let safety = crate::prompt::section(AgentType::Cowork, Lang::En, "safety");
        assert!(!safety.is_empty() && poet.contains(&safety));
        let code = reg
            .build_system_prompt("code", Lang::En, &env, &notes)
            .unwrap();
        let cowork = reg
            .build_system_prompt("cowork", Lang::En, &env, &notes)
            .unwrap();
        assert_ne!(code, cowork);
        assert!(reg
            .build_system_prompt("nope", Lang::En, &env, &[])
            .is_err());
    }

    #[test]
    fn user_roles_round_trip_through_json() {
        let json = r#"[{"name":"analyst","description":"d","prompt":"p","model":"m","provider":"openai"}]"#;
        let defs: Vec<AgentDef> = serde_json::from_str(json).unwrap();
        let reg = AgentRegistry::with_user_agents(defs).unwrap();
        let back = serde_json::to_string(&reg.user_agents()).unwrap();
        assert_eq!(back, json);
    }
}
