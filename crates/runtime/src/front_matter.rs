//! The `---` front matter of skills (`SKILL.md`) and command files, parsed as the YAML it is
//! (block scalars such as `description: |-`, quoted and multi-line values, lists), by
//! yaml-rust2, so a description reaches the model as its text, never as `|-`. Values come back
//! as text: scalars as written, lists joined with `, `; a front matter that is not a YAML
//! mapping is an error that names the problem, never a guess.

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

/// The front matter's keys and their values as text, and the text after it.
pub type Parsed<'a> = (BTreeMap<String, String>, &'a str);

/// Parses the front matter of `text` (none: an empty map and all of `text`).
pub fn parse(text: &str) -> Result<Parsed<'_>, String> {
    let Some((block, body)) = split(text) else {
        return Ok((BTreeMap::new(), text));
    };
    let docs = YamlLoader::load_from_str(block).map_err(|e| format!("front matter: {e}"))?;
    let mut out = BTreeMap::new();
    match docs.into_iter().next() {
        None | Some(Yaml::Null) => {}
        Some(Yaml::Hash(map)) => {
            for (k, v) in map {
                if let (Some(k), Some(v)) = (scalar(&k), value(&v)) {
                    out.insert(k, v);
                }
            }
        }
        Some(_) => return Err("front matter: not a list of `key: value` lines".into()),
    }
    Ok((out, body))
}

/// [`parse`] for command files, which Claude Code reads leniently: a block that is not YAML
/// (`argument-hint: [issue] [priority]`, a description with `: ` in it) is read as
/// `key: value` lines. Display-only keys (`argument-hint`) keep their text as written, so a
/// `[message]` hint is not taken for a list.
pub fn parse_lenient(text: &str) -> Parsed<'_> {
    let Some((block, body)) = split(text) else {
        return (BTreeMap::new(), text);
    };
    let lines = || {
        block.lines().filter_map(|line| {
            let (k, v) = line.split_once(':')?;
            let k = k.trim();
            (!k.is_empty() && !line.starts_with(char::is_whitespace)).then(|| {
                let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
                (k.to_string(), v.to_string())
            })
        })
    };
    let mut out = match parse(text) {
        Ok((map, _)) => map,
        Err(_) => lines().collect(),
    };
    for (k, v) in lines().filter(|(k, _)| k == "argument-hint") {
        out.insert(k, v);
    }
    (out, body)
}

/// The text after the front matter, whether or not the block parses (all of `text` without
/// one).
pub fn body(text: &str) -> &str {
    split(text).map_or(text, |(_, body)| body)
}

/// The front matter block between the `---` lines and the text after it.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))?;
    let end = if rest.starts_with("---") {
        0
    } else {
        rest.find("\n---")? + 1
    };
    let after = &rest[end + 3..];
    let body = after
        .split_once('\n')
        .map(|(_, b)| b)
        .unwrap_or("")
        .trim_start_matches(['\r', '\n']);
    Some((&rest[..end], body))
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn value(y: &Yaml) -> Option<String> {
    match y {
        Yaml::Array(items) => Some(
            items
                .iter()
                .filter_map(scalar)
                .collect::<Vec<_>>()
                .join(", "),
        ),
        Yaml::Null => Some(String::new()),
        other => scalar(other),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn block_scalars_quotes_and_lists_come_back_as_their_text() {
        let text = "---\nname: claude-api\ndescription: |-\n  Build apps with the Claude API.\n  TRIGGER when code imports anthropic.\nlicense: \"Complete terms in LICENSE.txt\"\nallowed-tools:\n  - Bash(git add:*)\n  - Read\ndisable-model-invocation: true\n---\n# Body\n";
        let (fm, body) = parse(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            fm["description"],
            "Build apps with the Claude API.\nTRIGGER when code imports anthropic."
        );
        assert_eq!(fm["license"], "Complete terms in LICENSE.txt");
        assert_eq!(fm["allowed-tools"], "Bash(git add:*), Read");
        assert_eq!(fm["disable-model-invocation"], "true");
        assert_eq!(body, "# Body\n");
        let (fm, body) =
            parse("---\ndescription: >\n  folded\n  text\n---\n\nrest").unwrap_or_default();
        assert_eq!(fm["description"], "folded text\n");
        assert_eq!(body, "rest");
    }

    #[test]
    fn command_files_are_read_leniently_as_claude_code_reads_them() {
        let (fm, body) = parse_lenient(
            "---\nargument-hint: [issue-number] [priority]\ndescription: Fix it: now\n---\nBody $1\n",
        );
        assert_eq!(fm["argument-hint"], "[issue-number] [priority]");
        assert_eq!(fm["description"], "Fix it: now");
        assert_eq!(body, "Body $1\n");
        let (fm, _) =
            parse_lenient("---\nargument-hint: [message]\ndescription: |-\n  two\n  lines\n---\n");
        assert_eq!(fm["argument-hint"], "[message]");
        assert_eq!(fm["description"], "two\nlines");
    }

    #[test]
    fn no_front_matter_is_the_whole_text_and_a_broken_one_is_named() {
        let (fm, body) = parse("# Just a body\n---\n").unwrap_or_default();
        assert!(fm.is_empty());
        assert_eq!(body, "# Just a body\n---\n");
        let err = parse("---\ndescription: [unclosed\n---\nbody").unwrap_err();
        assert!(err.starts_with("front matter:"), "{err}");
        assert!(parse("---\n- a list\n---\nbody").is_err());
        let (fm, body) = parse("---\n---\nbody").unwrap_or_default();
        assert!(fm.is_empty());
        assert_eq!(body, "body");
    }
}
