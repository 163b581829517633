//! `cairn agents list|add|remove`: the agent roles `cairn run --agent` and `run_subagent`
//! use; user roles are saved in `<state dir>/agents.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_engine::agents::AgentDef;
use cairn_runtime::agents::{load_agents, save_agents};
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn agents …`
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List the built-in and user roles.
    List {
        /// Where sessions and roles live.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Add a user role.
    Add {
        /// Role name (letters, digits, `-`, `_`).
        name: String,
        /// The role's system prompt.
        #[arg(long, value_name = "TEXT")]
        prompt: String,
        /// One line saying what the role is for.
        #[arg(long, value_name = "TEXT", default_value = "")]
        description: String,
        /// Model id the role runs on [default: the session's].
        #[arg(long, value_name = "ID")]
        model: Option<String>,
        /// Provider of --model [default: the session's].
        #[arg(long, value_name = "NAME", requires = "model")]
        provider: Option<String>,
        /// Where sessions and roles live.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Remove a user role.
    Remove {
        /// Role name.
        name: String,
        /// Where sessions and roles live.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
}

/// Runs an `agents` subcommand.
pub fn run(command: AgentsCommand) -> ExitCode {
    match execute(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn execute(command: AgentsCommand) -> Result<(), String> {
    let dir = |d: Option<PathBuf>| d.unwrap_or_else(cairn_runtime::default_state_dir);
    match command {
        AgentsCommand::List { state_dir, json } => {
            let agents = load_agents(&dir(state_dir)).map_err(|e| e.to_string())?;
            for a in agents.list() {
                if json {
                    let mut v = serde_json::to_value(a).map_err(|e| e.to_string())?;
                    v["builtin"] = serde_json::Value::Bool(a.is_builtin());
                    outln!("{v}");
                } else {
                    let model = a
                        .model
                        .as_deref()
                        .map(|m| format!(" [{m}]"))
                        .unwrap_or_default();
                    outln!("{:<16}{model} {}", a.name, a.description);
                }
            }
            Ok(())
        }
        AgentsCommand::Add {
            name,
            prompt,
            description,
            model,
            provider,
            state_dir,
        } => {
            if let Some(p) = &provider {
                cairn_runtime::agents::check_role_provider(p).map_err(|e| e.to_string())?;
            }
            let dir = dir(state_dir);
            let mut agents = load_agents(&dir).map_err(|e| e.to_string())?;
            let mut def = AgentDef::new(&name, &description, &prompt);
            if let Some(m) = model {
                def = def.with_model(&m, provider.as_deref());
            }
            agents.add(def).map_err(|e| e.to_string())?;
            save_agents(&dir, &agents).map_err(|e| e.to_string())?;
            errln!("added agent {name}");
            Ok(())
        }
        AgentsCommand::Remove { name, state_dir } => {
            let dir = dir(state_dir);
            let mut agents = load_agents(&dir).map_err(|e| e.to_string())?;
            agents.remove(&name).map_err(|e| e.to_string())?;
            save_agents(&dir, &agents).map_err(|e| e.to_string())?;
            errln!("removed agent {name}");
            Ok(())
        }
    }
}
