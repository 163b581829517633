//! Registered tool names: `mcp__<server>__<tool>`, both parts sanitised to `[A-Za-z0-9_-]`,
//! capped at 64 characters, with a short hash suffix when capping or a collision demands it.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

/// Longest tool name providers accept.
pub const MAX_TOOL_NAME: usize = 64;

/// Longest server segment kept before hashing (so the tool part keeps room).
const MAX_SERVER_SEGMENT: usize = 24;

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`; empty becomes `_`.
pub fn sanitize(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        "_".into()
    } else {
        out
    }
}

/// The sanitised server segment (truncated so tool names keep room).
pub fn server_segment(server: &str) -> String {
    let s = sanitize(server);
    if s.len() <= MAX_SERVER_SEGMENT {
        s
    } else {
        format!("{}_{}", &s[..MAX_SERVER_SEGMENT - 7], short_hash(server, 6))
    }
}

/// The prefix every tool of this server shares: `mcp__<server>__`.
pub fn server_prefix(server: &str) -> String {
    format!("mcp__{}__", server_segment(server))
}

/// The name for `tool` of `server`, unique among `taken` (which it is added to).
pub fn tool_name(server: &str, tool: &str, taken: &mut HashSet<String>) -> String {
    let prefix = server_prefix(server);
    let plain = format!("{prefix}{}", sanitize(tool));
    let key = format!("{server}\u{0}{tool}");
    let mut candidate = if plain.len() <= MAX_TOOL_NAME {
        plain
    } else {
        with_suffix(&plain, &short_hash(&key, 8))
    };
    let mut n = 0u32;
    while taken.contains(&candidate) {
        n += 1;
        let suffix = if n == 1 {
            short_hash(&key, 8)
        } else {
            format!("{}{n}", short_hash(&key, 6))
        };
        candidate = with_suffix(&format!("{prefix}{}", sanitize(tool)), &suffix);
    }
    taken.insert(candidate.clone());
    candidate
}

fn with_suffix(base: &str, suffix: &str) -> String {
    let keep = MAX_TOOL_NAME
        .saturating_sub(suffix.len() + 1)
        .min(base.len());
    format!("{}_{suffix}", &base[..keep])
}

fn short_hash(s: &str, len: usize) -> String {
    let digest = Sha256::digest(s.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..len.min(hex.len())].to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn plain_names() {
        let mut t = HashSet::new();
        assert_eq!(tool_name("fs", "read_file", &mut t), "mcp__fs__read_file");
        assert_eq!(
            tool_name("my server", "get.thing/x", &mut t),
            "mcp__my_server__get_thing_x"
        );
    }

    #[test]
    fn long_names_are_capped_with_a_stable_hash() {
        let mut t = HashSet::new();
        let long = "a".repeat(100);
        let n = tool_name("srv", &long, &mut t);
        assert_eq!(n.len(), MAX_TOOL_NAME);
        assert!(n.starts_with("mcp__srv__aaaa"));
        let mut t2 = HashSet::new();
        assert_eq!(tool_name("srv", &long, &mut t2), n, "stable across runs");
        let server = "s".repeat(80);
        let n = tool_name(&server, "x", &mut HashSet::new());
        assert!(n.len() <= MAX_TOOL_NAME && n.ends_with("__x"), "{n}");
    }

    #[test]
    fn collisions_get_distinct_valid_names() {
        let mut t = HashSet::new();
        let a = tool_name("s", "a.b", &mut t);
        let b = tool_name("s", "a_b", &mut t);
        let c = tool_name("s", "a_b", &mut t);
        assert_eq!(a, "mcp__s__a_b");
        assert_ne!(a, b);
        assert_ne!(b, c);
        for n in [&a, &b, &c] {
            assert!(n.len() <= MAX_TOOL_NAME);
            assert!(n
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'));
        }
        let long = "x".repeat(90);
        let d = tool_name("s", &long, &mut t);
        let e = tool_name("s", &long, &mut t);
        assert_ne!(d, e);
        assert!(d.len() <= MAX_TOOL_NAME && e.len() <= MAX_TOOL_NAME);
    }
}
