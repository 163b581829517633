//! `cairn mcp list|add|remove|test`: the workspace's MCP servers, their status and tools.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use cairn_mcp::config::{add_server, parse_config_text, remove_server, NoSecrets};
use cairn_mcp::{ManagerOptions, McpManager, ServerStatus, VarContext};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};

use crate::EXIT_USAGE;

/// `cairn mcp …`
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the configured servers: start them all in parallel and show status and tools.
    List {
        #[command(flatten)]
        ws: WorkspaceArg,
        /// Only read the config; start nothing.
        #[arg(long)]
        no_start: bool,
        /// One JSON object per server per line.
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `cairn mcp add NAME -- COMMAND [ARGS…]` or `cairn mcp add NAME --url URL`.
    Add(AddArgs),
    /// Remove a server from the project (or `--user`) config.
    Remove {
        /// Server name.
        name: String,
        #[command(flatten)]
        ws: WorkspaceArg,
        /// Edit the user-level file instead of `<workspace>/.agent/mcp.json`.
        #[arg(long)]
        user: bool,
    },
    /// Trust the project's servers as they are defined now (all, or those named): a server
    /// from `<workspace>/.agent/mcp.json` runs a program of the repository's choosing, so it
    /// starts only once trusted, and any change to it needs a new trust.
    Trust {
        /// Server names [default: every project server].
        names: Vec<String>,
        #[command(flatten)]
        ws: WorkspaceArg,
    },
    /// Log in to an HTTP server that needs one (OAuth 2.1): prints the URL, opens the
    /// browser and waits for the redirect (or a pasted redirect URL).
    Login(crate::mcp_login::LoginArgs),
    /// Forget an HTTP server's login, revoking it where the server offers revocation.
    Logout {
        /// Server name.
        name: String,
        #[command(flatten)]
        ws: WorkspaceArg,
    },
    /// Start one server and call one of its tools (arguments as a JSON object); a call
    /// refused for a missing scope logs in again for it (a step-up) when `--browser` is given.
    Call(crate::mcp_call::CallArgs),
    /// Start one server, list its tools and report how long each step took.
    Test {
        /// Server name.
        name: String,
        #[command(flatten)]
        ws: WorkspaceArg,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// The workspace option shared by the subcommands.
#[derive(Debug, Args)]
pub struct WorkspaceArg {
    /// The workspace whose `.agent/mcp.json` applies [default: current dir].
    #[arg(short, long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// Remote transport of `--url`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RemoteKind {
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
}

/// Options of `cairn mcp add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Server name (tools become `mcp__<name>__<tool>`).
    name: String,
    #[command(flatten)]
    ws: WorkspaceArg,
    /// Edit the user-level file instead of `<workspace>/.agent/mcp.json`.
    #[arg(long)]
    user: bool,
    /// A remote server's URL (instead of a command).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Transport of `--url`.
    #[arg(long, value_enum, default_value = "http")]
    transport: RemoteKind,
    /// `NAME=VALUE` request header (repeatable; write secrets as `${ENV_VAR}`).
    #[arg(long = "header", value_name = "NAME=VALUE")]
    headers: Vec<String>,
    /// `NAME=VALUE` environment variable for a command (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Add it disabled.
    #[arg(long)]
    disabled: bool,
    /// The command and its arguments (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs a `cairn mcp` subcommand.
pub async fn run(cmd: McpCommand) -> ExitCode {
    let result = match cmd {
        McpCommand::List { ws, no_start, json } => list(&ws, no_start, json).await,
        McpCommand::Add(args) => add(args),
        McpCommand::Remove { name, ws, user } => remove(&name, &ws, user).await,
        McpCommand::Login(args) => crate::mcp_login::login(args).await,
        McpCommand::Logout { name, ws } => crate::mcp_login::logout(&name, &ws).await,
        McpCommand::Test { name, ws, json } => test(&name, &ws, json).await,
        McpCommand::Call(args) => crate::mcp_call::call(args).await,
        McpCommand::Trust { names, ws } => trust(&names, &ws),
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            errln!("error: {msg}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The workspace `ws` names (or the current dir's), resolved.
pub fn workspace(ws: &WorkspaceArg) -> Result<PathBuf, String> {
    let dir = match &ws.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().map_err(|e| format!("cannot read the current dir: {e}"))?,
    };
    cairn_runtime::resolve_workspace(&dir).map_err(|e| e.to_string())
}

fn config_file(ws: &WorkspaceArg, user: bool) -> Result<PathBuf, String> {
    if user {
        cairn_mcp::user_config_path().ok_or_else(|| "no user config dir on this system".to_string())
    } else {
        Ok(cairn_mcp::project_config_path(&workspace(ws)?))
    }
}

fn load(ws: &Path) -> cairn_mcp::LoadedConfig {
    let loaded = cairn_runtime::mcp::load_config(ws);
    for w in &loaded.warnings {
        errln!("warning: {w}");
    }
    loaded
}

async fn list(ws: &WorkspaceArg, no_start: bool, json: bool) -> Result<ExitCode, String> {
    let ws = workspace(ws)?;
    let loaded = load(&ws);
    let mut options = ManagerOptions::from_env(ws.clone());
    options.auth = cairn_runtime::mcp::auth_for(&loaded);
    let manager = McpManager::new(loaded.servers, options);
    if !no_start {
        manager.connect_all().await;
    }
    for s in manager.status() {
        if json {
            outln!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
            continue;
        }
        let detail = match &s.status {
            ServerStatus::Ready { tools } => format!(
                "{tools} tool(s){}{}",
                s.startup_ms
                    .map(|ms| format!(", started in {ms} ms"))
                    .unwrap_or_default(),
                match s.warnings.len() {
                    0 => String::new(),
                    n => format!(", {n} warning(s) (see cairn mcp test {})", s.name),
                }
            ),
            ServerStatus::Failed { reason } | ServerStatus::Disabled { reason } => {
                first_line(reason)
            }
            ServerStatus::Starting => {
                if no_start {
                    "not started".into()
                } else {
                    String::new()
                }
            }
        };
        outln!(
            "{:<16} {:<8} {:<9} {}  [{}]",
            s.name,
            s.transport,
            s.status.label(),
            detail,
            s.target
        );
    }
    manager.close_all().await;
    Ok(ExitCode::SUCCESS)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Server `name` of the workspace, and a manager for it alone (with logins for HTTP servers).
pub fn one_server(name: &str, ws: &WorkspaceArg) -> Result<(PathBuf, McpManager), String> {
    let ws = workspace(ws)?;
    let loaded = load(&ws);
    if let Some(reason) = loaded.get(name).and_then(|s| s.held.clone()) {
        return Err(format!("`{name}` is {reason}"));
    }
    let Some(cfg) = loaded.get(name).cloned() else {
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        return Err(format!(
            "no MCP server named `{name}` is configured (configured: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    let mut options = ManagerOptions::from_env(ws.clone());
    options.auth = cairn_runtime::mcp::auth_for(&loaded);
    Ok((ws, McpManager::new(vec![cfg], options)))
}

async fn test(name: &str, ws: &WorkspaceArg, json: bool) -> Result<ExitCode, String> {
    let (_, manager) = one_server(name, ws)?;
    let started = Instant::now();
    let result = manager.connect_server(name).await;
    let total = started.elapsed();
    let info = manager.status().into_iter().next();
    manager.close_all().await;
    let shutdown = started.elapsed().saturating_sub(total);
    let Some(info) = info else {
        return Err("the server vanished".into());
    };
    let ok = result.is_ok();
    if json {
        let v = json!({
            "name": info.name,
            "ok": ok,
            "status": info.status,
            "startMs": ms(total),
            "shutdownMs": ms(shutdown),
            "tools": info.tools,
            "warnings": info.warnings,
        });
        outln!("{v}");
    } else {
        match &result {
            Ok(()) => {
                outln!(
                    "{}: ready in {} ms ({}), {} tool(s); stopped in {} ms",
                    info.name,
                    ms(total),
                    info.transport,
                    info.tools.len(),
                    ms(shutdown)
                );
                for t in &info.tools {
                    outln!("  {t}");
                }
                for w in &info.warnings {
                    outln!("  warning: {w}");
                }
            }
            Err(e) => outln!("{}: failed after {} ms\n{e}", info.name, ms(total)),
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

fn pairs(items: &[String], what: &str) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    for it in items {
        let (k, v) = it
            .split_once('=')
            .ok_or_else(|| format!("{what} `{it}` is not NAME=VALUE"))?;
        m.insert(k.trim().to_string(), Value::String(v.to_string()));
    }
    Ok(m)
}

fn add(a: AddArgs) -> Result<ExitCode, String> {
    let path = config_file(&a.ws, a.user)?;
    let mut entry = Map::new();
    match (&a.url, a.command.is_empty()) {
        (Some(_), false) => return Err("give either --url or a command after `--`, not both".into()),
        (None, true) => return Err("give a command after `--` (e.g. `cairn mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .`) or --url".into()),
        (Some(url), true) => {
            let kind = match a.transport {
                RemoteKind::Http => "http",
                RemoteKind::Sse => "sse",
            };
            entry.insert("type".into(), json!(kind));
            entry.insert("url".into(), json!(url));
            if !a.headers.is_empty() {
                entry.insert("headers".into(), Value::Object(pairs(&a.headers, "header")?));
            }
        }
        (None, false) => {
            entry.insert("command".into(), json!(a.command[0]));
            entry.insert("args".into(), json!(a.command[1..]));
            if !a.env.is_empty() {
                entry.insert("env".into(), Value::Object(pairs(&a.env, "env")?));
            }
        }
    }
    if a.disabled {
        entry.insert("enabled".into(), json!(false));
    }
    // Check the entry the way it will be loaded (variables stay unexpanded in the file).
    let mut probe = Map::new();
    probe.insert(a.name.clone(), Value::Object(entry.clone()));
    let env = std::collections::BTreeMap::<String, String>::new();
    let check = parse_config_text(
        &json!({ "mcpServers": probe }).to_string(),
        &path,
        &VarContext {
            env: &env,
            secrets: &NoSecrets,
            workspace: None,
        },
    );
    let problems: Vec<String> = check
        .warnings
        .iter()
        .filter(|w| !w.message.contains("is not set") && !w.message.contains("keyring"))
        .map(|w| w.to_string())
        .collect();
    if !problems.is_empty() || check.servers.is_empty() {
        return Err(format!("not added: {}", problems.join("; ")));
    }
    add_server(&path, &a.name, entry).map_err(|e| e.to_string())?;
    outln!("added `{}` to {}", a.name, path.display());
    if !a.user {
        // The user wrote this definition: it needs no further trust.
        let ws = workspace(&a.ws)?;
        cairn_runtime::trust::trust(
            &cairn_runtime::mcp::load_config(&ws),
            &ws,
            std::slice::from_ref(&a.name),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn trust(names: &[String], ws: &WorkspaceArg) -> Result<ExitCode, String> {
    let ws = workspace(ws)?;
    let loaded = cairn_runtime::mcp::load_config(&ws);
    let done = cairn_runtime::trust::trust(&loaded, &ws, names)?;
    if done.is_empty() {
        outln!(
            "no project MCP servers in {}",
            cairn_mcp::project_config_path(&ws).display()
        );
    }
    for name in done {
        // The workspace trust covers the project's hooks too (all of it, no name given).
        if name == cairn_runtime::hooks::TRUST_ENTRY {
            outln!(
                "trusted the hooks of {}",
                cairn_runtime::hooks::config::project_path(&ws).display()
            );
            continue;
        }
        // What it runs or reaches (no env values or headers: they may hold secrets).
        let target = match loaded.get(&name).and_then(|s| s.transport.as_ref()) {
            Some(cairn_mcp::TransportConfig::Stdio { program, args, .. }) => {
                std::iter::once(program.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            Some(cairn_mcp::TransportConfig::Http { url, .. })
            | Some(cairn_mcp::TransportConfig::Sse { url, .. }) => url.clone(),
            _ => String::new(),
        };
        outln!("trusted `{name}`: {target}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn remove(name: &str, ws: &WorkspaceArg, user: bool) -> Result<ExitCode, String> {
    let path = config_file(ws, user)?;
    // The URL of an HTTP server, read before the entry goes: its login goes with it.
    let url = workspace(ws).ok().and_then(|w| {
        match cairn_runtime::mcp::load_config(&w)
            .get(name)?
            .transport
            .as_ref()?
        {
            cairn_mcp::TransportConfig::Http { url, .. } => Some(url.clone()),
            _ => None,
        }
    });
    if remove_server(&path, name).map_err(|e| e.to_string())? {
        outln!("removed `{name}` from {}", path.display());
        if let Some(url) = url {
            crate::mcp_login::forget(name, &url).await;
        }
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("no server named `{name}` in {}", path.display()))
    }
}
