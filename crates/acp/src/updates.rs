//! The session's events as ACP `session/update`s: text and thought chunks, tool calls with
//! their kind (from the tool's typed kind, never from its title), title, locations and
//! content (old and new text of every edit, command output as text), and the todo list as
//! a plan.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind as AcpKind,
};
use cairn_protocol::{Event, PermissionRequired, TodoStatus, ToolKind, ToolStatus};
use cairn_runtime::workspace::preview::{edit_texts, text_now};

/// The most output of one command kept for its tool call (its tail).
const MAX_OUTPUT: usize = 64 * 1024;

/// What a tool call's later updates need.
struct Call {
    kind: ToolKind,
    name: String,
    args: serde_json::Value,
    /// What the call is about, as the tool said it (`tool_proposed.subject`).
    subject: Option<String>,
    /// Files an edit changes with their text before it (`None`: did not exist).
    before: Vec<(String, Option<String>)>,
    /// Predicted new texts (the permission's diff), by path.
    predicted: HashMap<String, String>,
    output: String,
}

/// Maps one session's events to updates, remembering its tool calls.
pub(crate) struct Mapper {
    workspace: PathBuf,
    calls: HashMap<String, Call>,
    /// Replaying stored history: whole messages, not deltas.
    replay: bool,
}

impl Mapper {
    /// A mapper for live events of a session in `workspace`.
    pub fn live(workspace: &Path) -> Mapper {
        Mapper {
            workspace: workspace.to_path_buf(),
            calls: HashMap::new(),
            replay: false,
        }
    }

    /// A mapper for stored history.
    pub fn replay(workspace: &Path) -> Mapper {
        Mapper {
            replay: true,
            ..Mapper::live(workspace)
        }
    }

    /// The updates `e` makes.
    pub fn map(&mut self, e: &Event) -> Vec<SessionUpdate> {
        match e {
            Event::TurnStart(t) if self.replay => vec![SessionUpdate::UserMessageChunk(
                ContentChunk::new(ContentBlock::from(t.input.clone())),
            )],
            Event::AssistantDelta(d) if !self.replay => chunk(&d.text, false),
            Event::ReasoningDelta(d) if !self.replay => chunk(&d.text, true),
            Event::AssistantMessage(m) if self.replay => {
                let mut out = chunk(&m.reasoning, true);
                out.extend(chunk(&m.text, false));
                out
            }
            Event::ToolProposed(p) => vec![self.proposed(
                &p.req_id,
                &p.name,
                &p.arguments,
                p.kind,
                p.subject.as_deref(),
            )],
            Event::ToolStarted(s) => vec![update(
                &s.req_id,
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            )],
            Event::ToolOutput(o) => {
                let Some(call) = self.calls.get_mut(&o.req_id) else {
                    return Vec::new();
                };
                call.output.push_str(&o.text);
                if call.output.len() > MAX_OUTPUT {
                    let mut cut = call.output.len() - MAX_OUTPUT;
                    while !call.output.is_char_boundary(cut) {
                        cut += 1;
                    }
                    call.output.drain(..cut);
                }
                vec![update(
                    &o.req_id,
                    ToolCallUpdateFields::new().content(vec![text(&call.output)]),
                )]
            }
            Event::ToolFinished(f) => vec![self.finished(f)],
            Event::TodosUpdated(t) => vec![SessionUpdate::Plan(Plan::new(
                t.todos
                    .iter()
                    .map(|item| {
                        PlanEntry::new(
                            item.content.clone(),
                            PlanEntryPriority::Medium,
                            match item.status {
                                TodoStatus::Pending => PlanEntryStatus::Pending,
                                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                                TodoStatus::Completed => PlanEntryStatus::Completed,
                            },
                        )
                    })
                    .collect(),
            ))],
            Event::Error(err) => chunk(&format!("\n\nError: {}\n", err.error), false),
            _ => Vec::new(),
        }
    }

    fn proposed(
        &mut self,
        id: &str,
        name: &str,
        args: &serde_json::Value,
        kind: ToolKind,
        subject: Option<&str>,
    ) -> SessionUpdate {
        let mut call = Call {
            kind,
            name: name.to_string(),
            args: args.clone(),
            subject: subject.map(str::to_string),
            before: Vec::new(),
            predicted: HashMap::new(),
            output: String::new(),
        };
        let mut content = Vec::new();
        if kind == ToolKind::Edit && !self.replay {
            if let Some(t) = edit_texts(&self.workspace, name, args) {
                call.predicted.insert(t.path.clone(), t.new.clone());
                content.push(diff(&self.workspace, &t.path, t.old.clone(), t.new));
                call.before.push((t.path, t.old));
            } else {
                for path in edited_paths(args) {
                    let old = text_now(&self.workspace, &path);
                    call.before.push((path, old));
                }
                if let Some(patch) = args.get("patch").or_else(|| args.get("diff")) {
                    if let Some(p) = patch.as_str() {
                        content.push(text(p));
                    }
                }
            }
        }
        let tool = ToolCall::new(id.to_string(), title(name, args, kind, subject))
            .kind(acp_kind(kind))
            .status(ToolCallStatus::Pending)
            .locations(self.locations(args))
            .content(content)
            .raw_input(args.clone());
        self.calls.insert(id.to_string(), call);
        SessionUpdate::ToolCall(tool)
    }

    /// The tool call a permission request is about (its kind, title and diff).
    pub fn permission_call(&self, p: &PermissionRequired) -> ToolCallUpdate {
        let known = self.calls.get(&p.req_id);
        let kind = known.map_or(ToolKind::Other, |c| c.kind);
        let subject = known.and_then(|c| c.subject.as_deref());
        let mut fields = ToolCallUpdateFields::new()
            .kind(acp_kind(kind))
            .title(title(&p.name, &p.arguments, kind, subject))
            .locations(self.locations(&p.arguments))
            .raw_input(p.arguments.clone());
        if let Some(call) = self.calls.get(&p.req_id) {
            let diffs: Vec<ToolCallContent> = call
                .before
                .iter()
                .filter_map(|(path, old)| {
                    let new = call.predicted.get(path)?;
                    Some(diff(&self.workspace, path, old.clone(), new.clone()))
                })
                .collect();
            if !diffs.is_empty() {
                fields = fields.content(diffs);
            }
        }
        ToolCallUpdate::new(p.req_id.clone(), fields)
    }

    fn finished(&mut self, f: &cairn_protocol::ToolFinished) -> SessionUpdate {
        let status = match f.status {
            ToolStatus::Ok => ToolCallStatus::Completed,
            _ => ToolCallStatus::Failed,
        };
        let call = self.calls.remove(&f.req_id);
        let mut content = Vec::new();
        if let Some(call) = &call {
            if call.kind == ToolKind::Edit && f.status == ToolStatus::Ok && !self.replay {
                for (path, old) in &call.before {
                    let new = text_now(&self.workspace, path).unwrap_or_default();
                    content.push(diff(&self.workspace, path, old.clone(), new));
                }
            } else if call.kind == ToolKind::Command && !call.output.is_empty() {
                content.push(text(&call.output));
            }
        }
        if content.is_empty() {
            if let Some(preview) = f.result_preview.as_deref().filter(|p| !p.is_empty()) {
                content.push(text(preview));
            }
        }
        if content.is_empty() && f.status != ToolStatus::Ok {
            let reason = f.reason.as_deref().unwrap_or("no reason given");
            content.push(text(&format!("{}: {reason}", f.status.as_str())));
        }
        let kind = call.as_ref().map_or(f.kind, |c| c.kind);
        let mut fields = ToolCallUpdateFields::new()
            .status(status)
            .kind(acp_kind(kind))
            .content(content)
            .raw_output(serde_json::json!({"status": f.status.as_str(), "reason": f.reason}));
        if let Some(c) = &call {
            fields = fields.title(title(&c.name, &c.args, c.kind, c.subject.as_deref()));
        }
        update(&f.req_id, fields)
    }

    fn locations(&self, args: &serde_json::Value) -> Vec<ToolCallLocation> {
        let mut out = Vec::new();
        for path in edited_paths(args) {
            let line = args
                .get("line")
                .or_else(|| args.get("offset"))
                .and_then(|v| v.as_u64())
                .and_then(|l| u32::try_from(l).ok());
            out.push(ToolCallLocation::new(self.workspace.join(path)).line(line));
        }
        out
    }
}

/// The ACP kind of a tool's typed kind: an edit is always `edit`, never a read kind; a
/// tool whose effects are unknown (MCP, subagents) is `other`.
pub(crate) fn acp_kind(kind: ToolKind) -> AcpKind {
    match kind {
        ToolKind::Read | ToolKind::Git => AcpKind::Read,
        ToolKind::Edit => AcpKind::Edit,
        ToolKind::Search => AcpKind::Search,
        ToolKind::Command => AcpKind::Execute,
        ToolKind::Web => AcpKind::Fetch,
        ToolKind::Todo => AcpKind::Think,
        ToolKind::Question | ToolKind::Agent | ToolKind::Mcp | ToolKind::Other => AcpKind::Other,
    }
}

/// A short title: what the call does, about what the tool said (`subject`), else what its
/// arguments name (a log written before tools said it).
fn title(name: &str, args: &serde_json::Value, kind: ToolKind, said: Option<&str>) -> String {
    let s = |k: &str| args.get(k).and_then(|v| v.as_str());
    let first = |keys: &[&str]| keys.iter().find_map(|k| s(k)).map(str::to_string);
    let subject = match kind {
        ToolKind::Command if said.is_some() => said.map(|c| format!("`{}`", one_line(c))),
        _ if said.is_some() => said.map(str::to_string),
        ToolKind::Command => first(&["command", "cmd"]).map(|c| format!("`{}`", one_line(&c))),
        ToolKind::Web => first(&["url", "query"]),
        ToolKind::Search => first(&["pattern", "query", "path"]),
        _ => first(&["path", "file", "url", "query", "pattern"]),
    };
    let verb = match kind {
        ToolKind::Read => "Read",
        ToolKind::Edit => "Edit",
        ToolKind::Search => "Search",
        ToolKind::Command => "Run",
        ToolKind::Web => "Fetch",
        _ => "",
    };
    match (verb, subject) {
        ("", Some(sub)) => format!("{name} {sub}"),
        ("", None) => name.to_string(),
        (v, Some(sub)) => format!("{v} {sub}"),
        (_, None) => name.to_string(),
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(120).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// The files a call's arguments name (`path`, or the files of a patch).
fn edited_paths(args: &serde_json::Value) -> Vec<String> {
    if let Some(p) = args.get("path").and_then(|v| v.as_str()) {
        return vec![p.to_string()];
    }
    let Some(patch) = args
        .get("patch")
        .or_else(|| args.get("diff"))
        .and_then(|v| v.as_str())
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let path = [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
            "+++ b/",
        ]
        .iter()
        .find_map(|p| line.strip_prefix(p));
        if let Some(p) = path.map(str::trim).filter(|p| !p.is_empty()) {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

fn diff(workspace: &Path, path: &str, old: Option<String>, new: String) -> ToolCallContent {
    ToolCallContent::Diff(Diff::new(workspace.join(path), new).old_text(old))
}

fn text(s: &str) -> ToolCallContent {
    ToolCallContent::from(s.to_string())
}

fn chunk(s: &str, thought: bool) -> Vec<SessionUpdate> {
    if s.is_empty() {
        return Vec::new();
    }
    let c = ContentChunk::new(ContentBlock::from(s.to_string()));
    vec![if thought {
        SessionUpdate::AgentThoughtChunk(c)
    } else {
        SessionUpdate::AgentMessageChunk(c)
    }]
}

fn update(id: &str, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields))
}
