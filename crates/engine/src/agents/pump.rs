//! Runs one turn of a child session for a parent's tool call: forwards every child event as
//! `subagent_event` (origin = child session id), stops the child when the parent's call is
//! cancelled, and returns the child's final answer.

use cairn_protocol::{Event, SubagentEvent, TurnStatus};

use crate::session::Session;
use crate::tool::{ToolContext, ToolError};

/// Runs `prompt` on `child` and returns its last non-empty answer. A parent interrupt
/// interrupts the child (its events are drained so it ends cleanly) and yields
/// [`ToolError::Interrupted`].
pub async fn run_child_turn(
    child: &Session,
    prompt: String,
    ctx: &ToolContext,
    agent: &str,
) -> Result<String, ToolError> {
    let origin = child.id();
    let mut stream = child.run(prompt);
    let mut report = String::new();
    let mut status = None;
    let mut error = None;
    loop {
        let ev = tokio::select! {
            ev = stream.recv() => ev,
            _ = ctx.cancel.cancelled() => {
                child.interrupt();
                while let Some(ev) = stream.recv().await {
                    if let Event::TurnEnd(t) = &ev {
                        if let Some(u) = &t.usage {
                            ctx.host.add_usage(u, t.cost_usd);
                        }
                    }
                    forward(ctx, &origin, agent, ev).await;
                }
                return Err(ToolError::Interrupted);
            }
        };
        let Some(ev) = ev else { break };
        match &ev {
            Event::AssistantMessage(m) if !m.text.trim().is_empty() => report = m.text.clone(),
            Event::TurnEnd(t) => {
                status = Some(t.status);
                // The child's requests are billed to the parent's turn.
                if let Some(u) = &t.usage {
                    ctx.host.add_usage(u, t.cost_usd);
                }
            }
            Event::Error(e) => error = Some(e.error.clone()),
            _ => {}
        }
        forward(ctx, &origin, agent, ev).await;
    }
    match status {
        Some(TurnStatus::Completed) | Some(TurnStatus::MaxIterationsExceeded)
            if !report.is_empty() =>
        {
            Ok(report)
        }
        Some(TurnStatus::Interrupted) => Err(ToolError::Interrupted),
        other => Err(ToolError::Failed(format!(
            "the {agent} subagent ended without a report ({}{})",
            other.map(|s| s.as_str()).unwrap_or("no turn_end"),
            error.map(|e| format!(": {e}")).unwrap_or_default()
        ))),
    }
}

async fn forward(ctx: &ToolContext, origin: &str, agent: &str, event: Event) {
    ctx.host
        .emit(Event::SubagentEvent(SubagentEvent {
            origin: origin.to_string(),
            agent: agent.to_string(),
            parent_req_id: ctx.call_id.clone(),
            event: Box::new(event),
        }))
        .await;
}
