//! Shell tools: `run_shell`, `shell_task_output`, `shell_task_kill`.

pub(crate) mod output;
mod partial;
pub(crate) mod process;
mod run;
pub(crate) mod sandbox_hint;
mod task_tools;
mod tasks;

pub use process::{shell_program, Exit};
pub use run::{RunShell, DEFAULT_TIMEOUT_MS, MAX_OUTPUT_BYTES, MAX_TIMEOUT_MS};
pub use task_tools::{ShellTaskKill, ShellTaskOutput};
pub use tasks::{
    ShellTasks, TaskInfo, TaskSnapshot, TaskState, MAX_RUNNING_TASKS, TASK_OUTPUT_BYTES,
};
