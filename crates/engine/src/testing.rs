//! In-process fakes for tests: a scripted LLM client, closure-backed tools and a scripted
//! approver. No network, no processes.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cairn_protocol::{ApprovalDecision, ApprovalRequest, ToolCall, ToolMeta, ToolSchema};
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::llm::{LlmChunk, LlmClient, LlmOutcome, LlmRequest, OutcomeStatus};
use crate::locks::lock;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput};

/// One scripted LLM response.
#[derive(Debug, Clone)]
pub enum FakeReply {
    /// These chunks, then `End(Completed)` unless the list ends with its own `End`.
    Chunks(Vec<LlmChunk>),
    /// Emit these chunks, then wait until cancelled and end with `Aborted`.
    Hang(Vec<LlmChunk>),
    /// Sleep, then behave like `Chunks`.
    Delayed(Duration, Vec<LlmChunk>),
}

impl FakeReply {
    /// A text-only reply.
    pub fn text(t: &str) -> Self {
        FakeReply::Chunks(vec![LlmChunk::Text(t.to_string())])
    }

    /// A reply calling one tool.
    pub fn tool(id: &str, name: &str, args: serde_json::Value) -> Self {
        FakeReply::Chunks(vec![LlmChunk::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: args.to_string(),
        })])
    }

    /// A reply calling several tools.
    pub fn tools(calls: &[(&str, &str, serde_json::Value)]) -> Self {
        FakeReply::Chunks(
            calls
                .iter()
                .map(|(id, name, args)| {
                    LlmChunk::ToolCall(ToolCall {
                        id: id.to_string(),
                        name: name.to_string(),
                        arguments: args.to_string(),
                    })
                })
                .collect(),
        )
    }

    /// A reply that fails with this outcome.
    pub fn outcome(o: LlmOutcome) -> Self {
        FakeReply::Chunks(vec![LlmChunk::End(o)])
    }
}

/// An LLM client that plays back a script and records every request.
#[derive(Clone, Default)]
pub struct FakeLlm {
    script: Arc<Mutex<VecDeque<FakeReply>>>,
    requests: Arc<Mutex<Vec<LlmRequest>>>,
    context_limit: Arc<Mutex<Option<u64>>>,
    /// Whether naming requests take their reply from the script too (tests of naming).
    script_naming: Arc<std::sync::atomic::AtomicBool>,
}

impl FakeLlm {
    /// A client with this script.
    pub fn new(script: Vec<FakeReply>) -> Self {
        FakeLlm {
            script: Arc::new(Mutex::new(script.into())),
            requests: Arc::default(),
            context_limit: Arc::default(),
            script_naming: Arc::default(),
        }
    }

    /// Lets session-naming requests take their replies from the script and be recorded
    /// (otherwise they are answered apart: the user text's first line).
    pub fn script_naming(&self) {
        self.script_naming
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Appends a reply.
    pub fn push(&self, reply: FakeReply) {
        lock(&self.script).push_back(reply);
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<LlmRequest> {
        lock(&self.requests).clone()
    }

    /// Rejects (context overflow, script untouched) every request estimated over `limit` tokens.
    pub fn set_context_limit(&self, limit: Option<u64>) {
        *lock(&self.context_limit) = limit;
    }

    /// Estimated tokens of a request: its messages and its tool definitions.
    pub fn request_tokens(request: &LlmRequest) -> u64 {
        let tools = serde_json::to_string(&request.tools).map_or(0, |s| s.len() as u64 / 4);
        let messages: u64 = request
            .messages
            .iter()
            .map(crate::tokens::estimate_message_tokens)
            .sum();
        messages + tools
    }
}

impl LlmClient for FakeLlm {
    fn stream(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk> {
        // A session-naming request is answered apart from the script (tests written before
        // sessions named themselves need no changes): the user text's first line.
        if request.req_id.starts_with(crate::llm::NAMING_REQ_PREFIX)
            && !self.script_naming.load(std::sync::atomic::Ordering::SeqCst)
        {
            let title = request
                .messages
                .iter()
                .rev()
                .find(|m| matches!(m, cairn_protocol::Message::User { .. }))
                .map(|m| m.text())
                .unwrap_or_default()
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("untitled")
                .chars()
                .take(60)
                .collect::<String>();
            return futures::stream::iter(vec![
                LlmChunk::Text(title),
                LlmChunk::End(LlmOutcome::completed()),
            ])
            .boxed();
        }
        let limit = *lock(&self.context_limit);
        let tokens = Self::request_tokens(&request);
        lock(&self.requests).push(request);
        if let Some(limit) = limit.filter(|l| tokens > *l) {
            return futures::stream::iter(vec![LlmChunk::End(
                LlmOutcome::new(
                    OutcomeStatus::Failed,
                    Some(format!(
                        "context_length_exceeded: {tokens} tokens > limit {limit}"
                    )),
                )
                .with_kind(crate::llm::FailureKind::ContextOverflow)
                .with_http_status(400),
            )])
            .boxed();
        }
        let next = lock(&self.script).pop_front();
        let Some(reply) = next else {
            return futures::stream::iter(vec![LlmChunk::End(LlmOutcome::new(
                OutcomeStatus::Failed,
                Some("fake script exhausted".into()),
            ))])
            .boxed();
        };
        let with_end = |mut chunks: Vec<LlmChunk>| {
            if !matches!(chunks.last(), Some(LlmChunk::End(_))) {
                chunks.push(LlmChunk::End(LlmOutcome::completed()));
            }
            chunks
        };
        match reply {
            FakeReply::Chunks(c) => futures::stream::iter(with_end(c)).boxed(),
            FakeReply::Delayed(d, c) => {
                let chunks = with_end(c);
                futures::stream::once(async move {
                    tokio::select! {
                        _ = tokio::time::sleep(d) => chunks,
                        _ = cancel.cancelled() => vec![LlmChunk::End(LlmOutcome::new(OutcomeStatus::Aborted, None))],
                    }
                })
                .flat_map(futures::stream::iter)
                .boxed()
            }
            FakeReply::Hang(c) => futures::stream::iter(c)
                .chain(futures::stream::once(async move {
                    cancel.cancelled().await;
                    LlmChunk::End(LlmOutcome::new(OutcomeStatus::Aborted, None))
                }))
                .boxed(),
        }
    }
}

type ToolFn = dyn Fn(
        serde_json::Value,
        ToolContext,
    ) -> Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>
    + Send
    + Sync;

/// A tool backed by a closure, with explicit metadata.
pub struct FnTool {
    schema: ToolSchema,
    meta: ToolMeta,
    kind: cairn_protocol::ToolKind,
    f: Box<ToolFn>,
}

impl FnTool {
    /// A tool named `name` with this metadata running `f`.
    pub fn new<F, Fut>(name: &str, meta: ToolMeta, f: F) -> Arc<Self>
    where
        F: Fn(serde_json::Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        FnTool::of_kind(name, cairn_protocol::ToolKind::Other, meta, f)
    }

    /// Like [`FnTool::new`], reporting `kind` (see [`Tool::kind`]).
    pub fn of_kind<F, Fut>(
        name: &str,
        kind: cairn_protocol::ToolKind,
        meta: ToolMeta,
        f: F,
    ) -> Arc<Self>
    where
        F: Fn(serde_json::Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        Arc::new(FnTool {
            kind,
            schema: ToolSchema {
                name: name.to_string(),
                description: format!("test tool {name}"),
                parameters: serde_json::json!({"type": "object", "properties": {}}),
            },
            meta,
            f: Box::new(move |a, c| Box::pin(f(a, c))),
        })
    }
}

#[async_trait]
impl Tool for FnTool {
    fn schema(&self) -> ToolSchema {
        self.schema.clone()
    }
    fn meta(&self) -> ToolMeta {
        self.meta.clone()
    }
    fn kind(&self) -> cairn_protocol::ToolKind {
        self.kind
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        (self.f)(args, ctx).await
    }
}

/// An approver that answers from a queue (then a default) and records the requests.
#[derive(Clone)]
pub struct ScriptedApprover {
    answers: Arc<Mutex<VecDeque<ApprovalDecision>>>,
    default: ApprovalDecision,
    seen: Arc<Mutex<Vec<ApprovalRequest>>>,
    elicit_answers: Arc<Mutex<VecDeque<cairn_protocol::ElicitationAnswer>>>,
    elicited: Arc<Mutex<Vec<cairn_protocol::ElicitationRequested>>>,
}

impl ScriptedApprover {
    /// Answers `answers` in order, then `default`.
    pub fn new(answers: Vec<ApprovalDecision>, default: ApprovalDecision) -> Self {
        ScriptedApprover {
            answers: Arc::new(Mutex::new(answers.into())),
            default,
            seen: Arc::default(),
            elicit_answers: Arc::default(),
            elicited: Arc::default(),
        }
    }

    /// Answers elicitations with `answers` in order (then declines).
    pub fn with_elicitations(self, answers: Vec<cairn_protocol::ElicitationAnswer>) -> Self {
        *lock(&self.elicit_answers) = answers.into();
        self
    }

    /// Elicitations seen so far.
    pub fn elicited(&self) -> Vec<cairn_protocol::ElicitationRequested> {
        lock(&self.elicited).clone()
    }

    /// Requests seen so far.
    pub fn seen(&self) -> Vec<ApprovalRequest> {
        lock(&self.seen).clone()
    }
}

#[async_trait]
impl Approver for ScriptedApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        lock(&self.seen).push(request);
        lock(&self.answers).pop_front().unwrap_or(self.default)
    }

    async fn elicit(
        &self,
        request: cairn_protocol::ElicitationRequested,
    ) -> cairn_protocol::ElicitationAnswer {
        lock(&self.elicited).push(request);
        lock(&self.elicit_answers).pop_front().unwrap_or(
            cairn_protocol::ElicitationAnswer::Decline {
                reason: "the script has no more answers".into(),
            },
        )
    }
}

/// An assistant message calling tool `t` once per id (arguments `{}`).
pub fn calls_message(ids: &[&str]) -> cairn_protocol::Message {
    cairn_protocol::Message::Assistant {
        content: vec![],
        tool_calls: ids
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "t".into(),
                arguments: "{}".into(),
            })
            .collect(),
        usage: None,
    }
}

/// A successful result (`ok`) of tool `t` for call `id`.
pub fn ok_result(id: &str) -> cairn_protocol::Message {
    cairn_protocol::Message::Tool(cairn_protocol::ToolResult {
        call_id: id.into(),
        name: "t".into(),
        content: "ok".into(),
        status: cairn_protocol::ToolStatus::Ok,
        images: Vec::new(),
    })
}
