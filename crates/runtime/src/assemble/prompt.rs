//! The session's system prompt, built in one place: the role's prompt from the engine's role
//! table (with the prompt language, the environment block and the project's notes), then the
//! Agent Skills section. Opening a session and switching its role both build it here, so a
//! role switch keeps the skills listed.

use cairn_engine::agents::AgentRegistry;
use cairn_engine::prompt::{Environment, Lang, ProjectNote};

use crate::error::RuntimeError;
use crate::{instructions, skills};

/// What a session's system prompts are built from.
#[derive(Debug, Clone)]
pub(crate) struct SystemPrompt {
    lang: Lang,
    env: Environment,
    notes: Vec<ProjectNote>,
    /// The Agent Skills section (empty without skills).
    skills: String,
    /// The skills found for the workspace.
    found: Vec<skills::Skill>,
}

impl SystemPrompt {
    /// The prompt parts of `workspace` (its sandbox described by `sandbox_text`); the skills'
    /// warnings are logged.
    pub(crate) fn of(
        workspace: &std::path::Path,
        sandbox_text: &str,
        scope: &crate::config_scope::ConfigScope,
        lang: Lang,
    ) -> SystemPrompt {
        let (found, warnings) = skills::discover_in(workspace, scope);
        for w in &warnings {
            tracing::warn!("skills: {w}");
        }
        SystemPrompt {
            lang,
            env: instructions::environment(workspace, sandbox_text),
            notes: instructions::notes_for_in(workspace, scope),
            skills: skills::prompt_section(&found),
            found,
        }
    }

    /// The system prompt of role `role`.
    pub(crate) fn for_role(
        &self,
        agents: &AgentRegistry,
        role: &str,
    ) -> Result<String, RuntimeError> {
        let mut prompt = agents
            .build_system_prompt(role, self.lang, &self.env, &self.notes)
            .map_err(|e| RuntimeError::Config(e.to_string()))?;
        prompt.push_str(&self.skills);
        Ok(prompt)
    }

    /// The skills found for the workspace.
    pub(crate) fn skills(&self) -> &[skills::Skill] {
        &self.found
    }

    /// Language, environment and notes, for subagents' prompts.
    pub(crate) fn context(&self) -> (Lang, Environment, Vec<ProjectNote>) {
        (self.lang, self.env.clone(), self.notes.clone())
    }
}
