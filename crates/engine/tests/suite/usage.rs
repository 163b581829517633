//! Usage and cost per request and per turn.

use crate::common;

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{LlmChunk, Pricing, Session, ToolRegistry};
use cairn_protocol::{Event, Mode, TokenUsage, ToolCall};
use common::*;

/// $1 per million input tokens, $2 per million output tokens; model "free" is unknown.
struct Flat;
impl Pricing for Flat {
    fn cost_usd(&self, model: &str, u: &TokenUsage) -> Option<f64> {
        (model != "unknown").then_some(u.input_tokens as f64 * 1e-6 + u.output_tokens as f64 * 2e-6)
    }
}

fn usage(i: u64, o: u64) -> TokenUsage {
    TokenUsage {
        input_tokens: i,
        output_tokens: o,
        ..Default::default()
    }
}

#[tokio::test]
async fn cost_on_each_reply_and_summed_on_turn_end() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::Chunks(vec![
            LlmChunk::ToolCall(ToolCall {
                id: "a".into(),
                name: "echo".into(),
                arguments: "{}".into(),
            }),
            LlmChunk::Usage(usage(1_000, 100)),
        ]),
        FakeReply::Chunks(vec![
            LlmChunk::Text("done".into()),
            LlmChunk::Usage(usage(2_000, 50)),
        ]),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(echo_tool("echo"));
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm))
        .tools(reg)
        .pricing(Arc::new(Flat))
        .build();
    let ev = collect(s.run("go")).await;
    let costs: Vec<f64> = ev
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage(m) => m.cost_usd,
            _ => None,
        })
        .collect();
    // By hand: 1000·1e-6 + 100·2e-6 = 0.0012; 2000·1e-6 + 50·2e-6 = 0.0021.
    assert_eq!(costs.len(), 2);
    assert!(
        (costs[0] - 0.0012).abs() < 1e-12 && (costs[1] - 0.0021).abs() < 1e-12,
        "{costs:?}"
    );
    let end = turn_end(&ev);
    assert_eq!(end.usage, Some(usage(3_000, 150)));
    assert!((end.cost_usd.unwrap() - 0.0033).abs() < 1e-12);
    let json = serde_json::to_value(ev.last().unwrap()).unwrap();
    assert_eq!(json["data"]["usage"]["input_tokens"], 3000);
    assert!(json["data"]["costUsd"].as_f64().is_some());
}

#[tokio::test]
async fn an_unknown_price_is_reported_as_unknown_not_zero() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::Chunks(vec![
        LlmChunk::Text("hi".into()),
        LlmChunk::Usage(usage(10, 10)),
    ])]);
    let mut cfg = config(&dir, Mode::Interactive);
    cfg.model = "unknown".into();
    let s = Session::builder(cfg, Arc::new(llm))
        .pricing(Arc::new(Flat))
        .build();
    let ev = collect(s.run("go")).await;
    let end = turn_end(&ev);
    assert_eq!(end.usage, Some(usage(10, 10)));
    assert_eq!(end.cost_usd, None);
    let json = serde_json::to_value(ev.last().unwrap()).unwrap();
    assert!(json["data"].get("costUsd").is_none());
}
