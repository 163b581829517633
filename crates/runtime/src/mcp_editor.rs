//! MCP servers a face passes for one session: an editor's, over ACP (`session/new`'s
//! `mcpServers`). They come from the editor's own configuration, so Cairn trusts them as the
//! editor does (no trust prompt); like a project's, their stdio servers run inside the
//! sandbox; a server of that name from Cairn's own config files is replaced for the session.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where editor servers come from (their `source`): never the user's file, so the sandbox
/// holds their processes as it holds a project's.
pub const EDITOR_SOURCE: &str = "(editor)";

/// How an editor's server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorTransport {
    /// A program speaking MCP over stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Request headers.
        headers: Vec<(String, String)>,
    },
    /// The legacy HTTP+SSE transport.
    Sse {
        /// The event-stream URL.
        url: String,
        /// Request headers.
        headers: Vec<(String, String)>,
    },
}

/// One server an editor passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorServer {
    /// Its name (tools become `mcp__<name>__<tool>`).
    pub name: String,
    /// How it is reached.
    pub transport: EditorTransport,
}

impl EditorServer {
    /// The server as Cairn's MCP manager runs it.
    pub fn config(&self) -> cairn_mcp::ServerConfig {
        let map = |pairs: &[(String, String)]| -> BTreeMap<String, String> {
            pairs.iter().cloned().collect()
        };
        let transport = match &self.transport {
            EditorTransport::Stdio { command, args, env } => cairn_mcp::TransportConfig::Stdio {
                program: command.clone(),
                args: args.clone(),
                env: map(env),
                cwd: None,
            },
            EditorTransport::Http { url, headers } => cairn_mcp::TransportConfig::Http {
                url: url.clone(),
                headers: map(headers),
            },
            EditorTransport::Sse { url, headers } => cairn_mcp::TransportConfig::Sse {
                url: url.clone(),
                headers: map(headers),
            },
        };
        cairn_mcp::ServerConfig {
            name: self.name.clone(),
            transport: Some(transport),
            enabled: true,
            startup_timeout: None,
            call_timeout: None,
            max_call_timeout: None,
            source: PathBuf::from(EDITOR_SOURCE),
            held: None,
        }
    }
}

/// `loaded` with `editor`'s servers added (replacing same-named ones).
pub fn add_to(loaded: &mut cairn_mcp::LoadedConfig, editor: &[EditorServer]) {
    for server in editor {
        loaded.servers.retain(|s| s.name != server.name);
        loaded.servers.push(server.config());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn an_editors_server_replaces_a_configured_one_and_is_sandboxed_like_a_projects() {
        let mut loaded = cairn_mcp::LoadedConfig::default();
        loaded.servers.push(
            EditorServer {
                name: "docs".into(),
                transport: EditorTransport::Http {
                    url: "http://127.0.0.1:1/old".into(),
                    headers: Vec::new(),
                },
            }
            .config(),
        );
        let editor = EditorServer {
            name: "docs".into(),
            transport: EditorTransport::Stdio {
                command: "docs-server".into(),
                args: vec!["--stdio".into()],
                env: vec![("TOKEN_FILE".into(), "/x".into())],
            },
        };
        add_to(&mut loaded, &[editor]);
        assert_eq!(loaded.servers.len(), 1);
        let s = &loaded.servers[0];
        assert!(matches!(
            &s.transport,
            Some(cairn_mcp::TransportConfig::Stdio { program, env, .. })
                if program == "docs-server" && env["TOKEN_FILE"] == "/x"
        ));
        assert!(crate::mcp_trust::is_project_source(&s.source, None));
        assert!(s.held.is_none());
    }
}
