//! The known-safe command set: read-only commands (with their dangerous flags excluded) that
//! may run without asking when the shell policy allows it.
//!
//! [`is_known_safe`] sees only the words: it also refuses arguments that are lexically outside
//! the current folder (absolute, `~`, climbing `..`, `/proc`). Callers that know the workspace
//! use [`crate::scope::ReadScope`], which also follows symbolic links, keeps the state folder
//! out and refuses commands that workspace files can redirect to other programs.

use crate::safe_args::{lexically_outside, path_candidates, reads_through_links};

/// Longest short-option cluster (`-abc...`) a known-safe command may carry.
const MAX_CLUSTER: usize = 256;

/// Whether one plain simple command (its words) only reads, inside the current folder.
pub fn is_known_safe(words: &[String]) -> bool {
    is_read_only_form(words)
        && !reads_through_links(words)
        && path_candidates(words).iter().all(|c| !lexically_outside(c))
}

/// Whether the words are a known read-only program used without an option that writes, runs
/// another program or reads a list of file names from a file (what the path checks cannot see).
pub fn is_read_only_form(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let args = &words[1..];
    // A path to a program (./ls, /tmp/ls) is not the system tool.
    if program.contains('/') {
        return false;
    }
    // Every tail of a short-option cluster is checked as a path: keep that cheap.
    if args
        .iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.len() > MAX_CLUSTER)
    {
        return false;
    }
    let none = |bad: &dyn Fn(&str) -> bool| !args.iter().any(|a| bad(a));
    match program.as_str() {
        // `tree -o FILE` writes its listing (also inside a cluster such as `-ao FILE`); `-R`
        // (with `-H`) writes `00Tree.html` into every folder.
        "tree" => none(&|a| {
            short_cluster_has(a, 'o') || short_cluster_has(a, 'R') || long_is(a, "output")
        }),
        // `file -C` compiles a magic file into the current directory; `-f LIST` reads names.
        "file" => none(&|a| {
            short_cluster_has(a, 'C')
                || short_cluster_has(a, 'f')
                || long_is(a, "compile")
                || long_is(a, "files-from")
        }),
        // `date -s` sets the clock.
        "date" => none(&|a| short_cluster_has(a, 's') || long_is(a, "set")),
        // `--files0-from=LIST` reads the names to open from a file.
        "wc" | "du" => none(&|a| long_is(a, "files0-from")),
        "cat" | "echo" | "false" | "true" | "head" | "tail" | "nl" | "pwd" | "ls" | "which"
        | "whoami" | "id" | "uname" | "stat" | "basename" | "dirname" | "realpath" | "cut"
        | "tr" | "cmp" | "diff" | "grep" | "egrep" | "fgrep" => {
            // `grep -r` still only reads; `diff`/`cmp` only read. Nothing here writes unless
            // redirected, and redirections never reach this check.
            true
        }
        "rg" => none(&|a| {
            long_is(a, "pre")
                || long_is(a, "hostname-bin")
                || long_is(a, "search-zip")
                || short_cluster_has(a, 'z')
        }),
        // find's predicates are never abbreviated.
        "find" => none(&|a| {
            matches!(
                a,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fls"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-files0-from"
            )
        }),
        // `-o FILE` (also `-uo FILE`, `--o=FILE`: getopt takes clusters and any unambiguous
        // abbreviation) writes; `--compress-program=PROG` runs a program.
        "sort" => none(&|a| {
            short_cluster_has(a, 'o')
                || long_is(a, "output")
                || long_is(a, "compress-program")
                || long_is(a, "files0-from")
        }),
        // Checksums: `-c`/`--check` reads the names of the files to open from a file.
        "sha256sum" | "sha1sum" | "sha224sum" | "sha384sum" | "sha512sum" | "md5sum" | "b2sum" => {
            none(&|a| short_cluster_has(a, 'c') || long_is(a, "check"))
        }
        // Filters that only read their files and write to standard output (issue 35's
        // friction list; `uniq IN OUT` and `xxd IN OUT` write, so they are not here).
        "tac" | "numfmt" | "rev" | "od" | "paste" | "fold" | "expand" | "unexpand" | "cksum"
        | "comm" | "nproc" => true,
        // BSD's `base64 -o FILE` writes.
        "base64" | "base32" => none(&|a| short_cluster_has(a, 'o') || long_is(a, "output")),
        "sed" => {
            // Only `sed -n <Np|N,Mp> file...`: printing lines, never editing.
            args.first().map(String::as_str) == Some("-n")
                && args.get(1).is_some_and(|s| is_print_range(s))
                && args.iter().skip(2).all(|a| !a.starts_with('-'))
        }
        "git" => is_safe_git(args),
        // Toolchain programs (cargo, rustc, go, node, python, mvn...) are not here: rustup
        // and version managers pick the binary from files the workspace controls
        // (`rust-toolchain.toml` `path = ...`, `.tool-versions`, `go.mod` `toolchain`).
        _ => false,
    }
}

/// Whether `arg` is a cluster of short options (`-abc`) that contains `flag`.
pub(crate) fn short_cluster_has(arg: &str, flag: char) -> bool {
    arg.len() > 1 && arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(flag)
}

/// Whether `arg` is the long option `--name` or any abbreviation of it (one character or
/// more: getopt and git's parse-options accept every unambiguous prefix, and which prefixes
/// are unambiguous depends on the program's version), with or without `=value`.
pub(crate) fn long_is(arg: &str, name: &str) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let given = body.split('=').next().unwrap_or_default();
    !given.is_empty() && name.starts_with(given)
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

/// Long options of git's read-only subcommands that write a file or run a program.
const GIT_DANGEROUS_LONG: &[&str] = &["output", "ext-diff", "textconv", "exec", "upload-pack"];

fn is_safe_git(args: &[String]) -> bool {
    // Global options before the subcommand can change what runs (`-c core.pager=…`, `-C dir`).
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    // `--text` is an option of its own (an exact name wins over an abbreviation of
    // `--textconv`).
    let dangerous = |a: &String| {
        a == "-c" || (a != "--text" && GIT_DANGEROUS_LONG.iter().any(|name| long_is(a, name)))
    };
    if rest.iter().any(dangerous) {
        return false;
    }
    match sub.as_str() {
        // `git grep -O<cmd>` / `--open-files-in-pager=<cmd>` runs a program.
        "grep" => !rest
            .iter()
            .any(|a| short_cluster_has(a, 'O') || long_is(a, "open-files-in-pager")),
        "status" | "log" | "diff" | "show" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "ls-files" => true,
        // Only names the current branch.
        "branch" if rest.len() == 1 && rest[0] == "--show-current" => true,
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
            "git diff --no-ext-diff",
            "git log --no-textconv",
            "git diff --text",
            "git diff --exit-code",
            "git branch --show-current",
            "git rev-parse --abbrev-ref HEAD",
            "base64 a.bin",
            "tac log.txt",
            "numfmt --to=iec 1048576",
            "sha256sum a b",
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
            "sha256sum -c sums.txt",
            "sha256sum --check sums.txt",
            "md5sum -bc sums",
            "uniq in out",
            "git branch --show-current -D x",
            "npm test",
            "cargo build",
            &format!("grep -{} x", "n/".repeat(200)),
        ] {
            assert!(!is_known_safe(&w(bad)), "{bad}");
        }
    }

    /// Every abbreviation (one character or more after `--`) of a long option that writes,
    /// runs a program or reads a list of names counts as that option.
    #[test]
    fn abbreviated_dangerous_long_options_are_caught() {
        let cases: &[(&str, &str, &str)] = &[
            // (command before the option, long option, what follows)
            ("date", "set", "=now"),
            ("file", "compile", " -m m"),
            ("file", "files-from", "=list"),
            ("sort", "output", "=out a"),
            ("sort", "compress-program", "=sh a"),
            ("sort", "files0-from", "=list"),
            ("tree", "output", "=out"),
            ("wc", "files0-from", "=list"),
            ("du", "files0-from", "=list"),
            ("rg", "pre", "=sh x"),
            ("rg", "hostname-bin", "=sh x"),
            ("rg", "search-zip", " x"),
            ("git grep", "open-files-in-pager", "=sh x"),
            ("git diff", "output", "=x"),
            ("git log", "output", "=x"),
            ("git show", "output", "=x"),
            ("git diff", "ext-diff", ""),
            ("git log", "textconv", ""),
            ("git blame", "textconv", " a"),
            ("git log", "exec", "=sh"),
            ("git log", "upload-pack", "=sh"),
        ];
        for (cmd, name, tail) in cases {
            for len in 1..=name.len() {
                // git's own `--text` is not an abbreviation of `--textconv`.
                if cmd.starts_with("git") && &name[..len] == "text" {
                    continue;
                }
                let line = format!("{cmd} --{}{tail}", &name[..len]);
                assert!(!is_known_safe(&w(&line)), "{line}");
            }
        }
        // The reported forms, exactly.
        for line in ["date --s=now", "file --co -m m", "date --se 1"] {
            assert!(!is_known_safe(&w(line)), "{line}");
        }
    }

    /// Short forms, also inside clusters.
    #[test]
    fn dangerous_short_options_in_clusters() {
        for bad in [
            "date -us 1",
            "file -bC -m m",
            "file -f list",
            "tree -R -H . -L 1",
            "rg -iz x",
            "sort -no out a",
            "git grep -iO sh x",
        ] {
            assert!(!is_known_safe(&w(bad)), "{bad}");
        }
    }

    /// Toolchain programs run whatever a workspace file names (rustup's `rust-toolchain.toml`
    /// `path`, version managers' shims): none is known-safe, not even for `--version`.
    #[test]
    fn toolchain_programs_are_not_known_safe() {
        for bad in [
            "cargo --version",
            "cargo -V",
            "rustc --version",
            "rustup show",
            "rustfmt --version",
            "cargo-clippy --version",
            "clippy-driver --version",
            "go version",
            "node --version",
            "npx --version",
            "python3 --version",
            "python --version",
            "mvn -v",
            "java -version",
            "ruby -v",
        ] {
            assert!(!is_known_safe(&w(bad)), "{bad}");
        }
    }

    /// Without a workspace, arguments that leave the current folder are not known-safe.
    #[test]
    fn arguments_outside_the_current_folder_are_not_known_safe() {
        for bad in [
            "cat /proc/self/stat",
            "grep -a -o OPENAI_API_KEY= /proc/42/environ",
            "cat /etc/hostname",
            "git diff --no-index /etc/hostname m",
            "cat ../x",
            "cat a/../../x",
            "cat ~/x",
            "cat ~root/x",
            "grep -f/etc/passwd x",
            "grep --file=/etc/passwd x",
            "head /dev/fd/3",
            "ls /sys",
            "grep -R x .",
            "rg -L x",
            "rg --follow x",
            "find -L . -name x",
        ] {
            assert!(!is_known_safe(&w(bad)), "{bad}");
        }
        for ok in [
            "cat a/../b",
            "cat -",
            "diff a /dev/null",
            "grep -rn /api/ src",
            "cut -d/ -f1 a",
            "echo /etc/passwd",
        ] {
            assert!(is_known_safe(&w(ok)), "{ok}");
        }
    }
}
