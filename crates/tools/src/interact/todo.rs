//! `todo_write`: the agent's todo list, kept as session state and shown in the UI.

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{TodoItem, TodoStatus, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::interactive_meta;
use crate::args;

/// Items a list may hold.
pub const MAX_TODOS: usize = 100;

/// Replaces the session's todo list.
#[derive(Debug, Default, Clone, Copy)]
pub struct TodoWrite;

#[derive(Debug, Deserialize)]
struct Args {
    todos: Vec<Item>,
}

#[derive(Debug, Deserialize)]
struct Item {
    content: String,
    status: String,
}

fn parse_status(s: &str) -> Option<TodoStatus> {
    match s
        .trim()
        .to_ascii_lowercase()
        .replace(['-', ' '], "_")
        .as_str()
    {
        "pending" | "todo" => Some(TodoStatus::Pending),
        "in_progress" | "active" | "doing" => Some(TodoStatus::InProgress),
        "completed" | "done" | "complete" => Some(TodoStatus::Completed),
        _ => None,
    }
}

#[async_trait]
impl Tool for TodoWrite {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Todo
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "todo_write".into(),
            description: "Write your todo list for this task (the user sees it). Send the whole \
                list every time: it replaces the previous one. Use it for work with several \
                steps: mark one item in_progress while you work on it, and completed as soon as \
                it is done."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "description": "The complete list, in order.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string", "description": "What to do, one short imperative line."},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Where the item is."}
                            },
                            "required": ["content", "status"]
                        }
                    }
                },
                "required": ["todos"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        interactive_meta("task")
    }

    fn permission_subject(&self, _args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("todo_write", args)?;
        if args.todos.len() > MAX_TODOS {
            return Err(ToolError::InvalidArguments(format!(
                "todo_write: {} items; keep the list to at most {MAX_TODOS}",
                args.todos.len()
            )));
        }
        let mut todos = Vec::with_capacity(args.todos.len());
        for (i, item) in args.todos.into_iter().enumerate() {
            let content = item.content.trim().to_string();
            if content.is_empty() {
                return Err(ToolError::InvalidArguments(format!(
                    "todo_write: item {} has no content",
                    i + 1
                )));
            }
            let status = parse_status(&item.status).ok_or_else(|| {
                ToolError::InvalidArguments(format!(
                    "todo_write: item {} has status `{}`; use pending, in_progress or completed",
                    i + 1,
                    item.status
                ))
            })?;
            todos.push(TodoItem { content, status });
        }
        let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
        let (done, active, pending) = (
            count(TodoStatus::Completed),
            count(TodoStatus::InProgress),
            count(TodoStatus::Pending),
        );
        let mut text = format!(
            "Todo list updated: {} items ({done} completed, {active} in progress, {pending} pending).\n",
            todos.len()
        );
        for t in &todos {
            let mark = match t.status {
                TodoStatus::Completed => "[x]",
                TodoStatus::InProgress => "[>]",
                TodoStatus::Pending => "[ ]",
            };
            text.push_str(&format!("{mark} {}\n", t.content));
        }
        if active > 1 {
            text.push_str(
                "Note: more than one item is in progress; finish one before starting the next.\n",
            );
        }
        ctx.host.set_todos(todos).await;
        Ok(ToolOutput::text(text))
    }
}
