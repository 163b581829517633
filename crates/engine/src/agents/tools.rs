//! The `run_subagent` and `input_subagent` tools.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::{ToolMeta, ToolSchema};
use serde::Deserialize;

use super::handle::SubagentSessions;
use super::runner::{ModelRef, SpawnRequest, SubagentRunner};
use crate::tool::{parse_args, Tool, ToolContext, ToolError, ToolOutput};

/// `run_subagent`: spawns a child by role, runs the task, returns its answer and an id to
/// continue it with `input_subagent`.
pub struct RunSubagentTool {
    runner: Arc<SubagentRunner>,
    sessions: Arc<SubagentSessions>,
}

impl RunSubagentTool {
    /// The tool over a runner and the parent's table of open children.
    pub fn new(runner: Arc<SubagentRunner>, sessions: Arc<SubagentSessions>) -> Self {
        RunSubagentTool { runner, sessions }
    }

    /// The parent's open children.
    pub fn sessions(&self) -> Arc<SubagentSessions> {
        self.sessions.clone()
    }
}

#[derive(Deserialize)]
struct RunArgs {
    task: String,
    #[serde(default, alias = "agentId", alias = "agent")]
    agent_id: Option<String>,
    #[serde(default, alias = "modelId")]
    model: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    keep: Option<bool>,
}

/// Metadata shared by both tools: the child asks for its own side effects, so starting or
/// continuing one needs no approval of its own.
fn meta() -> ToolMeta {
    let mut m = ToolMeta::read_only("agent");
    m.capabilities = vec!["subagent".into()];
    m
}

fn answer(id: &str, agent: &str, model: &str, report: &str, open: bool) -> String {
    let state = if open {
        format!("open: continue it with input_subagent(subagent_id: \"{id}\")")
    } else {
        "closed".to_string()
    };
    format!("[subagent {id} · agent {agent} · model {model} · {state}]\n\n{report}")
}

#[async_trait]
impl Tool for RunSubagentTool {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Agent
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "run_subagent".into(),
            description: "Delegate a self-contained task to a subagent with its own context. \
                It runs with the permissions of this session (its side effects are approved \
                like yours) and returns its final answer plus a subagent_id to continue it with \
                input_subagent. Pick a role with agent_id; override its model only with both \
                model and provider."
                .into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "The complete task: context, goal and what the answer must contain."},
                    "agent_id": {"type": "string", "description": "Role to run (e.g. code, cowork, or a user role); default: the current role."},
                    "model": {"type": "string", "description": "Model id override; requires provider."},
                    "provider": {"type": "string", "description": "Provider of the model override; requires model."},
                    "keep": {"type": "boolean", "description": "Keep the subagent open for input_subagent (default true)."}
                },
                "required": ["task"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        meta()
    }

    fn permission_subject(
        &self,
        _args: &serde_json::Value,
    ) -> cairn_policy::subject::PermissionSubject {
        // The child session decides each of its own calls.
        cairn_policy::subject::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: RunArgs = parse_args(args)?;
        if args.task.trim().is_empty() {
            return Err(ToolError::InvalidArguments("task must not be empty".into()));
        }
        let req = SpawnRequest {
            agent_id: args.agent_id,
            model: ModelRef::pair(args.model, args.provider)?,
        };
        let handle = Arc::new(self.runner.spawn(req, &ctx)?);
        let keep = args.keep.unwrap_or(true);
        if keep {
            self.sessions.insert(handle.clone())?;
        }
        let id = handle.subagent_id();
        let result = handle.run(args.task, &ctx).await;
        if !keep || matches!(result, Err(ToolError::Interrupted)) {
            self.sessions.close(&id);
            handle.dispose();
        }
        let report = result?;
        Ok(ToolOutput::text(answer(
            &id,
            handle.agent(),
            handle.model(),
            &report,
            keep,
        )))
    }
}

/// `input_subagent`: sends another message to an open child and returns its answer.
pub struct InputSubagentTool {
    sessions: Arc<SubagentSessions>,
}

impl InputSubagentTool {
    /// The tool over the parent's table of open children.
    pub fn new(sessions: Arc<SubagentSessions>) -> Self {
        InputSubagentTool { sessions }
    }
}

#[derive(Deserialize)]
struct InputArgs {
    #[serde(alias = "subagentId", alias = "id")]
    subagent_id: String,
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    close: bool,
}

#[async_trait]
impl Tool for InputSubagentTool {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Agent
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "input_subagent".into(),
            description: "Continue an open subagent (started by run_subagent) with another \
                message and get its answer; it remembers its earlier work. Set close to true to \
                end it (with or without a last message)."
                .into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {
                    "subagent_id": {"type": "string", "description": "The id run_subagent returned."},
                    "input": {"type": "string", "description": "The next message for the subagent."},
                    "close": {"type": "boolean", "description": "Close the subagent after this message (or right away without one)."}
                },
                "required": ["subagent_id"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        meta()
    }

    fn permission_subject(
        &self,
        _args: &serde_json::Value,
    ) -> cairn_policy::subject::PermissionSubject {
        // The child session decides each of its own calls.
        cairn_policy::subject::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: InputArgs = parse_args(args)?;
        let handle = self.sessions.get(&args.subagent_id)?;
        let id = handle.subagent_id();
        let input = args.input.filter(|t| !t.trim().is_empty());
        let Some(input) = input else {
            if args.close {
                self.sessions.close(&id);
                return Ok(ToolOutput::text(format!("subagent {id} closed")));
            }
            return Err(ToolError::InvalidArguments(
                "input must not be empty (or set close: true to end the subagent)".into(),
            ));
        };
        let result = handle.run(input, &ctx).await;
        if args.close {
            self.sessions.close(&id);
        }
        let report = result?;
        Ok(ToolOutput::text(answer(
            &id,
            handle.agent(),
            handle.model(),
            &report,
            !args.close,
        )))
    }
}
