//! Cairn's built-in tools.
//!
//! - files: `read_file`, `list_files`, `write_file`, `replace_in_file`
//! - patches: `apply_patch` (the `*** Begin Patch` envelope), `apply_unified_diff`
//! - search: `grep`
//! - shell: `run_shell`, `shell_task_output`, `shell_task_kill`
//! - command sessions: `exec_command`, `input_command`
//! - git: `git_status`, `git_log`, `git_diff`
//! - web: `web_fetch`, `web_search` (only when configured)
//! - interaction: `todo_write`, `ask_user`, `propose_plan`, `request_directory`
//! - terminals: `terminal_list`, `terminal_read` (over a host-provided [`TerminalManager`])
//! - images: `read_image` (vision session models), `describe_image` (text-only session models,
//!   only when a vision model is configured)
//! - media: `media` (image description, audio transcription, video metadata)
//!
//! Every path argument goes through [`paths::resolve_for`], the workspace boundary (widened
//! by directories the user granted with `request_directory`). The file-writing tools of one
//! session share a [`ConflictGuard`]. They touch the disk only through folder handles opened
//! without following links (`fsat`), so a link swapped in after the check cannot redirect them.

mod args;
mod atomic;
pub mod buffers;
pub mod describe;
mod diff;
mod fsat;
pub mod git;
pub mod guard;
mod guard_store;
pub mod guard_watch;
pub mod image;
pub mod interact;
pub mod list_files;
pub mod marker;
pub mod media;
pub mod patch;
pub mod paths;
pub mod pty;
pub mod read_file;
pub mod replace_in_file;
pub mod search;
pub mod shell;
mod subject;
pub mod terminal;
#[cfg(feature = "test-support")]
pub mod testing;
mod text;
pub mod web;
pub mod write_file;

use std::sync::Arc;

use cairn_engine::ToolHandle;

pub use describe::{disable_call_descriptions, without_call_description};
pub use fsat::{read_bytes_no_links, read_text_no_links};
pub use git::{GitDiff, GitLog, GitStatus};
pub use guard::ConflictGuard;
pub use image::{describe_image_tool, DescribeImage, ReadImage, VisionConfig};
pub use interact::{AskUser, ProposePlan, RequestDirectory, TodoWrite};
pub use list_files::ListFiles;
pub use media::{Media, MediaConfig, TranscriptionConfig};
pub use patch::{ApplyPatch, ApplyUnifiedDiff};
pub use pty::{CommandSessions, ExecCommand, InputCommand};
pub use read_file::ReadFile;
pub use replace_in_file::ReplaceInFile;
pub use search::Grep;
pub use shell::{RunShell, ShellTaskKill, ShellTaskOutput, ShellTasks};
pub use terminal::{terminal_tools, TerminalManager, TerminalOptions, TerminalSource};
pub use web::{web_search_tool, WebFetch, WebFetchConfig, WebSearchConfig};
pub use write_file::WriteFile;

/// What a host adds to the core tools.
#[derive(Default)]
pub struct ToolOptions {
    /// Limits and proxy of `web_fetch` (default: 30 s, 5 MB, 5 redirects, `SOCKS5_PROXY`).
    pub web_fetch: WebFetchConfig,
    /// Web search provider; `None`: no `web_search` tool.
    pub web_search: Option<WebSearchConfig>,
    /// Vision model for `describe_image`; `None`: no `describe_image` tool.
    pub vision: Option<VisionConfig>,
    /// The session model accepts images: `read_image` is offered instead of `describe_image`
    /// (seed 000 `forModel`).
    pub session_vision: bool,
    /// The session's own client and model: `media` describes images with it when
    /// `session_vision` is set.
    pub session_model: Option<VisionConfig>,
    /// Audio transcription for `media`; `None`: audio is "unsupported by this model".
    pub transcription: Option<TranscriptionConfig>,
    /// `ffprobe` for `media`'s video metadata; `None`: looked up in the system folders.
    pub ffprobe: Option<std::path::PathBuf>,
    /// The project's terminals: `terminal_list` / `terminal_read` read them.
    pub terminals: Option<(Arc<dyn TerminalSource>, String)>,
    /// Tools whose `description` call argument is switched off.
    pub no_call_description: Vec<String>,
    /// Where the conflict guard keeps what the agent saw, across the session's processes;
    /// `None`: in memory only.
    pub seen_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for ToolOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolOptions")
            .field("web_fetch", &self.web_fetch)
            .field("web_search", &self.web_search)
            .field("vision", &self.vision)
            .field("session_vision", &self.session_vision)
            .field("session_model", &self.session_model)
            .field("transcription", &self.transcription)
            .field("ffprobe", &self.ffprobe)
            .field("terminals", &self.terminals.as_ref().map(|(_, p)| p))
            .field("no_call_description", &self.no_call_description)
            .field("seen_file", &self.seen_file)
            .finish()
    }
}

/// Every built-in tool that needs no host configuration. The tools of one call share their
/// session state: the conflict guard, the background shell tasks and the command sessions
/// (tasks and sessions are killed when the last of these handles is dropped: the session ends).
pub fn core_tools() -> Vec<ToolHandle> {
    core_with(WebFetchConfig::default(), None)
}

fn core_with(web_fetch: WebFetchConfig, seen_file: Option<std::path::PathBuf>) -> Vec<ToolHandle> {
    let tasks = Arc::new(ShellTasks::new());
    let sessions = Arc::new(CommandSessions::new());
    let guard = match seen_file {
        Some(file) => ConflictGuard::watching().persisted(file),
        None => ConflictGuard::watching(),
    };
    let guard = Arc::new(guard);
    let tools: Vec<ToolHandle> = vec![
        Arc::new(ReadFile::new(guard.clone())),
        Arc::new(ListFiles),
        Arc::new(WriteFile::new(guard.clone())),
        Arc::new(ReplaceInFile::new(guard.clone())),
        Arc::new(ApplyPatch::new(guard.clone())),
        Arc::new(ApplyUnifiedDiff::new(guard.clone())),
        Arc::new(Grep),
        Arc::new(RunShell::new(tasks.clone())),
        Arc::new(ShellTaskOutput::new(tasks.clone())),
        Arc::new(ShellTaskKill::new(tasks)),
        Arc::new(ExecCommand::new(sessions.clone())),
        Arc::new(InputCommand::new(sessions)),
        Arc::new(GitStatus),
        Arc::new(GitLog),
        Arc::new(GitDiff),
        Arc::new(WebFetch::new(web_fetch)),
        Arc::new(TodoWrite),
        Arc::new(AskUser),
        Arc::new(ProposePlan),
        Arc::new(RequestDirectory),
    ];
    // Any tool's result tells the model when files it read changed on disk meanwhile.
    tools
        .into_iter()
        .map(|t| guard_watch::StaleNotice::wrap(t, guard.clone()))
        .collect()
}

/// The core tools plus what `opts` configures (web search, media, read_image or
/// describe_image by the session model's vision, terminal tools),
/// with call descriptions switched off where asked.
pub fn builtin_tools(opts: ToolOptions) -> Result<Vec<ToolHandle>, web::WebError> {
    let mut tools = core_with(opts.web_fetch, opts.seen_file.clone());
    if let Some(t) = web_search_tool(opts.web_search.as_ref())? {
        tools.push(t);
    }
    let media_vision = if opts.session_vision {
        opts.session_model.clone()
    } else {
        opts.vision.clone()
    };
    tools.push(Arc::new(Media::new(MediaConfig {
        session_model: opts
            .session_model
            .as_ref()
            .map(|m| m.model.clone())
            .unwrap_or_default(),
        vision: media_vision,
        transcription: opts.transcription,
        ffprobe: opts.ffprobe,
    })));
    if opts.session_vision {
        tools.push(Arc::new(ReadImage));
    } else if let Some(t) = describe_image_tool(opts.vision) {
        tools.push(t);
    }
    if let Some((source, project)) = opts.terminals {
        tools.extend(terminal_tools(source, project));
    }
    let off: Vec<&str> = opts
        .no_call_description
        .iter()
        .map(String::as_str)
        .collect();
    Ok(disable_call_descriptions(tools, &off))
}

/// The read-only tools (files, search, git), for subagents and read-only modes.
pub fn read_only_tools() -> Vec<ToolHandle> {
    vec![
        Arc::new(ReadFile::default()),
        Arc::new(ListFiles),
        Arc::new(Grep),
        Arc::new(GitStatus),
        Arc::new(GitLog),
        Arc::new(GitDiff),
    ]
}
