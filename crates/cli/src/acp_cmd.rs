//! `cairn acp`: flags → [`cairn_acp::AcpConfig`]; the agent is `cairn-acp`'s, over stdin and
//! stdout. SIGINT interrupts running turns and never exits (terminal clients send it to the
//! whole process group together with `session/cancel`); the end of stdin or SIGTERM closes
//! every session, saved.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_protocol::Mode;
use clap::Args;
use tokio::signal::unix::{signal, SignalKind};

/// Options of `cairn acp` (the global flags of `cairn run`).
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Where sessions, logs and tool results live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Model id [default: $CAIRN_MODEL, then $OPENAI_MODEL].
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// LLM provider.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Endpoint base URL [default: $OPENAI_BASE_URL].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The mode of new sessions: discuss · plan · interactive · auto [default: interactive].
    #[arg(long, value_name = "MODE")]
    pub mode: Option<Mode>,
    /// Command-allowlist prefix (repeatable).
    #[arg(long = "allow-command", value_name = "PREFIX")]
    pub allow_command: Vec<String>,
    #[command(flatten)]
    pub sandbox: crate::sandbox_flags::SandboxFlags,
    #[command(flatten)]
    pub settings: crate::setting_flags::SettingFlags,
    /// Iteration cap of a turn [default: $CAIRN_MAX_ITERATIONS, else the `max_iterations`
    /// setting, else 800].
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,
}

/// Serves ACP on stdio until stdin ends or SIGTERM.
pub async fn run(args: AcpArgs) -> ExitCode {
    if args.max_iterations == Some(0) {
        errln!("error: --max-iterations must be at least 1");
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let options = cairn_runtime::RunOptions {
        state_dir: args.state_dir,
        model: args.model,
        provider: args.provider,
        base_url: args.base_url,
        mode: args.mode,
        allowed_commands: args.allow_command,
        max_iterations: args.max_iterations,
        ..Default::default()
    };
    let mut options = options;
    args.sandbox.apply(&mut options);
    if let Err(e) = args.settings.apply(&mut options) {
        errln!("error: {e}");
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let agent = cairn_acp::AcpAgent::new(cairn_acp::AcpConfig { options, llm: None });
    let (mut sigint, mut sigterm) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        _ => {
            errln!("error: cannot install signal handlers");
            return ExitCode::FAILURE;
        }
    };
    let serve = agent.serve(tokio::io::stdin(), tokio::io::stdout());
    tokio::pin!(serve);
    loop {
        tokio::select! {
            served = &mut serve => {
                return match served {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        errln!("error: {e}");
                        ExitCode::FAILURE
                    }
                };
            }
            _ = sigint.recv() => {
                tracing::info!("SIGINT: running turns interrupted");
                agent.interrupt_all();
            }
            // Clients close stdin, then send SIGTERM about 100 ms later: serving ends as at
            // the end of input, and `serve` returns once every session is closed and saved.
            _ = sigterm.recv() => agent.stop(),
        }
    }
}
