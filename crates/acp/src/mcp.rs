//! The MCP servers an editor passes with `session/new`, `session/load` and
//! `session/resume`: Cairn trusts the editor's configuration (no trust prompt) and runs them
//! for that session, stdio ones inside the sandbox like a project's
//! ([`cairn_runtime::mcp_editor`]).

use agent_client_protocol::v1::schema::McpServer;
use cairn_runtime::mcp_editor::{EditorServer, EditorTransport};

/// The servers Cairn runs for `list` (transports it does not speak are left out, logged).
pub fn editor_servers(list: &[McpServer]) -> Vec<EditorServer> {
    let pairs = |it: &mut dyn Iterator<Item = (String, String)>| it.collect::<Vec<_>>();
    list.iter()
        .filter_map(|s| match s {
            McpServer::Stdio(s) => Some(EditorServer {
                name: s.name.clone(),
                transport: EditorTransport::Stdio {
                    command: s.command.display().to_string(),
                    args: s.args.clone(),
                    env: pairs(&mut s.env.iter().map(|e| (e.name.clone(), e.value.clone()))),
                },
            }),
            McpServer::Http(s) => Some(EditorServer {
                name: s.name.clone(),
                transport: EditorTransport::Http {
                    url: s.url.clone(),
                    headers: pairs(
                        &mut s.headers.iter().map(|h| (h.name.clone(), h.value.clone())),
                    ),
                },
            }),
            McpServer::Sse(s) => Some(EditorServer {
                name: s.name.clone(),
                transport: EditorTransport::Sse {
                    url: s.url.clone(),
                    headers: pairs(
                        &mut s.headers.iter().map(|h| (h.name.clone(), h.value.clone())),
                    ),
                },
            }),
            #[allow(unreachable_patterns)]
            _ => {
                tracing::warn!("an MCP server of a transport Cairn does not speak was left out");
                None
            }
        })
        .collect()
}
