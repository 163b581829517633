//! The tool contract: typed metadata, JSON schema, cancellable execution.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_policy::PermissionSubject;
use cairn_protocol::{ContentPart, ToolMeta, ToolSchema};
use tokio_util::sync::CancellationToken;

use crate::host::ToolHost;
pub use crate::tool_error::ToolError;

/// Everything a tool call may use besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Workspace root: the permission boundary (absolute, canonical).
    pub workspace: PathBuf,
    /// Cairn's state dir for this session (tool results, task logs).
    pub state_dir: PathBuf,
    /// Tool call id.
    pub call_id: String,
    /// Cancelled when the turn is interrupted or the call times out.
    pub cancel: CancellationToken,
    /// The session: partial output, questions, plans, directory grants, todos.
    pub host: ToolHost,
}

impl ToolContext {
    /// A context with a detached host (no session behind it).
    pub fn new(
        workspace: PathBuf,
        state_dir: PathBuf,
        call_id: impl Into<String>,
        cancel: CancellationToken,
    ) -> Self {
        ToolContext {
            workspace,
            state_dir,
            call_id: call_id.into(),
            cancel,
            host: ToolHost::detached(),
        }
    }
}

impl ToolContext {
    /// Runs `write`, the call's change to `paths` (workspace-relative) on disk, unless the call
    /// was interrupted or the turn stopped waiting for it (then [`ToolError::Interrupted`] and
    /// nothing is written). Once `write` succeeds the paths are the call's produced files,
    /// reported even when the call is interrupted later. Blocking: call it from blocking code.
    pub fn write_files<T>(
        &self,
        paths: &[String],
        write: impl FnOnce() -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        self.host
            .writes()
            .run(!self.cancel.is_cancelled(), paths, write)
    }
}

/// A successful tool result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text handed to the model.
    pub content: String,
    /// Workspace-relative paths this call created or changed.
    pub produced_files: Vec<String>,
    /// Image parts handed back to the model with the text (`read_image`); usually empty.
    pub images: Vec<ContentPart>,
    /// Workspace-relative files the agent read that changed on disk since (by the user,
    /// another process or a command it ran): the model is told with the result
    /// ([`stale_notice`]), a face shows them as a typed fact (`tool_finished.staleFiles`).
    pub stale_files: Vec<String>,
}

/// Files a stale notice names in full (the rest are counted).
const NOTICE_FILES: usize = 10;

/// The model-facing notice naming files that changed on disk since the agent read them.
pub fn stale_notice(files: &[String]) -> String {
    let mut names: Vec<&str> = files.iter().map(String::as_str).collect();
    names.sort_unstable();
    let more = names.len().saturating_sub(NOTICE_FILES);
    names.truncate(NOTICE_FILES);
    let list = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "[notice: changed on disk since you last read them (by the user, another process or a \
         command you ran): {list}{more}. Read them again before editing them.]"
    )
}

impl ToolOutput {
    /// A result with text only.
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            produced_files: Vec::new(),
            images: Vec::new(),
            stale_files: Vec::new(),
        }
    }

    /// A result with text and image parts.
    pub fn with_images(content: impl Into<String>, images: Vec<ContentPart>) -> Self {
        ToolOutput {
            images,
            ..ToolOutput::text(content)
        }
    }
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and JSON Schema of the arguments.
    fn schema(&self) -> ToolSchema;
    /// Category, risk and approval metadata.
    fn meta(&self) -> ToolMeta;
    /// The paths a call with `args` would create, change, move or delete, when that is more
    /// than its `path` argument (a patch names its files inside its text). The permission
    /// engine checks every one against the workspace, protected folders and path rules.
    /// `None` (the default): the `path` argument is the only target.
    fn write_targets(&self, _args: &serde_json::Value) -> Option<Vec<String>> {
        None
    }
    /// What a call with `args` asks permission for: the command it runs, the URL it reaches,
    /// the paths it reads or writes, and whether the tool runs commands at all (only then is
    /// "always allow this command" offered). The permission engine and the rules match this,
    /// never argument names. The default reads the conventional names for the tool's
    /// capability tags ([`PermissionSubject::from_arguments`]); built-in tools name theirs.
    fn permission_subject(&self, args: &serde_json::Value) -> PermissionSubject {
        PermissionSubject::from_arguments(&self.meta().capabilities, args, self.write_targets(args))
    }
    /// What kind of work the tool does, reported on its calls' events so a UI can present
    /// them (icon, edit diff) without guessing from the name. Default: `other`.
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Other
    }
    /// What a call with `args` is about, in one line, reported on `tool_proposed` so a UI
    /// titles its card without reading argument names. Default: the files it writes when it
    /// names them ([`Tool::write_targets`]), else the first of the conventional arguments
    /// (`command`, `path`, `pattern`, `query`, `url`, `task`, `task_id`).
    fn subject(&self, args: &serde_json::Value) -> Option<String> {
        default_subject(args, self.write_targets(args))
    }
    /// Runs one call. Long-running tools must stop promptly when `ctx.cancel` fires: one still
    /// running a second after the user interrupted is abandoned. File changes go through
    /// [`ToolContext::write_files`], so an abandoned call writes nothing more and what it wrote
    /// is still reported.
    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

/// [`Tool::subject`]'s default: `targets` joined when there are any, else the first non-empty
/// conventional argument.
pub fn default_subject(args: &serde_json::Value, targets: Option<Vec<String>>) -> Option<String> {
    if let Some(t) = targets.filter(|t| !t.is_empty()) {
        return Some(t.join(", "));
    }
    [
        "command", "path", "pattern", "query", "url", "task", "task_id",
    ]
    .iter()
    .filter_map(|k| args.get(k).and_then(serde_json::Value::as_str))
    .find(|v| !v.trim().is_empty())
    .map(str::to_string)
}

/// A shared tool handle.
pub type ToolHandle = Arc<dyn Tool>;

/// Parses typed arguments out of a JSON value, mapping failures to [`ToolError::InvalidArguments`].
pub fn parse_args<T: serde::de::DeserializeOwned>(args: serde_json::Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

#[cfg(test)]
mod stale_tests {
    use super::*;

    #[test]
    fn the_stale_notice_names_files_sorted_and_caps_the_list() {
        let files: Vec<String> = (0..12).rev().map(|i| format!("f{i:02}.rs")).collect();
        let n = stale_notice(&files);
        assert!(n.starts_with("[notice: changed on disk"), "{n}");
        assert!(n.contains("`f00.rs`, `f01.rs`"), "{n}");
        assert!(n.contains("and 2 more"), "{n}");
    }
}
