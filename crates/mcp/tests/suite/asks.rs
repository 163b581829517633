//! What servers ask of the user and the model during a call: the reference server's form
//! reaches the user with its schema and the user's answer (with the schema's defaults for
//! what they left out) reaches the server; its sampling request is approved, then answered
//! by the session's model; `includeContext` other than `none` and a denied approval are
//! refused in words.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{ToolContext, ToolHost};
use cairn_protocol::{ApprovalDecision, ElicitationAnswer, ElicitationMode};
use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn ctx_with(
    h: &Harness,
    approver: impl cairn_engine::Approver + 'static,
    llm: Option<Arc<FakeLlm>>,
) -> ToolContext {
    let mut ctx = ToolContext::new(
        h.dir.path().to_path_buf(),
        h.dir.path().to_path_buf(),
        "call-1",
        CancellationToken::new(),
    );
    let model = llm.map(|l| {
        (
            l as Arc<dyn cairn_engine::llm::LlmClient>,
            "m-1".to_string(),
        )
    });
    ctx.host = ToolHost::for_approver(
        Arc::new(approver),
        h.dir.path().to_path_buf(),
        model,
        "call-1",
        "tool",
    );
    ctx
}

/// The reference server, started as `everything`; `None` (said) when it is not installed.
async fn everything_harness() -> Option<Harness> {
    let entry = match crate::suite::everything::everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return None;
        }
    };
    let cfg = crate::suite::everything::node_server("everything", &entry, "stdio");
    let h = Harness::new(vec![cfg], |o| o.call_timeout = Duration::from_secs(20));
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["everything"], "{failed:?}");
    Some(h)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_servers_form_reaches_the_user_and_the_answer_with_defaults_reaches_it() {
    let Some(h) = everything_harness().await else {
        return;
    };
    // Declaring elicitation and sampling makes the server offer the tools that use them.
    let names = h.names();
    for t in ["trigger-elicitation-request", "trigger-sampling-request"] {
        assert!(
            names.contains(&format!("mcp__everything__{t}")),
            "{names:?}"
        );
    }
    // Its task-only tool (execution.taskSupport: required) is not offered, and is named.
    assert!(
        !names.contains(&"mcp__everything__simulate-research-query".to_string()),
        "{names:?}"
    );
    let warnings = h.manager.status()[0].warnings.join("\n");
    assert!(
        warnings.contains("`simulate-research-query` is not offered"),
        "{warnings}"
    );
    let answer = json!({"name": "Ada Lovelace", "check": true, "email": "ada@example.org"});
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::Deny).with_elicitations(vec![
        ElicitationAnswer::Accept {
            content: answer.as_object().unwrap().clone(),
        },
    ]);
    let ctx = ctx_with(&h, approver.clone(), None);
    let out = h
        .manager
        .call(
            "everything",
            "trigger-elicitation-request",
            Default::default(),
            &ctx,
        )
        .await
        .unwrap();
    let seen = approver.elicited();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].server, "everything");
    assert_eq!(seen[0].mode, ElicitationMode::Form);
    let props = &seen[0].schema.as_ref().unwrap()["properties"];
    assert_eq!(
        props["firstLine"]["default"],
        "It was a dark and stormy night."
    );
    // The user's values and the defaults of what they left out reach the server.
    for part in [
        "Ada Lovelace",
        "ada@example.org",
        "It was a dark and stormy night.",
        "42",
    ] {
        assert!(
            out.content.contains(part),
            "{part} missing: {}",
            out.content
        );
    }
    // Declined: the server hears it.
    let ctx = ctx_with(
        &h,
        ScriptedApprover::new(vec![], ApprovalDecision::Deny),
        None,
    );
    let out = h
        .manager
        .call(
            "everything",
            "trigger-elicitation-request",
            Default::default(),
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        out.content.to_lowercase().contains("decline"),
        "{}",
        out.content
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_asks_then_the_sessions_model_answers_the_reference_server() {
    let Some(h) = everything_harness().await else {
        return;
    };
    let llm = Arc::new(FakeLlm::new(vec![FakeReply::text("the sampled answer")]));
    let approver = ScriptedApprover::new(vec![ApprovalDecision::Once], ApprovalDecision::Deny);
    let ctx = ctx_with(&h, approver.clone(), Some(llm.clone()));
    let out = h
        .manager
        .call(
            "everything",
            "trigger-sampling-request",
            json!({"prompt": "say something", "maxTokens": 20})
                .as_object()
                .unwrap()
                .clone(),
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        out.content.contains("the sampled answer"),
        "{}",
        out.content
    );
    let asked = approver.seen();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].name, "mcp__everything__sampling");
    assert!(
        asked[0].reason.contains("everything"),
        "{}",
        asked[0].reason
    );
    assert!(
        asked[0].arguments["conversation"]
            .as_str()
            .unwrap()
            .contains("say something"),
        "{:?}",
        asked[0].arguments
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].model, "m-1");
    assert!(requests[0]
        .messages
        .iter()
        .any(|m| m.text().contains("say something")));
    h.manager.close_all().await;
}

/// Calls the test server's `sample` tool with `args`: its text, or the error's.
async fn sample(h: &Harness, ctx: &ToolContext, args: serde_json::Value) -> String {
    match h
        .manager
        .call("t", "sample", args.as_object().unwrap().clone(), ctx)
        .await
    {
        Ok(o) => o.content,
        Err(e) => e.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_with_the_conversation_or_without_approval_is_refused() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["t"], "{failed:?}");
    let llm = Arc::new(FakeLlm::new(vec![FakeReply::text("never sent")]));
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::AlwaysTool);
    let ctx = ctx_with(&h, approver.clone(), Some(llm.clone()));
    let text = sample(
        &h,
        &ctx,
        json!({"prompt": "hi", "includeContext": "allServers"}),
    )
    .await;
    assert!(text.contains("includeContext"), "{text}");
    assert!(approver.seen().is_empty(), "asked although refused");
    assert!(llm.requests().is_empty());
    // Denied by the user: the server hears a refusal, the model is not asked.
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::Deny);
    let ctx = ctx_with(&h, approver.clone(), Some(llm.clone()));
    let text = sample(&h, &ctx, json!({"prompt": "hi"})).await;
    assert!(text.contains("sampling refused"), "{text}");
    assert_eq!(approver.seen().len(), 1);
    assert!(llm.requests().is_empty());
    // Allowed always: the next request is not asked again.
    let approver =
        ScriptedApprover::new(vec![ApprovalDecision::AlwaysTool], ApprovalDecision::Deny);
    let llm = Arc::new(FakeLlm::new(vec![]));
    let ctx = ctx_with(&h, approver.clone(), Some(llm.clone()));
    for _ in 0..2 {
        llm.push(FakeReply::text("fine"));
        let text = sample(&h, &ctx, json!({"prompt": "hi"})).await;
        assert!(text.contains("model m-1 said: fine"), "{text}");
    }
    assert_eq!(approver.seen().len(), 1, "asked twice");
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_is_refused_where_no_person_answers() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["t"], "{failed:?}");
    let llm = Arc::new(FakeLlm::new(vec![FakeReply::text("never sent")]));
    // `--approve allow`: a fixed policy, no person.
    let fixed = cairn_engine::FixedApprover(ApprovalDecision::Once);
    let ctx = ctx_with(&h, fixed, Some(llm.clone()));
    let text = sample(&h, &ctx, json!({"prompt": "hi"})).await;
    assert!(text.contains("no person can allow it"), "{text}");
    assert!(llm.requests().is_empty());
    h.manager.close_all().await;
}
