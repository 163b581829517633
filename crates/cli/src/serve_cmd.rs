//! `cairn serve`: flags → [`cairn_serve::ServeConfig`]; the server is `cairn-serve`'s (see
//! serve.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::run::SandboxArg;

/// `--approve` of `cairn serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServeApprove {
    /// Requests wait for a client (or the approval timeout).
    Ask,
    /// Only allow rules and allowCommands pass (an unattended worker).
    Deny,
    /// Allow everything (only on a unix: socket).
    Allow,
}

/// Options of `cairn serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// unix:PATH, 127.0.0.1:PORT, [::1]:PORT or localhost:PORT [default:
    /// unix:$XDG_RUNTIME_DIR/cairn/serve.sock, else unix:/tmp/cairn-$UID/serve.sock].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// The bearer token's file (created when absent) [default: serve.token beside the
    /// default socket].
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Multi-tenant mode: the tenants file.
    #[arg(long, value_name = "FILE")]
    pub tenants: Option<PathBuf>,
    /// Where sessions, logs, tool results and snapshots live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Seconds an approval or question waits before it is denied / declined (1–86400).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub approval_timeout: u64,
    /// OS sandbox for commands: off, auto, required.
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxArg>,
    /// Who answers approvals: ask (a client), deny, allow (unix socket only).
    #[arg(long, value_enum, value_name = "POLICY", default_value = "ask")]
    pub approve: ServeApprove,
    /// An exact scheme://host[:port] browser pages may call from (repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Default model of sessions that name none [default: $CAIRN_MODEL, then $OPENAI_MODEL].
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// Default provider.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Default endpoint base URL.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Sessions open at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_sessions: usize,
    /// Turns running at once across the server [default: the machine's turn slots].
    #[arg(long, value_name = "N")]
    pub max_turns: Option<usize>,
}

/// Runs the server until SIGTERM / SIGINT.
pub async fn run(args: ServeArgs) -> ExitCode {
    if args.tenants.is_some() {
        // Tenants read no user config: not the operator's settings file either.
        cairn_runtime::user_config::ignore_user_files();
    }
    let cfg = cairn_serve::ServeConfig {
        listen: args.listen,
        token_file: args.token_file,
        tenants: args.tenants,
        state_dir: args.state_dir,
        approval_timeout: Duration::from_secs(args.approval_timeout),
        sandbox: args.sandbox.map(Into::into),
        approve: match args.approve {
            ServeApprove::Ask => cairn_serve::ApprovePolicy::Ask,
            ServeApprove::Deny => cairn_serve::ApprovePolicy::Deny,
            ServeApprove::Allow => cairn_serve::ApprovePolicy::Allow,
        },
        allow_origins: args.allow_origin,
        model: args.model,
        provider: args.provider,
        base_url: args.base_url,
        max_sessions: args.max_sessions,
        max_turns: args.max_turns,
        ..cairn_serve::ServeConfig::default()
    };
    match cairn_serve::run(cfg).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
