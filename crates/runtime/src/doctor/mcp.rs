//! The workspace's MCP servers (started, tools listed, login needed) and its trust state
//! (project servers, hooks and commands waiting for the user's trust).

use std::path::Path;

use cairn_mcp::{ManagerOptions, McpManager, ServerError, ServerStatus, TransportConfig};

use super::{CheckRow, CheckStatus, DoctorOptions, Fix};

fn row(name: &str, status: CheckStatus, detail: impl Into<String>) -> CheckRow {
    CheckRow::new("mcp", &format!("mcp server {name}"), status, detail)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Starts every enabled, trusted server of `workspace` (remote ones only online), lists its
/// tools and stops it again; one row each, within the probe timeout.
pub async fn servers(workspace: &Path, opts: &DoctorOptions) -> Vec<CheckRow> {
    let ws = workspace.to_path_buf();
    let Some(loaded) =
        super::blocking_value(opts.timeout, move || crate::mcp::load_config(&ws)).await
    else {
        return vec![CheckRow::new(
            "mcp",
            "mcp servers",
            CheckStatus::Problem,
            "the MCP configuration could not be read in time",
        )];
    };
    servers_of(&loaded, workspace, opts).await
}

/// [`servers`] of an already loaded configuration (tests give their own).
pub async fn servers_of(
    loaded: &cairn_mcp::LoadedConfig,
    workspace: &Path,
    opts: &DoctorOptions,
) -> Vec<CheckRow> {
    let mut rows: Vec<CheckRow> = loaded
        .warnings
        .iter()
        .map(|w| {
            CheckRow::new("mcp", "mcp config", CheckStatus::Warning, w.to_string())
                .fix(Fix::FixMcpFile)
        })
        .collect();
    let mut start = Vec::new();
    for s in &loaded.servers {
        if s.held.is_some() {
            continue; // the trust line names it
        }
        let remote = matches!(
            s.transport,
            Some(TransportConfig::Http { .. } | TransportConfig::Sse { .. })
        );
        if !s.enabled {
            rows.push(row(&s.name, CheckStatus::Skipped, "disabled in its config"));
        } else if remote && opts.offline {
            rows.push(row(
                &s.name,
                CheckStatus::Skipped,
                "--offline: a remote server was not asked",
            ));
        } else {
            start.push(s.clone());
        }
    }
    if start.is_empty() {
        return rows;
    }
    let mut options = ManagerOptions::from_env(workspace.to_path_buf());
    options.auth = crate::mcp::auth_for(loaded);
    let manager = McpManager::new(start.clone(), options);
    let started = std::time::Instant::now();
    let outcome = tokio::time::timeout(opts.timeout, manager.connect_all()).await;
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let failures = match &outcome {
        Ok((_, failures)) => failures.as_slice(),
        Err(_) => &[],
    };
    for info in manager.status() {
        let failure = failures.iter().find(|(n, _)| n == &info.name);
        let mut r = match (&info.status, failure) {
            (_, Some((_, ServerError::LoginNeeded(reason)))) => row(
                &info.name,
                CheckStatus::Warning,
                format!("login needed: {}", first_line(reason)),
            )
            .fix(Fix::McpLogin {
                server: info.name.clone(),
            }),
            (ServerStatus::Ready { tools }, _) => row(
                &info.name,
                CheckStatus::Ok,
                format!(
                    "started ({}), {tools} {} listed",
                    info.transport,
                    if *tools == 1 { "tool" } else { "tools" }
                ),
            ),
            (ServerStatus::Disabled { reason }, _) => {
                row(&info.name, CheckStatus::Warning, first_line(reason))
            }
            (ServerStatus::Failed { reason }, _) => row(
                &info.name,
                CheckStatus::Problem,
                format!("did not start: {}", first_line(reason)),
            )
            .fix(Fix::McpOutput {
                server: info.name.clone(),
            }),
            (ServerStatus::Starting, _) if outcome.is_err() => row(
                &info.name,
                CheckStatus::Problem,
                format!("not ready within {} s", opts.timeout.as_secs_f32()),
            )
            .fix(Fix::McpOutput {
                server: info.name.clone(),
            }),
            (ServerStatus::Starting, _) => row(&info.name, CheckStatus::Warning, "still starting"),
        };
        r.ms = ms;
        rows.push(r);
    }
    manager.close_all().await;
    rows
}

/// What in `workspace` waits for the user's trust: project MCP servers, hooks, commands.
pub fn trust(workspace: &Path) -> Vec<CheckRow> {
    let held_servers: Vec<String> = crate::mcp::load_config(workspace)
        .servers
        .into_iter()
        .filter(|s| s.held.is_some())
        .map(|s| s.name)
        .collect();
    let held_hooks = crate::hooks::load(workspace).held.len();
    let commands = if crate::hooks::project_files_trusted(workspace) {
        0
    } else {
        crate::commands::runnable_project_files(workspace).len()
    };
    let mut waiting = Vec::new();
    if !held_servers.is_empty() {
        waiting.push(format!(
            "{} {}",
            if held_servers.len() == 1 {
                "MCP server"
            } else {
                "MCP servers"
            },
            held_servers.join(", ")
        ));
    }
    if held_hooks > 0 {
        waiting.push(format!(
            "{held_hooks} {}",
            if held_hooks == 1 { "hook" } else { "hooks" }
        ));
    }
    if commands > 0 {
        waiting.push(format!(
            "{commands} {} that run something",
            if commands == 1 {
                "command file"
            } else {
                "command files"
            }
        ));
    }
    if waiting.is_empty() {
        return vec![CheckRow::new(
            "trust",
            "project trust",
            CheckStatus::Ok,
            "nothing of this project waits for your trust",
        )];
    }
    vec![CheckRow::new(
        "trust",
        "project trust",
        CheckStatus::Warning,
        format!("waiting for your trust: {}", waiting.join("; ")),
    )
    .fix(Fix::TrustProject {
        workspace: workspace.display().to_string(),
    })]
}
