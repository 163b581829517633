//! `cairn`: the Cairn engine on the command line (see docs/cli.md for the contract).

#[macro_use]
mod out;
mod acp_cmd;
mod agents;
mod approve;
mod auth;
mod checkpoints;
mod commands_list;
mod config_cmd;
mod doctor_cmd;
mod elicit_prompt;
mod gen_cmd;
mod hooks;
mod mcp;
mod mcp_call;
mod mcp_login;
mod permissions;
mod render;
mod run;
mod sandbox_cmd;
mod sandbox_flags;
mod serve_cmd;
mod setting_flags;
mod skills;
mod slash;
mod steer;
mod vault_cmd;
mod worktrees;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Exit status: usage or configuration error.
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Cairn: a coding agent you can trust with your code"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one turn (prompt → LLM/tool iterations → turn_end) in a session.
    Run(Box<run::RunArgs>),
    /// List the session's change-turns (turns that changed files), numbered from 1.
    Turns(checkpoints::TurnsArgs),
    /// Print a change-turn as a unified diff.
    Diff(checkpoints::DiffArgs),
    /// Put the workspace back to its state after a change-turn (undoable).
    Restore(checkpoints::RestoreArgs),
    /// The workspace's checkpoint store: `usage`, `gc`.
    Checkpoints {
        #[command(subcommand)]
        command: checkpoints::CheckpointsCmd,
    },
    /// Store, remove or list API keys in the OS keyring (shared with the desktop app).
    Auth {
        #[command(subcommand)]
        command: auth::AuthCommand,
    },
    /// Persistent permission rules and session allowlists.
    Permissions {
        #[command(subcommand)]
        command: permissions::PermissionsCommand,
    },
    /// Agent roles for `run --agent` and subagents: `list`, `add`, `remove`.
    Agents {
        #[command(subcommand)]
        command: agents::AgentsCommand,
    },
    /// Hooks (Claude Code's schema): `list`, `trust`.
    Hooks {
        #[command(subcommand)]
        command: hooks::HooksCommand,
    },
    /// Slash commands for `cairn run "/name …"`: `list`.
    Commands {
        #[command(subcommand)]
        command: commands_list::CommandsCommand,
    },
    /// The OS sandbox: `status` (each layer active or not, and why not).
    Sandbox {
        #[command(subcommand)]
        command: sandbox_cmd::SandboxCommand,
    },
    /// Your settings (one file in the config folder; secrets in the OS keyring): `list`,
    /// `get KEY`, `set KEY VALUE`, `unset KEY`, `path`; each value with where it came from.
    Config {
        #[command(subcommand)]
        command: config_cmd::ConfigCommand,
    },
    /// The vault: variables for the agent's commands, per role (`list`, `set NAME --role R`,
    /// `remove NAME`); values in the OS keyring, never printed.
    Vault {
        #[command(subcommand)]
        command: vault_cmd::VaultCommand,
    },
    /// Agent Skills (SKILL.md folders): `list`.
    Skills {
        #[command(subcommand)]
        command: skills::SkillsCommand,
    },
    /// MCP servers: `list`, `add`, `remove`, `test NAME`.
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    /// Worktrees Cairn created for parallel sessions: `list`, `diff`, `apply`, `remove`,
    /// `restore`.
    Worktrees(worktrees::WorktreesArgs),
    /// Serve sessions over HTTP + SSE on a unix socket or a loopback port (see serve.md).
    Serve(serve_cmd::ServeArgs),
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim,
    /// Emacs).
    Acp(Box<acp_cmd::AcpArgs>),
    /// Check this machine for Cairn: sandbox, keyring, desktop, providers, MCP servers,
    /// project trust, state folder, versions; each line OK, warning or problem with what to do
    /// (exit 1 when any is a problem).
    Doctor(doctor_cmd::DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish) generated from this CLI.
    #[command(hide = true)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: gen_cmd::Shell,
    },
    /// Write man pages generated from this CLI into DIR.
    #[command(hide = true)]
    Man {
        /// The folder to write `cairn.1` and `cairn-*.1` into.
        dir: PathBuf,
    },
    /// List sessions, newest first.
    Sessions {
        /// Where sessions live (default: the app's data dir).
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// Only sessions whose name, workspace or conversation contains every word of TEXT
        /// (case-insensitive).
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        /// Only sessions of this workspace folder.
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // `cairn __net-bridge …` inside a sandbox runs the network bridge and exits; otherwise
    // this executable is the bridge of the sandboxes this process starts.
    cairn_engine::netproxy::bridge::main_if_bridge();
    // Before any thread starts: API keys leave the environment block (commands and
    // `/proc/<pid>/environ` never see them); the process becomes non-dumpable.
    let sealed = cairn_engine::secret_env::seal_process();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(EXIT_USAGE),
            };
        }
    };
    init_tracing();
    for problem in &sealed.problems {
        tracing::warn!("protecting secrets: {problem}");
    }
    tracing::debug!(sealed = ?sealed.sealed, "secret variables sealed");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            errln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match cli.command {
        Command::Run(args) => runtime.block_on(run::run(*args)),
        Command::Serve(args) => runtime.block_on(serve_cmd::run(args)),
        Command::Acp(args) => runtime.block_on(acp_cmd::run(*args)),
        Command::Turns(args) => checkpoints::turns(args),
        Command::Diff(args) => checkpoints::diff(args),
        Command::Restore(args) => checkpoints::restore(args),
        Command::Checkpoints { command } => checkpoints::store_cmd(command),
        Command::Auth { command } => auth::run(command),
        Command::Sessions {
            state_dir,
            json,
            search,
            workspace,
        } => sessions(state_dir, json, search, workspace),
        Command::Mcp { command } => runtime.block_on(mcp::run(command)),
        Command::Permissions { command } => permissions::run(command),
        Command::Agents { command } => agents::run(command),
        Command::Worktrees(args) => worktrees::run(args),
        Command::Hooks { command } => hooks::run(command),
        Command::Skills { command } => skills::run(command),
        Command::Config { command } => config_cmd::run(command),
        Command::Vault { command } => vault_cmd::run(command),
        Command::Sandbox { command } => sandbox_cmd::run(command),
        Command::Commands { command } => commands_list::run(command),
        Command::Doctor(args) => runtime.block_on(doctor_cmd::run(args)),
        Command::Completions { shell } => gen_cmd::completions(Cli::command(), shell),
        Command::Man { dir } => gen_cmd::man(Cli::command(), &dir),
    };
    // A tool the turn stopped waiting for (interrupted while it ran blocking work) cannot
    // keep the process alive: dropping the runtime would wait for it without a limit. Such a
    // tool can no longer write (the engine closed its write log).
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    code
}

/// How long the exiting process waits for abandoned background work.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

fn sessions(
    state_dir: Option<PathBuf>,
    json: bool,
    search: Option<String>,
    workspace: Option<PathBuf>,
) -> ExitCode {
    let dir = state_dir.unwrap_or_else(cairn_runtime::default_state_dir);
    let store = cairn_runtime::SessionStore::new(&dir);
    // Sessions record the canonical workspace path; match what the user typed against it.
    let workspace = workspace.map(|w| w.canonicalize().unwrap_or(w).display().to_string());
    let query = cairn_runtime::SessionQuery { search, workspace };
    match store.search(&query) {
        Ok(list) => {
            if list.is_empty() && !json {
                errln!("no sessions in {}", dir.display());
            }
            for s in list {
                if json {
                    match serde_json::to_string(&s) {
                        Ok(line) => outln!("{line}"),
                        Err(e) => errln!("error: {e}"),
                    }
                } else {
                    let name = if s.name.is_empty() {
                        "(unnamed)"
                    } else {
                        &s.name
                    };
                    outln!(
                        "{}  {}  {} turn(s)  {}  {}",
                        s.id,
                        s.updated_at,
                        s.turns,
                        s.workspace,
                        name
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr, filtered by `CAIRN_LOG` (default: warnings); colour only on a terminal,
/// so a log captured to a file or CI output stays plain text.
fn init_tracing() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        // notify warns when a watched folder disappears (the agent deleted it): not the user's
        // concern.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,notify=error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
