//! Pseudo-terminal programs: the PTY process core shared by command sessions
//! (`exec_command` / `input_command`) and the terminal manager, and ANSI clean-up.

pub mod ansi;
mod command_tools;
mod process;
mod sessions;

pub use command_tools::{ExecCommand, InputCommand, DEFAULT_YIELD_MS, MAX_YIELD_MS};
pub use process::{PtyError, PtyProcess, PtySpawn, PtyState};
pub use sessions::{CommandSessions, SessionInfo, MAX_SESSIONS};
