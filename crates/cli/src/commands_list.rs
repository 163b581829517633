//! `cairn commands list`: the slash commands `cairn run "/name …"` and the app know.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_runtime::commands;
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn commands …`.
#[derive(Debug, Subcommand)]
pub enum CommandsCommand {
    /// Built-in, project and user commands (and skills only the user invokes), by name.
    List {
        /// The workspace [default: current dir].
        #[arg(short, long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `cairn commands` command.
pub fn run(cmd: CommandsCommand) -> ExitCode {
    let CommandsCommand::List { workspace, json } = cmd;
    let ws = match workspace.map(Ok).unwrap_or_else(std::env::current_dir) {
        Ok(w) => w.canonicalize().unwrap_or(w),
        Err(e) => {
            errln!("error: cannot read the current dir: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for c in commands::views(&ws) {
        if json {
            outln!(
                "{}",
                serde_json::json!({"name": c.name, "source": c.source.as_str(), "description": c.description, "file": c.file, "argumentHint": c.argument_hint, "allowedTools": c.allowed_tools, "model": c.model})
            );
        } else {
            let hint = c.argument_hint.map(|h| format!(" {h}")).unwrap_or_default();
            outln!(
                "/{:<20} {:<9} {}",
                format!("{}{hint}", c.name),
                c.source.as_str(),
                c.description
            );
        }
    }
    if let Some(note) = cairn_runtime::claude_home::offer_note() {
        errln!("note: {note}");
    }
    ExitCode::SUCCESS
}
