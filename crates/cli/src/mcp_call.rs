//! `cairn mcp call NAME TOOL [ARGS]`: starts one server and calls one of its tools, as the
//! engine would. A call an HTTP server refuses for a missing scope (403
//! `insufficient_scope`) is remembered with the login; with `--browser` the command logs in
//! again for the union of the granted and the wanted scopes (a step-up) and calls once more.

use std::process::ExitCode;
use std::time::Duration;

use cairn_engine::{ToolContext, ToolError, ToolOutput};
use cairn_mcp::auth::flow::ClientChoice;
use cairn_mcp::McpManager;
use clap::Args;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::mcp::{one_server, WorkspaceArg};
use crate::mcp_login::{log_in, server_url, step_up_due, BrowserKind};

/// Options of `cairn mcp call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// Server name.
    name: String,
    /// The tool's name as the server lists it (without the `mcp__<server>__` prefix).
    tool: String,
    /// Arguments: a JSON object [default: {}].
    arguments: Option<String>,
    #[command(flatten)]
    ws: WorkspaceArg,
    /// One JSON object: `{"ok", "content"}` or `{"ok": false, "error"}`.
    #[arg(long)]
    json: bool,
    /// When the server wants more scopes, log in again for them, opening the authorization
    /// URL this way (without it the command says so and stops).
    #[arg(long, value_enum, value_name = "KIND")]
    browser: Option<BrowserKind>,
    /// How a server's request for information during the call is answered: `ask` on the
    /// terminal (the default when there is one), `accept-defaults` (every form with its
    /// defaults), `decline` (the default without a terminal).
    #[arg(long, value_enum, value_name = "HOW")]
    elicit: Option<ElicitHow>,
    /// Seconds to wait for that login's redirect.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    timeout: u64,
}

/// How `cairn mcp call` answers elicitations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ElicitHow {
    /// On the terminal.
    Ask,
    /// Every form with its defaults; pages declined.
    AcceptDefaults,
    /// Declined.
    Decline,
}

fn approver(how: Option<ElicitHow>) -> std::sync::Arc<dyn cairn_engine::Approver> {
    use std::io::IsTerminal;
    let how = how.unwrap_or(if std::io::stdin().is_terminal() {
        ElicitHow::Ask
    } else {
        ElicitHow::Decline
    });
    match how {
        ElicitHow::Ask => std::sync::Arc::new(crate::approve::TerminalApprover::new()),
        ElicitHow::AcceptDefaults => std::sync::Arc::new(crate::elicit_prompt::AcceptDefaults),
        ElicitHow::Decline => std::sync::Arc::new(cairn_engine::FixedApprover(
            cairn_protocol::ApprovalDecision::Deny,
        )),
    }
}

/// Runs `cairn mcp call`.
pub async fn call(a: CallArgs) -> Result<ExitCode, String> {
    let arguments = match a.arguments.as_deref().map(serde_json::from_str::<Value>) {
        None => Map::new(),
        Some(Ok(Value::Object(m))) => m,
        Some(Ok(_)) => return Err("the arguments must be a JSON object".into()),
        Some(Err(e)) => return Err(format!("the arguments are not JSON: {e}")),
    };
    let (workspace, manager) = one_server(&a.name, &a.ws)?;
    if let Err(e) = manager.connect_server(&a.name).await {
        manager.close_all().await;
        return Ok(report(&a, Err(format!("`{}` did not start: {e}", a.name))));
    }
    let mut ctx = ToolContext::new(
        workspace.clone(),
        workspace.clone(),
        "cli-call",
        CancellationToken::new(),
    );
    ctx.host = cairn_engine::ToolHost::for_approver(
        approver(a.elicit),
        workspace,
        None,
        "cli-call",
        &a.tool,
    );
    let mut result = call_once(&manager, &a, &arguments, &ctx).await;
    if result.is_err() {
        if let Some(browser) = a.browser {
            if let Some(url) = step_up_url(&a) {
                errln!(
                    "`{}` wants more permissions for `{}`: logging in again for them",
                    a.name,
                    a.tool
                );
                let within = Duration::from_secs(a.timeout);
                if log_in(&a.name, &url, &ClientChoice::default(), browser, within).await? {
                    result = match manager.refresh(&a.name).await {
                        Ok(()) => call_once(&manager, &a, &arguments, &ctx).await,
                        Err(e) => Err(ToolError::Failed(format!(
                            "logged in, but `{}` did not start again: {e}",
                            a.name
                        ))),
                    };
                }
            }
        }
    }
    manager.close_all().await;
    Ok(report(&a, result.map_err(|e| e.to_string())))
}

/// The server's URL when a step-up is due for it (a call was refused for a missing scope).
fn step_up_url(a: &CallArgs) -> Option<String> {
    let url = server_url(&a.name, &a.ws).ok()?;
    step_up_due(&url).ok()?.then_some(url)
}

async fn call_once(
    manager: &McpManager,
    a: &CallArgs,
    arguments: &Map<String, Value>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    manager.call(&a.name, &a.tool, arguments.clone(), ctx).await
}

fn report(a: &CallArgs, result: Result<ToolOutput, String>) -> ExitCode {
    let ok = result.is_ok();
    match (a.json, result) {
        (true, Ok(out)) => outln!("{}", json!({"ok": true, "content": out.content})),
        (true, Err(e)) => outln!("{}", json!({"ok": false, "error": e})),
        (false, Ok(out)) => outln!("{}", out.content),
        (false, Err(e)) => errln!("error: {e}"),
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
