//! Unsaved editor buffers (an ACP client's `fs/read_text_file`): `read_file` shows the
//! editor's text of a file instead of what is on disk when the editor has a different one.
//! The disk read runs first, unchanged (path rules, deny rules, binary and size checks; the
//! conflict guard records the disk's content), so a change the agent then writes is checked
//! against the disk and lands there, with its checkpoint.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::{PermissionSubject, Tool, ToolContext, ToolError, ToolHandle, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};

use crate::paths::{self, Access};

/// How long a read waits for the editor before it shows the disk's text.
const EDITOR_WAIT: Duration = Duration::from_secs(5);

/// Where unsaved buffers come from.
#[async_trait]
pub trait BufferSource: Send + Sync {
    /// The editor's text of `path` (absolute, inside the workspace); `None` when it has none
    /// or cannot say (the disk's text is shown).
    async fn read(&self, path: &Path) -> Option<String>;
}

/// `read_file` reading through a [`BufferSource`].
pub struct BufferedRead {
    inner: ToolHandle,
    source: Arc<dyn BufferSource>,
}

impl BufferedRead {
    /// `inner` (the session's `read_file`) reading unsaved buffers from `source`.
    pub fn wrap(inner: ToolHandle, source: Arc<dyn BufferSource>) -> ToolHandle {
        Arc::new(BufferedRead { inner, source })
    }
}

#[async_trait]
impl Tool for BufferedRead {
    fn schema(&self) -> ToolSchema {
        self.inner.schema()
    }

    fn meta(&self) -> ToolMeta {
        self.inner.meta()
    }

    fn write_targets(&self, args: &serde_json::Value) -> Option<Vec<String>> {
        self.inner.write_targets(args)
    }

    fn permission_subject(&self, args: &serde_json::Value) -> PermissionSubject {
        self.inner.permission_subject(args)
    }

    fn kind(&self) -> cairn_protocol::ToolKind {
        self.inner.kind()
    }
    fn subject(&self, args: &serde_json::Value) -> Option<String> {
        self.inner.subject(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let shown = args
            .get("path")
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let num = |k: &str| args.get(k).and_then(|v| v.as_u64());
        let offset = num("offset").unwrap_or(1).max(1);
        let limit = num("limit")
            .unwrap_or(crate::read_file::DEFAULT_LIMIT)
            .max(1);
        let target = shown
            .as_deref()
            .and_then(|p| paths::resolve_for(&ctx, p, Access::Read).ok());
        // The disk read decides whether the file may be read at all.
        let disk = self.inner.execute(args, ctx).await?;
        let (Some(target), Some(shown)) = (target, shown) else {
            return Ok(disk);
        };
        let buffer = tokio::time::timeout(EDITOR_WAIT, self.source.read(&target.abs))
            .await
            .ok()
            .flatten();
        let Some(text) = buffer else {
            return Ok(disk);
        };
        let on_disk = std::fs::read_to_string(&target.abs).ok();
        if on_disk.as_deref() == Some(text.as_str()) {
            return Ok(disk);
        }
        crate::read_file::text_window(&text, &shown, offset, limit).map(ToolOutput::text)
    }
}
