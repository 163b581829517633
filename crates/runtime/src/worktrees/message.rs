//! The commit message the agent proposes for "Commit on branch": one cheap LLM request over
//! the worktree's diff, like session naming. Failure proposes nothing; the user edits it.

use std::sync::Arc;

use cairn_engine::{answer_text, LlmClient, LlmRequest};
use cairn_protocol::Message;
use tokio_util::sync::CancellationToken;

/// The instruction.
const PROMPT: &str = "Write a git commit message for this diff: a summary line of at most 72 \
characters in the imperative mood, then a blank line and a short body saying why, if it is \
not obvious. Reply with the message only, no code fences.";

/// Longest diff excerpt sent.
const MAX_DIFF: usize = 24_000;

/// Asks the model for a commit message for `diff`; `None` on failure or an empty answer.
pub async fn propose_commit_message(
    llm: Arc<dyn LlmClient>,
    model: &str,
    diff: &str,
) -> Option<String> {
    if diff.trim().is_empty() {
        return None;
    }
    let excerpt: String = diff.chars().take(MAX_DIFF).collect();
    let request = LlmRequest {
        model: model.to_string(),
        messages: vec![Message::system(PROMPT), Message::user(excerpt)],
        tools: Vec::new(),
        reasoning_effort: None,
        req_id: uuid::Uuid::new_v4().to_string(),
    };
    let cancel = CancellationToken::new();
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        answer_text(llm.stream(request, cancel.clone())),
    )
    .await;
    cancel.cancel();
    let Ok(Ok(text)) = answer else {
        return None;
    };
    clean(&text)
}

/// The message without fences or surrounding blank lines; `None` when nothing is left.
fn clean(raw: &str) -> Option<String> {
    let lines: Vec<&str> = raw
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect();
    let text = lines.join("\n").trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_and_blank_edges_are_dropped() {
        assert_eq!(
            clean("```\nFix the parser\n\nIt dropped the last line.\n```\n").as_deref(),
            Some("Fix the parser\n\nIt dropped the last line.")
        );
        assert_eq!(clean("  \n```\n```"), None);
    }
}
