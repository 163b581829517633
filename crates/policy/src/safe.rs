//! The known-safe command set: read-only commands (with their dangerous flags excluded) that
//! may run without asking when the shell policy allows it.

/// Whether one plain simple command (its words) only reads.
pub fn is_known_safe(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let args = &words[1..];
    // A path to a program (./ls, /tmp/ls) is not the system tool.
    if program.contains('/') {
        return false;
    }
    match program.as_str() {
        // `tree -o FILE` writes its listing (also inside a cluster such as `-ao FILE`).
        "tree" => !args
            .iter()
            .any(|a| short_cluster_has(a, 'o') || long_is(a, "output", 1)),
        // `file -C` compiles a magic file into the current directory.
        "file" => !args
            .iter()
            .any(|a| short_cluster_has(a, 'C') || long_is(a, "compile", 3)),
        // `date -s` sets the clock.
        "date" => !args
            .iter()
            .any(|a| short_cluster_has(a, 's') || long_is(a, "set", 2)),
        "cat" | "echo" | "false" | "true" | "head" | "tail" | "wc" | "nl" | "pwd" | "ls"
        | "which" | "whoami" | "id" | "uname" | "stat" | "du" | "basename" | "dirname"
        | "realpath" | "cut" | "tr" | "cmp" | "diff" | "grep" | "egrep" | "fgrep" => {
            // `grep -r` still only reads; `diff`/`cmp` only read. Nothing here writes unless
            // redirected, and redirections never reach this check.
            true
        }
        "rg" => !args.iter().any(|a| {
            a == "--pre"
                || a.starts_with("--pre=")
                || a == "--hostname-bin"
                || a.starts_with("--hostname-bin=")
                || a == "-z"
                || a == "--search-zip"
        }),
        "find" => !args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fls"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
            )
        }),
        // `-o FILE` (also `-uo FILE`, `--outp=FILE`: getopt takes clusters and unambiguous
        // abbreviations) writes; `--compress-program=PROG` runs a program.
        "sort" => !args.iter().any(|a| {
            short_cluster_has(a, 'o')
                || long_is(a, "output", 1)
                || long_is(a, "compress-program", 2)
        }),
        "sed" => {
            // Only `sed -n <Np|N,Mp> file...`: printing lines, never editing.
            args.first().map(String::as_str) == Some("-n")
                && args.get(1).is_some_and(|s| is_print_range(s))
                && args.iter().skip(2).all(|a| !a.starts_with('-'))
        }
        "git" => is_safe_git(args),
        "cargo" => matches!(
            args.first().map(String::as_str),
            Some("--version") | Some("-V")
        ),
        _ => false,
    }
}

/// Whether `arg` is a cluster of short options (`-abc`) that contains `flag`.
fn short_cluster_has(arg: &str, flag: char) -> bool {
    arg.len() > 1 && arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(flag)
}

/// Whether `arg` is the long option `--name` or an abbreviation of it (at least `min`
/// characters, as getopt and git's parse-options accept), with or without `=value`.
fn long_is(arg: &str, name: &str, min: usize) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let given = body.split('=').next().unwrap_or_default();
    given.len() >= min && name.starts_with(given)
}

fn is_print_range(s: &str) -> bool {
    let Some(body) = s.strip_suffix('p') else {
        return false;
    };
    let mut parts = body.split(',');
    let ok =
        |p: Option<&str>| p.is_some_and(|x| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit()));
    match (parts.next(), parts.next(), parts.next()) {
        (a, None, None) => ok(a),
        (a, b, None) => ok(a) && ok(b),
        _ => false,
    }
}

fn is_safe_git(args: &[String]) -> bool {
    // Global options before the subcommand can change what runs (`-c core.pager=…`, `-C dir`).
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    let dangerous = |a: &String| {
        a.starts_with("--output")
            || a.starts_with("--ext-diff")
            || a.starts_with("--textconv")
            || a == "-c"
            || a.starts_with("--exec")
            || a.starts_with("--upload-pack")
    };
    if rest.iter().any(dangerous) {
        return false;
    }
    match sub.as_str() {
        // `git grep -O<cmd>` / `--open-files-in-pager=<cmd>` runs a program.
        "grep" => !rest
            .iter()
            .any(|a| short_cluster_has(a, 'O') || long_is(a, "open-files-in-pager", 1)),
        "status" | "log" | "diff" | "show" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "ls-files" => true,
        // Listing only: any argument could create, delete or rename.
        "branch" | "tag" | "remote" | "stash" => {
            rest.iter().all(|a| {
                matches!(
                    a.as_str(),
                    "-a" | "-r" | "-v" | "-vv" | "--list" | "-l" | "--all" | "list"
                )
            }) && (sub != "stash" || rest.first().map(String::as_str) == Some("list"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn safe_and_unsafe() {
        for ok in [
            "ls -la",
            "cat README.md",
            "git status",
            "git log --oneline -n 3",
            "git diff HEAD~1",
            "git branch -a",
            "git stash list",
            "find . -name x",
            "rg foo src",
            "sed -n 1,20p a.txt",
            "grep -rn todo src",
            "wc -l a b",
            "sort -u a",
            "sort --unique a",
            "tree -a",
            "file a.txt",
            "date -u",
            "git grep -n x",
            "git grep --or x",
        ] {
            assert!(is_known_safe(&w(ok)), "{ok}");
        }
        for bad in [
            "rm x",
            "find . -delete",
            "find . -exec rm {} ;",
            "git -c core.pager=sh status",
            "git diff --output=x",
            "git branch -D main",
            "git stash",
            "git push",
            "git checkout .",
            "rg --pre sh x",
            "sed -i s/a/b/ f",
            "sed -n 1p -i f",
            "sort -o out in",
            "sort -uo out in",
            "sort --outp=out in",
            "sort --compress-program=sh in",
            "tree -o out",
            "tree -ao out",
            "file -C -m magic",
            "date -s 2020-01-01",
            "git grep -Osh x",
            "git grep -nOsh x",
            "git grep --open-files-in-pager=sh x",
            "git grep --open=sh x",
            "./ls",
            "/tmp/cat x",
            "python3 -c x",
            "npm test",
            "cargo build",
        ] {
            assert!(!is_known_safe(&w(bad)), "{bad}");
        }
    }
}
