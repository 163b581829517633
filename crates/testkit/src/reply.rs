//! Scripted replies and faults served by [`crate::MockLlmServer`].

use std::time::Duration;

/// Default number of characters per streamed piece of text, reasoning or arguments.
pub(crate) const DEFAULT_CHUNK_CHARS: usize = 4;

/// A fault injected into a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Close the connection after the chunks sent so far: no `[DONE]`, no finish event.
    DropMidStream,
    /// Send headers (and any chunks so far), then nothing for this long, then drop the connection.
    Stall(Duration),
    /// A plain HTTP error answered instead of a stream (any content of the reply is ignored).
    ///
    /// A 2xx `code` with a JSON body imitates a server that ignored `stream: true`.
    /// In `body`, the placeholder `{api_key}` is replaced by the bearer token the request
    /// carried, so tests can check that clients scrub echoed credentials.
    Status {
        /// HTTP status code.
        code: u16,
        /// `Retry-After` header value in seconds.
        retry_after: Option<u64>,
        /// Response body; an OpenAI-style JSON error when `None`.
        body: Option<String>,
    },
    /// An SSE `data:` line that is not JSON, followed by a normal end of stream.
    MalformedChunk,
    /// HTTP 400 with OpenAI's `context_length_exceeded` error body (Anthropic's
    /// `prompt is too long` on `/v1/messages`).
    ContextLengthExceeded,
    /// After the content so far, an error event inside the stream (chat `{"error":…}`,
    /// Responses `error`, Anthropic `event: error`); `code` is the OpenAI code or the
    /// Anthropic error type.
    StreamError {
        /// `rate_limit_exceeded`, `server_error`, `overloaded_error`, …
        code: String,
        /// Human-readable message.
        message: String,
    },
}

impl Fault {
    /// HTTP 429 with `Retry-After: retry_after_secs` and an OpenAI rate-limit body.
    pub fn rate_limited(retry_after_secs: u64) -> Fault {
        Fault::Status {
            code: 429,
            retry_after: Some(retry_after_secs),
            body: Some(openai_error(
                "Rate limit reached for requests. Please try again later.",
                "requests",
                Some("rate_limit_exceeded"),
                None,
            )),
        }
    }

    /// HTTP 500 with an OpenAI server-error body.
    pub fn server_error() -> Fault {
        Fault::Status {
            code: 500,
            retry_after: None,
            body: Some(openai_error(
                "The server had an error while processing your request. Sorry about that!",
                "server_error",
                None,
                None,
            )),
        }
    }

    /// HTTP 401 with an OpenAI `invalid_api_key` body that echoes the key it received.
    pub fn unauthorized() -> Fault {
        Fault::Status {
            code: 401,
            retry_after: None,
            body: Some(openai_error(
                "Incorrect API key provided: {api_key}. You can find your API key at https://platform.openai.com/account/api-keys.",
                "invalid_request_error",
                Some("invalid_api_key"),
                None,
            )),
        }
    }

    /// HTTP 529 with Anthropic's `overloaded_error` body.
    pub fn overloaded() -> Fault {
        Fault::Status {
            code: 529,
            retry_after: None,
            body: Some(anthropic_error("overloaded_error", "Overloaded")),
        }
    }

    /// HTTP 429 without `Retry-After` whose message says "Please try again in 11.05s."
    pub fn rate_limited_with_hint() -> Fault {
        Fault::Status {
            code: 429,
            retry_after: None,
            body: Some(openai_error(
                "Rate limit reached for gpt-4o in organization org-mock on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 11.05s. Visit https://platform.openai.com/account/rate-limits to learn more.",
                "tokens",
                Some("rate_limit_exceeded"),
                None,
            )),
        }
    }

    /// HTTP 429 `insufficient_quota` (billing, not a rate limit); Anthropic's endpoint
    /// answers its "credit balance is too low" 400 instead.
    pub fn insufficient_quota() -> Fault {
        Fault::Status {
            code: 429,
            retry_after: None,
            body: Some(openai_error(
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
                Some("insufficient_quota"),
                None,
            )),
        }
    }

    /// An error event mid-stream.
    pub fn stream_error(code: &str, message: &str) -> Fault {
        Fault::StreamError {
            code: code.to_string(),
            message: message.to_string(),
        }
    }

    /// Whether this fault is answered as a plain HTTP error instead of a stream.
    pub(crate) fn is_http_error(&self) -> bool {
        matches!(self, Fault::Status { .. } | Fault::ContextLengthExceeded)
    }
}

/// An OpenAI-style error body: `{"error":{"message","type","param","code"}}`.
pub fn openai_error(message: &str, kind: &str, code: Option<&str>, param: Option<&str>) -> String {
    serde_json::json!({
        "error": { "message": message, "type": kind, "param": param, "code": code }
    })
    .to_string()
}

/// An Anthropic-style error body: `{"type":"error","error":{"type","message"}}`.
pub fn anthropic_error(kind: &str, message: &str) -> String {
    serde_json::json!({ "type": "error", "error": { "type": kind, "message": message } })
        .to_string()
}

/// One scripted tool call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ScriptedCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Token usage reported at the end of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct ScriptedUsage {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
    pub reasoning: u64,
    pub cache_write: u64,
}

/// A scripted reply; rendered as Chat Completions chunks or Responses events depending on
/// which endpoint was hit.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub(crate) reasoning: String,
    pub(crate) text: String,
    pub(crate) exact_text_chunks: Option<Vec<String>>,
    pub(crate) tool_calls: Vec<ScriptedCall>,
    pub(crate) usage: Option<ScriptedUsage>,
    pub(crate) chunk_chars: Option<usize>,
    pub(crate) delay: Duration,
    pub(crate) fault: Option<Fault>,
    pub(crate) signature: Option<String>,
    pub(crate) redacted_thinking: Vec<String>,
    pub(crate) stop_reason: Option<String>,
}

impl Reply {
    /// Assistant text, streamed in several chunks.
    pub fn text(s: &str) -> Reply {
        Reply::default().with_text(s)
    }

    /// A reply with one tool call (arguments are serialized JSON).
    pub fn tool_call(id: &str, name: &str, args: serde_json::Value) -> Reply {
        Reply::default().with_tool_call(id, name, args)
    }

    /// Adds a tool call; several calls make one reply with parallel calls.
    pub fn with_tool_call(self, id: &str, name: &str, args: serde_json::Value) -> Reply {
        self.with_raw_tool_call(id, name, &args.to_string())
    }

    /// Adds a tool call whose argument text is sent verbatim (may be invalid JSON).
    pub fn with_raw_tool_call(mut self, id: &str, name: &str, arguments: &str) -> Reply {
        self.tool_calls.push(ScriptedCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        });
        self
    }

    /// Appends assistant text.
    pub fn with_text(mut self, s: &str) -> Reply {
        match &mut self.exact_text_chunks {
            Some(chunks) => chunks.push(s.to_string()),
            None => self.text.push_str(s),
        }
        self
    }

    /// Appends reasoning: chat `delta.reasoning_content`, Responses reasoning summary deltas.
    pub fn with_reasoning(mut self, s: &str) -> Reply {
        self.reasoning.push_str(s);
        self
    }

    /// Reports usage at the end (chat: a final usage chunk when `stream_options.include_usage`).
    pub fn with_usage(self, input: u64, output: u64) -> Reply {
        self.with_usage_details(input, output, 0, 0)
    }

    /// Reports usage including cached input tokens and reasoning tokens.
    pub fn with_usage_details(
        mut self,
        input: u64,
        output: u64,
        cached: u64,
        reasoning: u64,
    ) -> Reply {
        self.usage = Some(ScriptedUsage {
            input,
            output,
            cached,
            reasoning,
            cache_write: self.usage.map_or(0, |u| u.cache_write),
        });
        self
    }

    /// Reports input tokens written to the prompt cache (Anthropic
    /// `cache_creation_input_tokens`); call after a `with_usage*`.
    pub fn with_cache_write(mut self, tokens: u64) -> Reply {
        let mut u = self.usage.unwrap_or_default();
        u.cache_write = tokens;
        self.usage = Some(u);
        self
    }

    /// The reasoning's signature: Anthropic's thinking `signature`, the Responses
    /// reasoning item's `encrypted_content` (when the request includes it). Without one the
    /// mock derives `mock-sig-…` from the reasoning.
    pub fn with_signature(mut self, signature: &str) -> Reply {
        self.signature = Some(signature.to_string());
        self
    }

    /// Adds an Anthropic `redacted_thinking` block with this opaque data.
    pub fn with_redacted_thinking(mut self, data: &str) -> Reply {
        self.redacted_thinking.push(data.to_string());
        self
    }

    /// Overrides the finish reason (chat `finish_reason`, Anthropic `stop_reason`).
    pub fn with_stop_reason(mut self, reason: &str) -> Reply {
        self.stop_reason = Some(reason.to_string());
        self
    }

    /// The reasoning signature to send: scripted, or derived from the reasoning text.
    pub(crate) fn signature_text(&self) -> String {
        self.signature.clone().unwrap_or_else(|| {
            let sum: u64 = self.reasoning.bytes().map(u64::from).sum();
            format!("mock-sig-{}-{sum}", self.reasoning.len())
        })
    }

    /// Splits text, reasoning and tool-call arguments into pieces of this many characters.
    pub fn chunk_size(mut self, chars: usize) -> Reply {
        self.chunk_chars = Some(chars.max(1));
        self
    }

    /// Waits this long before each chunk after the first.
    pub fn delay_between_chunks(mut self, d: Duration) -> Reply {
        self.delay = d;
        self
    }

    /// Assistant text sent as exactly these chunks, one per SSE event.
    pub fn text_chunks(chunks: Vec<String>) -> Reply {
        Reply {
            exact_text_chunks: Some(chunks),
            ..Reply::default()
        }
    }

    /// A reply that is only a fault.
    pub fn fault(f: Fault) -> Reply {
        Reply {
            fault: Some(f),
            ..Reply::default()
        }
    }

    /// Streams the content of this reply (without its normal ending), then the fault.
    pub fn then_fault(mut self, f: Fault) -> Reply {
        self.fault = Some(f);
        self
    }

    /// The full assistant text of this reply.
    pub fn full_text(&self) -> String {
        match &self.exact_text_chunks {
            Some(chunks) => chunks.concat(),
            None => self.text.clone(),
        }
    }

    /// Text pieces as they will be streamed.
    pub(crate) fn text_pieces(&self) -> Vec<String> {
        match &self.exact_text_chunks {
            Some(chunks) => chunks.iter().filter(|c| !c.is_empty()).cloned().collect(),
            None => split_chars(&self.text, self.chunk()),
        }
    }

    /// Chunk size in characters.
    pub(crate) fn chunk(&self) -> usize {
        self.chunk_chars.unwrap_or(DEFAULT_CHUNK_CHARS)
    }
}

/// Splits `s` into pieces of at most `n` characters (never inside a UTF-8 sequence).
pub(crate) fn split_chars(s: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && i % n == 0 {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_char_boundaries() {
        assert_eq!(split_chars("héllo!", 4), vec!["héll", "o!"]);
        assert!(split_chars("", 3).is_empty());
        assert_eq!(split_chars("abc", 0), vec!["a", "b", "c"]);
    }

    #[test]
    fn builder_accumulates() {
        let r = Reply::text("ab")
            .with_text("cd")
            .with_tool_call("c1", "x", serde_json::json!({"a": 1}))
            .chunk_size(1);
        assert_eq!(r.full_text(), "abcd");
        assert_eq!(r.text_pieces().len(), 4);
        assert_eq!(r.tool_calls[0].arguments, "{\"a\":1}");
        let e = Reply::text_chunks(vec!["x".into(), "y".into()]).with_text("z");
        assert_eq!(e.text_pieces(), vec!["x", "y", "z"]);
    }
}
