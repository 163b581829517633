//! Tool execution inside a turn: permission checks, approvals, timeouts, parallel read-only
//! batches, and one result per call in call order.

use std::time::{Duration, Instant};

use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, ContentPart, Event, Message, PermissionRequired,
    ResultAttachment, ToolCall, ToolFinished, ToolKind, ToolMeta, ToolProposed, ToolResult,
    ToolStarted, ToolStatus,
};

use super::{now, TurnRunner};
use crate::config::DefaultApproval;
use crate::host::ToolHost;
use crate::locks::{lock, read};
use crate::permission::Decision;
use crate::registry::RegisteredTool;
use crate::tool::{ToolContext, ToolError, ToolOutput};

/// Grace period for a tool to stop after its cancellation fired (timeout path).
const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// Grace period for a tool to stop after the user interrupted the turn; a tool still running
/// then is abandoned (it can no longer write: see `produced.rs`) and the call is interrupted.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);
/// Characters of a result shown in `tool_finished.result_preview`.
const PREVIEW_CHARS: usize = 300;

/// A call after argument parsing and lookup.
pub(crate) struct Prepared {
    pub(crate) call: ToolCall,
    pub(crate) args: serde_json::Value,
    tool: Option<RegisteredTool>,
    /// Set when the call can't run (bad arguments, unknown tool).
    early: Option<(ToolStatus, String, String)>,
    /// A `PreToolUse` gate asked that the user decide this call, with its reason.
    hook_ask: Option<String>,
    /// A user-level `PreToolUse` gate approved this call.
    hook_allow: bool,
}

/// What one call produced.
pub(crate) struct Finished {
    pub(crate) status: ToolStatus,
    pub(crate) content: String,
    pub(crate) reason: Option<String>,
    pub(crate) duration_ms: Option<u64>,
    pub(crate) produced: Vec<String>,
    /// Image parts for the model (only on success).
    pub(crate) images: Vec<ContentPart>,
    /// Files the agent read that changed on disk since (only on success): the model's
    /// result gets the notice, the event the typed list.
    pub(crate) stale: Vec<String>,
}

impl TurnRunner<'_> {
    /// Runs every call of one assistant message; returns true when interrupted.
    pub(crate) async fn execute_tools(&mut self, calls: Vec<ToolCall>) -> bool {
        let results = self.run_calls(calls).await;
        let mut interrupted = self.cancel.is_cancelled();
        for (call, f) in results {
            interrupted |= f.status == ToolStatus::Interrupted;
            self.produced.extend(f.produced.iter().cloned());
            self.state.messages.push(Message::Tool(ToolResult {
                call_id: call.id,
                name: call.name,
                content: f.content,
                status: f.status,
                images: f.images,
            }));
        }
        interrupted
    }

    /// Runs `calls` as the model's calls run (hooks, permission, approval, checkpoints,
    /// execution, events); one result per call, in call order (the model's tool calls, and a
    /// command's `!` lines).
    pub(crate) async fn run_calls(&mut self, calls: Vec<ToolCall>) -> Vec<(ToolCall, Finished)> {
        let mut prepared: Vec<Prepared> = calls.into_iter().map(|c| self.prepare(c)).collect();
        for p in prepared.iter_mut().filter(|p| p.early.is_none()) {
            let writes = p
                .tool
                .as_ref()
                .map(|t| t.handle.permission_subject(&p.args).written())
                .unwrap_or_default();
            let verdict = self
                .gate_pre_tool(&p.call.id, &p.call.name, &p.args, writes)
                .await;
            if let Some(reason) = verdict.block {
                p.early = Some((
                    ToolStatus::Denied,
                    format!("blocked by a PreToolUse hook: {reason}"),
                    "hook_blocked".to_string(),
                ));
            }
            p.hook_ask = verdict.ask;
            p.hook_allow = verdict.approve;
            if let Some(args) = verdict.updated_input {
                p.args = args;
            }
        }
        let mut results: Vec<(ToolCall, Finished)> = Vec::new();
        let mut i = 0;
        while i < prepared.len() {
            if self.cancel.is_cancelled() {
                break;
            }
            // A run of consecutive read-only calls executes in parallel.
            let mut j = i;
            while j < prepared.len() && is_parallel(&prepared[j]) {
                j += 1;
            }
            if j > i + 1 {
                let batch = &prepared[i..j];
                for p in batch {
                    self.propose(p).await;
                }
                for p in batch {
                    self.started(p).await;
                }
                let futs = batch.iter().map(|p| self.invoke(p));
                let outs = futures::future::join_all(futs).await;
                for (p, f) in batch.iter().zip(outs) {
                    self.finished(p, &f).await;
                    results.push((p.call.clone(), f));
                }
                i = j;
                continue;
            }
            let p = &prepared[i];
            self.propose(p).await;
            let f = self.run_one(p).await;
            self.finished(p, &f).await;
            results.push((p.call.clone(), f));
            i += 1;
        }
        // Every call gets a result, also those never started.
        for p in prepared.iter().skip(results.len()) {
            let f = Finished {
                status: ToolStatus::Interrupted,
                content: error_json("interrupted by the user before it ran", "interrupted"),
                reason: Some("interrupted".into()),
                duration_ms: None,
                produced: Vec::new(),
                images: Vec::new(),
                stale: Vec::new(),
            };
            results.push((p.call.clone(), f));
        }
        for (call, f) in results.iter_mut() {
            if matches!(f.status, ToolStatus::Ok | ToolStatus::Error) {
                let args = serde_json::from_str(&call.arguments).unwrap_or_default();
                if let Some(note) = self
                    .gate_post_tool(&call.id, &call.name, &args, &f.content)
                    .await
                {
                    f.content.push_str(&note);
                }
            }
            if !f.stale.is_empty() {
                f.content.push_str("\n\n");
                f.content.push_str(&crate::tool::stale_notice(&f.stale));
            }
        }
        results
    }

    fn prepare(&self, call: ToolCall) -> Prepared {
        let raw = call.arguments.trim();
        let parsed = if raw.is_empty() {
            Ok(serde_json::Value::Object(Default::default()))
        } else {
            serde_json::from_str::<serde_json::Value>(raw)
        };
        let tool = read(&self.inner.registry).get(&call.name).cloned();
        let (args, early) = match parsed {
            Ok(v) if v.is_object() => (v, None),
            Ok(v) => (
                v,
                Some((
                    ToolStatus::Error,
                    "arguments must be a JSON object".to_string(),
                    "invalid_arguments".to_string(),
                )),
            ),
            Err(e) => (
                serde_json::Value::String(call.arguments.clone()),
                Some((
                    ToolStatus::Error,
                    format!("arguments are not valid JSON: {e}"),
                    "invalid_arguments".to_string(),
                )),
            ),
        };
        let early = early.or_else(|| {
            tool.is_none().then(|| {
                let names = read(&self.inner.registry).schemas();
                let list: Vec<String> = names.into_iter().map(|s| s.name).collect();
                (
                    ToolStatus::Error,
                    format!(
                        "unknown tool `{}`; available: {}",
                        call.name,
                        list.join(", ")
                    ),
                    "unknown_tool".to_string(),
                )
            })
        });
        Prepared {
            call,
            args,
            tool,
            early,
            hook_ask: None,
            hook_allow: false,
        }
    }

    async fn propose(&self, p: &Prepared) {
        self.emit(Event::ToolProposed(ToolProposed {
            req_id: p.call.id.clone(),
            name: p.call.name.clone(),
            arguments: p.args.clone(),
            task_id: self.task_id.clone(),
            kind: kind_of(p),
            subject: p.tool.as_ref().and_then(|t| t.handle.subject(&p.args)),
        }))
        .await;
    }

    async fn started(&self, p: &Prepared) {
        self.emit(Event::ToolStarted(ToolStarted {
            task_id: self.task_id.clone(),
            req_id: p.call.id.clone(),
            name: p.call.name.clone(),
            start_time: Some(now()),
        }))
        .await;
    }

    async fn finished(&self, p: &Prepared, f: &Finished) {
        self.emit(Event::ToolFinished(ToolFinished {
            task_id: self.task_id.clone(),
            req_id: p.call.id.clone(),
            name: p.call.name.clone(),
            status: f.status,
            reason: f.reason.clone(),
            duration: f.duration_ms,
            result_preview: Some(preview(&f.content)),
            kind: kind_of(p),
            truncated: f.content.chars().count() > PREVIEW_CHARS,
            attachments: f
                .images
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Image { mime_type, .. } => Some(ResultAttachment {
                        kind: "image".into(),
                        mime_type: mime_type.clone(),
                    }),
                    _ => None,
                })
                .collect(),
            stale_files: f.stale.clone(),
            // An edit tool that succeeded without writing anything (every edit that changes
            // a file goes through the call's write record).
            unchanged: kind_of(p) == cairn_protocol::ToolKind::Edit
                && f.status == ToolStatus::Ok
                && f.produced.is_empty(),
        }))
        .await;
    }

    /// Permission check, approval, then execution of one sequential call.
    async fn run_one(&mut self, p: &Prepared) -> Finished {
        if let Some((status, msg, kind)) = &p.early {
            return Finished {
                status: *status,
                content: error_json(msg, kind),
                reason: Some(msg.clone()),
                duration_ms: None,
                produced: Vec::new(),
                images: Vec::new(),
                stale: Vec::new(),
            };
        }
        let Some(tool) = &p.tool else {
            return denied("tool not available");
        };
        let subject = tool.handle.permission_subject(&p.args);
        let mut decision = lock(&self.inner.permissions).decide(&p.call.name, &tool.meta, &subject);
        if let Decision::Deny(why) = &decision {
            return denied(&why.to_string());
        }
        // A hook may make the user decide a call nothing else would ask about.
        if let (Decision::Allow(_), Some(reason)) = (&decision, &p.hook_ask) {
            decision = Decision::Ask(crate::permission::AskReason::Hook {
                tool: p.call.name.clone(),
                reason: reason.clone(),
            });
        }
        if decision.is_ask()
            && !self
                .inner
                .approver_set
                .load(std::sync::atomic::Ordering::SeqCst)
        {
            match read(&self.inner.config).default_approval {
                DefaultApproval::Allow => {}
                DefaultApproval::Deny => return denied("no approver is set; denied by default"),
                DefaultApproval::Error => {
                    let msg = format!(
                        "tool {} needs approval, but no approver was set when the engine was assembled",
                        p.call.name
                    );
                    self.fatal = Some(msg.clone());
                    return denied(&msg);
                }
            }
        } else if decision.is_ask() {
            let person = matches!(
                decision,
                Decision::Ask(
                    crate::permission::AskReason::Unsandboxed { .. }
                        | crate::permission::AskReason::Catastrophic { .. }
                )
            );
            // A user-level PreToolUse approval stands for the user, never where a person
            // must decide nor over a hook's own ask.
            if p.hook_allow && !person && p.hook_ask.is_none() {
                return self.run_allowed(p, tool).await;
            }
            match self
                .gate_permission(&p.call.id, &p.call.name, &p.args, person)
                .await
            {
                (Some(false), reason) => {
                    return denied(&format!(
                        "denied by a PermissionRequest hook: {}",
                        reason.unwrap_or_default()
                    ))
                }
                (Some(true), _) => return self.run_allowed(p, tool).await,
                _ => {}
            }
            self.gate_notify(format!(
                "Cairn needs your permission to use {}",
                p.call.name
            ));
            let request = ApprovalRequest {
                task_id: self.task_id.clone(),
                req_id: p.call.id.clone(),
                request_id: crate::approval::new_request_id(),
                name: p.call.name.clone(),
                arguments: p.args.clone(),
                reason: decision.reason(),
                category: tool.meta.category.clone(),
                always_allow: crate::permission::always_allow_in(
                    &p.call.name,
                    &subject,
                    &read(&self.inner.config).workspace,
                ),
            };
            let offered = request.always_allow.clone();
            self.emit(Event::PermissionRequired(PermissionRequired::from(
                &request,
            )))
            .await;
            let approver = read(&self.inner.approver).clone();
            let answer = tokio::select! {
                a = approver.approve(request) => a,
                _ = self.cancel.cancelled() => {
                    return Finished {
                        status: ToolStatus::Interrupted,
                        content: error_json("interrupted while waiting for approval", "interrupted"),
                        reason: Some("interrupted".into()),
                        duration_ms: None,
                        produced: Vec::new(),
                        images: Vec::new(),
                        stale: Vec::new(),
                    };
                }
            };
            if answer == ApprovalDecision::Deny {
                return denied(&approver.deny_reason());
            }
            lock(&self.inner.permissions).remember(&p.call.name, answer, offered.as_ref());
        }
        self.run_allowed(p, tool).await
    }

    /// Runs an allowed call: its checkpoints around the execution.
    async fn run_allowed(&mut self, p: &Prepared, tool: &RegisteredTool) -> Finished {
        let effect = tool
            .meta
            .mutating
            .then(|| super::checkpoint_call::side_effect(self, tool, &p.args));
        if let Some(kind) = effect {
            if let Err(e) = self.checkpoint_before(p, kind).await {
                return e;
            }
        }
        self.started(p).await;
        let f = self.invoke(p).await;
        if let Some(kind) = effect {
            self.checkpoint_after(p, kind, &f.produced).await;
        }
        f
    }

    /// Executes an allowed call with its timeout and the turn's cancellation.
    async fn invoke(&self, p: &Prepared) -> Finished {
        if let Some((status, msg, kind)) = &p.early {
            return Finished {
                status: *status,
                content: error_json(msg, kind),
                reason: Some(msg.clone()),
                duration_ms: None,
                produced: Vec::new(),
                images: Vec::new(),
                stale: Vec::new(),
            };
        }
        let Some(tool) = &p.tool else {
            return denied("tool not available");
        };
        let (workspace, state_dir, budget, default_timeout) = {
            let c = read(&self.inner.config);
            (
                c.workspace.clone(),
                c.state_dir.clone(),
                c.budget.clone(),
                c.default_tool_timeout_ms,
            )
        };
        let cancel = self.cancel.child_token();
        let ctx = ToolContext {
            workspace,
            state_dir: state_dir.clone(),
            call_id: p.call.id.clone(),
            cancel: cancel.clone(),
            host: ToolHost::attached(self.host.clone(), &p.call.id, &p.call.name),
        };
        let writes = ctx.host.writes().clone();
        let started = Instant::now();
        let result = run_with_timeout(
            tool,
            p.args.clone(),
            ctx,
            tool.meta.timeout_ms.or(default_timeout),
        )
        .await;
        // What the call wrote counts whatever its outcome; a call still running can no longer
        // write (closing waits for a write in progress).
        let written = writes.close();
        let duration_ms = Some(started.elapsed().as_millis() as u64);
        match result {
            Ok(out) => {
                let content = self.inner.exec.scrub(&cap_output(out.content, &tool.meta));
                Finished {
                    status: ToolStatus::Ok,
                    content: budget.apply(content, &state_dir, &p.call.id),
                    reason: None,
                    duration_ms,
                    produced: crate::produced::merged(out.produced_files, written),
                    images: out.images,
                    stale: out.stale_files,
                }
            }
            Err(ToolError::Interrupted) => Finished {
                status: ToolStatus::Interrupted,
                content: error_json("interrupted by the user", "interrupted"),
                reason: Some("interrupted".into()),
                duration_ms,
                produced: written,
                images: Vec::new(),
                stale: Vec::new(),
            },
            Err(e) if self.cancel.is_cancelled() => Finished {
                status: ToolStatus::Interrupted,
                content: error_json(&format!("interrupted by the user ({e})"), "interrupted"),
                reason: Some("interrupted".into()),
                duration_ms,
                produced: written,
                images: Vec::new(),
                stale: Vec::new(),
            },
            Err(e) => {
                let msg = budget.apply(
                    self.inner.exec.scrub(&e.to_string()),
                    &state_dir,
                    &p.call.id,
                );
                Finished {
                    status: ToolStatus::Error,
                    content: error_json(&msg, e.error_type()),
                    reason: Some(truncate(
                        &self.inner.exec.scrub(&e.to_string()),
                        PREVIEW_CHARS,
                    )),
                    duration_ms,
                    produced: written,
                    images: Vec::new(),
                    stale: Vec::new(),
                }
            }
        }
    }
}

/// Runs a tool; on timeout cancels it and waits a grace period for it to clean up; when the
/// turn is interrupted waits a short grace for it to stop, then abandons it (a tool blocked in
/// non-async work cannot hold the turn).
async fn run_with_timeout(
    tool: &RegisteredTool,
    args: serde_json::Value,
    ctx: ToolContext,
    timeout_ms: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let cancel = ctx.cancel.clone();
    let fut = tool.handle.execute(args, ctx);
    tokio::pin!(fut);
    let limit = async {
        match timeout_ms.filter(|ms| *ms > 0) {
            Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = &mut fut => r,
        _ = cancel.cancelled() => {
            match tokio::time::timeout(INTERRUPT_GRACE, fut).await {
                Ok(r) => r,
                Err(_) => {
                    tracing::warn!(tool = %tool.schema.name, "abandoned: the tool did not stop within {INTERRUPT_GRACE:?} of the interrupt");
                    Err(ToolError::Interrupted)
                }
            }
        }
        _ = limit => {
            let ms = timeout_ms.unwrap_or_default();
            cancel.cancel();
            let _ = tokio::time::timeout(CANCEL_GRACE, fut).await;
            Err(ToolError::Timeout {
                ms,
                detail: String::new(),
            })
        }
    }
}

fn is_parallel(p: &Prepared) -> bool {
    p.early.is_none()
        && p.hook_ask.is_none()
        && p.tool.as_ref().is_some_and(|t| t.meta.is_read_only())
}

fn denied(reason: &str) -> Finished {
    Finished {
        status: ToolStatus::Denied,
        content: error_json(&format!("permission denied: {reason}"), "denied"),
        reason: Some(reason.to_string()),
        duration_ms: None,
        produced: Vec::new(),
        images: Vec::new(),
        stale: Vec::new(),
    }
}

/// The `{error, error_type}` result the model sees for a failed call.
pub(crate) fn error_json(error: &str, error_type: &str) -> String {
    serde_json::json!({ "error": error, "error_type": error_type }).to_string()
}

/// Applies a tool's own `max_output_chars` (keeps the head, as seed 000 specifies).
fn cap_output(content: String, meta: &ToolMeta) -> String {
    match meta.max_output_chars {
        Some(max) if max > 0 && content.chars().count() > max => {
            let head: String = content.chars().take(max).collect();
            format!("{head}\n[output truncated to {max} chars]")
        }
        _ => content,
    }
}

/// The kind of the called tool (`other` for an unknown one).
fn kind_of(p: &Prepared) -> ToolKind {
    p.tool.as_ref().map_or(ToolKind::Other, |t| t.handle.kind())
}

fn preview(s: &str) -> String {
    truncate(s, PREVIEW_CHARS)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}
