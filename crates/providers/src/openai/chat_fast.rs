//! The typed fast path for the common Chat Completions chunk: text or reasoning deltas of
//! the first choice and its finish reason, read with borrowed strings and no `Value` tree.
//! Anything else (errors, usage, tool calls, a non-streamed `message`, unusual types) is
//! left to the `Value` path, which therefore decides every case it decided before.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::fastjson::{First, Obj, Str};

/// A `chat.completion.chunk`, only the fields the parser reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk<'a> {
    #[serde(borrow)]
    choices: Option<First<Obj<Choice<'a>>>>,
    error: Option<IgnoredAny>,
    usage: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    delta: Option<Obj<Delta<'a>>>,
    #[serde(borrow)]
    finish_reason: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    reasoning_content: Option<Str<'a>>,
    #[serde(borrow)]
    reasoning: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<Str<'a>>,
    tool_calls: Option<IgnoredAny>,
}

/// What a plain chunk says.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plain<'a> {
    /// `delta.reasoning_content`.
    pub reasoning_content: Option<Str<'a>>,
    /// `delta.reasoning` (OpenRouter and others).
    pub reasoning: Option<Str<'a>>,
    /// `delta.content`.
    pub content: Option<Str<'a>>,
    /// `finish_reason`.
    pub finish_reason: Option<Str<'a>>,
}

/// The chunk in `data` if it is a plain one; `None` sends it down the `Value` path.
pub(crate) fn plain(data: &str) -> Option<Plain<'_>> {
    let Obj(chunk) = serde_json::from_str::<Obj<Chunk<'_>>>(data).ok()?;
    if chunk.error.is_some() || chunk.usage.is_some() {
        return None;
    }
    let Some(First(Some(Obj(choice)))) = chunk.choices else {
        // No choices at all (absent, null or empty): nothing to read.
        return Some(Plain::default());
    };
    let Obj(delta) = choice.delta?;
    if delta.tool_calls.is_some() {
        return None;
    }
    Some(Plain {
        reasoning_content: delta.reasoning_content,
        reasoning: delta.reasoning,
        content: delta.content,
        finish_reason: choice.finish_reason,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn content_delta_is_read_borrowed() {
        let p = plain(
            r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"w1 "},"logprobs":null,"finish_reason":null}]}"#,
        )
        .unwrap();
        assert!(matches!(
            p.content,
            Some(Str(std::borrow::Cow::Borrowed("w1 ")))
        ));
        assert_eq!((p.reasoning, p.finish_reason), (None, None));
    }

    #[test]
    fn finish_reason_and_reasoning_fields() {
        let p = plain(r#"{"choices":[{"delta":{"reasoning_content":"a\"b","reasoning":"r"},"finish_reason":"stop"}]}"#)
            .unwrap();
        assert_eq!(p.reasoning_content.unwrap().as_str(), "a\"b");
        assert_eq!(p.reasoning.unwrap().as_str(), "r");
        assert_eq!(p.finish_reason.unwrap().as_str(), "stop");
    }

    #[test]
    fn no_choices_is_plain_and_empty() {
        assert_eq!(plain(r#"{"choices":[]}"#), Some(Plain::default()));
        assert_eq!(plain(r#"{"id":"x"}"#), Some(Plain::default()));
        assert_eq!(
            plain(r#"{"choices":null,"error":null}"#),
            Some(Plain::default())
        );
    }

    #[test]
    fn everything_else_goes_to_the_value_path() {
        for data in [
            r#"{"error":{"message":"x"}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}"#,
            r#"{"choices":[{"message":{"content":"hi"}}]}"#,
            r#"{"choices":[{"delta":null}]}"#,
            r#"{"choices":[{"delta":{"content":["not","a","string"]}}]}"#,
            r#"{"choices":[{"delta":["x"]}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":7}]}"#,
            r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
            r#"{"choices":{"delta":{}}}"#,
            r#"[{"delta":{"content":"x"}}]"#,
            "{oops",
            "42",
        ] {
            assert_eq!(plain(data), None, "{data}");
        }
    }
}
