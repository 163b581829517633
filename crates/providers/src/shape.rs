//! Shapes of streamed chunks: a provider sends the same JSON document for every delta of a
//! response except for one string value (`{"id":"…",…,"delta":{"content":"<piece>"},…}`).
//! Once `serde_json` has parsed such a chunk, a later chunk that is byte for byte the same
//! around that string is the same document with another value; only the value is decoded
//! (as one whole string token: by `serde_json`, or as it stands when it has no escapes),
//! never the rest again.
//!
//! Why this is exact: JSON strings are single tokens. If the new chunk is the learned
//! prefix (ending with the opening quote), then one complete string token, then the learned
//! suffix (starting with the closing quote), its token sequence is the learned one with one
//! string value replaced, so a full parse would read the same structure, keys and values,
//! and only that string differs. Anything else (the middle is not exactly one string token,
//! the bytes around it differ) is not a match and goes to the full parse.

use std::borrow::Cow;

use crate::fastjson::Str;

/// Chunks a response may repeat with one string changed; beyond this the oldest is dropped.
const MAX_SHAPES: usize = 4;

/// One learned chunk, cut around a string value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shape<K> {
    /// Bytes before the value, ending with its opening quote.
    prefix: Box<str>,
    /// Bytes after the value, starting with its closing quote.
    suffix: Box<str>,
    /// Which field the value is (the caller's tag).
    kind: K,
}

/// The shapes seen in one response, most recently matched first.
#[derive(Debug)]
pub(crate) struct Shapes<K> {
    known: Vec<Shape<K>>,
}

impl<K> Default for Shapes<K> {
    fn default() -> Self {
        Shapes { known: Vec::new() }
    }
}

impl<K: Copy + Eq> Shapes<K> {
    /// Remembers `data` around `value`, a string that `serde_json` borrowed from `data` while
    /// parsing it. Values it could not borrow (escaped ones) and empty ones teach nothing.
    pub(crate) fn learn(&mut self, data: &str, value: &Str<'_>, kind: K) {
        let Cow::Borrowed(v) = &value.0 else {
            return;
        };
        if v.is_empty() {
            return;
        }
        let Some(start) = (v.as_ptr() as usize).checked_sub(data.as_ptr() as usize) else {
            return;
        };
        let end = start + v.len();
        let bytes = data.as_bytes();
        // The value must be the inside of a string token of `data`.
        if start == 0 || end >= bytes.len() || bytes[start - 1] != b'"' || bytes[end] != b'"' {
            return;
        }
        let (Some(prefix), Some(suffix)) = (data.get(..start), data.get(end..)) else {
            return;
        };
        if self
            .known
            .iter()
            .any(|s| *s.prefix == *prefix && *s.suffix == *suffix)
        {
            return;
        }
        if self.known.len() == MAX_SHAPES {
            self.known.pop();
        }
        self.known.insert(
            0,
            Shape {
                prefix: prefix.into(),
                suffix: suffix.into(),
                kind,
            },
        );
    }

    /// The field and its value when `data` is a learned chunk with another string value.
    pub(crate) fn matching<'a>(&mut self, data: &'a str) -> Option<(K, Str<'a>)> {
        let (i, value) = self.known.iter().enumerate().find_map(|(i, s)| {
            let p = s.prefix.len();
            let q = s.suffix.len();
            if data.len() < p + q || !data.starts_with(&*s.prefix) || !data.ends_with(&*s.suffix) {
                return None;
            }
            // The token with its quotes: the prefix's last byte and the suffix's first.
            let token = data.get(p - 1..data.len() - q + 1)?;
            let inside = data.get(p..data.len() - q)?;
            if is_unescaped(inside) {
                return Some((i, Str(Cow::Borrowed(inside))));
            }
            serde_json::from_str::<Str<'a>>(token).ok().map(|v| (i, v))
        })?;
        let kind = self.known[i].kind;
        if i > 0 {
            let hit = self.known.remove(i);
            self.known.insert(0, hit);
        }
        Some((kind, value))
    }
}

/// Whether `s` is, as it stands, the inside of a JSON string with no escapes (RFC 8259
/// `unescaped`: no quote, no backslash, no control character); then its value is `s`.
fn is_unescaped(s: &str) -> bool {
    s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
