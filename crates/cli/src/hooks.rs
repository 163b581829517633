//! `cairn hooks list|trust`: the user's and the project's hooks (Claude Code's schema).

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_runtime::hooks::{self, HookSource};
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn hooks …`.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// The hooks a session in the workspace gets, where each comes from, and whether it runs.
    List {
        /// The workspace [default: current dir].
        #[arg(short, long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Trust the project's hook files, Claude Code settings and commands that run something
    /// (`!` lines, `allowed-tools`) as they are now (any change needs a new trust).
    Trust {
        /// The workspace [default: current dir].
        #[arg(short, long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

fn workspace(w: Option<PathBuf>) -> Result<PathBuf, String> {
    let w = match w {
        Some(w) => w,
        None => std::env::current_dir().map_err(|e| format!("cannot read the current dir: {e}"))?,
    };
    w.canonicalize()
        .map_err(|e| format!("workspace {} is not usable: {e}", w.display()))
}

/// Runs a `cairn hooks` command.
pub fn run(cmd: HooksCommand) -> ExitCode {
    match cmd {
        HooksCommand::List { workspace: w, json } => {
            let ws = match workspace(w) {
                Ok(w) => w,
                Err(e) => {
                    errln!("error: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let loaded = hooks::load(&ws);
            for w in &loaded.warnings {
                errln!("warning: {w}");
            }
            let rows = loaded
                .active
                .iter()
                .map(|d| (d, true))
                .chain(loaded.held.iter().map(|d| (d, false)));
            let mut any = false;
            for (d, runs) in rows {
                any = true;
                let from = match &d.source {
                    HookSource::User(_) => "user",
                    HookSource::Project(_) => "project",
                };
                // Project hooks run inside the session's sandbox (when it has one); the
                // user's own too when the workspace picks their program.
                let why_inside = d.inside_because(&ws);
                let inside = why_inside.is_some();
                if json {
                    outln!(
                        "{}",
                        serde_json::json!({
                            "event": d.event,
                            "matcher": d.matcher_text,
                            "command": d.command,
                            "timeout": d.timeout_secs,
                            "source": from,
                            "file": d.source.path(),
                            "trusted": runs,
                            "sandboxed": inside,
                            "sandboxedBecause": why_inside,
                        })
                    );
                } else {
                    outln!(
                        "{:<18} {:<16} {:<8} {} {}  {}",
                        d.event,
                        if d.matcher_text.is_empty() {
                            "*"
                        } else {
                            &d.matcher_text
                        },
                        from,
                        if runs { "runs" } else { "NOT TRUSTED" },
                        if inside {
                            "inside the sandbox"
                        } else {
                            "outside the sandbox"
                        },
                        d.command
                    );
                }
            }
            if let Some(note) = loaded.notice(&ws) {
                errln!("note: {note}");
            }
            if let Some(note) = cairn_runtime::claude_home::offer_note() {
                errln!("note: {note}");
            }
            if !any && !json {
                errln!(
                    "no hooks (user: {}, project: {})",
                    hooks::config::user_path()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    hooks::config::project_path(&ws).display()
                );
            }
            ExitCode::SUCCESS
        }
        HooksCommand::Trust { workspace: w } => {
            let ws = match workspace(w) {
                Ok(w) => w,
                Err(e) => {
                    errln!("error: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            match hooks::trust(&ws) {
                Ok(true) => {
                    for file in hooks::covered_files(&ws) {
                        outln!("trusted {}", file.display());
                    }
                    ExitCode::SUCCESS
                }
                Ok(false) => {
                    errln!(
                        "no project hooks, Claude Code settings or runnable commands in {}",
                        ws.display()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
