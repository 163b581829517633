//! A server's prompts (`prompts/list`, `prompts/get`): offered to the user as slash commands
//! `/mcp__<server>__<prompt> args` (after built-ins, user and project commands), expanded into
//! the turn's text.

use rmcp::model::{GetPromptRequestParams, JsonObject, Prompt, Role};
use rmcp::service::RoleClient;
use rmcp::Peer;
use serde::Serialize;

use crate::result::block_text;

/// One prompt as the faces list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    /// The server.
    pub server: String,
    /// The prompt's name on that server.
    pub name: String,
    /// The command that runs it, without the slash (`mcp__server__prompt`).
    pub command: String,
    /// What it is for.
    pub description: String,
    /// Its arguments, in order: (name, required).
    pub arguments: Vec<(String, bool)>,
}

/// The command name of `prompt` of `server`.
pub fn command_name(server: &str, prompt: &str) -> String {
    format!(
        "{}{}",
        crate::naming::server_prefix(server),
        crate::naming::sanitize(prompt)
    )
}

/// The prompts of a server that declared prompts (empty when it did not, or listing failed:
/// a server's prompts are a convenience, never a reason it cannot start).
pub async fn list(server: &str, peer: &Peer<RoleClient>) -> Vec<PromptInfo> {
    let declared = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.prompts.is_some());
    if !declared {
        return Vec::new();
    }
    match peer.list_all_prompts().await {
        Ok(prompts) => prompts.iter().map(|p| info(server, p)).collect(),
        Err(e) => {
            tracing::warn!(server, "prompts/list failed: {e}");
            Vec::new()
        }
    }
}

fn info(server: &str, p: &Prompt) -> PromptInfo {
    PromptInfo {
        server: server.to_string(),
        name: p.name.clone(),
        command: command_name(server, &p.name),
        description: p
            .description
            .clone()
            .or_else(|| p.title.clone())
            .unwrap_or_default(),
        arguments: p
            .arguments
            .iter()
            .flatten()
            .map(|a| (a.name.clone(), a.required.unwrap_or(false)))
            .collect(),
    }
}

/// Binds `args` (words after the command) to `prompt`'s arguments: `name=value` words by
/// name, the others in order; a missing required argument is an error in words.
pub fn bind(prompt: &PromptInfo, args: &str) -> Result<JsonObject, String> {
    let mut out = JsonObject::new();
    let mut positional = Vec::new();
    for word in args.split_whitespace() {
        match word.split_once('=') {
            Some((k, v)) if prompt.arguments.iter().any(|(n, _)| n == k) => {
                out.insert(k.to_string(), v.to_string().into());
            }
            _ => positional.push(word),
        }
    }
    let free: Vec<&(String, bool)> = prompt
        .arguments
        .iter()
        .filter(|(n, _)| !out.contains_key(n))
        .collect();
    for (i, (name, _)) in free.iter().enumerate() {
        let Some(word) = positional.get(i) else { break };
        // The last argument takes the rest of the words.
        let value = if i + 1 == free.len() {
            positional[i..].join(" ")
        } else {
            word.to_string()
        };
        out.insert(name.clone(), value.into());
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|(n, required)| *required && !out.contains_key(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        let usage: Vec<String> = prompt
            .arguments
            .iter()
            .map(|(n, r)| {
                if *r {
                    format!("<{n}>")
                } else {
                    format!("[{n}]")
                }
            })
            .collect();
        return Err(format!(
            "/{} needs {} (usage: /{} {})",
            prompt.command,
            missing.join(", "),
            prompt.command,
            usage.join(" ")
        ));
    }
    Ok(out)
}

/// Gets `prompt` with `arguments` and renders its messages as the text of a user turn.
pub async fn get(
    peer: &Peer<RoleClient>,
    prompt: &str,
    arguments: JsonObject,
) -> Result<String, String> {
    let mut params = GetPromptRequestParams::new(prompt);
    params.arguments = Some(arguments);
    let result = peer
        .get_prompt(params)
        .await
        .map_err(|e| format!("prompts/get failed: {e}"))?;
    let parts: Vec<String> = result
        .messages
        .iter()
        .map(|m| {
            let text = block_text(&m.content);
            match m.role {
                Role::User => text,
                Role::Assistant => format!("(assistant) {text}"),
            }
        })
        .filter(|t| !t.trim().is_empty())
        .collect();
    if parts.is_empty() {
        return Err("the prompt came back empty".into());
    }
    Ok(parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn p(args: &[(&str, bool)]) -> PromptInfo {
        PromptInfo {
            server: "s".into(),
            name: "p".into(),
            command: "mcp__s__p".into(),
            description: String::new(),
            arguments: args.iter().map(|(n, r)| (n.to_string(), *r)).collect(),
        }
    }

    #[test]
    fn words_bind_by_name_then_in_order_and_the_last_takes_the_rest() {
        let prompt = p(&[("city", true), ("state", false)]);
        let got = bind(&prompt, "state=CA San Francisco bay").unwrap();
        assert_eq!(got["state"], "CA");
        assert_eq!(got["city"], "San Francisco bay");
        let got = bind(&prompt, "Paris France").unwrap();
        assert_eq!(got["city"], "Paris");
        assert_eq!(got["state"], "France");
        let err = bind(&prompt, "").unwrap_err();
        assert!(err.contains("needs city"), "{err}");
        assert!(err.contains("/mcp__s__p <city> [state]"), "{err}");
    }
}
