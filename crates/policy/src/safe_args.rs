//! Which argument strings of a known-safe command may name a file it opens: every word, every
//! `--option=value` value and every tail of a short-option cluster (`-f/etc/passwd`), minus
//! what is certainly a pattern or text (grep's pattern operand, `-e PATTERN`, `cut -d/`).
//!
//! The exemptions come from a left-to-right parse with per-program option tables; at the
//! first option the table does not know, the parse stops and every later word is checked, so
//! a wrong guess can only make a command ask, never hide a file.

use std::path::Path;

use crate::safe::{long_is, short_cluster_has};
use crate::safe_specs::{spec_for, Spec, FIND_TEXT};

/// Programs whose arguments are never opened as files.
const NO_FILE_ARGS: &[&str] = &[
    "echo", "true", "false", "pwd", "whoami", "id", "uname", "basename", "dirname", "tr", "which",
];

/// Absolute paths outside the workspace that are harmless to read.
pub(crate) const HARMLESS_DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];

/// The strings of `words` (a plain simple command) that may name a file the program opens.
pub(crate) fn path_candidates(words: &[String]) -> Vec<String> {
    let Some(program) = words.first() else {
        return Vec::new();
    };
    if NO_FILE_ARGS.contains(&program.as_str()) {
        return Vec::new();
    }
    let (spec, args) = spec_for(words);
    let skip_first = args.len() < words.len().saturating_sub(1);
    let mut exempt = if program == "find" {
        find_exemptions(args)
    } else {
        exemptions(spec, args)
    };
    exempt.resize(args.len(), false);
    let mut out = Vec::new();
    if skip_first {
        // `git <sub>`: the subcommand word itself.
        out.extend(words.get(1).cloned());
    }
    for (i, arg) in args.iter().enumerate() {
        if exempt[i] {
            continue;
        }
        out.push(arg.clone());
        if let Some(body) = arg.strip_prefix("--") {
            if let Some((name, value)) = body.split_once('=') {
                if !spec.long_text.contains(&name) && !spec.long_eq_text.contains(&name) {
                    out.push(value.to_string());
                }
            }
        } else if let Some(body) = arg.strip_prefix('-') {
            // Every tail of a cluster may be an attached value, except right after a
            // text-valued option letter (`-d/`, `-e/api/`).
            let mut prev: Option<char> = None;
            for (at, c) in body.char_indices() {
                let text_before =
                    prev.is_some_and(|p| spec.text.contains(p) || spec.opt_text.contains(p));
                if !text_before {
                    out.push(body[at..].to_string());
                }
                prev = Some(c);
            }
        }
    }
    out
}

/// Which arguments are certainly text: values of text options and grep's pattern operand,
/// as far as the option tables parse the line.
fn exemptions(spec: &Spec, args: &[String]) -> Vec<bool> {
    let mut exempt = vec![false; args.len()];
    let mut operands = Vec::new();
    let mut pattern_given = false;
    let mut complete = true;
    let mut i = 0;
    let mut after_dd = false;
    while i < args.len() {
        let a = args[i].as_str();
        if after_dd || a == "-" || !a.starts_with('-') {
            operands.push(i);
            i += 1;
            continue;
        }
        if a == "--" {
            after_dd = true;
            i += 1;
            continue;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, has_value) = match body.split_once('=') {
                Some((n, _)) => (n, true),
                None => (body, false),
            };
            if spec.pattern_long.contains(&name) {
                pattern_given = true;
            }
            if has_value {
                if !(spec.long_text.contains(&name)
                    || spec.long_eq_text.contains(&name)
                    || spec.long_value.contains(&name)
                    || spec.long_flags.contains(&name))
                {
                    complete = false;
                    break;
                }
                i += 1;
            } else if spec.long_flags.contains(&name) {
                i += 1;
            } else if spec.long_text.contains(&name) {
                exempt_value(&mut exempt, i + 1, &operands);
                i += 2;
            } else if spec.long_value.contains(&name) {
                i += 2;
            } else {
                complete = false;
                break;
            }
            continue;
        }
        // A short cluster: flags, then at most one option with a value (the rest, or the
        // next word).
        let body = &a[1..];
        let mut step = 1;
        for (at, c) in body.char_indices() {
            if spec.pattern_short.contains(c) {
                pattern_given = true;
            }
            let rest_empty = at + c.len_utf8() == body.len();
            if spec.flags.contains(c) {
                continue;
            }
            if spec.opt_text.contains(c) {
                break;
            }
            if spec.text.contains(c) || spec.value.contains(c) {
                if rest_empty {
                    if spec.text.contains(c) {
                        exempt_value(&mut exempt, i + 1, &operands);
                    }
                    step = 2;
                }
                break;
            }
            complete = false;
            break;
        }
        if !complete {
            break;
        }
        i += step;
    }
    if complete && spec.pattern_operand && !pattern_given {
        if let Some(&first) = operands.first() {
            exempt[first] = true;
        }
    }
    exempt
}

/// Marks the separate value at `at` as text, unless an operand came before: with
/// `POSIXLY_CORRECT` set, getopt stops at the first operand and the "value" is a file.
fn exempt_value(exempt: &mut [bool], at: usize, operands: &[usize]) {
    if operands.is_empty() {
        if let Some(e) = exempt.get_mut(at) {
            *e = true;
        }
    }
}

/// find: the argument of a name, type or format predicate is text.
fn find_exemptions(args: &[String]) -> Vec<bool> {
    let mut exempt = vec![false; args.len()];
    let mut i = 0;
    while i < args.len() {
        if FIND_TEXT.contains(&args[i].as_str()) {
            if let Some(e) = exempt.get_mut(i + 1) {
                *e = true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    exempt
}

/// Whether the command follows symbolic links it meets while walking folders (or compares
/// folders, whose entries `diff` follows), so that a link inside the workspace leads the read
/// outside it.
pub(crate) fn reads_through_links(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let args = &words[1..];
    let any = |f: &dyn Fn(&str) -> bool| args.iter().any(|a| f(a));
    match program.as_str() {
        "grep" | "egrep" | "fgrep" => {
            any(&|a| short_cluster_has(a, 'R') || long_is(a, "dereference-recursive"))
        }
        "rg" => any(&|a| short_cluster_has(a, 'L') || long_is(a, "follow")),
        "find" => any(&|a| a == "-L" || a == "-follow"),
        "tree" => any(&|a| short_cluster_has(a, 'l')),
        "ls" | "du" => any(&|a| short_cluster_has(a, 'L') || long_is(a, "dereference")),
        _ => false,
    }
}

/// Whether `arg`, taken as a path relative to the current folder, leaves it: absolute (other
/// than a harmless device), `~` or `~user`, or climbing out with `..`.
pub(crate) fn lexically_outside(arg: &str) -> bool {
    if arg.is_empty() || arg == "-" {
        return false;
    }
    if arg.starts_with('~') {
        return true;
    }
    let path = Path::new(arg);
    if path.is_absolute() {
        let normal = crate::paths::normalize_lexically(path);
        return !HARMLESS_DEVICES.iter().any(|d| normal == Path::new(d));
    }
    !crate::lexical::stays_inside(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// (command, a string that must be checked as a path, or "" for none of these).
    #[test]
    fn candidates_include_files_and_skip_patterns() {
        let must_check: &[(&str, &str)] = &[
            ("cat /etc/passwd", "/etc/passwd"),
            ("grep x /etc/passwd", "/etc/passwd"),
            ("grep -e x /etc/passwd", "/etc/passwd"),
            ("grep -e -e /etc/passwd", "/etc/passwd"),
            ("grep -f/etc/passwd x", "/etc/passwd"),
            ("grep -if/etc/passwd x", "/etc/passwd"),
            ("grep -f /etc/passwd x", "/etc/passwd"),
            ("grep --file=/etc/passwd x", "/etc/passwd"),
            ("grep --exclude-from /etc/passwd x", "/etc/passwd"),
            ("grep --unknown /etc/passwd x", "/etc/passwd"),
            ("grep -e x --lab -e /etc/passwd .", "/etc/passwd"),
            ("grep /etc/passwd x -e y", "/etc/passwd"),
            ("grep pat f --regexp /etc/passwd", "/etc/passwd"),
            ("grep pat f -e /etc/passwd", "/etc/passwd"),
            ("rg --files /etc", "/etc"),
            ("sort --files0-from=/x", "/x"),
            ("sort -T /x a", "/x"),
            ("date -f /etc/passwd", "/etc/passwd"),
            ("date --file=/etc/passwd", "/etc/passwd"),
            ("git diff --no-index /etc/hostname m", "/etc/hostname"),
            ("git blame --contents=/etc/passwd a", "/etc/passwd"),
            ("git log -O/etc/passwd", "/etc/passwd"),
            ("find / -name x", "/"),
            ("find . -newer /etc/passwd", "/etc/passwd"),
            ("cut -f1 /etc/passwd", "/etc/passwd"),
            ("diff --from-file=/etc/passwd a", "/etc/passwd"),
            ("ls -la /root", "/root"),
        ];
        for (cmd, path) in must_check {
            let c = path_candidates(&w(cmd));
            assert!(c.iter().any(|x| x == path), "{cmd}: {c:?}");
        }
        let never: &[(&str, &str)] = &[
            ("grep -rn /api/ src", "/api/"),
            ("grep -e /api/ src", "/api/"),
            ("grep --regexp=/api/ src", "/api/"),
            ("rg /api/ src", "/api/"),
            ("rg -g /x/* foo", "/x/*"),
            ("git grep -n /api/", "/api/"),
            ("git log --grep=/api/", "/api/"),
            ("git log -S /api/", "/api/"),
            ("cut -d/ -f1 a", "/"),
            ("cut -d / -f1 a", "/"),
            ("sort -t/ -k2 a", "/"),
            ("find . -path /x/y", "/x/y"),
            ("echo /etc/passwd", "/etc/passwd"),
            ("ls -I /x", "/x"),
            ("grep --label -e /etc/passwd .", "/etc/passwd"),
        ];
        for (cmd, text) in never {
            let c = path_candidates(&w(cmd));
            assert!(!c.iter().any(|x| x == text), "{cmd}: {c:?}");
        }
    }

    #[test]
    fn lexical_outside() {
        for out in [
            "/etc/x",
            "~",
            "~/x",
            "~root",
            "..",
            "../x",
            "a/../../x",
            "/proc/1",
        ] {
            assert!(lexically_outside(out), "{out}");
        }
        for inside in ["a", "./a", "a/../b", "-", "", "/dev/null", "HEAD~1", "a..b"] {
            assert!(!lexically_outside(inside), "{inside}");
        }
    }

    #[test]
    fn link_following_flags() {
        for yes in [
            "grep -R x .",
            "grep -rR x .",
            "grep --dereference-recursive x .",
            "rg -L x",
            "rg --follow x",
            "find -L .",
            "find . -follow",
            "tree -l",
            "ls -RL",
            "du -L",
        ] {
            assert!(reads_through_links(&w(yes)), "{yes}");
        }
        for no in ["grep -r x .", "rg x", "find .", "tree -L 2", "ls -la"] {
            assert!(!reads_through_links(&w(no)), "{no}");
        }
    }
}
