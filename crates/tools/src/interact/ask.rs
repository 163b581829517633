//! `ask_user`: a question for the user, answered by the host (UI dialog, terminal prompt).

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema, UserAnswer};
use serde::Deserialize;
use serde_json::json;

use super::interactive_meta;
use crate::args;

/// Options a question may offer.
const MAX_OPTIONS: usize = 20;

/// Asks the user a question and waits for the answer.
#[derive(Debug, Default, Clone, Copy)]
pub struct AskUser;

#[derive(Debug, Deserialize)]
struct Args {
    question: String,
    #[serde(default)]
    options: Option<Vec<String>>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    allow_text: Option<bool>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    multi: Option<bool>,
}

#[async_trait]
impl Tool for AskUser {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Question
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "ask_user".into(),
            description: "Ask the user a question and wait for the answer. Use it when a \
                decision is theirs to make or a requirement is ambiguous, not for things you \
                can find out yourself. Offer options when the likely answers are known; the \
                user may also type a free answer unless allow_text is false. If nobody can \
                answer, you are told so: then decide yourself and say what you assumed."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The question, short and specific."},
                    "options": {"type": "array", "items": {"type": "string"}, "description": "Answers to choose from (optional)."},
                    "allow_text": {"type": "boolean", "description": "Whether a free-text answer is allowed. Default true."},
                    "multi": {"type": "boolean", "description": "Whether several options may be chosen. Default false."}
                },
                "required": ["question"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        interactive_meta("interaction")
    }

    fn permission_subject(&self, _args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("ask_user", args)?;
        let question = args.question.trim().to_string();
        if question.is_empty() {
            return Err(ToolError::InvalidArguments(
                "ask_user: question must not be empty".into(),
            ));
        }
        let options: Vec<String> = args
            .options
            .unwrap_or_default()
            .into_iter()
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty())
            .collect();
        if options.len() > MAX_OPTIONS {
            return Err(ToolError::InvalidArguments(format!(
                "ask_user: {} options; offer at most {MAX_OPTIONS}",
                options.len()
            )));
        }
        let allow_text = args.allow_text.unwrap_or(true);
        if options.is_empty() && !allow_text {
            return Err(ToolError::InvalidArguments(
                "ask_user: with allow_text false, give options to choose from".into(),
            ));
        }
        let multi = args.multi.unwrap_or(false);
        let answer = tokio::select! {
            a = ctx.host.ask_user(question, options, allow_text, multi) => a,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        Ok(ToolOutput::text(match answer {
            UserAnswer::Answered { selected, text } => {
                let mut parts = Vec::new();
                if !selected.is_empty() {
                    parts.push(format!("chose: {}", selected.join("; ")));
                }
                if !text.trim().is_empty() {
                    parts.push(format!("wrote: {}", text.trim()));
                }
                if parts.is_empty() {
                    "The user answered without choosing an option or writing anything.".into()
                } else {
                    format!("The user {}", parts.join("; and "))
                }
            }
            UserAnswer::Declined { reason } => format!(
                "No answer: {reason}. Proceed with your best judgement and state the assumption you made."
            ),
        }))
    }
}
