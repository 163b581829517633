//! `cairn doctor`: every check of `cairn_runtime::doctor` (the app's Settings → Diagnostics
//! runs the same), one line each: OK, warning or problem with what to do. Exit 0 when no
//! line is a problem, 1 otherwise.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use cairn_runtime::doctor::{self, CheckStatus, DoctorOptions};

/// Options of `cairn doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Skip the probes that use the network (provider endpoints, remote MCP servers).
    #[arg(long)]
    offline: bool,
    /// One JSON object per check: {"group","check","status","detail","action"?,"ms"}.
    #[arg(long)]
    json: bool,
    /// The workspace whose MCP servers and trust are checked [default: current dir].
    #[arg(short, long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Where sessions live (default: the app's data dir).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Longest wait for one probe, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
}

/// Runs `cairn doctor`.
pub async fn run(args: DoctorArgs) -> ExitCode {
    let timeout = if args.timeout.is_finite() && args.timeout > 0.0 {
        Duration::from_secs_f64(args.timeout.min(600.0))
    } else {
        errln!("error: --timeout must be a positive number of seconds");
        return ExitCode::from(crate::EXIT_USAGE);
    };
    // A folder Cairn refuses as a workspace (the home folder, …) still gets every other check.
    let workspace = match args.workspace {
        Some(w) => match cairn_runtime::resolve_workspace(&w) {
            Ok(w) => Some(w),
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::from(crate::EXIT_USAGE);
            }
        },
        None => std::env::current_dir()
            .ok()
            .and_then(|d| cairn_runtime::resolve_workspace(&d).ok()),
    };
    let opts = DoctorOptions {
        workspace,
        state_dir: args
            .state_dir
            .unwrap_or_else(cairn_runtime::default_state_dir),
        offline: args.offline,
        timeout,
        versions: versions(),
    };
    let probes = doctor::real_probes(doctor::settings_env());
    let rows = doctor::run(&probes, &opts).await;
    for r in &rows {
        if args.json {
            match serde_json::to_string(r) {
                Ok(line) => outln!("{line}"),
                Err(e) => errln!("error: {e}"),
            }
            continue;
        }
        let mark = match r.status {
            CheckStatus::Ok => "ok",
            CheckStatus::Warning => "warning",
            CheckStatus::Problem => "PROBLEM",
            CheckStatus::Skipped => "skipped",
        };
        outln!("{:<8} {:<9} {:<26} {}", mark, r.group, r.check, r.detail);
        if let Some(a) = &r.action {
            for (i, line) in a.lines().enumerate() {
                let lead = if i == 0 { "→ " } else { "  " };
                outln!("{:<45}{lead}{line}", "");
            }
        }
    }
    if doctor::has_problem(&rows) {
        if !args.json {
            let n = rows
                .iter()
                .filter(|r| r.status == CheckStatus::Problem)
                .count();
            errln!("{n} {} found", if n == 1 { "problem" } else { "problems" });
        }
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// This binary's version, bubblewrap's and the sandbox's helpers.
fn versions() -> Vec<(String, String)> {
    let mut out = vec![("cairn".to_string(), env!("CARGO_PKG_VERSION").to_string())];
    if let Some(bwrap) = cairn_policy::sandbox::bwrap_path() {
        let v = std::process::Command::new(&bwrap)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| bwrap.display().to_string());
        out.push(("bubblewrap".to_string(), v));
    }
    out
}
