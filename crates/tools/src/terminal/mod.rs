//! Terminals (§7.1 `TerminalSource`): a per-project PTY manager shared by the desktop terminal
//! panel and the agent's `terminal_list` / `terminal_read` tools.

mod manager;
mod tools;

pub use manager::{
    TerminalError, TerminalInfo, TerminalManager, TerminalOptions, TerminalSource,
    TERMINAL_KEEP_BYTES,
};
pub use tools::{terminal_tools, TerminalList, TerminalRead, DEFAULT_TAIL_LINES, MAX_TAIL_LINES};
