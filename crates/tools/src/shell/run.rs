//! `run_shell`: run a command in the workspace (foreground, or as a background task).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::output::{clip_middle, Keep, OutputBuf};
use super::partial::PartialOutput;
use super::process::ShellProcess;
use super::tasks::ShellTasks;
use crate::args;

/// Timeout when the call gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout accepted (larger values are clamped).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Hard safety cap on captured output; the engine budgets what the model sees.
pub const MAX_OUTPUT_BYTES: usize = 20 * 1024 * 1024;
/// SIGTERM → SIGKILL grace on timeout.
const TIMEOUT_GRACE: Duration = Duration::from_secs(2);
/// SIGTERM → SIGKILL grace on interruption (the user is waiting).
pub(crate) const CANCEL_GRACE: Duration = Duration::from_millis(500);
/// Output kept in a timeout error message (head, tail).
const ERROR_OUTPUT: (usize, usize) = (8 * 1024, 24 * 1024);

/// Runs shell commands in the workspace.
#[derive(Debug, Clone)]
pub struct RunShell {
    tasks: Arc<ShellTasks>,
}

impl RunShell {
    /// A run_shell tool whose background tasks live in `tasks`.
    pub fn new(tasks: Arc<ShellTasks>) -> Self {
        RunShell { tasks }
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    command: String,
    #[serde(default, deserialize_with = "args::opt_u64")]
    timeout_ms: Option<u64>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    background: Option<bool>,
    /// `false`: run outside the OS sandbox (always asks the user).
    #[serde(default, deserialize_with = "args::opt_bool")]
    sandbox: Option<bool>,
}

#[async_trait]
impl Tool for RunShell {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Command
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "run_shell".into(),
            description: format!(
                "Run a shell command ({}) in the workspace root and return its combined \
                stdout and stderr, followed by a final `[exit code: N]` line. stdin is empty, \
                so interactive prompts fail: pass flags such as --yes, and avoid editors and \
                pagers. The command is killed (with everything it started) after timeout_ms. \
                Processes it leaves running when it finishes are stopped too: for servers, \
                watchers and other long-running commands set background to true, which returns \
                a task id at once; then read its output with shell_task_output and stop it \
                with shell_task_kill. Commands run inside an OS sandbox when one is \
                active: only the workspace and a private /tmp are writable, .git is read-only \
                and credentials are hidden. When a command fails because of the sandbox, you \
                may retry it with sandbox set to false: the user is asked every time.",
                super::process::shell_program()
            ),
            parameters: crate::describe::with_property(json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The command line, run with `-c` by the shell in the workspace root."
                    },
                    "timeout_ms": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_TIMEOUT_MS,
                        "description": "Kill the command after this many milliseconds. Default 120000 (2 minutes), maximum 600000 (10 minutes). Ignored for background tasks."
                    },
                    "background": {
                        "type": "boolean",
                        "description": "Start the command as a background task and return its task id immediately instead of waiting. Default false."
                    },
                    "sandbox": {
                        "type": "boolean",
                        "description": super::sandbox_hint::SANDBOX_ARG
                    }
                },
                "required": ["command"]
            })),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::mutating("shell", RiskLevel::High, &["exec"])
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::runs_command(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("run_shell", args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "run_shell: command must not be empty".into(),
            ));
        }
        if args.timeout_ms == Some(0) {
            return Err(ToolError::InvalidArguments(
                "run_shell: timeout_ms must be at least 1".into(),
            ));
        }
        if args.background.unwrap_or(false) {
            let task = self.tasks.start(
                &args.command,
                &ctx.workspace,
                &ctx.host,
                args.sandbox != Some(false),
            )?;
            return Ok(ToolOutput::text(format!(
                "Started background task {id} (pid {pid}). Use shell_task_output with \
                 task_id \"{id}\" to see its output and status, and shell_task_kill to stop it.",
                id = task.id,
                pid = task.pid
            )));
        }
        let timeout_ms = args
            .timeout_ms
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .min(MAX_TIMEOUT_MS);
        run_foreground(&args.command, &ctx, timeout_ms, args.sandbox != Some(false)).await
    }
}

enum Stop {
    Timeout,
    Cancel,
}

async fn run_foreground(
    command: &str,
    ctx: &ToolContext,
    timeout_ms: u64,
    sandboxed: bool,
) -> Result<ToolOutput, ToolError> {
    let sandboxed = sandboxed && ctx.host.sandboxed();
    let mut proc = ShellProcess::spawn(command, &ctx.workspace, &ctx.host, sandboxed)?;
    let mut out = OutputBuf::new(MAX_OUTPUT_BYTES, Keep::Head);
    let mut partial = PartialOutput::new(&ctx.host);
    let mut sink = |b: &[u8]| {
        out.push(b);
        partial.push(b);
    };
    let stop = async {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => Stop::Timeout,
            _ = ctx.cancel.cancelled() => Stop::Cancel,
        }
    };
    match proc.run_until(&mut sink, false, stop).await {
        Some(Stop::Cancel) => {
            proc.terminate(CANCEL_GRACE, &mut sink).await;
            partial.finish().await;
            return Err(ToolError::Interrupted);
        }
        Some(Stop::Timeout) => {
            proc.terminate(TIMEOUT_GRACE, &mut sink).await;
            drop(proc);
            partial.finish().await;
            return Err(timeout_error(timeout_ms, &out.to_text()));
        }
        None => {}
    }
    let mut note = None;
    if !proc.drain(&mut sink).await {
        note = Some(
            "[note: processes the command left running in the background were stopped; \
             use background: true for long-running commands]",
        );
        proc.terminate(CANCEL_GRACE, &mut sink).await;
    }
    let proc_exit = proc.exit().cloned();
    let footer = proc_exit
        .as_ref()
        .map(|e| e.footer())
        .unwrap_or_else(|| "[exit status unknown]".into());
    drop(proc);
    partial.finish().await;
    let mut text = out.to_text();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if let Some(note) = note {
        text.push_str(note);
        text.push('\n');
    }
    // What the sandbox's network proxy refused, in the command's own output (a tool that
    // got a 403 from the proxy may not print its body).
    for r in ctx.host.take_network_refusals() {
        text.push_str(&format!("[sandbox network: refused {r}]\n"));
    }
    let failed = !matches!(proc_exit, Some(super::process::Exit::Code(0)));
    if sandboxed && failed {
        let code = match proc_exit {
            Some(super::process::Exit::Code(c)) => Some(c),
            _ => None,
        };
        if let Some(hint) = super::sandbox_hint::hint(&text, code) {
            text.push_str(&hint);
            text.push('\n');
        }
    }
    text.push_str(&footer);
    Ok(ToolOutput::text(text))
}

/// The error for a command that ran out of time, carrying its partial output (what the model
/// needs to understand a hang).
fn timeout_error(timeout_ms: u64, partial: &str) -> ToolError {
    let partial = clip_middle(partial, ERROR_OUTPUT.0, ERROR_OUTPUT.1);
    let shown = if partial.trim().is_empty() {
        "(no output)".to_string()
    } else {
        partial
    };
    ToolError::Timeout {
        ms: timeout_ms,
        detail: format!(
            "; the command and every process it started were killed. Output before the timeout:\n{shown}"
        ),
    }
}
