//! `cairn commands list`: the slash commands `cairn run "/name …"` and the app know.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_runtime::commands::{self, Builtin};
use cairn_runtime::skills::SkillSource;
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
    let cmds = commands::load(&ws);
    let mut rows: Vec<(String, &str, String, String)> = Builtin::ALL
        .iter()
        .map(|(_, n, d)| (n.to_string(), "built-in", d.to_string(), String::new()))
        .collect();
    let from = |s: SkillSource| match s {
        SkillSource::Project => "project",
        SkillSource::User => "user",
    };
    for c in &cmds.user {
        rows.push((
            c.name.clone(),
            from(c.source),
            c.description.clone(),
            c.path.display().to_string(),
        ));
    }
    for s in &cmds.skills {
        rows.push((
            s.name.clone(),
            from(s.source),
            s.description.clone(),
            s.dir.display().to_string(),
        ));
    }
    for (name, source, description, file) in rows {
        if json {
            outln!(
                "{}",
                serde_json::json!({"name": name, "source": source, "description": description, "file": file})
            );
        } else {
            outln!("/{name:<20} {source:<9} {description}");
        }
    }
    ExitCode::SUCCESS
}
