//! A server's resources, as two tools the model can use when the server declares resources:
//! `list_resources` (its resources and templates) and `read_resource` (one URI, read through
//! that server's `resources/read`; Cairn itself never opens a URI a server names, `file://`
//! or any other). A server's own tool of either name wins. Subscriptions are not offered.

use std::sync::Arc;

use rmcp::model::{ReadResourceRequestParams, ResourceContents, Tool, ToolAnnotations};
use rmcp::service::RoleClient;
use rmcp::Peer;
use serde_json::{json, Value};

use crate::result::decoded_len;

/// The tool that lists a server's resources.
pub const LIST: &str = "list_resources";
/// The tool that reads one of them.
pub const READ: &str = "read_resource";
/// Characters of one resource's text handed to the model.
const MAX_TEXT: usize = 100_000;

/// Whether the server declared resources.
pub fn declared(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|i| i.capabilities.resources.is_some())
}

/// The two tools, for a server that declared resources, minus names its own tools take.
pub fn tools(server_tools: &[Tool]) -> Vec<Tool> {
    let own = |n: &str| server_tools.iter().any(|t| t.name == n);
    let read_only = || Some(ToolAnnotations::new().read_only(true));
    let mut out = Vec::new();
    if !own(LIST) {
        let mut t = Tool::new(
            LIST,
            "List this MCP server's resources (URI, name, type) and URI templates.",
            Arc::new(schema(json!({}), &[])),
        );
        t.annotations = read_only();
        out.push(t);
    }
    if !own(READ) {
        let mut t = Tool::new(
            READ,
            "Read one of this MCP server's resources by URI (from list_resources, a template, \
             or a resource link the server returned), through the server.",
            Arc::new(schema(json!({"uri": {"type": "string"}}), &["uri"])),
        );
        t.annotations = read_only();
        out.push(t);
    }
    out
}

fn schema(properties: Value, required: &[&str]) -> rmcp::model::JsonObject {
    match json!({"type": "object", "properties": properties, "required": required}) {
        Value::Object(m) => m,
        _ => rmcp::model::JsonObject::new(),
    }
}

/// The text of `list_resources`.
pub async fn list(peer: &Peer<RoleClient>) -> Result<String, String> {
    let resources = peer
        .list_all_resources()
        .await
        .map_err(|e| format!("resources/list failed: {e}"))?;
    // Templates are optional: a server without them answers an error, which is no news.
    let templates = peer.list_all_resource_templates().await.unwrap_or_default();
    let field = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let mut lines = Vec::new();
    for r in &resources {
        let v = serde_json::to_value(r).unwrap_or_default();
        let mime = field(&v, "mimeType");
        lines.push(format!(
            "{}  {}{}",
            field(&v, "uri"),
            field(&v, "name"),
            if mime.is_empty() {
                String::new()
            } else {
                format!(" ({mime})")
            }
        ));
    }
    for t in &templates {
        let v = serde_json::to_value(t).unwrap_or_default();
        lines.push(format!(
            "template {}  {}",
            field(&v, "uriTemplate"),
            field(&v, "name")
        ));
    }
    if lines.is_empty() {
        return Ok("The server lists no resources.".into());
    }
    Ok(lines.join("\n"))
}

/// The text of `read_resource` for `uri`, read through the server.
pub async fn read(peer: &Peer<RoleClient>, uri: &str) -> Result<String, String> {
    let result = peer
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map_err(|e| format!("resources/read of `{uri}` failed: {e}"))?;
    let parts: Vec<String> = result
        .contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => {
                let mut t: String = text.chars().take(MAX_TEXT).collect();
                if t.len() < text.len() {
                    t.push_str("\n[…cut]");
                }
                t
            }
            ResourceContents::BlobResourceContents {
                mime_type, blob, ..
            } => format!(
                "[binary resource: {}, {} bytes]",
                mime_type.as_deref().unwrap_or("application/octet-stream"),
                decoded_len(blob)
            ),
            #[allow(unreachable_patterns)]
            _ => "[a resource content of a kind Cairn does not read]".to_string(),
        })
        .collect();
    if parts.is_empty() {
        return Ok(format!("`{uri}` is empty."));
    }
    Ok(parts.join("\n\n"))
}
