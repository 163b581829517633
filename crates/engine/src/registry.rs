//! The tool registry: register, replace, remove, enable and disable tools by name.

use std::collections::BTreeMap;

use cairn_protocol::{ToolMeta, ToolSchema};

use crate::tool::ToolHandle;

/// One registered tool with its cached schema and metadata.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The implementation.
    pub handle: ToolHandle,
    /// Schema as registered (name is the key).
    pub schema: ToolSchema,
    /// Metadata as registered.
    pub meta: ToolMeta,
    /// Disabled tools are hidden from the model and refuse calls.
    pub enabled: bool,
    order: usize,
}

/// Tools by name, in registration order.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, RegisteredTool>,
    next_order: usize,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool; a tool with the same name is replaced. Returns the name.
    pub fn register(&mut self, handle: ToolHandle) -> String {
        let schema = handle.schema();
        let meta = handle.meta();
        let name = schema.name.clone();
        let order = match self.tools.get(&name) {
            Some(existing) => existing.order,
            None => {
                self.next_order += 1;
                self.next_order
            }
        };
        self.tools.insert(
            name.clone(),
            RegisteredTool {
                handle,
                schema,
                meta,
                enabled: true,
                order,
            },
        );
        name
    }

    /// Registers every tool of a list.
    pub fn register_all(&mut self, handles: impl IntoIterator<Item = ToolHandle>) {
        for h in handles {
            self.register(h);
        }
    }

    /// Removes a tool; returns whether it existed.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    /// Enables or disables a tool; returns whether it exists.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> bool {
        match self.tools.get_mut(name) {
            Some(t) => {
                t.enabled = enabled;
                true
            }
            None => false,
        }
    }

    /// Changes a tool's metadata (its timeout, its output cap); returns whether it exists.
    pub fn configure(&mut self, name: &str, f: impl FnOnce(&mut ToolMeta)) -> bool {
        match self.tools.get_mut(name) {
            Some(t) => {
                f(&mut t.meta);
                true
            }
            None => false,
        }
    }

    /// Looks up an enabled tool.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name).filter(|t| t.enabled)
    }

    /// Whether a tool of that name is registered (enabled or not).
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Schemas of the enabled tools, in registration order.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        let mut v: Vec<&RegisteredTool> = self.tools.values().filter(|t| t.enabled).collect();
        v.sort_by_key(|t| t.order);
        v.into_iter().map(|t| t.schema.clone()).collect()
    }

    /// Names of all registered tools, in registration order.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<&RegisteredTool> = self.tools.values().collect();
        v.sort_by_key(|t| t.order);
        v.into_iter().map(|t| t.schema.name.clone()).collect()
    }
}
