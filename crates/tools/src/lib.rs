//! Cairn's built-in tools: files (`read_file`, `list_files`, `write_file`,
//! `replace_in_file`) and shell (`run_shell`, `shell_task_output`, `shell_task_kill`).
//!
//! Every path argument goes through [`paths::resolve`], the workspace boundary.

mod args;
mod atomic;
mod diff;
pub mod list_files;
pub mod paths;
pub mod read_file;
pub mod replace_in_file;
pub mod shell;
pub mod write_file;

use std::sync::Arc;

use cairn_engine::ToolHandle;

pub use list_files::ListFiles;
pub use read_file::ReadFile;
pub use replace_in_file::ReplaceInFile;
pub use shell::{RunShell, ShellTaskKill, ShellTaskOutput, ShellTasks};
pub use write_file::WriteFile;

/// Every core tool; the shell tools share one background-task registry, whose tasks are
/// killed when the last of these handles is dropped (the session ends).
pub fn core_tools() -> Vec<ToolHandle> {
    let tasks = Arc::new(ShellTasks::new());
    vec![
        Arc::new(ReadFile),
        Arc::new(ListFiles),
        Arc::new(WriteFile),
        Arc::new(ReplaceInFile),
        Arc::new(RunShell::new(tasks.clone())),
        Arc::new(ShellTaskOutput::new(tasks.clone())),
        Arc::new(ShellTaskKill::new(tasks)),
    ]
}

/// The read-only file tools (`read_file`, `list_files`), for subagents and read-only modes.
pub fn read_only_tools() -> Vec<ToolHandle> {
    vec![Arc::new(ReadFile), Arc::new(ListFiles)]
}
