//! Shell command analysis: a command is "plain" only when it is simple commands of literal
//! words joined by `&&`, `||`, `;` or `|` — no redirections, substitutions, expansions,
//! assignments, subshells, heredocs or background jobs.

use tree_sitter::{Node, Parser};

/// What a command line consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellAnalysis {
    /// Exactly one simple command of literal words.
    Simple(Vec<String>),
    /// Several plain simple commands joined by `&&`, `||`, `;` or `|`.
    Compound(Vec<Vec<String>>),
    /// Anything else (why, for the approval reason).
    Opaque(String),
}

impl ShellAnalysis {
    /// Analyses one command line.
    pub fn of(command: &str) -> ShellAnalysis {
        match parse_plain_commands(command) {
            Ok(mut cmds) if cmds.len() == 1 => ShellAnalysis::Simple(cmds.remove(0)),
            Ok(cmds) if cmds.is_empty() => ShellAnalysis::Opaque("empty command".into()),
            Ok(cmds) => ShellAnalysis::Compound(cmds),
            Err(why) => ShellAnalysis::Opaque(why),
        }
    }
}

/// Parses `command` into plain simple commands (words with quotes removed), or says why it
/// is not plain.
pub fn parse_plain_commands(command: &str) -> Result<Vec<Vec<String>>, String> {
    if command.contains('\0') {
        return Err("contains a NUL byte".into());
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| format!("shell parser unavailable: {e}"))?;
    let tree = parser
        .parse(command, None)
        .ok_or_else(|| "could not parse the command".to_string())?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("the command does not parse as shell".into());
    }
    let src = command.as_bytes();
    let mut out = Vec::new();
    collect(root, src, &mut out)?;
    Ok(out)
}

fn collect(node: Node<'_>, src: &[u8], out: &mut Vec<Vec<String>>) -> Result<(), String> {
    match node.kind() {
        "program" | "list" | "pipeline" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "&&" | "||" | ";" | "|" | "comment" => {}
                    "&" => return Err("runs a job in the background (`&`)".into()),
                    "|&" => return Err("pipes stderr (`|&`)".into()),
                    _ if child.is_named() => collect(child, src, out)?,
                    other => return Err(format!("uses the shell operator `{other}`")),
                }
            }
            Ok(())
        }
        "command" => {
            let mut words = Vec::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "command_name" => {
                        let mut c2 = child.walk();
                        for part in child.children(&mut c2) {
                            words.push(word(part, src)?);
                        }
                    }
                    "variable_assignment" => {
                        return Err("sets environment variables for the command".into())
                    }
                    _ => words.push(word(child, src)?),
                }
            }
            if words.is_empty() {
                return Err("empty command".into());
            }
            out.push(words);
            Ok(())
        }
        "redirected_statement" | "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
            Err("redirects input or output".into())
        }
        "subshell" | "compound_statement" => Err("runs a subshell or command group".into()),
        "command_substitution" | "process_substitution" => Err("uses command substitution".into()),
        "variable_assignment" | "variable_assignments" => Err("assigns variables".into()),
        "function_definition" => Err("defines a function".into()),
        "if_statement"
        | "while_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "case_statement" => Err("uses shell control flow".into()),
        "negated_command" => Err("negates a command".into()),
        other => Err(format!(
            "uses shell syntax the policy does not accept ({other})"
        )),
    }
}

/// Whether bash would change `text` (an unquoted word): globs, `$`, backquotes, escapes,
/// a tilde where bash expands one (word start, or after `=` or `:`), and brace expansion
/// (`{a,b}`, `{1..3}`; `HEAD@{u}` and `{}` are literal).
fn expands(text: &str) -> bool {
    text.contains(['*', '?', '[', '$', '`', '\\']) || braces_or_tilde(text)
}

/// Whether `text` has a tilde bash expands or a brace expansion (see [`expands`]).
pub(crate) fn braces_or_tilde(text: &str) -> bool {
    let b = text.as_bytes();
    let tilde = b
        .iter()
        .enumerate()
        .any(|(i, c)| *c == b'~' && (i == 0 || matches!(b[i - 1], b'=' | b':')));
    let brace = text.match_indices('{').any(|(at, _)| {
        text[at + 1..].find('}').is_some_and(|end| {
            let inside = &text[at + 1..at + 1 + end];
            inside.contains(',') || inside.contains("..") || inside.contains('{')
        })
    });
    tilde || brace
}

/// The literal text of one word, or an error when it expands anything.
fn word(node: Node<'_>, src: &[u8]) -> Result<String, String> {
    let text = node
        .utf8_text(src)
        .map_err(|_| "contains invalid UTF-8".to_string())?;
    match node.kind() {
        "word" | "number" => {
            if expands(text) {
                Err(format!("uses a pattern, expansion or escape in `{text}`"))
            } else {
                Ok(text.to_string())
            }
        }
        "raw_string" => Ok(text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .unwrap_or(text)
            .to_string()),
        "string" => {
            // A double-quoted string is literal only if it has no expansions inside.
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "\"" | "string_content" => {}
                    _ => return Err(format!("expands something inside {text}")),
                }
            }
            if text.contains(['$', '`', '\\']) {
                return Err(format!("expands or escapes something inside {text}"));
            }
            Ok(text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .unwrap_or(text)
                .to_string())
        }
        "concatenation" => {
            // Brace expansion and tildes span the pieces (`{`, `a,b`, `}`): judged on the
            // whole word as written (quoted braces count too, erring towards asking).
            if braces_or_tilde(text) {
                return Err(format!("uses a pattern, expansion or escape in `{text}`"));
            }
            let mut s = String::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                s.push_str(&word(child, src)?);
            }
            Ok(s)
        }
        "simple_expansion" | "expansion" => Err(format!("expands a variable ({text})")),
        "command_substitution" | "process_substitution" => {
            Err(format!("uses command substitution ({text})"))
        }
        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
            Err("redirects input or output".into())
        }
        other => Err(format!(
            "uses shell syntax the policy does not accept ({other}: {text})"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn plain_commands_parse_to_words() {
        assert_eq!(
            ShellAnalysis::of("ls -la src"),
            ShellAnalysis::Simple(words(&["ls", "-la", "src"]))
        );
        assert_eq!(
            ShellAnalysis::of("git log --oneline -n 5"),
            ShellAnalysis::Simple(words(&["git", "log", "--oneline", "-n", "5"]))
        );
        assert_eq!(
            ShellAnalysis::of("grep 'a b' \"c d\" file"),
            ShellAnalysis::Simple(words(&["grep", "a b", "c d", "file"]))
        );
        assert_eq!(
            ShellAnalysis::of("cat a | wc -l && echo done"),
            ShellAnalysis::Compound(vec![
                words(&["cat", "a"]),
                words(&["wc", "-l"]),
                words(&["echo", "done"])
            ])
        );
    }

    #[test]
    fn revisions_and_empty_braces_are_literal() {
        for (c, w) in [
            (
                "git diff HEAD~1 -- src",
                &["git", "diff", "HEAD~1", "--", "src"][..],
            ),
            ("git log @{u}..", &["git", "log", "@{u}.."][..]),
            ("rg --glob='*.rs' x", &["rg", "--glob=*.rs", "x"][..]),
            ("git show main@{2}", &["git", "show", "main@{2}"][..]),
            (
                "git log HEAD~2..HEAD^",
                &["git", "log", "HEAD~2..HEAD^"][..],
            ),
        ] {
            assert_eq!(ShellAnalysis::of(c), ShellAnalysis::Simple(words(w)), "{c}");
        }
    }

    #[test]
    fn anything_that_expands_or_redirects_is_opaque() {
        for c in [
            "ls > out",
            "ls $(rm -rf x)",
            "ls `rm x`",
            "echo $HOME",
            "echo \"$HOME\"",
            "FOO=1 ls",
            "(ls)",
            "{ ls; }",
            "ls &",
            "ls *.rs",
            "cat <<EOF\nx\nEOF",
            "cat < /etc/passwd",
            "if true; then rm x; fi",
            "ls ~",
            "echo a\\;b",
            "ls <(rm x)",
            "f() { rm x; }; f",
            "! ls",
            "ls 2>&1",
            "ls |& cat",
            "ls ~/x",
            "ls x=~/y",
            "ls a:~/y",
            "echo {a,b}",
            "echo x{1..3}",
            "echo a{b,{c,d}}",
            "ls ~root",
        ] {
            assert!(
                matches!(ShellAnalysis::of(c), ShellAnalysis::Opaque(_)),
                "{c} should be opaque: {:?}",
                ShellAnalysis::of(c)
            );
        }
    }
}
