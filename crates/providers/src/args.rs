//! A tool call's argument text as it is sent back to the provider in the history. Models
//! (small local ones above all) sometimes emit arguments that are not a JSON object; the
//! engine answers such a call with an `invalid_arguments` error, but the call itself stays in
//! the history, and several servers (Ollama, vLLM templates, Anthropic) reject every later
//! request whose history holds unparsable arguments. Sent as a JSON object instead, the
//! broken text kept under `_raw_arguments`, the session goes on.

use std::borrow::Cow;

use serde_json::{json, Value};

/// The arguments as a JSON object: parsed, `{}` for nothing, else the text under
/// `_raw_arguments`.
pub(crate) fn as_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        Ok(Value::Null) => json!({}),
        _ if arguments.trim().is_empty() => json!({}),
        _ => json!({ "_raw_arguments": arguments }),
    }
}

/// The arguments as JSON object text: unchanged when they already are one (byte for byte,
/// so prompt caches still match), otherwise [`as_object`] serialised.
pub(crate) fn as_object_text(arguments: &str) -> Cow<'_, str> {
    match serde_json::from_str::<serde::de::IgnoredAny>(arguments) {
        Ok(_) if arguments.trim_start().starts_with('{') => Cow::Borrowed(arguments),
        _ => Cow::Owned(as_object(arguments).to_string()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn objects_pass_unchanged_and_everything_else_becomes_one() {
        let same = r#"{ "path" : "a.txt",  "n": 1 }"#;
        assert!(matches!(as_object_text(same), Cow::Borrowed(s) if s == same));
        for (raw, want) in [
            ("", json!({})),
            ("   ", json!({})),
            ("null", json!({})),
            ("{broken json", json!({"_raw_arguments": "{broken json"})),
            ("[1,2]", json!({"_raw_arguments": "[1,2]"})),
            ("\"s\"", json!({"_raw_arguments": "\"s\""})),
            (
                r#"{"a":1} trailing"#,
                json!({"_raw_arguments": r#"{"a":1} trailing"#}),
            ),
        ] {
            let text = as_object_text(raw);
            let parsed: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(parsed, want, "{raw:?}");
            assert_eq!(as_object(raw), want, "{raw:?}");
        }
    }
}
