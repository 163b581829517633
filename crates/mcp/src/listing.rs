//! A tolerant `tools/list` over every page: an entry that does not parse is skipped with a
//! warning naming it, a missing `inputSchema` is taken as `{"type":"object"}` (what other
//! clients effectively do), and only a reply that is not a tools/list result at all fails.

use std::collections::HashSet;

use rmcp::model::{
    ClientRequest, ErrorCode, JsonObject, ListToolsRequest, PaginatedRequestParams, ServerResult,
    Tool,
};
use rmcp::service::{RoleClient, ServiceError};
use rmcp::Peer;
use serde_json::Value;

use crate::ServerError;

/// Most pages followed before the listing stops (a server repeating cursors forever).
const MAX_PAGES: usize = 100;

/// Longest tool name quoted in a warning.
const NAME_IN_WARNING: usize = 80;

/// The tools a server listed and what was wrong with its listing.
#[derive(Debug, Default)]
pub struct Listing {
    /// Every tool that could be used, in listing order.
    pub tools: Vec<Tool>,
    /// Entries skipped or repaired, pages not followed (one line each).
    pub warnings: Vec<String>,
    /// Tools Cairn added for the server's resources ([`crate::resources`]).
    pub resource_tools: Vec<String>,
}

/// Why no tool list could be had.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The reply is not a tools/list result (e.g. `tools` is not a list).
    #[error("invalid tools/list response: {0}")]
    Invalid(String),
    /// The request itself failed (an error answer, a closed connection).
    #[error("tools/list failed: {0}")]
    Failed(#[source] ServiceError),
}

impl ListError {
    /// Whether it failed because the connection ended (so the server's exit is the news).
    pub fn is_closed(&self) -> bool {
        matches!(
            self,
            ListError::Failed(ServiceError::TransportClosed | ServiceError::TransportSend(_))
        )
    }
}

/// Lists every page of tools; later pages that fail are reported as warnings, not errors.
/// A server that declared resources gets the tools that list and read them.
pub async fn list_tools(
    peer: &Peer<RoleClient>,
    task_only: &crate::task_only::TaskOnly,
) -> Result<Listing, ListError> {
    let mut listing = list_server_tools(peer).await?;
    let (offered, tasks): (Vec<Tool>, Vec<Tool>) = std::mem::take(&mut listing.tools)
        .into_iter()
        .partition(|t| !task_only.contains(&t.name));
    listing.tools = offered;
    for t in tasks {
        listing.warnings.push(format!(
            "tool `{}` is not offered: the server runs it only as a task \
             (execution.taskSupport: required), which Cairn does not support yet",
            clip(&t.name)
        ));
    }
    if crate::resources::declared(peer) {
        let extra = crate::resources::tools(&listing.tools);
        listing.resource_tools = extra.iter().map(|t| t.name.to_string()).collect();
        listing.tools.extend(extra);
    }
    Ok(listing)
}

async fn list_server_tools(peer: &Peer<RoleClient>) -> Result<Listing, ListError> {
    let mut listing = Listing::default();
    let mut seen_cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for page_no in 1..=MAX_PAGES {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params,
            extensions: Default::default(),
        });
        let page = match peer.send_request(request).await {
            Ok(result) => page_of(result),
            Err(e) if page_no == 1 => {
                if let ServiceError::McpError(ref err) = e {
                    if err.code == ErrorCode::METHOD_NOT_FOUND {
                        listing
                            .warnings
                            .push("the server does not implement tools/list; no tools".into());
                        return Ok(listing);
                    }
                }
                return Err(ListError::Failed(e));
            }
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                return Err(ListError::Failed(e))
            }
            Err(e) => {
                listing.warnings.push(format!(
                    "tools/list page {page_no} failed ({e}); only the tools of earlier pages are used"
                ));
                return Ok(listing);
            }
        };
        let (entries, next) = match page {
            Ok(p) => p,
            Err(reason) if page_no == 1 => return Err(ListError::Invalid(reason.to_string())),
            Err(reason) => {
                listing.warnings.push(format!(
                    "tools/list page {page_no} is invalid ({reason}); only the tools of earlier pages are used"
                ));
                return Ok(listing);
            }
        };
        for (i, entry) in entries.into_iter().enumerate() {
            match entry {
                Ok((tool, note)) => {
                    if let Some(note) = note {
                        listing.warnings.push(note);
                    }
                    listing.tools.push(tool);
                }
                Err(why) => listing.warnings.push(format!(
                    "skipped tools/list entry {} of page {page_no}: {why}",
                    i + 1
                )),
            }
        }
        match next {
            None => return Ok(listing),
            Some(c) if !seen_cursors.insert(c.clone()) => {
                listing.warnings.push(format!(
                    "tools/list repeated the cursor `{}`; stopped paging",
                    clip(&c)
                ));
                return Ok(listing);
            }
            Some(c) => cursor = Some(c),
        }
    }
    listing.warnings.push(format!(
        "tools/list has more than {MAX_PAGES} pages; the rest are not listed"
    ));
    Ok(listing)
}

/// A page's entries (each parsed, or why not) and next cursor, or why the reply is not a
/// tools/list result.
fn page_of(result: ServerResult) -> Result<(Vec<Entry>, Option<String>), ServerError> {
    let value = match result {
        ServerResult::ListToolsResult(r) => {
            let cursor = r.next_cursor.filter(|c| !c.is_empty());
            return Ok((r.tools.into_iter().map(|t| Ok((t, None))).collect(), cursor));
        }
        ServerResult::CustomResult(c) => c.0,
        other => serde_json::to_value(&other).map_err(|e| ServerError::Listing(e.to_string()))?,
    };
    let Value::Object(mut map) = value else {
        return Err(ServerError::Listing(format!(
            "the result is {}, not an object",
            kind(&value)
        )));
    };
    let entries = match map.remove("tools") {
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(ServerError::Listing(format!(
                "`tools` is {}, not a list",
                kind(&other)
            )))
        }
        None => {
            return Err(ServerError::Listing(
                "the result has no `tools` list".into(),
            ))
        }
    };
    let cursor = match map.remove("nextCursor") {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    };
    Ok((entries.into_iter().map(parse_entry).collect(), cursor))
}

/// A parsed entry: the tool and a note when it was repaired, or why it is unusable.
pub type Entry = Result<(Tool, Option<String>), ServerError>;

/// One entry as a tool (with a note when it was repaired), or why it is unusable.
pub fn parse_entry(entry: Value) -> Entry {
    let Value::Object(mut map) = entry else {
        return Err(ServerError::Listing(format!(
            "{}, not a tool object",
            kind(&entry)
        )));
    };
    let name = match map.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => {
            return Err(ServerError::Listing("the tool's `name` is empty".into()))
        }
        Some(other) => {
            return Err(ServerError::Listing(format!(
                "the tool's `name` is {}",
                kind(other)
            )))
        }
        None => return Err(ServerError::Listing("the tool has no `name`".into())),
    };
    let shown = clip(&name);
    let mut note = None;
    match map.get("inputSchema") {
        Some(Value::Object(_)) => {}
        // `true` is the JSON Schema that accepts anything.
        None | Some(Value::Null) | Some(Value::Bool(true)) => {
            note = Some(format!(
                "tool `{shown}` has no inputSchema; it is offered as taking an object of any arguments"
            ));
            map.insert("inputSchema".into(), empty_object_schema());
        }
        Some(other) => {
            return Err(ServerError::Listing(format!(
                "tool `{shown}`: inputSchema is {}, not a JSON Schema object",
                kind(other)
            )))
        }
    }
    let whole = Value::Object(map.clone());
    match serde_json::from_value::<Tool>(whole) {
        Ok(tool) => Ok((tool, note)),
        Err(e) => {
            // Keep what matters (name, description, schema) and drop the malformed extras.
            let schema: JsonObject = match map.remove("inputSchema") {
                Some(Value::Object(o)) => o,
                _ => JsonObject::new(),
            };
            let text = |key: &str| match map.get(key) {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            };
            let mut tool = Tool::new_with_raw(name, text("description").map(Into::into), schema);
            tool.title = text("title");
            let why = format!("tool `{shown}`: malformed optional fields ignored ({e})");
            Ok((
                tool,
                Some(match note {
                    Some(n) => format!("{n}; {why}"),
                    None => why,
                }),
            ))
        }
    }
}

fn empty_object_schema() -> Value {
    let mut o = JsonObject::new();
    o.insert("type".into(), Value::String("object".into()));
    Value::Object(o)
}

/// `a string`, `an array`, … for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A server-chosen string fit for a one-line message.
fn clip(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() > NAME_IN_WARNING {
        let mut c: String = clean.chars().take(NAME_IN_WARNING).collect();
        c.push('…');
        c
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use rmcp::model::CustomResult;
    use serde_json::json;

    #[test]
    fn a_missing_or_null_schema_becomes_an_empty_object_schema() {
        for entry in [
            json!({"name": "a"}),
            json!({"name": "a", "inputSchema": null}),
            json!({"name": "a", "inputSchema": true}),
        ] {
            let (tool, note) = parse_entry(entry).unwrap();
            assert_eq!(
                Value::Object((*tool.input_schema).clone()),
                json!({"type": "object"})
            );
            assert!(note.unwrap().contains("tool `a` has no inputSchema"));
        }
    }

    #[test]
    fn unusable_entries_say_why() {
        let why = |v| parse_entry(v).unwrap_err().to_string();
        assert_eq!(why(json!(42)), "a number, not a tool object");
        assert_eq!(why(json!({"inputSchema": {}})), "the tool has no `name`");
        assert_eq!(why(json!({"name": 3})), "the tool's `name` is a number");
        assert_eq!(
            why(json!({"name": "s", "inputSchema": "object"})),
            "tool `s`: inputSchema is a string, not a JSON Schema object"
        );
    }

    #[test]
    fn malformed_optional_fields_are_dropped_not_the_tool() {
        let (tool, note) = parse_entry(json!({
            "name": "odd", "description": "Does odd things.",
            "inputSchema": {"type": "object"}, "annotations": "loud", "icons": 3
        }))
        .unwrap();
        assert_eq!(tool.name, "odd");
        assert_eq!(tool.description.as_deref(), Some("Does odd things."));
        assert!(tool.annotations.is_none());
        assert!(note.unwrap().contains("malformed optional fields ignored"));
    }

    #[test]
    fn a_reply_without_a_tools_list_is_invalid() {
        let page = |v| page_of(ServerResult::CustomResult(CustomResult(v)));
        assert_eq!(
            page(json!({"tools": "x"})).unwrap_err().to_string(),
            "`tools` is a string, not a list"
        );
        assert_eq!(
            page(json!([])).unwrap_err().to_string(),
            "the result is an array, not an object"
        );
        assert_eq!(
            page(json!({"other": 1})).unwrap_err().to_string(),
            "the result has no `tools` list"
        );
        let (entries, cursor) = page(json!({"tools": [{"name": "a"}], "nextCursor": "2"})).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(cursor.as_deref(), Some("2"));
    }

    #[test]
    fn a_listing_with_a_bad_entry_reaches_us_whole() {
        // rmcp's untagged `ServerResult` must not let another variant swallow the listing.
        let raw = json!({"tools": [{"name": "good", "inputSchema": {"type": "object"}}, {"name": "bad"}]});
        let r: ServerResult = serde_json::from_value(raw).unwrap();
        let (entries, _) = page_of(r).unwrap();
        assert_eq!(entries.len(), 2);
    }
}
