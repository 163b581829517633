//! Shrinking for compaction: tool results too large for the window are cut to head + tail
//! (the full text saved to disk), the summary request's input is fitted to the window, and
//! when nothing more can be cut, what is too big is named.

use std::path::{Path, PathBuf};

use cairn_protocol::{ContentPart, Message, ToolSchema, ToolStatus};

use crate::tokens::TokenCounter;

/// Words every tool result cut to fit the window carries.
pub const CUT_MARKER: &str = "characters cut to fit the context window";
/// No tool result is cut below this many tokens.
pub(crate) const MIN_RESULT_TOKENS: u64 = 150;
/// Room left for the marker itself when a result is cut to a token cap.
const MARKER_TOKENS: u64 = 80;
/// No message of the summary input is clipped below this many tokens.
const MIN_SUMMARY_PART_TOKENS: u64 = 64;

/// Byte index of the `n`-th char of `s` (its length when `s` is shorter).
fn char_index(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Keeps about `keep` chars of `full` (half head, half tail); the middle becomes
/// `[… {note(cut)}]`. Text within `keep` is returned unchanged.
pub(crate) fn cut_middle(full: &str, keep: usize, note: impl FnOnce(usize) -> String) -> String {
    let len = full.chars().count();
    if len <= keep {
        return full.to_string();
    }
    let head_chars = keep / 2;
    let tail_chars = keep - head_chars;
    let head = &full[..char_index(full, head_chars)];
    let tail = &full[char_index(full, len - tail_chars)..];
    let cut = len - head_chars - tail_chars;
    format!("{head}\n\n[… {}]\n\n{tail}", note(cut))
}

/// The marker of a tool result cut to fit the window, pointing at the saved copy if any.
fn result_note(cut: usize, len: usize, saved: Option<&Path>) -> String {
    match saved {
        Some(p) => format!(
            "{cut} {CUT_MARKER}; the full result ({len} chars) was saved at {}: read the part \
             you need with read_file (offset/limit) or grep, or re-run the tool with a narrower \
             request",
            p.display()
        ),
        None => format!("{cut} {CUT_MARKER}; re-run the tool with a narrower request to see them"),
    }
}

/// The full text behind a tool result and its saved copy: a copy the content already points
/// at (result budget, elision, an earlier cut) is reused, otherwise the content is saved now.
pub(crate) fn full_text_and_copy(
    dir: &Path,
    call_id: &str,
    content: &str,
) -> (String, Option<PathBuf>) {
    let file = dir.join(format!("{}.txt", crate::budget::sanitize(call_id)));
    if content.contains(&file.display().to_string()) {
        if let Ok(full) = std::fs::read_to_string(&file) {
            return (full, Some(file));
        }
    }
    let saved = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&file, content));
    match saved {
        Ok(()) => (content.to_string(), Some(file)),
        Err(e) => {
            tracing::warn!(error = %e, "could not save a tool result cut to fit the window");
            (content.to_string(), None)
        }
    }
}

/// Cuts `text` (head + tail kept) until it counts at most `cap` tokens; `note` writes the
/// marker for the number of chars cut.
fn cut_to_tokens(
    text: &str,
    cap: u64,
    counter: &TokenCounter,
    note: impl Fn(usize) -> String,
) -> String {
    let tokens = counter.count_text(text).max(1);
    if tokens <= cap {
        return text.to_string();
    }
    let chars = text.chars().count() as u64;
    let room = cap.saturating_sub(MARKER_TOKENS).max(cap / 2);
    let mut keep = (chars * room / tokens) as usize;
    loop {
        let out = cut_middle(text, keep, &note);
        if keep == 0 || counter.count_text(&out) <= cap {
            return out;
        }
        keep = keep * 3 / 4;
    }
}

/// Cuts every tool result over `cap` tokens to head + tail with a marker pointing at a saved
/// copy in `dir`; the results stay in place (each call keeps its result). Returns how many
/// and the tokens saved.
pub(crate) fn shrink_tool_results(
    messages: &mut [Message],
    cap: u64,
    counter: &TokenCounter,
    dir: &Path,
) -> (usize, u64) {
    let cap = cap.max(MIN_RESULT_TOKENS);
    let (mut n, mut saved_tokens) = (0, 0);
    for m in messages.iter_mut() {
        let Message::Tool(r) = m else { continue };
        let before = counter.count_text(&r.content);
        if before <= cap {
            continue;
        }
        let (full, saved) = full_text_and_copy(dir, &r.call_id, &r.content);
        let len = full.chars().count();
        let cut = cut_to_tokens(&full, cap, counter, |cut| {
            result_note(cut, len, saved.as_deref())
        });
        if cut.len() < r.content.len() {
            saved_tokens += before.saturating_sub(counter.count_text(&cut));
            r.content = cut;
            n += 1;
        }
    }
    (n, saved_tokens)
}

/// Whether a tool result could still be cut further.
pub(crate) fn can_shrink_more(messages: &[Message], counter: &TokenCounter) -> bool {
    messages.iter().any(|m| {
        matches!(m, Message::Tool(r) if counter.count_text(&r.content) > MIN_RESULT_TOKENS + MARKER_TOKENS)
    })
}

/// Tokens of messages counted locally (no provider-reported usage).
pub(crate) fn local_tokens(messages: &[Message], counter: &TokenCounter) -> u64 {
    messages.iter().map(|m| counter.count_message(m)).sum()
}

/// Images become a placeholder and failed tool results are clipped: the summary needs neither.
pub(crate) fn strip_images(m: Message) -> Message {
    match m {
        Message::User { content } => Message::User {
            content: content
                .into_iter()
                .map(|p| match p {
                    ContentPart::Image { .. } => ContentPart::Text {
                        text: "[image]".into(),
                    },
                    other => other,
                })
                .collect(),
        },
        Message::Tool(mut r) if r.status != ToolStatus::Ok => {
            let keep = char_index(&r.content, 2_000);
            r.content.truncate(keep);
            Message::Tool(r)
        }
        other => other,
    }
}

/// One message with every text, tool result and tool-call argument clipped to `cap` tokens.
fn clip_message(m: &Message, cap: u64, counter: &TokenCounter) -> Message {
    let note = |cut: usize| format!("{cut} characters left out of the summary input");
    let clip = |t: &str| cut_to_tokens(t, cap, counter, note);
    let mut m = m.clone();
    match &mut m {
        Message::System { content } => *content = clip(content),
        Message::User { content } | Message::Assistant { content, .. } => {
            for p in content.iter_mut() {
                if let ContentPart::Text { text } | ContentPart::Reasoning { text } = p {
                    *text = clip(text);
                }
            }
        }
        Message::Tool(r) => r.content = clip(&r.content),
    }
    if let Message::Assistant { tool_calls, .. } = &mut m {
        for c in tool_calls.iter_mut() {
            if counter.count_text(&c.arguments) > cap {
                // Still valid JSON, so every provider accepts it.
                c.arguments = serde_json::json!({ "truncated": clip(&c.arguments) }).to_string();
            }
        }
    }
    m
}

/// The history to summarise, fitted to `budget` tokens: images dropped, then every message
/// clipped (harder until it fits), then the oldest messages left out; pairing stays valid.
pub(crate) fn fit_summary_input(
    old: &[Message],
    budget: u64,
    counter: &TokenCounter,
) -> Vec<Message> {
    let base: Vec<Message> = old.iter().cloned().map(strip_images).collect();
    if local_tokens(&base, counter) <= budget {
        return base;
    }
    let mut cap = (budget / 4).max(MIN_SUMMARY_PART_TOKENS);
    let mut msgs = loop {
        let clipped: Vec<Message> = base.iter().map(|m| clip_message(m, cap, counter)).collect();
        if local_tokens(&clipped, counter) <= budget || cap <= MIN_SUMMARY_PART_TOKENS {
            break clipped;
        }
        cap = (cap / 2).max(MIN_SUMMARY_PART_TOKENS);
    };
    let mut dropped = 0;
    while msgs.len() > 1 && local_tokens(&msgs, counter) > budget {
        msgs.remove(0);
        dropped += 1;
    }
    if dropped > 0 {
        // A prefix cut can leave results whose call is gone: drop them.
        crate::repair::repair_history(&mut msgs);
        msgs.insert(
            0,
            Message::user(format!(
                "[{dropped} earlier message(s) left out to fit the context window]"
            )),
        );
    }
    msgs
}

/// Names what keeps a request over the window once nothing more can be cut.
pub(crate) fn describe_oversize(
    messages: &[Message],
    tools: &[ToolSchema],
    counter: &TokenCounter,
    window: u64,
) -> String {
    let total = local_tokens(messages, counter);
    let tool_tokens = serde_json::to_string(tools)
        .map(|s| counter.count_text(&s))
        .unwrap_or(0);
    let largest = messages
        .iter()
        .map(|m| (counter.count_message(m), m))
        .max_by_key(|(t, _)| *t);
    let what = match largest {
        Some((t, Message::System { .. })) => format!("the system prompt (~{t} tokens)"),
        Some((t, Message::User { .. })) => format!("a user message (~{t} tokens)"),
        Some((t, Message::Assistant { .. })) => format!("an assistant message (~{t} tokens)"),
        Some((t, Message::Tool(r))) => {
            format!("the {} result of call {} (~{t} tokens)", r.name, r.call_id)
        }
        None => "nothing in the history".to_string(),
    };
    format!(
        "the request is still too large for the model's context window after compaction: \
         ~{total} tokens in {} messages plus ~{tool_tokens} tokens of tool definitions \
         (configured window {window} tokens); the largest part is {what}. Use a model with a \
         larger context window or start a new session",
        messages.len()
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::testing::calls_message;
    use cairn_protocol::ToolResult;

    fn big_result(id: &str, chars: usize) -> Message {
        let text: String = (0..chars / 55)
            .map(|i| format!("line {i:04}: the quick brown fox jumps over the dog\n"))
            .collect();
        Message::Tool(ToolResult {
            call_id: id.into(),
            name: "t".into(),
            content: text,
            status: ToolStatus::Ok,
            images: Vec::new(),
        })
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("cairn-shrink-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn cut_middle_keeps_head_and_tail_on_char_boundaries() {
        let s = "é".repeat(100);
        let out = cut_middle(&s, 10, |n| format!("{n} gone"));
        assert!(out.starts_with("ééééé\n\n[… 90 gone]"));
        assert!(out.ends_with("ééééé"));
        assert_eq!(cut_middle("short", 10, |_| unreachable!()), "short");
    }

    #[test]
    fn oversized_results_are_cut_with_a_marker_and_saved_whole() {
        let dir = tempdir();
        let counter = TokenCounter::Estimate;
        let mut msgs = vec![
            Message::user("read it"),
            calls_message(&["c1"]),
            big_result("c1", 22_000),
        ];
        let Message::Tool(orig) = msgs[2].clone() else {
            unreachable!()
        };
        assert_eq!(shrink_tool_results(&mut msgs, 800, &counter, &dir).0, 1);
        let Message::Tool(r) = &msgs[2] else {
            unreachable!()
        };
        assert!(counter.count_text(&r.content) <= 800);
        assert!(r.content.contains(CUT_MARKER), "{}", r.content);
        assert!(r.content.starts_with("line 0000"));
        assert!(r
            .content
            .trim_end()
            .ends_with(orig.content.trim_end().lines().last().unwrap()));
        let saved = dir.join("c1.txt");
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), orig.content);
        assert!(r.content.contains(&saved.display().to_string()));
        // Cutting harder later starts again from the saved copy.
        assert_eq!(shrink_tool_results(&mut msgs, 300, &counter, &dir).0, 1);
        let Message::Tool(r) = &msgs[2] else {
            unreachable!()
        };
        assert_eq!(r.content.matches(CUT_MARKER).count(), 1);
        assert!(r
            .content
            .contains(&format!("({} chars)", orig.content.len())));
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), orig.content);
        assert_eq!(crate::repair::repair_history(&mut msgs), 0);
    }

    #[test]
    fn the_summary_input_is_capped_below_its_budget() {
        let counter = TokenCounter::Estimate;
        let mut old = vec![Message::user("GOAL: read the big file")];
        for i in 0..6 {
            let id = format!("c{i}");
            old.push(calls_message(&[&id]));
            old.push(big_result(&id, 22_000));
            old.push(Message::assistant_text("x".repeat(3_000)));
        }
        assert!(local_tokens(&old, &counter) > 30_000);
        for budget in [6_000, 2_000, 400] {
            let fitted = fit_summary_input(&old, budget, &counter);
            let t = local_tokens(&fitted, &counter);
            assert!(t <= budget, "{t} > {budget}");
            assert!(!fitted.is_empty());
            let mut check = fitted.clone();
            assert_eq!(crate::repair::repair_history(&mut check), 0, "{budget}");
        }
        // Under budget: only images are touched.
        let small = vec![Message::user("hi")];
        assert_eq!(fit_summary_input(&small, 1_000, &counter), small);
    }

    #[test]
    fn the_oversize_description_names_the_largest_part() {
        let counter = TokenCounter::Estimate;
        let msgs = vec![
            Message::system("s"),
            calls_message(&["c9"]),
            big_result("c9", 5_000),
        ];
        let d = describe_oversize(&msgs, &[], &counter, 4_000);
        assert!(d.contains("the t result of call c9"), "{d}");
        assert!(d.contains("configured window 4000"), "{d}");
    }
}
