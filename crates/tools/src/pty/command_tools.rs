//! `exec_command` and `input_command`: long-running commands on a terminal that the model can
//! answer (a `y/n` prompt, a REPL) and read incrementally.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::sessions::{Collected, CommandSessions, Session};
use crate::paths::{self, Access};
use crate::shell::output::clip_middle;
use crate::{args, describe};

/// How long a call waits for output when it gives no `yield_ms`.
pub const DEFAULT_YIELD_MS: u64 = 10_000;
/// Largest `yield_ms` accepted.
pub const MAX_YIELD_MS: u64 = 300_000;
/// Output characters returned by one call (head and tail kept).
const RESULT_CHARS: (usize, usize) = (8 * 1024, 24 * 1024);
/// SIGTERM → SIGKILL grace when a session is killed.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// Starts a command on a terminal and returns its first output (and a session id while it runs).
#[derive(Debug, Clone)]
pub struct ExecCommand {
    sessions: Arc<CommandSessions>,
}

impl ExecCommand {
    /// An exec_command tool whose sessions live in `sessions`.
    pub fn new(sessions: Arc<CommandSessions>) -> Self {
        ExecCommand { sessions }
    }
}

/// Writes to a command session and returns its new output.
#[derive(Debug, Clone)]
pub struct InputCommand {
    sessions: Arc<CommandSessions>,
}

impl InputCommand {
    /// An input_command tool acting on `sessions`.
    pub fn new(sessions: Arc<CommandSessions>) -> Self {
        InputCommand { sessions }
    }
}

#[derive(Debug, Deserialize)]
struct ExecArgs {
    command: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    yield_ms: Option<u64>,
    /// `false`: run outside the OS sandbox (always asks the user).
    #[serde(default, deserialize_with = "args::opt_bool")]
    sandbox: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct InputArgs {
    session_id: String,
    #[serde(default)]
    input: Option<String>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    yield_ms: Option<u64>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    kill: Option<bool>,
}

fn yield_for(ms: Option<u64>, tool: &str) -> Result<Duration, ToolError> {
    match ms {
        Some(0) => Err(ToolError::InvalidArguments(format!(
            "{tool}: yield_ms must be at least 1"
        ))),
        ms => Ok(Duration::from_millis(
            ms.unwrap_or(DEFAULT_YIELD_MS).min(MAX_YIELD_MS),
        )),
    }
}

#[async_trait]
impl Tool for ExecCommand {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Command
    }

    fn schema(&self) -> ToolSchema {
        let mut params = json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command line, run by the shell on a terminal."
                },
                "cwd": {
                    "type": "string",
                    "description": "Working directory, relative to the workspace root. Default: the root."
                },
                "yield_ms": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_YIELD_MS,
                    "description": "Wait at most this long for output before returning. Default 10000."
                },
                "sandbox": {
                    "type": "boolean",
                    "description": crate::shell::sandbox_hint::SANDBOX_ARG
                }
            },
            "required": ["command"]
        });
        describe::add_property(&mut params);
        ToolSchema {
            name: "exec_command".into(),
            description: "Start a command on a terminal (a PTY, so prompts and REPLs work) and \
                return its output so far. The call returns when the command exits, when its \
                output has been quiet for a second (it is probably waiting for input), or after \
                yield_ms. While it runs you get a session id: answer prompts, drive a REPL or \
                just read more output with input_command. Prefer run_shell for ordinary \
                commands that finish by themselves."
                .into(),
            parameters: params,
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
        let args: ExecArgs = args::parse("exec_command", args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "exec_command: command must not be empty".into(),
            ));
        }
        let wait = yield_for(args.yield_ms, "exec_command")?;
        let cwd = match args.cwd.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(c) => paths::resolve_for(&ctx, c, Access::Read)?.abs,
            None => ctx.workspace.clone(),
        };
        let sandboxed = args.sandbox != Some(false) && ctx.host.sandboxed();
        let (id, session) = self
            .sessions
            .start(&args.command, &cwd, &ctx.host, sandboxed)?;
        finish(&self.sessions, &id, &session, &ctx, wait).await
    }
}

#[async_trait]
impl Tool for InputCommand {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Command
    }

    fn schema(&self) -> ToolSchema {
        let mut params = json!({
            "type": "object",
            "properties": {
                "session_id": {
                    "type": "string",
                    "description": "The session id from exec_command, e.g. \"cmd-1\"."
                },
                "input": {
                    "type": "string",
                    "description": "Text typed into the terminal. End it with \\n to press Enter; control characters work (\\u0003 is Ctrl-C, \\u0004 is Ctrl-D). Omit or leave empty to just wait for more output."
                },
                "yield_ms": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_YIELD_MS,
                    "description": "Wait at most this long for output before returning. Default 10000."
                },
                "kill": {
                    "type": "boolean",
                    "description": "Stop the session's program and everything it started. Default false."
                }
            },
            "required": ["session_id"]
        });
        describe::add_property(&mut params);
        ToolSchema {
            name: "input_command".into(),
            description: "Send input to a command session started by exec_command (answer a \
                prompt, type into a REPL) or just wait for more of its output; returns the \
                output produced since the previous call, and whether the program is still \
                running. kill: true stops it."
                .into(),
            parameters: params,
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::mutating("shell", RiskLevel::High, &["exec"])
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::types_input(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: InputArgs = args::parse("input_command", args)?;
        let wait = yield_for(args.yield_ms, "input_command")?;
        let id = args.session_id.trim().to_string();
        let session = self.sessions.get(&id)?;
        if args.kill.unwrap_or(false) {
            session.proc.terminate(KILL_GRACE).await;
            let collected = session
                .collect(&ctx, Duration::from_millis(1), &ctx.cancel)
                .await;
            self.sessions.remove(&id);
            let mut text = collected.map(|c| render_output(&c)).unwrap_or_default();
            text.push_str(&format!("[session {id} killed; {}]", status_line(&session)));
            return Ok(ToolOutput::text(text));
        }
        if let Some(input) = args.input.filter(|i| !i.is_empty()) {
            // Typing into a terminal outside the sandbox is a new command the user has not
            // seen: auto mode does not ask for input_command, so it is refused there.
            if session.unsandboxed && ctx.host.mode() == Some(cairn_protocol::Mode::Auto) {
                return Err(ToolError::Failed(format!(
                    "session {id} runs outside the sandbox (started with sandbox: false); in \
                     auto mode it takes no input, since nobody approves what is typed. Run \
                     each command with run_shell and \"sandbox\": false instead (asked every \
                     time), or kill the session."
                )));
            }
            if session.proc.state().exit.is_some() {
                let collected = session
                    .collect(&ctx, Duration::from_millis(1), &ctx.cancel)
                    .await;
                self.sessions.remove(&id);
                let mut text = collected.map(|c| render_output(&c)).unwrap_or_default();
                text.push_str(&format!(
                    "[the input was not sent: session {id} had already ended; {}]",
                    status_line(&session)
                ));
                return Ok(ToolOutput::text(text));
            }
            session
                .proc
                .write(input.into_bytes())
                .await
                .map_err(|e| ToolError::Failed(format!("input_command: {e}")))?;
        }
        finish(&self.sessions, &id, &session, &ctx, wait).await
    }
}

/// Collects output for one call and renders the result; forgets ended sessions and kills the
/// session when the call is interrupted.
async fn finish(
    sessions: &CommandSessions,
    id: &str,
    session: &Session,
    ctx: &ToolContext,
    wait: Duration,
) -> Result<ToolOutput, ToolError> {
    let Some(collected) = session.collect(ctx, wait, &ctx.cancel).await else {
        session.proc.terminate(KILL_GRACE).await;
        sessions.remove(id);
        return Err(ToolError::Interrupted);
    };
    let mut text = render_output(&collected);
    // What the sandbox's network proxy refused the session's program since the last call.
    for r in session.net.take_network_refusals() {
        text.push_str(&format!("[sandbox network: refused {r}]\n"));
    }
    if collected.state.exit.is_some() {
        sessions.remove(id);
        text.push_str(&format!("[{}]", status_line(session)));
    } else {
        text.push_str(&format!(
            "[session {id} is still running ({}; {}). Send input with input_command \
             {{\"session_id\": \"{id}\", \"input\": \"...\\n\"}}, call it without input to \
             wait for more output, or with \"kill\": true to stop it.]",
            match session.proc.pid() {
                Some(pid) => format!("pid {pid}"),
                None => "pid unknown".into(),
            },
            quiet_note(&collected)
        ));
    }
    Ok(ToolOutput::text(text))
}

fn quiet_note(c: &Collected) -> String {
    if c.text.trim().is_empty() {
        "no new output".into()
    } else {
        format!(
            "output quiet for {:.1} s, so it may be waiting for input",
            c.quiet.as_secs_f64()
        )
    }
}

fn render_output(c: &Collected) -> String {
    let mut text = String::new();
    if c.dropped > 0 {
        text.push_str(&format!(
            "[{} bytes of earlier output were discarded]\n",
            c.dropped
        ));
    }
    let body = clip_middle(&c.text, RESULT_CHARS.0, RESULT_CHARS.1);
    text.push_str(&body);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn status_line(session: &Session) -> String {
    let elapsed = session.started.elapsed().as_secs_f64();
    match session.proc.state().exit {
        Some(exit) => format!(
            "{} after {elapsed:.1} s",
            exit.footer().trim_matches(['[', ']'])
        ),
        None => format!("still running after {elapsed:.1} s"),
    }
}
