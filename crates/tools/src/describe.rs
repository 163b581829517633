//! Call descriptions (seed 000 `call_description`): long-running tools accept an optional
//! one-line `description` argument, written by the model and shown to the user while the call
//! runs (it arrives in `tool_proposed.arguments.description`). The property can be switched
//! off per tool with [`without_call_description`], which removes it from the schema the model
//! sees and drops it from arguments.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolHandle, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};

/// The argument's name.
pub const PROPERTY: &str = "description";

/// Adds the optional `description` property to a JSON-Schema object.
pub(crate) fn add_property(params: &mut serde_json::Value) {
    if let Some(props) = params.get_mut("properties").and_then(|p| p.as_object_mut()) {
        props.insert(
            PROPERTY.into(),
            serde_json::json!({
                "type": "string",
                "description": "One short sentence shown to the user while this runs, saying what it does and why (e.g. \"Run the unit tests of the parser\")."
            }),
        );
    }
}

/// `params` with the optional `description` property added.
pub(crate) fn with_property(mut params: serde_json::Value) -> serde_json::Value {
    add_property(&mut params);
    params
}

/// Whether a tool's schema offers a call description.
pub fn has_call_description(schema: &ToolSchema) -> bool {
    schema.parameters["properties"].get(PROPERTY).is_some()
}

/// The call description of a tool call, when it has one.
pub fn call_description(args: &serde_json::Value) -> Option<&str> {
    args.get(PROPERTY)
        .and_then(|d| d.as_str())
        .map(str::trim)
        .filter(|d| !d.is_empty())
}

/// `tool` without its `description` argument (unchanged when it has none).
pub fn without_call_description(tool: ToolHandle) -> ToolHandle {
    if has_call_description(&tool.schema()) {
        Arc::new(NoDescription(tool))
    } else {
        tool
    }
}

/// Switches call descriptions off for the tools named in `disabled`.
pub fn disable_call_descriptions(tools: Vec<ToolHandle>, disabled: &[&str]) -> Vec<ToolHandle> {
    tools
        .into_iter()
        .map(|t| {
            if disabled.contains(&t.schema().name.as_str()) {
                without_call_description(t)
            } else {
                t
            }
        })
        .collect()
}

struct NoDescription(ToolHandle);

#[async_trait]
impl Tool for NoDescription {
    fn kind(&self) -> cairn_protocol::ToolKind {
        self.0.kind()
    }
    fn subject(&self, args: &serde_json::Value) -> Option<String> {
        self.0.subject(args)
    }

    fn schema(&self) -> ToolSchema {
        let mut s = self.0.schema();
        if let Some(props) = s
            .parameters
            .get_mut("properties")
            .and_then(|p| p.as_object_mut())
        {
            props.remove(PROPERTY);
        }
        s
    }

    fn meta(&self) -> ToolMeta {
        self.0.meta()
    }

    fn write_targets(&self, args: &serde_json::Value) -> Option<Vec<String>> {
        // A wrapper must forward this: the permission engine checks these paths.
        self.0.write_targets(args)
    }

    // A wrapper must forward this too: it is what the permission engine checks.
    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        self.0.permission_subject(args)
    }

    async fn execute(
        &self,
        mut args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(obj) = args.as_object_mut() {
            obj.remove(PROPERTY);
        }
        self.0.execute(args, ctx).await
    }
}
