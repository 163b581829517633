//! JSON with comments (`//`, `/* */`) and trailing commas, as VS Code and the seed's examples
//! write MCP configs: turned into plain JSON with line and column positions kept.

/// Blanks out comments (newlines kept, so error positions stay right), drops commas that
/// directly precede `}` or `]`, and a leading byte-order mark (editors on Windows add one).
pub fn strip(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
                i += 1;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                out.push_str("  ");
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
                if i < chars.len() {
                    out.push_str("  ");
                    i += 2;
                }
            }
            ',' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                if matches!(chars.get(j), Some('}') | Some(']')) {
                    out.push(' ');
                } else {
                    out.push(',');
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go_strings_stay() {
        let text = "// head\n[ /* a */ {\"u\": \"http://x//y /* no */\", \"a\": [1, 2,],}, ]";
        let v: serde_json::Value = serde_json::from_str(&strip(text)).unwrap();
        assert_eq!(v[0]["u"], "http://x//y /* no */");
        assert_eq!(v[0]["a"], serde_json::json!([1, 2]));
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        let v: serde_json::Value =
            serde_json::from_str(&strip("\u{feff}{\"mcpServers\": {}}")).unwrap();
        assert_eq!(v, serde_json::json!({"mcpServers": {}}));
    }

    #[test]
    fn positions_survive() {
        let text = "// c\n{\n  \"a\": oops\n}";
        let err = serde_json::from_str::<serde_json::Value>(&strip(text)).unwrap_err();
        assert_eq!(err.line(), 3);
    }
}
