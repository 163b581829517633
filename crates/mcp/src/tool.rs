//! MCP tools as engine tools: `mcp__<server>__<tool>`, category `mcp`, high risk, approval
//! required, mutating (an MCP server's side effects are unknown).

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use rmcp::model::JsonObject;
use serde_json::Value;

use crate::slot::Slot;

/// Longest description handed to the model.
const MAX_DESCRIPTION: usize = 2000;

/// One remote tool registered under its sanitised name.
pub struct McpTool {
    registered: String,
    remote: String,
    description: String,
    parameters: Value,
    slot: Arc<Slot>,
}

impl McpTool {
    /// Wraps `tool` of `slot` as `registered`.
    pub fn new(registered: String, tool: &rmcp::model::Tool, slot: Arc<Slot>) -> Self {
        McpTool {
            registered,
            remote: tool.name.to_string(),
            description: describe(slot.name(), tool),
            parameters: parameters(&tool.input_schema),
            slot,
        }
    }

    /// The name the server knows the tool by.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }
}

/// The tool's description with its origin, capped.
pub fn describe(server: &str, tool: &rmcp::model::Tool) -> String {
    let d = tool
        .description
        .as_deref()
        .or(tool.title.as_deref())
        .unwrap_or("")
        .trim();
    let mut d: String = d.chars().take(MAX_DESCRIPTION).collect();
    if !d.is_empty() {
        d.push(' ');
    }
    d.push_str(&format!("(MCP server `{server}`, tool `{}`)", tool.name));
    d
}

/// The input schema as an object schema the providers accept.
pub fn parameters(schema: &JsonObject) -> Value {
    let mut s = schema.clone();
    if s.get("type").and_then(Value::as_str) != Some("object") {
        s.insert("type".into(), Value::String("object".into()));
    }
    if !s.contains_key("properties") {
        s.insert("properties".into(), Value::Object(Default::default()));
    }
    Value::Object(s)
}

/// The metadata of every MCP tool of `server`.
pub fn mcp_meta(server: &str) -> ToolMeta {
    ToolMeta {
        category: "mcp".into(),
        risk: RiskLevel::High,
        capabilities: vec!["mcp".into()],
        requires_approval: true,
        mutating: true,
        // The slot enforces its own progress-aware limits.
        timeout_ms: None,
        max_output_chars: None,
        source: format!("mcp:{server}"),
    }
}

/// Arguments as the object MCP expects (`null` = none).
pub fn arguments(args: Value) -> Result<JsonObject, ToolError> {
    match args {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(JsonObject::new()),
        other => Err(ToolError::InvalidArguments(format!(
            "expected a JSON object of arguments, got {other}"
        ))),
    }
}

#[async_trait]
impl Tool for McpTool {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Mcp
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.registered.clone(),
            description: self.description.clone(),
            parameters: self.parameters.clone(),
        }
    }

    fn meta(&self) -> ToolMeta {
        mcp_meta(self.slot.name())
    }

    fn permission_subject(&self, args: &Value) -> cairn_engine::PermissionSubject {
        // Cairn cannot see what a server does with its arguments: the rules still match its
        // `command` and `path`, and it is never a command-running tool.
        cairn_engine::PermissionSubject::opaque(args)
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args = arguments(args)?;
        self.slot.call(&self.remote, args, &ctx).await
    }
}
