//! The client's `fs/read_text_file` as the session's source of unsaved editor buffers:
//! `read_file` shows what the editor shows (after the disk read's rules and checks); Cairn
//! still writes to disk itself, with its checkpoints and conflict guard.

use std::path::Path;

use agent_client_protocol::v1::schema::ReadTextFileRequest;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use cairn_runtime::host::BufferSource;

/// Reads buffers of session `sid` from the client.
pub(crate) struct ClientBuffers {
    pub cx: ConnectionTo<Client>,
    pub sid: String,
}

#[async_trait::async_trait]
impl BufferSource for ClientBuffers {
    async fn read(&self, path: &Path) -> Option<String> {
        let request = ReadTextFileRequest::new(self.sid.clone(), path.to_path_buf());
        match self.cx.send_request(request).block_task().await {
            Ok(r) => Some(r.content),
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "no editor buffer");
                None
            }
        }
    }
}
