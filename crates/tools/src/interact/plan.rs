//! `propose_plan`: a plan for the user to accept or reject before the work starts.

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{PlanReview, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::interactive_meta;
use crate::args;

/// Proposes a plan and waits for the user's review.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProposePlan;

#[derive(Debug, Deserialize)]
struct Args {
    plan: String,
}

#[async_trait]
impl Tool for ProposePlan {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Question
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "propose_plan".into(),
            description: "Propose your plan (markdown: the steps, the files you will change, \
                risks) and wait for the user to accept or reject it. Use it before large or \
                risky changes and in plan mode. If rejected, you get the user's feedback: \
                revise the plan, do not start the work."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "plan": {"type": "string", "description": "The plan in markdown."}
                },
                "required": ["plan"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        interactive_meta("interaction")
    }

    fn permission_subject(&self, _args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::none()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("propose_plan", args)?;
        let plan = args.plan.trim().to_string();
        if plan.is_empty() {
            return Err(ToolError::InvalidArguments(
                "propose_plan: plan must not be empty".into(),
            ));
        }
        let (review, switched) = tokio::select! {
            r = ctx.host.propose_plan(plan) => r,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        Ok(ToolOutput::text(match review {
            PlanReview::Accepted => match switched {
                Some(mode) => format!(
                    "The user accepted the plan. The session left plan mode and is now in {} \
                     mode: changes are possible, each one approved as the mode says. Carry the \
                     plan out step by step.",
                    mode.as_str()
                ),
                None => "The user accepted the plan. Carry it out step by step.".to_string(),
            },
            PlanReview::Rejected { feedback } if feedback.trim().is_empty() => {
                "The user rejected the plan without feedback. Do not start the work; ask what \
                 they want changed or propose a different plan."
                    .to_string()
            }
            PlanReview::Rejected { feedback } => format!(
                "The user rejected the plan. Their feedback: {}\nDo not start the work; revise \
                 the plan accordingly.",
                feedback.trim()
            ),
            PlanReview::Unreviewed { reason } => format!(
                "Nobody could review the plan now ({reason}); it is shown to the user. Do not \
                 start the work: end your turn with a short summary of the plan. The user will \
                 accept or change it in their next message."
            ),
        }))
    }
}
