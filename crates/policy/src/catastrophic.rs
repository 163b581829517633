//! Catastrophic commands: recursive removal (`rm -r`, `find … -delete`, `find … -exec rm`)
//! or recursive `chmod`/`chown`/`chgrp` of `/`, the home folder (`~`, `$HOME`), the workspace
//! or a folder above it. Found in every command a line runs (wrappers, `$(…)`, subshells
//! unwrapped, see [`crate::effective`]), with relative paths resolved after `cd`. These ask in
//! every mode and are never allowlisted or always-allowed.

use std::path::{Path, PathBuf};

use crate::effective::{Effective, Word};
use crate::safe::{long_is, short_cluster_has};

/// Why `command` (run in `workspace`) is catastrophic, or `None`.
pub fn catastrophic(command: &str, workspace: &Path, home: Option<&Path>) -> Option<String> {
    let roots = Roots::new(workspace, home);
    let effective = Effective::of(command);
    // Where relative paths resolve (`None`: after a `cd` to a computed folder).
    let mut cwd = Some(workspace.to_path_buf());
    for words in &effective.commands {
        let Some(program) = words.first().map(|w| w.text.as_str()) else {
            continue;
        };
        let args = &words[1..];
        let targets: Vec<&Word> = match program {
            "cd" | "pushd" => {
                cwd = match args.iter().find(|a| !a.text.starts_with('-')) {
                    None => home.map(Path::to_path_buf),
                    Some(dir) => cwd
                        .as_deref()
                        .and_then(|c| roots.resolve(dir, c))
                        .map(|(p, _)| p),
                };
                continue;
            }
            "rm" if args.iter().take_while(|a| a.text != "--").any(|a| {
                long_is(&a.text, "recursive")
                    || short_cluster_has(&a.text, 'r')
                    || short_cluster_has(&a.text, 'R')
            }) =>
            {
                operands(args)
            }
            "chmod" | "chown" | "chgrp"
                if args
                    .iter()
                    .any(|a| short_cluster_has(&a.text, 'R') || long_is(&a.text, "recursive")) =>
            {
                let ops = operands(args);
                if args.iter().any(|a| a.text.starts_with("--reference")) {
                    ops
                } else {
                    ops.into_iter().skip(1).collect()
                }
            }
            "find" if args.iter().any(|a| a.text == "-delete") || exec_removes(args) => {
                let starts: Vec<&Word> = args
                    .iter()
                    .skip_while(|a| matches!(a.text.as_str(), "-H" | "-L" | "-P"))
                    .take_while(|a| {
                        !a.text.starts_with('-') && !matches!(a.text.as_str(), "(" | "!")
                    })
                    .collect();
                // `find . -name '*.o' -delete` in the workspace removes only what matches.
                let filtered = args.iter().any(|a| {
                    a.text.starts_with('-')
                        && !matches!(
                            a.text.as_str(),
                            "-delete"
                                | "-depth"
                                | "-H"
                                | "-L"
                                | "-P"
                                | "-xdev"
                                | "-mount"
                                | "-exec"
                                | "-execdir"
                                | "-ok"
                                | "-okdir"
                                | "-rf"
                                | "-r"
                                | "-f"
                                | "-fr"
                                | "-R"
                        )
                });
                if filtered {
                    let starts: Vec<&Word> = starts
                        .into_iter()
                        .filter(|s| {
                            cwd.as_deref()
                                .and_then(|c| roots.resolve(s, c))
                                .is_none_or(|(p, _)| !p.starts_with(workspace))
                        })
                        .collect();
                    if starts.is_empty() {
                        continue;
                    }
                    starts
                } else if starts.is_empty() {
                    // `find -delete` walks the current folder.
                    match &cwd {
                        Some(c) if roots.is_root(c) => {
                            return Some(format!("`find` deletes everything under {}", c.display()))
                        }
                        _ => continue,
                    }
                } else {
                    starts
                }
            }
            _ => continue,
        };
        let Some(base) = cwd.as_deref() else {
            // After `cd $DIR`: only absolute and home targets can be judged.
            for t in &targets {
                if let Some((p, _)) = roots.resolve(t, Path::new("/nonexistent-cwd")) {
                    if p.starts_with("/nonexistent-cwd") {
                        continue;
                    }
                    if roots.is_root(&p) {
                        return Some(describe(program, &t.text, &p));
                    }
                }
            }
            continue;
        };
        for t in targets {
            if let Some((p, _)) = roots.resolve(t, base) {
                if roots.is_root(&p) {
                    return Some(describe(program, &t.text, &p));
                }
            }
        }
    }
    None
}

fn describe(program: &str, target: &str, path: &Path) -> String {
    let what = match program {
        "rm" | "find" => "removes",
        _ => "recursively changes the permissions or owner of",
    };
    if target == path.display().to_string() {
        format!("`{program}` {what} {target}")
    } else {
        format!("`{program}` {what} `{target}` ({})", path.display())
    }
}

/// Whether `find`'s `-exec`/`-execdir`/`-ok` runs `rm`, `shred` or `unlink`.
fn exec_removes(args: &[Word]) -> bool {
    args.windows(2).any(|w| {
        matches!(w[0].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
            && matches!(
                crate::effective::program_name(&w[1].text),
                "rm" | "shred" | "unlink" | "rmdir"
            )
    })
}

/// The operands of a command (words that are not options; every word after `--`).
fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut after = false;
    for a in args {
        if after {
            out.push(a);
        } else if a.text == "--" {
            after = true;
        } else if !a.text.starts_with('-') || a.text == "-" {
            out.push(a);
        }
    }
    out
}

/// The folders whose loss is catastrophic: `/`, home, the workspace and its ancestors.
struct Roots {
    home: Option<PathBuf>,
    protected: Vec<PathBuf>,
}

impl Roots {
    fn new(workspace: &Path, home: Option<&Path>) -> Roots {
        let mut protected = vec![PathBuf::from("/")];
        let mut add = |p: &Path| {
            for a in p.ancestors() {
                if !protected.iter().any(|x| x == a) {
                    protected.push(a.to_path_buf());
                }
            }
        };
        add(workspace);
        if let Ok(c) = std::fs::canonicalize(workspace) {
            add(&c);
        }
        if let Some(h) = home {
            add(h);
            if let Ok(c) = std::fs::canonicalize(h) {
                add(&c);
            }
        }
        Roots {
            home: home.map(Path::to_path_buf),
            protected,
        }
    }

    fn is_root(&self, p: &Path) -> bool {
        self.protected.iter().any(|x| x == p)
    }

    /// Where a target word leads from `cwd`, lexically normalised; a trailing `/*` or `*`
    /// (every entry of a folder) counts as the folder itself. `None`: cannot tell.
    fn resolve(&self, w: &Word, cwd: &Path) -> Option<(PathBuf, bool)> {
        let mut text = w.text.clone();
        if !w.literal {
            // Quotes around a home reference do not change it.
            text = text.replace('"', "");
            for var in ["${HOME}", "$HOME"] {
                if let Some(rest) = text.strip_prefix(var) {
                    let home = self.home.as_ref()?;
                    text = format!("{}{rest}", home.display());
                }
            }
        }
        if text == "~" || text.starts_with("~/") {
            let home = self.home.as_ref()?;
            text = format!("{}{}", home.display(), &text[1..]);
        }
        let mut glob = false;
        for tail in ["/*", "/.*", "*"] {
            if let Some(t) = text.strip_suffix(tail) {
                text = if t.is_empty() && tail != "*" {
                    "/".into()
                } else if t.is_empty() {
                    ".".into()
                } else {
                    t.to_string()
                };
                glob = true;
                break;
            }
        }
        if text.contains(['$', '`', '*', '?', '[', '~']) {
            return None;
        }
        let joined = if text.starts_with('/') {
            PathBuf::from(&text)
        } else {
            cwd.join(&text)
        };
        // Anchored at `/`, where a `..` stops, whether or not `cwd` is absolute.
        let out = Path::new("/").join(crate::lexical::fold_dots_saturating(&joined));
        Some((out, glob))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catastrophic_removals_are_found() {
        let ws = Path::new("/w/proj");
        let home = Some(Path::new("/home/u"));
        for c in [
            "rm -rf /",
            "rm -r -f /",
            "rm --recursive --force /",
            "rm -fr /",
            "rm -rf --no-preserve-root /",
            "rm -rf /*",
            "rm -rf ~",
            "rm -rf ~/",
            "rm -rf $HOME",
            "rm -rf \"$HOME\"",
            "rm -rf ${HOME}/",
            "rm -rf .",
            "rm -rf ./",
            "rm -rf *",
            "rm -rf ..",
            "rm -rf /w",
            "rm -rf /w/proj",
            "rm -rf /w/proj/",
            "rm -rf src/../..",
            "echo $(rm -rf /)",
            "cd / && rm -rf *",
            "cd ~ && rm -rf .",
            "sudo rm -rf /",
            "bash -c 'rm -rf ~'",
            "env rm -rf /",
            "/bin/rm -rf /",
            "find / -delete",
            "find ~ -name x -delete",
            "find . -exec rm -rf {} +",
            "chmod -R 777 /",
            "chown -R u:u ~",
            "chmod --recursive 700 .",
            "ls; rm -Rf /home",
        ] {
            assert!(catastrophic(c, ws, home).is_some(), "{c}");
        }
        for c in [
            "rm -rf target",
            "rm -rf ./build",
            "rm -f /",
            "rm x",
            "rm -rf /tmp/x",
            "rm -rf \"$dir\"",
            "chmod 644 .",
            "chmod -R 755 src",
            "find . -name '*.o' -delete -path x",
            "find / -name x",
            "cd src && rm -rf gen",
            "git status",
        ] {
            assert!(catastrophic(c, ws, home).is_none(), "{c}");
        }
    }
}
