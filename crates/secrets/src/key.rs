//! [`ApiKey`]: a credential that never prints itself.

use crate::SecretError;

/// Longest key accepted (real keys are far shorter; this bounds what a paste can store).
const MAX_KEY_LEN: usize = 4096;

/// An API key. `Debug` and `Display` print `[redacted]`; [`ApiKey::expose`] is the one way
/// to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key from user input: surrounding whitespace is trimmed; empty text, inner
    /// whitespace or control characters are rejected (the error never quotes the key).
    pub fn new(text: &str) -> Result<ApiKey, SecretError> {
        let key = text.trim();
        if key.is_empty() {
            return Err(SecretError::InvalidKey("the key is empty".into()));
        }
        if key.len() > MAX_KEY_LEN {
            return Err(SecretError::InvalidKey(format!(
                "the key is longer than {MAX_KEY_LEN} bytes"
            )));
        }
        if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(SecretError::InvalidKey(
                "the key contains spaces, line breaks or control characters".into(),
            ));
        }
        Ok(ApiKey(key.to_string()))
    }

    /// A longer stored secret (an MCP login: tokens and client identity as one base64 text):
    /// up to 64 KiB, no whitespace or control characters.
    pub fn stored(text: &str) -> Result<ApiKey, SecretError> {
        if text.len() > 64 * 1024 || text.is_empty() {
            return Err(SecretError::InvalidKey(
                "the stored value is empty or too long".into(),
            ));
        }
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(SecretError::InvalidKey(
                "the stored value contains spaces or control characters".into(),
            ));
        }
        Ok(ApiKey(text.to_string()))
    }

    /// The key text, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn trims_and_never_prints() {
        let k = ApiKey::new("  sk-abc123SECRET\n").unwrap();
        assert_eq!(k.expose(), "sk-abc123SECRET");
        let shown = format!("{k} {k:?} {:?}", Some(&k));
        assert!(!shown.contains("SECRET"), "{shown}");
    }

    #[test]
    fn rejects_bad_input_without_quoting_it() {
        for bad in ["", "   ", "sk-a b", "sk-\u{7}x", &"k".repeat(5000)] {
            let e = ApiKey::new(bad).unwrap_err().to_string();
            assert!(!bad.trim().is_empty() || e.contains("empty"), "{e}");
            assert!(!e.contains("sk-a"), "{e}");
        }
    }
}
