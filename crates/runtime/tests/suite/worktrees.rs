//! Worktree glue of the runtime: the commit message the agent proposes.

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_runtime::worktrees::propose_commit_message;

#[tokio::test]
async fn the_proposed_commit_message_comes_from_the_model_over_the_diff() {
    let llm = Arc::new(FakeLlm::new(vec![FakeReply::text(
        "```\nAdd the parser\n\nIt reads the new format.\n```",
    )]));
    let diff = "--- a/p.rs\n+++ b/p.rs\n@@ -0,0 +1 @@\n+fn parse() {}\n";
    let msg = propose_commit_message(llm.clone(), "m", diff).await;
    assert_eq!(
        msg.as_deref(),
        Some("Add the parser\n\nIt reads the new format.")
    );
    let sent = llm.requests();
    assert!(sent[0]
        .messages
        .iter()
        .any(|m| format!("{m:?}").contains("fn parse()")));
    // An empty diff asks nothing.
    assert_eq!(propose_commit_message(llm.clone(), "m", "  ").await, None);
    assert_eq!(llm.requests().len(), 1);
}
