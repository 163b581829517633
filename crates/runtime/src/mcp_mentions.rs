//! `@server:uri` mentions, for the app and `cairn run` alike: when `server` names a configured
//! MCP server, the resource is read through that server (`resources/read`, never opened
//! locally, whatever its scheme) and attached as context, its block labelled
//! `server:uri`. A mention whose `server` names no configured server is left to the `@path`
//! rules unchanged.

use cairn_engine::attachments::ContextFile;

/// Trailing punctuation a mention at the end of a sentence may carry.
const TRAILING: &[char] = &['.', ',', ';', '!', '?', ')', ']', '}', '\'', '"'];

/// One `@server:uri` mention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMention {
    /// The configured server it names.
    pub server: String,
    /// The resource's URI, as written.
    pub uri: String,
}

impl ResourceMention {
    /// The mention as written, without `@` (`server:uri`).
    pub fn written(&self) -> String {
        format!("{}:{}", self.server, self.uri)
    }
}

/// The `@server:uri` mentions of `text` whose server is one of `servers`, each once, at
/// most [`crate::mentions::MAX_MENTIONS`].
pub fn find(text: &str, servers: &[String]) -> Vec<ResourceMention> {
    let mut out: Vec<ResourceMention> = Vec::new();
    for token in crate::mentions::tokens(text) {
        let token = token.trim_end_matches(TRAILING);
        let Some((server, uri)) = token.split_once(':') else {
            continue;
        };
        if uri.is_empty() || !servers.iter().any(|s| s == server) {
            continue;
        }
        let m = ResourceMention {
            server: server.to_string(),
            uri: uri.to_string(),
        };
        if !out.contains(&m) && out.len() < crate::mentions::MAX_MENTIONS {
            out.push(m);
        }
    }
    out
}

/// Reads each mention through its server: the attached context, and what could not be read
/// (the mention as written, why).
pub async fn read(
    manager: &cairn_mcp::McpManager,
    mentions: &[ResourceMention],
) -> (Vec<ContextFile>, Vec<(String, String)>) {
    let mut files = Vec::new();
    let mut failed = Vec::new();
    for m in mentions {
        match manager.read_resource(&m.server, &m.uri).await {
            Ok(text) => files.push(ContextFile {
                path: m.written(),
                text,
            }),
            Err(e) => failed.push((m.written(), e)),
        }
    }
    (files, failed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn only_configured_servers_make_resource_mentions() {
        let servers = vec!["every".to_string()];
        let found = find(
            "read @every:demo://resource/1. and @notes:todo.md, @every:demo://resource/1 again, \
             mail a@every:x",
            &servers,
        );
        assert_eq!(
            found,
            [ResourceMention {
                server: "every".into(),
                uri: "demo://resource/1".into()
            }]
        );
        assert!(find("@every: nothing", &servers).is_empty());
    }
}
