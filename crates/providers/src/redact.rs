//! Keeps credentials out of outcome messages and logs.

/// Placeholder written where a secret was.
pub const REDACTED: &str = "[redacted]";

/// Shortest secret that is replaced verbatim (shorter values are not credentials).
const MIN_SECRET_LEN: usize = 4;

/// Shortest `sk-…` token tail that is masked.
const MIN_TOKEN_TAIL: usize = 4;

/// Replaces known secrets and anything that looks like an API key.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor for these secret values.
    pub(crate) fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(str::trim)
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .map(String::from)
            .collect();
        // Longest first, so a secret containing another one is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Redactor { secrets }
    }

    /// `text` with every secret and key-looking token replaced by `[redacted]`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        mask_tokens(&out)
    }

    /// Scrubs, then cuts to at most `max_chars` characters.
    pub(crate) fn scrub_truncated(&self, text: &str, max_chars: usize) -> String {
        // Scrub before cutting (a cut secret would no longer match), and after (a cut can
        // leave a key-looking prefix that the first pass did not see as a whole token).
        mask_tokens(&truncate(&self.scrub(text), max_chars))
    }
}

/// Scrubs `secret` (when given) and every `sk-…` / `Bearer …` token out of `text`.
pub fn scrub(text: &str, secret: Option<&str>) -> String {
    Redactor::new(secret).scrub(text)
}

/// Cuts `text` to at most `max_chars` characters, marking the cut with `…`.
pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '*')
}

/// Masks `sk-…` tokens and `Bearer …` credentials.
fn mask_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let rest = &text[i..];
        let word_start = !text[..i].chars().next_back().is_some_and(is_token_char);
        let prefix = ["sk-", "Bearer "].into_iter().find(|p| rest.starts_with(p));
        if let (true, Some(p)) = (word_start, prefix) {
            let tail: usize = rest[p.len()..]
                .chars()
                .take_while(|c| is_token_char(*c))
                .map(char::len_utf8)
                .sum();
            if tail >= MIN_TOKEN_TAIL {
                if p.starts_with('B') {
                    out.push_str(p);
                }
                out.push_str(REDACTED);
                i += p.len() + tail;
                continue;
            }
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_key_and_key_looking_tokens() {
        let r = Redactor::new(["my-custom-key-123"]);
        let s =
            r.scrub("bad key my-custom-key-123, also sk-proj-AbC_12**xyZ and Bearer abcdef123.");
        assert_eq!(
            s,
            "bad key [redacted], also [redacted] and Bearer [redacted]."
        );
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let r = Redactor::new([""]);
        let s = "risk-free task-list sk- sk-ab héllo Bearer x";
        assert_eq!(r.scrub(s), s);
        assert_eq!(scrub("ask-question", None), "ask-question");
    }

    #[test]
    fn truncation_never_leaks_a_partial_key() {
        let key = "sk-0123456789abcdef";
        let text = format!("{}{key}", "x ".repeat(10));
        let s = Redactor::new([key]).scrub_truncated(&text, 25);
        assert!(!s.contains("0123"), "{s}");
        // A key the redactor does not know, cut in the middle, is still masked.
        let s = Redactor::default().scrub_truncated(&format!("see {key}"), 12);
        assert!(s.starts_with("see [redact") && !s.contains("0123"), "{s}");
    }

    #[test]
    fn truncate_counts_chars() {
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
