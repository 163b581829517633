//! Lazy tool loading (seed §15.4): with many MCP tools only `mcp_search_tools` (read-only,
//! no approval) and `mcp_call_tool` (approval required) are offered; a search loads its top
//! matches so the model can also call them directly from the next request on.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolHandle, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use serde_json::{json, Value};

use crate::manager::{Inner, PlannedTool};
use crate::naming::server_prefix;
use crate::options::ServerStatus;
use crate::tool::{arguments, mcp_meta};

/// Name of the search meta tool.
pub const SEARCH_TOOL: &str = "mcp_search_tools";
/// Name of the call meta tool.
pub const CALL_TOOL: &str = "mcp_call_tool";

/// Longest description in search results.
const RESULT_DESCRIPTION: usize = 300;

/// The two meta tools.
pub(crate) fn meta_tools(inner: Weak<Inner>) -> Vec<ToolHandle> {
    vec![
        Arc::new(SearchTools {
            inner: inner.clone(),
        }),
        Arc::new(CallTool { inner }),
    ]
}

fn manager(inner: &Weak<Inner>) -> Result<Arc<Inner>, ToolError> {
    inner
        .upgrade()
        .ok_or_else(|| ToolError::Failed("the MCP manager is shut down".into()))
}

/// Scores a tool against the query words (name hits count double).
fn score(p: &PlannedTool, words: &[String]) -> usize {
    let name = format!("{} {}", p.registered, p.tool.name).to_lowercase();
    let desc = p.tool.description.as_deref().unwrap_or("").to_lowercase();
    words
        .iter()
        .map(|w| {
            2 * usize::from(name.contains(w.as_str())) + usize::from(desc.contains(w.as_str()))
        })
        .sum()
}

struct SearchTools {
    inner: Weak<Inner>,
}

#[async_trait]
impl Tool for SearchTools {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Mcp
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: SEARCH_TOOL.into(),
            description: "Searches the tools of the connected MCP servers by keywords. The best matches are loaded: call them by name directly, or through mcp_call_tool.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Keywords, e.g. `github issue create`."},
                    "limit": {"type": "integer", "description": "Most results (default 8)."}
                },
                "required": ["query"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        let mut m = ToolMeta::read_only("mcp");
        m.source = "mcp".into();
        m
    }

    fn permission_subject(&self, _args: &Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let inner = manager(&self.inner)?;
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase();
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map(|l| l as usize)
            .unwrap_or(inner.opts.lazy.search_load)
            .clamp(1, inner.opts.lazy.max_loaded.max(1));
        let words: Vec<String> = query.split_whitespace().map(str::to_string).collect();
        let plan = inner.plan();
        let mut scored: Vec<(usize, &PlannedTool)> = plan
            .iter()
            .map(|p| {
                (
                    if words.is_empty() {
                        1
                    } else {
                        score(p, &words)
                    },
                    p,
                )
            })
            .filter(|(s, _)| *s > 0)
            .collect();
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        scored.truncate(limit);
        {
            let mut loaded = inner.loaded.lock().unwrap_or_else(|e| e.into_inner());
            for (_, p) in &scored {
                loaded.retain(|n| n != &p.registered);
                loaded.push(p.registered.clone());
            }
            let max = inner.opts.lazy.max_loaded;
            if loaded.len() > max {
                let excess = loaded.len() - max;
                loaded.drain(..excess);
            }
        }
        let results: Vec<Value> = scored
            .iter()
            .map(|(_, p)| {
                let d: String = p
                    .tool
                    .description
                    .as_deref()
                    .unwrap_or("")
                    .chars()
                    .take(RESULT_DESCRIPTION)
                    .collect();
                json!({
                    "name": p.registered,
                    "server": p.slot.name(),
                    "description": d,
                    "parameters": crate::tool::parameters(&p.tool.input_schema),
                })
            })
            .collect();
        // Register the loaded tools in attached registries for the next request.
        inner.changed();
        let total = plan.len();
        let mut out = json!({ "matches": results, "total_tools": total });
        let starting = starting_servers(&inner);
        if !starting.is_empty() {
            out["note"] = Value::String(format!(
                "still starting, their tools are not searchable yet: {}; search again shortly",
                starting.join(", ")
            ));
        }
        Ok(ToolOutput::text(out.to_string()))
    }
}

struct CallTool {
    inner: Weak<Inner>,
}

#[async_trait]
impl Tool for CallTool {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Mcp
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: CALL_TOOL.into(),
            description: "Calls an MCP tool by the name mcp_search_tools returned (mcp__<server>__<tool>), with its arguments.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {"type": "object"}
                },
                "required": ["name"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        let mut m = mcp_meta("*");
        m.source = "mcp".into();
        m
    }

    fn permission_subject(&self, _args: &Value) -> cairn_engine::PermissionSubject {
        // The rules match its name only: the server tool it names is not looked into.
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let inner = manager(&self.inner)?;
        let name = args
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::InvalidArguments("`name` (string) is required".into()))?
            .to_string();
        let call_args = arguments(args.get("arguments").cloned().unwrap_or(Value::Null))?;
        let p = resolve(&inner, &name, &ctx).await?;
        p.slot.call(&p.tool.name, call_args, &ctx).await
    }
}

/// The tool registered as `name`; when it is not listed (yet), the state of the server its
/// name points at decides: a starting server is waited for (cancellably, within its startup
/// timeout), a failed or disabled one is reported as such.
async fn resolve(
    inner: &Arc<Inner>,
    name: &str,
    ctx: &ToolContext,
) -> Result<PlannedTool, ToolError> {
    let find = || inner.plan().into_iter().find(|p| p.registered == name);
    if let Some(p) = find() {
        return Ok(p);
    }
    let owner = inner
        .slots()
        .into_iter()
        .filter(|s| name.starts_with(&server_prefix(s.name())))
        .max_by_key(|s| server_prefix(s.name()).len());
    let Some(slot) = owner else {
        return Err(ToolError::NotFound(format!(
            "no MCP tool named `{name}`; use {SEARCH_TOOL} to find one"
        )));
    };
    // Fails with the server's state (starting too long, failed, disabled) when not ready.
    slot.ready_connection(ctx).await?;
    find().ok_or_else(|| {
        ToolError::NotFound(format!(
            "MCP server `{}` is ready but lists no tool named `{name}`; use {SEARCH_TOOL} to find one",
            slot.name()
        ))
    })
}

/// Servers still starting, for search results (their tools are not listed yet).
fn starting_servers(inner: &Inner) -> Vec<String> {
    inner
        .slots()
        .iter()
        .filter(|s| matches!(s.status(), ServerStatus::Starting))
        .map(|s| s.name().to_string())
        .collect()
}
