//! What a command line really runs: every simple command anywhere in it (pipelines, lists,
//! subshells, `$(…)`, function bodies), with known wrappers unwrapped (`command`, `env`,
//! `nice`, `nohup`, `timeout`, `stdbuf`, `setsid`, `time`, `sudo`, `doas`, `exec`, `xargs`,
//! `find -exec`, `eval` and `sh`/`bash`/`zsh -c` with a literal script), quotes and ANSI-C
//! escapes decoded (`$'\x72m'` is `rm`) and absolute program paths reduced to the program
//! (`/bin/rm` is `rm`). Used by deny/ask rules and the catastrophic-command check; what cannot
//! be analysed is reported, so a rule that could apply asks instead of letting it through.

use tree_sitter::{Node, Parser};

/// How deep wrappers and nested scripts are followed before the line counts as unanalysable.
const MAX_DEPTH: usize = 8;

/// One word of a command as bash will pass it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The decoded text; for a non-literal word, the text as written.
    pub text: String,
    /// Whether bash passes exactly `text` (no expansion, glob or substitution).
    pub literal: bool,
}

impl Word {
    fn lit(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            literal: true,
        }
    }
}

/// Every command a line runs, and what in it could not be analysed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effective {
    /// The commands, in source order: each wrapper and, after it, what it runs. Program
    /// paths are reduced to their last component.
    pub commands: Vec<Vec<Word>>,
    /// Why parts of the line could not be analysed (empty: everything was).
    pub opaque: Vec<String>,
}

impl Effective {
    /// Analyses one command line.
    pub fn of(command: &str) -> Effective {
        let mut out = Effective::default();
        analyse_into(command, 0, &mut out);
        out
    }
}

fn analyse_into(command: &str, depth: usize, out: &mut Effective) {
    if depth > MAX_DEPTH {
        out.opaque
            .push("nests shells or wrappers too deeply".into());
        return;
    }
    if command.contains('\0') {
        out.opaque.push("contains a NUL byte".into());
        return;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        out.opaque.push("the shell parser is unavailable".into());
        return;
    }
    let Some(tree) = parser.parse(command, None) else {
        out.opaque.push("could not parse the command".into());
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.opaque.push("does not parse as shell".into());
    }
    visit(root, command.as_bytes(), depth, out);
}

fn visit(node: Node<'_>, src: &[u8], depth: usize, out: &mut Effective) {
    if node.kind() == "command" {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "command_name" => {
                    let mut c2 = child.walk();
                    for part in child.children(&mut c2) {
                        words.push(word(part, src));
                    }
                }
                "variable_assignment"
                | "file_redirect"
                | "heredoc_redirect"
                | "herestring_redirect"
                | "comment" => {}
                _ if child.is_named() => words.push(word(child, src)),
                _ => {}
            }
        }
        if !words.is_empty() {
            unwrap(words, depth, out);
        }
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        visit(child, src, depth, out);
    }
}

/// The word bash passes for `node`.
fn word(node: Node<'_>, src: &[u8]) -> Word {
    let text = node.utf8_text(src).unwrap_or_default();
    let dynamic = || Word {
        text: text.to_string(),
        literal: false,
    };
    match node.kind() {
        "word" | "number" => {
            if text.contains(['*', '?', '[', '$', '`']) || crate::shell::braces_or_tilde(text) {
                dynamic()
            } else {
                Word::lit(unescape_bare(text))
            }
        }
        "raw_string" => Word::lit(strip(text, "'", "'")),
        "string" | "translated_string" => {
            let mut cursor = node.walk();
            let plain = node
                .children(&mut cursor)
                .all(|c| matches!(c.kind(), "\"" | "$\"" | "string_content"));
            if plain && !text.contains(['$', '`']) {
                let body = strip(text.strip_prefix('$').unwrap_or(text), "\"", "\"");
                Word::lit(unescape_double(&body))
            } else {
                dynamic()
            }
        }
        "ansi_c_string" => match decode_ansi_c(&strip(text, "$'", "'")) {
            Some(t) => Word::lit(t),
            None => dynamic(),
        },
        "concatenation" => {
            if crate::shell::braces_or_tilde(text) {
                return dynamic();
            }
            let mut s = String::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                let w = word(child, src);
                if !w.literal {
                    return dynamic();
                }
                s.push_str(&w.text);
            }
            Word::lit(s)
        }
        _ => dynamic(),
    }
}

fn strip(text: &str, pre: &str, post: &str) -> String {
    text.strip_prefix(pre)
        .and_then(|t| t.strip_suffix(post))
        .unwrap_or(text)
        .to_string()
}

/// An unquoted word's backslashes: `\x` is `x`, a backslash-newline disappears.
fn unescape_bare(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A double-quoted body's backslashes: only `\$`, `` \` ``, `\"`, `\\` and newline escape.
fn unescape_double(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.extend(chars.next());
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes the body of `$'…'` the way bash does; `None` for escapes it cannot decode exactly.
fn decode_ansi_c(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    let take = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, max: usize, radix: u32| {
        let mut s = String::new();
        while s.len() < max {
            match chars.peek() {
                Some(c) if c.is_digit(radix) => {
                    s.push(*c);
                    chars.next();
                }
                _ => break,
            }
        }
        u32::from_str_radix(&s, radix).ok()
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let decoded = match e {
            'a' => '\x07',
            'b' => '\x08',
            'e' | 'E' => '\x1b',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            '\\' | '\'' | '"' | '?' => e,
            'x' => char::from_u32(take(&mut chars, 2, 16)?)?,
            'u' => char::from_u32(take(&mut chars, 4, 16)?)?,
            'U' => char::from_u32(take(&mut chars, 8, 16)?)?,
            '0'..='7' => {
                let mut s = e.to_string();
                while s.len() < 3 {
                    match chars.peek() {
                        Some(d @ '0'..='7') => {
                            s.push(*d);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                char::from_u32(u32::from_str_radix(&s, 8).ok()? & 0xff)?
            }
            // `\cX` control characters and anything rarer: not decoded.
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

/// The program a literal path names (`/usr/bin/rm` → `rm`).
pub fn program_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

/// Records `words` (program path reduced) and, for a known wrapper, what it runs.
fn unwrap(mut words: Vec<Word>, depth: usize, out: &mut Effective) {
    if depth > MAX_DEPTH {
        out.opaque
            .push("nests shells or wrappers too deeply".into());
        return;
    }
    let Some(first) = words.first_mut() else {
        return;
    };
    if !first.literal {
        out.opaque
            .push(format!("computes the program it runs (`{}`)", first.text));
        out.commands.push(words);
        return;
    }
    first.text = program_name(&first.text).to_string();
    let program = first.text.clone();
    let args = words[1..].to_vec();
    out.commands.push(words);
    let inner: Option<Vec<Word>> = match program.as_str() {
        "command" => {
            let rest = skip_options(&args, &[]);
            // `command -v x` / `-V` only looks the name up.
            if args.iter().any(|a| a.text == "-v" || a.text == "-V") {
                None
            } else {
                Some(rest)
            }
        }
        "builtin" | "nohup" | "setsid" => Some(skip_options(&args, &[])),
        "exec" => Some(skip_options(&args, &["-a"])),
        "time" => Some(skip_options(&args, &["-f", "-o"])),
        "nice" => Some(skip_options(&args, &["-n"])),
        "stdbuf" => Some(skip_options(&args, &["-i", "-o", "-e"])),
        "sudo" | "doas" => Some(skip_options(
            &args,
            &[
                "-u", "-g", "-C", "-h", "-p", "-D", "-R", "-T", "-r", "-t", "-U",
            ],
        )),
        "timeout" => {
            let rest = skip_options(&args, &["-s", "-k"]);
            // The first operand is the duration.
            Some(rest.into_iter().skip(1).collect())
        }
        "xargs" => {
            let rest = skip_options(&args, &["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"]);
            // Without a command xargs runs `echo`.
            Some(if rest.is_empty() {
                vec![Word::lit("echo")]
            } else {
                rest
            })
        }
        "env" => {
            let mut rest = Vec::new();
            let mut i = 0;
            while i < args.len() {
                let a = &args[i];
                if !rest.is_empty() {
                    rest.push(a.clone());
                } else if a.text == "-S" || a.text.starts_with("--split-string") {
                    // `env -S 'rm -rf x'` splits a string into the command.
                    let script = match a.text.split_once('=') {
                        Some((_, v)) => Some(Word::lit(v)),
                        None => args.get(i + 1).cloned(),
                    };
                    match script {
                        Some(s) if s.literal => analyse_into(&s.text, depth + 1, out),
                        _ => out
                            .opaque
                            .push("splits a computed string (`env -S`)".into()),
                    }
                    return;
                } else if matches!(a.text.as_str(), "-u" | "-C" | "--unset" | "--chdir") {
                    i += 1;
                } else if a.text.starts_with('-') || (a.text.contains('=') && a.literal) {
                    // Options and `VAR=value`.
                } else if a.text.contains('=') {
                    // A computed assignment is still an assignment.
                } else {
                    rest.push(a.clone());
                }
                i += 1;
            }
            Some(rest)
        }
        "eval" => {
            if args.iter().all(|a| a.literal) {
                let script: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                analyse_into(&script.join(" "), depth + 1, out);
            } else {
                out.opaque
                    .push("evaluates a computed string (`eval`)".into());
            }
            None
        }
        "source" | "." => {
            out.opaque
                .push(format!("runs the commands of a file (`{program}`)"));
            None
        }
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "busybox" => {
            shell_script(&program, &args, depth, out);
            None
        }
        "find" => {
            find_exec(&args, depth, out);
            None
        }
        _ => None,
    };
    if let Some(inner) = inner.filter(|w| !w.is_empty()) {
        unwrap(inner, depth + 1, out);
    }
}

/// The words after a wrapper's options: `with_value` options take the next word (or an
/// attached value), every other `-x` is a flag; `--` ends the options.
fn skip_options(args: &[Word], with_value: &[&str]) -> Vec<Word> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i].text;
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if with_value.contains(&a.as_str()) {
            i += 1;
        }
        i += 1;
    }
    args.get(i..).unwrap_or_default().to_vec()
}

/// `sh -c SCRIPT`: the script's commands; a shell reading a file or stdin is unanalysable.
fn shell_script(program: &str, args: &[Word], depth: usize, out: &mut Effective) {
    let mut i = 0;
    let mut has_c = false;
    // `busybox sh -c …`: the applet is the program.
    let args = if program == "busybox" {
        match args.first() {
            Some(a) if a.literal && matches!(a.text.as_str(), "sh" | "ash" | "bash") => &args[1..],
            Some(a) if a.literal => {
                let mut inner = vec![a.clone()];
                inner.extend(args[1..].iter().cloned());
                unwrap(inner, depth + 1, out);
                return;
            }
            _ => {
                out.opaque.push("runs a computed busybox applet".into());
                return;
            }
        }
    } else {
        args
    };
    while i < args.len() {
        let a = &args[i].text;
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with('-') && a.len() > 1 && !a.starts_with("--") {
            if a.contains('c') {
                has_c = true;
            }
            // `-o OPTION` takes a value.
            if a.ends_with('o') {
                i += 1;
            }
            i += 1;
            continue;
        }
        if a.starts_with("--") || a.starts_with('+') {
            i += 1;
            continue;
        }
        break;
    }
    if !has_c {
        out.opaque.push(format!(
            "runs `{program}` on a script file or standard input"
        ));
        return;
    }
    match args.get(i) {
        Some(script) if script.literal => analyse_into(&script.text, depth + 1, out),
        Some(_) => out
            .opaque
            .push(format!("runs a computed script with `{program} -c`")),
        None => {}
    }
}

/// `find … -exec CMD … ;`: each command find runs.
fn find_exec(args: &[Word], depth: usize, out: &mut Effective) {
    let mut i = 0;
    while i < args.len() {
        if matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            let inner = args.get(start..end).unwrap_or_default().to_vec();
            if !inner.is_empty() {
                unwrap(inner, depth + 1, out);
            }
            i = end;
        }
        i += 1;
    }
}

/// The shell and script of `sh`/`bash`/`zsh`/`dash -c SCRIPT` (also `-lc`, `-l -c`,
/// `--login -c`) with nothing after the script: the form in which a wrapped read-only command
/// is read-only.
pub fn shell_c_script(words: &[String]) -> Option<(&str, &str)> {
    let (shell, rest) = words.split_first()?;
    if !matches!(shell.as_str(), "sh" | "bash" | "zsh" | "dash") {
        return None;
    }
    let (script, flags) = rest.split_last()?;
    let mut has_c = false;
    for f in flags {
        match f.as_str() {
            "-c" | "-lc" | "-cl" => has_c = true,
            "-l" | "--login" => {}
            _ => return None,
        }
    }
    has_c.then_some((shell.as_str(), script.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(c: &str) -> Vec<String> {
        Effective::of(c)
            .commands
            .iter()
            .filter_map(|w| w.first().map(|w| w.text.clone()))
            .collect()
    }

    #[test]
    fn wrappers_are_unwrapped() {
        for c in [
            "rm f",
            "command rm f",
            "env rm f",
            "env -i FOO=1 rm f",
            "env -u X -- rm f",
            "nice -n 5 rm f",
            "nohup rm f",
            "timeout 5 rm f",
            "timeout -s KILL 5 rm f",
            "sudo -u root rm f",
            "exec rm f",
            "echo f | xargs rm",
            "xargs -I{} rm {}",
            "bash -c 'rm f'",
            "sh -c \"rm f\"",
            "bash -lc 'cd x && rm f'",
            "zsh -c 'command rm f'",
            "/bin/rm f",
            "/usr/bin/rm f",
            "$'\\x72m' f",
            "$'\\162m' f",
            "r\\m f",
            "'r'm f",
            "\"rm\" f",
            "echo $(rm f)",
            "(rm f)",
            "{ rm f; }",
            "f() { rm x; }; f",
            "if true; then rm f; fi",
            "find . -exec rm {} ;",
            "eval 'rm f'",
            "env -S 'rm f'",
            "time rm f",
            "X=1 rm f",
            "rm f > /dev/null",
            "busybox rm f",
        ] {
            assert!(
                programs(c).iter().any(|p| p == "rm"),
                "{c}: {:?}",
                programs(c)
            );
        }
    }

    #[test]
    fn what_cannot_be_analysed_is_named() {
        for c in [
            "$X f",
            "$(echo rm) f",
            "bash -c \"$S\"",
            "echo rm f | sh",
            "bash script.sh",
            "eval \"$S\"",
            ". ./env.sh",
            "ls (",
        ] {
            assert!(!Effective::of(c).opaque.is_empty(), "{c}");
        }
        for c in [
            "ls $(cat x)",
            "git log --oneline",
            "bash -c 'ls'",
            "cat \"$f\"",
        ] {
            assert!(Effective::of(c).opaque.is_empty(), "{c}");
        }
        assert!(!programs("command -v rm").contains(&"rm".to_string()));
    }

    #[test]
    fn shell_c_scripts() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shell_c_script(&w(&["bash", "-lc", "ls"])),
            Some(("bash", "ls"))
        );
        assert_eq!(
            shell_c_script(&w(&["sh", "-c", "cat a"])),
            Some(("sh", "cat a"))
        );
        for bad in [
            &["bash", "ls"][..],
            &["bash", "-c", "ls", "x"],
            &["bash", "-O", "x", "-c", "ls"],
            &["/bin/bash", "-c", "ls"],
            &["python", "-c", "ls"],
        ] {
            assert_eq!(shell_c_script(&w(bad)), None, "{bad:?}");
        }
    }
}
