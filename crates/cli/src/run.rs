//! `cairn run`: one turn in a new or restored session.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use cairn_engine::{Approver, FixedApprover};
use cairn_protocol::{ApprovalDecision, Event, Mode, TurnStatus};
use cairn_runtime::host::CommandError;
use cairn_runtime::host::{
    Answerer, Host, OpenSession, Prompt, SessionHandle, Submission, SubmitError, Turn,
};
use cairn_runtime::RunOptions;
use clap::{Args, ValueEnum};
use tokio::signal::unix::{signal, SignalKind};

use crate::render::Renderer;
use crate::EXIT_USAGE;

/// Who answers approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovePolicy {
    /// Prompt on the terminal.
    Ask,
    /// Allow everything the permission engine would ask about.
    Allow,
    /// Deny everything the permission engine would ask about.
    Deny,
}

/// `--sandbox`: whether shell commands run inside the OS sandbox (bubblewrap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    /// Never sandbox.
    Off,
    /// Sandbox every command whenever bubblewrap works here (the default).
    Auto,
    /// Always sandbox; refuse to start when no working sandbox is available.
    Required,
}

/// `--sandbox-network`: the network of sandboxed commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxNetworkArg {
    /// Only through Cairn's proxy, which asks about hosts no rule allows (the default).
    Proxy,
    /// No network: a namespace of their own with only loopback.
    None,
    /// The desktop's network, unconfined (said on every run).
    Open,
}

impl From<SandboxNetworkArg> for cairn_runtime::sandbox_net::SandboxNetwork {
    fn from(a: SandboxNetworkArg) -> Self {
        use cairn_runtime::sandbox_net::SandboxNetwork;
        match a {
            SandboxNetworkArg::Proxy => SandboxNetwork::Proxy,
            SandboxNetworkArg::None => SandboxNetwork::None,
            SandboxNetworkArg::Open => SandboxNetwork::Open,
        }
    }
}

impl From<SandboxArg> for cairn_policy::sandbox::SandboxMode {
    fn from(a: SandboxArg) -> Self {
        match a {
            SandboxArg::Off => Self::Off,
            SandboxArg::Auto => Self::Auto,
            SandboxArg::Required => Self::Required,
        }
    }
}

/// `--shell-policy`: when shell commands may run without asking (seed §8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellPolicyArg {
    /// Ask for everything not allowlisted.
    Approve,
    /// No prompt only while the OS sandbox is enforced.
    Sandbox,
    /// Sandbox enforced → no prompt; otherwise known-safe read-only commands pass.
    Workspace,
    /// Never ask for shell commands.
    All,
}

impl From<ShellPolicyArg> for cairn_engine::ShellPolicy {
    fn from(a: ShellPolicyArg) -> Self {
        match a {
            ShellPolicyArg::Approve => Self::Approve,
            ShellPolicyArg::Sandbox => Self::Sandbox,
            ShellPolicyArg::Workspace => Self::Workspace,
            ShellPolicyArg::All => Self::All,
        }
    }
}

/// Options of `cairn run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The user's input for this turn (optional with --resume).
    #[arg(required_unless_present = "resume")]
    pub prompt: Option<String>,
    /// The workspace: the permission boundary for files and commands [default: current dir].
    #[arg(short, long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Where sessions, logs and tool results live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Continue this session (history, mode and session allowlists are restored).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Name the session (else it names itself after its first turn).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Model id [default: $CAIRN_MODEL, then $OPENAI_MODEL].
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// LLM provider: `openai` (any OpenAI-compatible endpoint).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Endpoint base URL, e.g. http://127.0.0.1:11434/v1 [default: $OPENAI_BASE_URL].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// discuss · plan · interactive · auto [default: interactive, or the session's].
    #[arg(long, value_name = "MODE")]
    pub mode: Option<Mode>,
    /// Who answers approvals: ask, allow, deny [default: ask on a TTY, else deny].
    #[arg(long, value_enum, value_name = "POLICY")]
    pub approve: Option<ApprovePolicy>,
    /// Command-allowlist prefix (repeatable; word-boundary match, never with shell operators).
    #[arg(long = "allow-command", value_name = "PREFIX")]
    pub allow_command: Vec<String>,
    #[command(flatten)]
    pub sandbox: crate::sandbox_flags::SandboxFlags,
    #[command(flatten)]
    pub settings: crate::setting_flags::SettingFlags,
    /// Iteration cap for the turn [default: $CAIRN_MAX_ITERATIONS, else the `max_iterations`
    /// setting, else 800].
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,
    /// Override the detected context window (compaction thresholds follow it).
    #[arg(long, value_name = "TOKENS")]
    pub context_window: Option<u64>,
    /// The session's spending cap in dollars (where the model's price is known; a warning at
    /// 80 %, the turn stops at 100 % with `budget_exceeded`) [env: CAIRN_BUDGET_USD].
    #[arg(long, value_name = "USD", conflicts_with = "budget_tokens")]
    pub budget_usd: Option<f64>,
    /// The session's spending cap in tokens (input + output) [env: CAIRN_BUDGET_TOKENS].
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<u64>,
    /// Per-turn snapshots: `auto` (Cairn's own store, never the user's .git) or `off`.
    #[arg(long, value_enum, value_name = "MODE", default_value = "auto")]
    pub vcs: crate::checkpoints::VcsArg,
    /// Agent role: code, cowork or a user role (`cairn agents list`); switches the system
    /// prompt, and the model unless --model is given [default: $CAIRN_AGENT, else code].
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Print every event as one JSON object per line on stdout, nothing else.
    #[arg(long)]
    pub json: bool,
    /// Attach an image, audio or video file to the prompt (repeatable, at most 4, 10 MB in
    /// total); stored under the session's attachments/, image data sent with this turn only.
    #[arg(long, value_name = "FILE")]
    pub attach: Vec<PathBuf>,
    /// While the run goes, queue each line of PATH (a file, a FIFO, or `-` for stdin) as
    /// steering for the running turn: the words (with `@path` mentions), or
    /// `{"text": "...", "attach": ["shot.png"]}` to send images or media with them.
    #[arg(long, value_name = "PATH")]
    pub steer_from: Option<PathBuf>,
    /// Finish the tool calls that were open when the session stopped (an approval that was
    /// waiting is asked again) before the prompt, if any. Needs --session.
    #[arg(long, requires = "session")]
    pub resume: bool,
    /// Run in worktree NAME of the workspace's repository (a git worktree on branch
    /// cairn/NAME that Cairn creates on first use).
    #[arg(long, value_name = "NAME")]
    pub worktree: Option<String>,
    /// With a new --worktree: copy the folder's uncommitted changes into it.
    #[arg(long, requires = "worktree")]
    pub carry_changes: bool,
}

/// What a driven stream ended with.
enum Driven {
    /// The stream ended; the turn's status if a `turn_end` came.
    Ended(Option<TurnStatus>),
    /// A second Ctrl-C: exit now.
    Abort,
}

/// Runs a turn from `input` and renders its events to the end; Ctrl-C / SIGTERM interrupt
/// it.
async fn drive(
    session: &SessionHandle,
    turn: Turn,
    renderer: &mut Renderer,
    sigint: &mut tokio::signal::unix::Signal,
    sigterm: &mut tokio::signal::unix::Signal,
) -> Driven {
    // A turn waits for a machine-wide turn slot (the limit every Cairn process shares); Ctrl-C
    // or SIGTERM while it waits ends it without running.
    let queued = session.start_queued(turn, |w| errln!("{w}"));
    let started = tokio::select! {
        s = queued => s,
        _ = sigint.recv() => return Driven::Ended(Some(TurnStatus::Interrupted)),
        _ = sigterm.recv() => return Driven::Ended(Some(TurnStatus::Interrupted)),
    };
    let mut stream = match started {
        Ok(Some(s)) => s,
        Ok(None) => return Driven::Ended(Some(TurnStatus::Interrupted)),
        Err(e) => {
            errln!("error: {e}");
            return Driven::Ended(None);
        }
    };
    let mut status = None;
    let mut interrupts = 0;
    loop {
        tokio::select! {
            ev = stream.recv() => {
                let Some(ev) = ev else { break };
                if let Event::TurnEnd(t) = &ev {
                    status = Some(t.status);
                    // After its first completed turn an unnamed session names itself; the
                    // name comes before `turn_end`, which stays a turn's last line.
                    if t.status == TurnStatus::Completed {
                        // Ctrl-C skips the wait (the first message then names the session).
                        let named = tokio::select! {
                            n = session.name_automatically() => n,
                            _ = sigint.recv() => None,
                        };
                        if let Some(name) = named {
                            renderer.event(&Event::SessionNamed(cairn_protocol::SessionNamed {
                                name,
                                source: "auto".into(),
                            }));
                        }
                    }
                }
                renderer.event(&ev);
            }
            _ = sigint.recv() => {
                interrupts += 1;
                if interrupts > 1 {
                    errln!("\ninterrupted again: exiting now");
                    return Driven::Abort;
                }
                session.interrupt();
            }
            _ = sigterm.recv() => session.interrupt(),
        }
    }
    Driven::Ended(status)
}

/// Runs one turn and maps its end to the contract's exit status.
pub async fn run(args: RunArgs) -> ExitCode {
    let interactive_tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let policy = args.approve.unwrap_or(if interactive_tty {
        ApprovePolicy::Ask
    } else {
        ApprovePolicy::Deny
    });
    let approver: Arc<dyn Approver> = match policy {
        ApprovePolicy::Ask => Arc::new(crate::approve::TerminalApprover::new()),
        ApprovePolicy::Allow => Arc::new(FixedApprover(ApprovalDecision::Once)),
        ApprovePolicy::Deny => Arc::new(FixedApprover(ApprovalDecision::Deny)),
    };
    if args.max_iterations == Some(0) {
        errln!("error: --max-iterations must be at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    if args.context_window == Some(0) {
        errln!("error: --context-window must be a number of tokens above 0");
        return ExitCode::from(EXIT_USAGE);
    }
    let opts = RunOptions {
        workspace: args.workspace.clone(),
        state_dir: args.state_dir.clone(),
        session_id: args.session.clone(),
        model: args.model.clone(),
        provider: args.provider.clone(),
        base_url: args.base_url.clone(),
        mode: args.mode,
        allowed_commands: args.allow_command.clone(),
        max_iterations: args.max_iterations,
        context_window: args.context_window,
        spend_limit: match (args.budget_usd, args.budget_tokens) {
            (Some(d), _) => Some(cairn_engine::spend::SpendLimit::Usd(d)),
            (None, Some(n)) => Some(cairn_engine::spend::SpendLimit::Tokens(n)),
            _ => None,
        },
        vcs: args.vcs.into(),
        agent: args.agent.clone(),
        worktree: None,
        config: Default::default(),
        // The sandbox flags: `args.sandbox.apply` below.
        ..Default::default()
    };
    let mut opts = opts;
    args.sandbox.apply(&mut opts);
    if let Err(e) = args.settings.apply(&mut opts) {
        errln!("error: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(id) = &args.session {
        // A worktree session continues in its worktree, also when -w names its folder.
        match crate::worktrees::continued_workspace(&args, id) {
            Ok(Some(ws)) => opts.workspace = Some(ws),
            Ok(None) => {}
            Err(code) => return code,
        }
    }
    if let Some(name) = &args.worktree {
        match crate::worktrees::for_run(&args, name) {
            Ok(Some(prepared)) => {
                if prepared.worktree.created {
                    // The trusted setup step of a new worktree (install dependencies, …).
                    let folder = args
                        .workspace
                        .clone()
                        .map(Ok)
                        .unwrap_or_else(std::env::current_dir)
                        .and_then(|p| p.canonicalize())
                        .unwrap_or_else(|_| PathBuf::from("."));
                    for problem in cairn_runtime::worktrees::run_worktree_hooks(
                        "WorktreeCreate",
                        &folder,
                        &prepared.worktree,
                    )
                    .await
                    {
                        errln!("note: {problem}");
                    }
                }
                opts.workspace = Some(prepared.workspace);
                opts.worktree = Some(prepared.worktree);
            }
            Ok(None) => {}
            Err(code) => return code,
        }
    }
    if args.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
        errln!("error: the prompt is empty: say what the agent should do");
        return ExitCode::from(EXIT_USAGE);
    }
    if args.steer_from.as_deref() == Some(std::path::Path::new("-"))
        && std::io::stdin().is_terminal()
        && matches!(args.approve, None | Some(ApprovePolicy::Ask))
    {
        errln!(
            "error: --steer-from - reads the terminal, which answers approvals: use a FIFO or \
             a file, or --approve allow|deny"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if args.prompt.is_none() && !args.attach.is_empty() {
        errln!("error: --attach needs a prompt to attach the files to");
        return ExitCode::from(EXIT_USAGE);
    }
    // Attachments are validated before a session is created or touched.
    let prompt = match args.prompt.clone().map(|p| {
        let p = Prompt::text(p);
        match args.mode {
            Some(ceiling) => p.with_ceiling(ceiling),
            None => p,
        }
        .with_files(&args.attach)
    }) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            errln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let host = Host::new();
    let handle = match host.open(OpenSession {
        options: opts,
        llm: None,
        answerer: Answerer::Custom(approver),
        terminals: None,
    }) {
        Ok(h) => h,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
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
    if let Some(name) = args
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if let Err(e) = handle.rename(name) {
            errln!("error: could not name the session: {e}");
            handle.end().await;
            return ExitCode::FAILURE;
        }
    }
    if let Some(note) = handle.notice() {
        errln!("note: {note}");
    }
    // What was skipped for lack of trust, also with --json (stderr).
    for skipped in handle.untrusted() {
        errln!("note: {skipped}");
    }
    // Always said when commands are not confined (on stderr, so `--json` stays clean).
    if !args.json
        || !matches!(
            handle.sandbox(),
            cairn_runtime::sandbox::SandboxState::On(_)
        )
    {
        errln!("{}", handle.sandbox().describe());
    }
    // An open network is said on every run, as an unconfined sandbox is.
    if let Some(layer) = open_network(&handle) {
        errln!("sandbox network: {layer}");
    }
    // HTTP MCP servers that need a login: one `mcp_login_needed` event each with --json (before
    // the turn's events), else a note on stderr.
    for (server, message) in cairn_runtime::mcp_connect::logins_needed(&handle).await {
        if args.json {
            let event = serde_json::json!({
                "type": "mcp_login_needed",
                "data": {"server": server, "message": message},
            });
            outln!("{event}");
        } else {
            errln!("note: MCP server `{server}`: {message}");
        }
    }
    let mut renderer = Renderer::new(args.json).asking(policy == ApprovePolicy::Ask);
    let pending = handle.pending_calls().await;
    let mut status = None;
    if args.resume {
        if pending == 0 {
            if !args.json {
                errln!("resume: no tool calls were open in this session");
            }
        } else {
            if !args.json {
                errln!("resume: finishing {pending} open tool call(s)");
            }
            let resume = match handle.submit(Prompt::resume()).await {
                Ok(Submission::Turn(turn)) => turn,
                Ok(Submission::Done(_)) => unreachable!("a resume is never a command"),
                Err(e) => {
                    errln!("error: {e}");
                    handle.end().await;
                    return ExitCode::FAILURE;
                }
            };
            match drive(&handle, resume, &mut renderer, &mut sigint, &mut sigterm).await {
                Driven::Ended(s) => status = s,
                Driven::Abort => return ExitCode::from(130),
            }
        }
    } else if pending > 0 && !args.json {
        errln!(
            "note: {pending} tool call(s) were open when this session stopped; they are closed as \
             interrupted (run with --resume to finish them)"
        );
    }
    let go_on = status.is_none_or(|s| s == TurnStatus::Completed);
    // Lines read while the run goes are steering; the reader stops with the run.
    let _steering = args
        .steer_from
        .clone()
        .map(|from| AbortOnDrop(crate::steer::spawn(handle.clone(), from)));
    if let (Some(prompt), true) = (prompt, go_on) {
        // A known `/command` at the very start is a command, anything else a prompt.
        let turn = match handle.submit(prompt).await {
            Ok(Submission::Turn(turn)) => turn,
            Ok(Submission::Done(outcome)) => {
                status = Some(crate::slash::done(&handle, &outcome, &mut renderer).await);
                return finish(&handle, &args, status).await;
            }
            Err(SubmitError::Command(e)) => {
                match e {
                    CommandError::AboveCeiling { .. } => {
                        errln!("error: {e}; pass --mode to allow it")
                    }
                    _ => errln!("error: {e}"),
                }
                handle.end().await;
                return ExitCode::from(EXIT_USAGE);
            }
            Err(e) => {
                errln!("error: {e}");
                handle.end().await;
                return ExitCode::FAILURE;
            }
        };
        for note in turn.notes() {
            errln!("note: {note}");
        }
        match drive(&handle, turn, &mut renderer, &mut sigint, &mut sigterm).await {
            Driven::Ended(s) => status = s,
            Driven::Abort => return ExitCode::from(130),
        }
    } else if args.prompt.is_none() && status.is_none() {
        // --resume with nothing open and no prompt: nothing ran, nothing failed.
        status = Some(TurnStatus::Completed);
    }
    finish(&handle, &args, status).await
}

/// A background task that stops when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Saves the session, closes it and maps the run's end to the contract's exit status.
async fn finish(
    handle: &SessionHandle,
    args: &RunArgs,
    mut status: Option<TurnStatus>,
) -> ExitCode {
    let _ = std::io::stdout().flush();
    if let Err(e) = handle.save().await {
        errln!("error: could not save the session: {e}");
        // A turn whose end could not be saved did not complete.
        if status == Some(TurnStatus::Completed) {
            status = Some(TurnStatus::Error);
        }
    }
    handle.end().await;
    if !args.json {
        errln!("session: {}", handle.id());
    }
    ExitCode::from(match status {
        Some(TurnStatus::Completed) => 0,
        Some(TurnStatus::Error) => 1,
        Some(TurnStatus::MaxIterationsExceeded) => 3,
        Some(TurnStatus::Interrupted) => 130,
        None => 1,
    })
}

/// The network layer's words when sandboxed commands share the desktop's network
/// (`--sandbox-network open`).
fn open_network(handle: &cairn_runtime::host::SessionHandle) -> Option<String> {
    let report = handle.sandbox_report()?;
    if !matches!(
        handle.sandbox(),
        cairn_runtime::sandbox::SandboxState::On(_)
    ) {
        return None;
    }
    report
        .layers
        .iter()
        .find(|l| l.name == "network proxy" && !l.active && l.detail.starts_with("open"))
        .map(|l| l.detail.clone())
}
