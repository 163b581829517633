//! The typed fast path for the common Chat Completions chunk: text or reasoning deltas of
//! the first choice and its finish reason, read with borrowed strings and no `Value` tree.
//! Anything else (errors, usage, tool calls, a non-streamed `message`, unusual types) is
//! left to the `Value` path, which therefore decides every case it decided before.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::fastjson::{First, Obj, Str};
use crate::shape::Shapes;

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

/// The text field a learned chunk shape carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// `delta.content`.
    Content,
    /// `delta.reasoning_content`.
    ReasoningContent,
    /// `delta.reasoning`.
    Reasoning,
}

/// [`plain`], remembering the shapes of this response's plain chunks: a chunk shaped like
/// an earlier one (the same bytes around its one text value) is read without a full parse.
pub(crate) fn plain_shaped<'a>(data: &'a str, shapes: &mut Shapes<Field>) -> Option<Plain<'a>> {
    if let Some((field, value)) = shapes.matching(data) {
        let mut p = Plain::default();
        match field {
            Field::Content => p.content = Some(value),
            Field::ReasoningContent => p.reasoning_content = Some(value),
            Field::Reasoning => p.reasoning = Some(value),
        }
        return Some(p);
    }
    let p = plain(data)?;
    if p.finish_reason.is_none() {
        match (&p.reasoning_content, &p.reasoning, &p.content) {
            (Some(v), None, None) => shapes.learn(data, v, Field::ReasoningContent),
            (None, Some(v), None) => shapes.learn(data, v, Field::Reasoning),
            (None, None, Some(v)) => shapes.learn(data, v, Field::Content),
            _ => {}
        }
    }
    Some(p)
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
    fn shaped_reads_equal_full_reads_across_a_response() {
        let chunk = |delta: &str, finish: &str| {
            format!(
                r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#
            )
        };
        let stream = [
            chunk(r#"{"role":"assistant","content":""}"#, "null"),
            chunk(r#"{"reasoning_content":"think"}"#, "null"),
            chunk(r#"{"reasoning_content":"more "quoted""}"#, "null"),
            chunk(r#"{"content":"w1 "}"#, "null"),
            chunk(r#"{"content":"w2\n"}"#, "null"),
            chunk(r#"{"content":"w3 ","reasoning_content":"x"}"#, "null"),
            chunk(r#"{"content":"","tool_calls":[{"index":0}]}"#, "null"),
            chunk(r#"{"content":"w4 "}"#, "null"),
            chunk(r#"{"content":"a","content":"b"}"#, "null"),
            chunk(r#"{"content":"w5 é"}"#, "null"),
            chunk(r#"{"reasoning":"r1"}"#, "null"),
            chunk(r#"{"reasoning":"r2"}"#, "null"),
            chunk(r#"{"content":"w6 "}"#, r#""length""#),
            chunk(r#"{}"#, r#""stop""#),
        ];
        let mut shapes = Shapes::default();
        for data in &stream {
            assert_eq!(plain_shaped(data, &mut shapes), plain(data), "{data}");
        }
        // Repeats of learned content and reasoning chunks now take the shaped path.
        let content = chunk(r#"{"content":"again"}"#, "null");
        let (field, value) = shapes.matching(&content).unwrap();
        assert_eq!((field, value.as_str()), (Field::Content, "again"));
        let reasoning = chunk(r#"{"reasoning_content":"again"}"#, "null");
        assert_eq!(
            shapes.matching(&reasoning).map(|(f, _)| f),
            Some(Field::ReasoningContent)
        );
        let finish = chunk(r#"{"content":"w6 "}"#, r#""stop""#);
        assert!(
            shapes.matching(&finish).is_none(),
            "finish chunks are not learned"
        );
        assert_eq!(plain_shaped(&finish, &mut shapes), plain(&finish));
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
