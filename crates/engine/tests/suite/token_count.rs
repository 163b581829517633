//! Compaction thresholds use the model's real tokenizer where one is known (OpenAI
//! families) and the calibrated estimate otherwise.

use crate::common;

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::tokens::TokenCounter;
use cairn_engine::{CompactionConfig, Session};
use cairn_protocol::{Event, Message, Mode, ToolCall, ToolResult, ToolStatus};
use common::*;

/// A history whose size differs a lot between the real encoder and the estimate: long runs
/// of separator characters (log rulers) compress well in BPE.
fn history() -> Vec<Message> {
    let mut h = vec![Message::user("GOAL: summarise the logs")];
    for i in 0..6 {
        h.push(Message::Assistant {
            content: vec![],
            tool_calls: vec![ToolCall {
                id: format!("r{i}"),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"log{i}.txt\"}}"),
            }],
            usage: None,
        });
        h.push(Message::Tool(ToolResult {
            call_id: format!("r{i}"),
            name: "read_file".into(),
            content: format!("{}\n", "-".repeat(79)).repeat(50),
            status: ToolStatus::Ok,
            images: Vec::new(),
        }));
    }
    h
}

async fn compacted(model: &str, window: u64) -> bool {
    let dir = TempDir::new();
    let mut cfg = config(&dir, Mode::Interactive);
    cfg.model = model.into();
    cfg.compaction = CompactionConfig {
        context_window: window,
        ..Default::default()
    };
    let llm = FakeLlm::new(vec![FakeReply::text("done"), FakeReply::text("done")]);
    let s = Session::builder(cfg, Arc::new(llm))
        .messages(history())
        .build();
    collect(s.run("go"))
        .await
        .iter()
        .any(|e| matches!(e, Event::Compacting(_)))
}

#[tokio::test]
async fn the_threshold_follows_the_models_tokenizer() {
    let mut h = history();
    h.insert(0, Message::system("sys"));
    h.push(Message::user("go"));
    let real = TokenCounter::for_model("gpt-4o").count_history(&h).0;
    let estimate = TokenCounter::for_model("mock-model").count_history(&h).0;
    assert!(real * 3 / 2 < estimate, "real {real}, estimate {estimate}");
    // Soft threshold = 60 % of the window: put it between the two counts.
    let window = ((real + estimate) / 2) * 10 / 6;
    assert!(
        !compacted("gpt-4o", window).await,
        "gpt-4o is counted with its encoder"
    );
    assert!(
        compacted("mock-model", window).await,
        "unknown models use the estimate"
    );
}
