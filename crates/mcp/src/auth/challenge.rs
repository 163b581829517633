//! The `WWW-Authenticate: Bearer …` challenge of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1).

/// The parameters of a Bearer challenge that the login uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`: where the protected-resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
}

impl Challenge {
    /// Parses the Bearer challenge among `header`'s challenges; `None` when there is none.
    pub fn parse(header: &str) -> Option<Challenge> {
        let lower = header.to_ascii_lowercase();
        let start = find_scheme(&lower, "bearer")?;
        let params = parse_params(&header[start + "bearer".len()..]);
        let get = |k: &str| {
            params
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.clone())
        };
        Some(Challenge {
            resource_metadata: get("resource_metadata"),
            scope: get("scope"),
            error: get("error"),
        })
    }

    /// Whether the server said the token lacks a scope (a step-up is needed).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Where `scheme` starts as a whole word (at the start or after a comma or space).
fn find_scheme(lower: &str, scheme: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme) {
        let at = from + i;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',');
        let after = lower.as_bytes().get(at + scheme.len());
        let after_ok = matches!(after, None | Some(b' '));
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + scheme.len();
    }
    None
}

/// `name=value` / `name="quoted value"` pairs, stopping at the next challenge's scheme.
fn parse_params(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && matches!(b[i], b' ' | b',' | b'\t') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !matches!(b[i], b'=' | b' ' | b',') {
            i += 1;
        }
        if i >= b.len() || b[i] != b'=' {
            // A bare token: the next challenge's scheme (or a token68); stop.
            return out;
        }
        let name = s[start..i].to_string();
        i += 1;
        let mut value = String::new();
        if i < b.len() && b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                let ch_len = s[i..].chars().next().map(char::len_utf8).unwrap_or(1);
                value.push_str(&s[i..i + ch_len]);
                i += ch_len;
            }
            i += 1;
        } else {
            let vstart = i;
            while i < b.len() && !matches!(b[i], b',' | b' ') {
                i += 1;
            }
            value = s[vstart..i].to_string();
        }
        out.push((name, value));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_quoted_and_bare_parameters() {
        let c = Challenge::parse(
            r#"Basic realm="x", Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a.example/.well-known/oauth-protected-resource""#,
        )
        .unwrap();
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert!(c.is_insufficient_scope());
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource")
        );
        let bare = Challenge::parse("Bearer resource_metadata=http://127.0.0.1:9/prm").unwrap();
        assert_eq!(
            bare.resource_metadata.as_deref(),
            Some("http://127.0.0.1:9/prm")
        );
        assert_eq!(Challenge::parse("Bearer").unwrap(), Challenge::default());
        assert!(Challenge::parse("Basic realm=\"x\"").is_none());
    }
}
