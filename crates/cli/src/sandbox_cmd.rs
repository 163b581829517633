//! `cairn sandbox status`: what protects commands run in a workspace, layer by layer (user
//! namespaces, the allow-list home, the explicit environment, seccomp, the new session, the
//! network), each active or not and why not.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::run::SandboxArg;
use crate::EXIT_USAGE;

/// `cairn sandbox …`.
#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Each layer of the sandbox a session here would get: active or not, and why not.
    Status {
        /// The workspace [default: current dir].
        #[arg(short, long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Where sessions live (default: the app's data dir).
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// The sandbox mode to report on [default: $CAIRN_SANDBOX, else the sandbox
        /// settings, else auto].
        #[arg(long, value_enum, value_name = "MODE")]
        sandbox: Option<SandboxArg>,
        /// One JSON object (the `sandbox` object of `turn_start`).
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `cairn sandbox` command.
pub fn run(cmd: SandboxCommand) -> ExitCode {
    let SandboxCommand::Status {
        workspace,
        state_dir,
        sandbox,
        json,
    } = cmd;
    let ws = match workspace.map(Ok).unwrap_or_else(std::env::current_dir) {
        Ok(w) => w.canonicalize().unwrap_or(w),
        Err(e) => {
            errln!("error: cannot read the current dir: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let state = state_dir.unwrap_or_else(cairn_runtime::default_state_dir);
    let report = match cairn_runtime::sandbox_report(&ws, &state, sandbox.map(Into::into)) {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if json {
        match serde_json::to_string(&report) {
            Ok(line) => outln!("{line}"),
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }
    outln!("sandbox: {}", report.state);
    for l in &report.layers {
        let mark = if l.active { "active" } else { "not active" };
        outln!("  {:<22} {:<11} {}", l.name, mark, l.detail);
    }
    if report.state == "unavailable" {
        // Restricted user namespaces (Ubuntu 24.04's AppArmor), no bubblewrap, …: what to do.
        let advice =
            cairn_runtime::sandbox::userns::diagnose(&cairn_runtime::sandbox::userns::RealHost)
                .advice();
        if !advice.is_empty() {
            outln!("what to do:");
            for line in advice {
                outln!("  {line}");
            }
        }
    }
    ExitCode::SUCCESS
}
