//! Options that make an allowlisted command write a file, run another program or load other
//! configuration (`git log --output=…`, `git -c core.pager=…`, `find -exec`, `sort -o`,
//! `pytest -p plugin`). An allowlist entry (`--allow-command`, an allow rule, a session's
//! "always allow `git`") covers the words it names; such an option after them makes the
//! command ask.

use crate::safe::{long_is, short_cluster_has};

/// Long options that write, execute or change configuration for any program (matched
/// exactly, with or without `=value`).
const ANY_LONG: &[&str] = &[
    "output",
    "output-file",
    "output-document",
    "exec",
    "exec-path",
    "ext-diff",
    "textconv",
    "config",
    "config-env",
    "upload-pack",
    "receive-pack",
    "pre",
    "compress-program",
    "use-compress-program",
    "open-files-in-pager",
    "to-command",
    "checkpoint-action",
    "info-script",
    "new-volume-script",
    "rsh",
    "git-dir",
    "work-tree",
    "pager",
    "editor",
    "in-place",
    "files0-from",
    "hostname-bin",
    "rcfile",
    "init-file",
    "eval",
    "execute",
];

/// Programs whose long options may be abbreviated (getopt, git's parse-options): any
/// abbreviation of a listed option counts.
const ABBREVIATING: &[&str] = &[
    "git", "sort", "rg", "tree", "file", "date", "wc", "du", "tar", "sed", "grep", "ls", "cat",
    "head", "tail", "cp", "mv", "curl", "wget",
];

/// The first word from `words[from..]` that makes the command more than the allowlisted
/// prefix `words[..from]` vouches for (the program is `words[0]`), or `None`.
pub fn risky_option(words: &[String], from: usize) -> Option<String> {
    let program = crate::effective::program_name(words.first()?);
    let abbreviates = ABBREVIATING.contains(&program);
    let rest = words.get(from..)?;
    let long = |a: &str, name: &str| {
        if abbreviates {
            // `--text` is git's own option, not an abbreviation of `--textconv`.
            a != "--text" && long_is(a, name)
        } else {
            a.strip_prefix("--")
                .is_some_and(|b| b.split('=').next() == Some(name))
        }
    };
    for (i, a) in rest.iter().enumerate() {
        if a == "--" {
            break;
        }
        if ANY_LONG.iter().any(|n| long(a, n)) {
            return Some(a.clone());
        }
        if program_specific(program, a, rest.get(i + 1).map(String::as_str), &long) {
            return Some(a.clone());
        }
    }
    None
}

fn program_specific(
    program: &str,
    a: &str,
    next: Option<&str>,
    long: &dyn Fn(&str, &str) -> bool,
) -> bool {
    let short = |f: char| short_cluster_has(a, f);
    match program {
        // `-c key=value` sets configuration (core.pager, diff.external, core.fsmonitor…),
        // `-C dir` works on another repository; `git grep -O<cmd>` runs a program;
        // `git rebase -x/--exec` runs commands.
        "git" => {
            a == "-c"
                || (a.starts_with("-c") && a.contains('='))
                || a == "-C"
                || a.starts_with("-O")
                || a == "-x"
                || long(a, "open-files-in-pager")
        }
        "find" => matches!(
            a,
            "-exec"
                | "-execdir"
                | "-ok"
                | "-okdir"
                | "-delete"
                | "-fprint"
                | "-fprint0"
                | "-fprintf"
                | "-fls"
        ),
        "sort" => short('o'),
        "tree" => short('o') || short('R'),
        "sed" => short('i') || a.starts_with("--in-place"),
        "tar" => short('I') || short('F'),
        "rg" => false,
        // `-p plugin` loads a Python module.
        "pytest" | "py.test" => a == "-p" || (a.starts_with("-p") && a.len() > 2),
        "cargo" => long(a, "target-dir") || long(a, "manifest-path") || a.starts_with("-Z"),
        "make" | "gmake" => a == "-C" || a == "-f" || a.starts_with("--file") || a == "-E",
        "curl" => a == "-o" || a == "-O" || a == "-K" || short('o') || short('O'),
        "wget" => a == "-O" || a == "-o" || a == "-e",
        "rsync" => a == "-e",
        "ssh" | "scp" => a == "-o" && next.is_some_and(|n| n.contains("Command")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn options_past_the_prefix_are_vetted() {
        for (cmd, from) in [
            ("git log --output=/tmp/x", 2),
            ("git log --out=/tmp/x", 2),
            ("git -c core.pager=sh log", 1),
            ("git log --ext-diff", 2),
            ("git diff --textconv", 2),
            ("git -C /elsewhere log", 1),
            ("git grep -Osh x", 2),
            ("find . -exec rm {} ;", 1),
            ("find . -delete", 1),
            ("sort -o out a", 1),
            ("pytest -p evil", 1),
            ("cargo test --config build.rustc=sh", 2),
            ("cargo build --target-dir /tmp/x", 2),
            ("tar -I sh -cf x.tar a", 1),
            ("sed -i s/a/b/ f", 1),
        ] {
            assert!(risky_option(&w(cmd), from).is_some(), "{cmd}");
        }
        for (cmd, from) in [
            ("git log --oneline -n 5", 2),
            ("git log --text", 2),
            ("git status --short", 1),
            ("cargo test -p cairn-policy", 2),
            ("npm test -- --output=x", 2),
            ("ls -la", 1),
            ("git log --output=x", 3),
        ] {
            assert!(risky_option(&w(cmd), from).is_none(), "{cmd}");
        }
    }
}
