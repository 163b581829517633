//! `shell_task_output` and `shell_task_kill`: inspect and stop background tasks.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::output::tail_lines;
use super::tasks::{ShellTasks, TaskSnapshot};
use crate::args;

/// Lines of output shown after a kill.
const KILL_TAIL_LINES: usize = 20;

/// Shows a background task's status and output.
#[derive(Debug, Clone)]
pub struct ShellTaskOutput {
    tasks: Arc<ShellTasks>,
}

impl ShellTaskOutput {
    /// A shell_task_output tool reading tasks from `tasks`.
    pub fn new(tasks: Arc<ShellTasks>) -> Self {
        ShellTaskOutput { tasks }
    }
}

/// Kills a background task and everything it started.
#[derive(Debug, Clone)]
pub struct ShellTaskKill {
    tasks: Arc<ShellTasks>,
}

impl ShellTaskKill {
    /// A shell_task_kill tool acting on `tasks`.
    pub fn new(tasks: Arc<ShellTasks>) -> Self {
        ShellTaskKill { tasks }
    }
}

#[derive(Debug, Deserialize)]
struct OutputArgs {
    task_id: String,
    #[serde(default, deserialize_with = "args::opt_u64")]
    tail_lines: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct KillArgs {
    task_id: String,
}

fn header(id: &str, s: &TaskSnapshot) -> String {
    format!(
        "[task {id}: {} after {:.1} s; command: {}]",
        s.state.describe(),
        s.elapsed.as_secs_f64(),
        s.command
    )
}

#[async_trait]
impl Tool for ShellTaskOutput {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Command
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "shell_task_output".into(),
            description: "Show the status (running, or exited with its code) and the combined \
                output so far of a background task started by run_shell with background: true."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "The task id returned by run_shell, e.g. \"shell-1\"."
                    },
                    "tail_lines": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Only return the last N lines of output. Default: all output kept so far."
                    }
                },
                "required": ["task_id"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("shell")
    }

    fn permission_subject(&self, _args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: OutputArgs = args::parse("shell_task_output", args)?;
        if args.tail_lines == Some(0) {
            return Err(ToolError::InvalidArguments(
                "shell_task_output: tail_lines must be at least 1".into(),
            ));
        }
        let snap = self.tasks.snapshot(&args.task_id)?;
        let output = match args.tail_lines {
            Some(n) => tail_lines(&snap.output, usize::try_from(n).unwrap_or(usize::MAX)),
            None => &snap.output,
        };
        let mut text = header(args.task_id.trim(), &snap);
        text.push('\n');
        if output.is_empty() {
            text.push_str("(no output yet)\n");
        } else {
            text.push_str(output);
        }
        Ok(ToolOutput::text(text))
    }
}

#[async_trait]
impl Tool for ShellTaskKill {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Command
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "shell_task_kill".into(),
            description: "Stop a background task started by run_shell with background: true, \
                together with every process it started. Returns its final status and the last \
                lines of its output."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "The task id returned by run_shell, e.g. \"shell-1\"."
                    }
                },
                "required": ["task_id"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        // Stopping a task this session started is a side effect, but not a risky one.
        ToolMeta {
            requires_approval: false,
            ..ToolMeta::mutating("shell", RiskLevel::Low, &["exec"])
        }
    }

    fn permission_subject(&self, _args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: KillArgs = args::parse("shell_task_kill", args)?;
        let id = args.task_id.trim();
        let before = self.tasks.snapshot(id)?;
        let was_running = before.state == super::tasks::TaskState::Running;
        self.tasks.kill(id).await?;
        let snap = self.tasks.snapshot(id)?;
        let mut text = if was_running {
            String::new()
        } else {
            format!("Task {id} had already ended.\n")
        };
        text.push_str(&header(id, &snap));
        text.push('\n');
        text.push_str(tail_lines(&snap.output, KILL_TAIL_LINES));
        Ok(ToolOutput::text(text))
    }
}
