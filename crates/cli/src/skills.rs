//! `cairn skills list`: the Agent Skills a session in the workspace gets, and from where.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_runtime::skills::{self, SkillSource};
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn skills …`.
#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Every skill found, where it comes from, and whether the model may use it.
    List {
        /// The workspace [default: current dir].
        #[arg(short, long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `cairn skills` command.
pub fn run(cmd: SkillsCommand) -> ExitCode {
    let SkillsCommand::List { workspace, json } = cmd;
    let ws = match workspace.map(Ok).unwrap_or_else(std::env::current_dir) {
        Ok(w) => w.canonicalize().unwrap_or(w),
        Err(e) => {
            errln!("error: cannot read the current dir: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let (found, warnings) = skills::discover(&ws);
    for w in warnings {
        errln!("warning: {w}");
    }
    if let Some(note) = cairn_runtime::claude_home::offer_note() {
        errln!("note: {note}");
    }
    for s in &found {
        if json {
            match serde_json::to_string(s) {
                Ok(line) => outln!("{line}"),
                Err(e) => errln!("error: {e}"),
            }
        } else {
            outln!(
                "{:<24} {:<8} {}  {}",
                s.name,
                match s.source {
                    SkillSource::Project => "project",
                    SkillSource::User => "user",
                },
                if s.user_only { "(/command only)" } else { "" },
                s.description
            );
        }
    }
    if found.is_empty() && !json {
        let roots: Vec<String> = skills::roots(&ws)
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        errln!("no skills (looked in {})", roots.join(", "));
    }
    ExitCode::SUCCESS
}
