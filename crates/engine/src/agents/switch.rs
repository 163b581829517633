//! Switching the role of a running session: its system prompt and model change for the next
//! turn (seed §16.2 `switch` + `setSystemPrompt`).

use super::registry::{AgentDef, AgentError, AgentRegistry};
use crate::prompt::{Environment, Lang, ProjectNote};
use crate::session::Session;

/// Makes `name` the current role of `agents` and applies it to `session`: the role's system
/// prompt replaces the session's, and the role's model (when it names one) becomes the
/// session's model. Returns the role so the caller can swap the LLM client when the role
/// names another provider. On error nothing changes.
pub async fn switch_role(
    session: &Session,
    agents: &mut AgentRegistry,
    name: &str,
    lang: Lang,
    env: &Environment,
    notes: &[ProjectNote],
) -> Result<AgentDef, AgentError> {
    let prompt = agents.build_system_prompt(name, lang, env, notes)?;
    let def = agents.switch(name)?.clone();
    session.set_system_prompt(prompt).await;
    if let Some(model) = &def.model {
        session.set_model(model.clone());
    }
    Ok(def)
}
