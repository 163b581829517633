//! Known-safe programs that the workspace can turn into something else: a `PATH` entry that
//! finds the program inside the workspace, a version-manager shim or rustup proxy that picks
//! the real binary from workspace files, and git obeying a repository configuration (pager,
//! fsmonitor, textconv, hooks...) that came with the workspace or lies outside it.

use std::ffi::OsStr;
use std::path::Path;

use crate::git_config::{git_entries, syntax_problem, ConfigEntry};
use crate::safe::long_is;

/// Shell builtins of the known-safe set: no `PATH` lookup.
const BUILTINS: &[&str] = &["echo", "true", "false", "pwd"];

/// Largest git config file inspected; a bigger one is not vouched for.
const MAX_CONFIG: u64 = 1 << 20;

/// Largest git index inspected for submodules.
const MAX_INDEX: u64 = 64 << 20;

/// Git config keys (`section` → keys, `*` for all) that make no read-only git command
/// (status, diff, log, show, blame, grep…) run a program or read outside the repository.
/// Keys under a subsection (`[remote "origin"]`) count under their section. Left out on
/// purpose: core.fsmonitor/pager/sshCommand/askPass/gitProxy/worktree, diff.external and
/// drivers' textconv/command, filters (except git-lfs's own), gpg.program,
/// log.showSignature, include/includeIf.
const GIT_CONFIG_ALLOWED: &[(&str, &[&str])] = &[
    (
        "core",
        &[
            "repositoryformatversion",
            "filemode",
            "bare",
            "logallrefupdates",
            "ignorecase",
            "precomposeunicode",
            "symlinks",
            "autocrlf",
            "eol",
            "safecrlf",
            "quotepath",
            "checkstat",
            "trustctime",
            "abbrev",
            "compression",
            "loosecompression",
            "bigfilethreshold",
            "untrackedcache",
            "splitindex",
            "commitgraph",
            "multipackindex",
            "sparsecheckout",
            "sparsecheckoutcone",
            "longpaths",
            "preloadindex",
            "editor",
            "whitespace",
            "excludesfile",
            "commentchar",
            "commentstring",
            "hookspath",
        ],
    ),
    (
        "remote",
        &[
            "url",
            "pushurl",
            "fetch",
            "push",
            "tagopt",
            "prune",
            "prunetags",
            "mirror",
            "skipdefaultupdate",
            "skipfetchall",
            "gh-resolved",
            "promisor",
            "partialclonefilter",
            "proxy",
        ],
    ),
    (
        "branch",
        &[
            "remote",
            "merge",
            "rebase",
            "pushremote",
            "description",
            "vscode-merge-base",
            "autosetupmerge",
            "autosetuprebase",
            "sort",
        ],
    ),
    ("user", &["*"]),
    (
        "extensions",
        &["objectformat", "refstorage", "worktreeconfig"],
    ),
    ("gc", &["*"]),
    ("color", &["*"]),
    ("pull", &["*"]),
    ("push", &["*"]),
    ("fetch", &["*"]),
    ("init", &["defaultbranch"]),
    ("lfs", &["*"]),
    ("submodule", &["url", "active"]),
    ("index", &["version"]),
    ("credential", &["*"]),
    ("merge", &["*"]),
    ("rerere", &["*"]),
    ("commit", &["*"]),
    ("tag", &["*"]),
    ("status", &["*"]),
    ("alias", &["*"]),
    ("maintenance", &["*"]),
    ("advice", &["*"]),
    ("column", &["*"]),
    ("url", &["insteadof", "pushinsteadof"]),
    ("http", &["*"]),
    ("gpg", &["format", "allowedsignersfile"]),
    ("rebase", &["*"]),
    (
        "blame",
        &[
            "ignorerevsfile",
            "markignoredlines",
            "markunblamablelines",
            "date",
        ],
    ),
    (
        "log",
        &[
            "date",
            "decorate",
            "abbrevcommit",
            "follow",
            "graphcolors",
            "mailmap",
            "showroot",
            "excludedecoration",
            "initialdecorationset",
        ],
    ),
    (
        "diff",
        &[
            "algorithm",
            "colormoved",
            "colormovedws",
            "renames",
            "renamelimit",
            "context",
            "interhunkcontext",
            "indentheuristic",
            "mnemonicprefix",
            "noprefix",
            "relative",
            "statgraphwidth",
            "statnamewidth",
            "submodule",
            "wserrorhighlight",
            "ignoresubmodules",
            "suppressblankempty",
            "dirstat",
            "tool",
            "guitool",
            "binary",
            "xfuncname",
            "funcname",
            "wordregex",
        ],
    ),
];

/// Why running `program` from the workspace may run a program the workspace controls.
pub(crate) fn program_hazard(
    program: &str,
    workspace: &Path,
    canonical: &Path,
    search_path: Option<&OsStr>,
) -> Option<String> {
    if BUILTINS.contains(&program) {
        return None;
    }
    let search_path = search_path?;
    for entry in std::env::split_paths(search_path) {
        let relative = entry.is_relative();
        let dir = workspace.join(&entry);
        let candidate = dir.join(program);
        if !is_executable(&candidate) {
            continue;
        }
        let real_dir = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if relative || dir.starts_with(workspace) || real_dir.starts_with(canonical) {
            return Some(format!(
                "`{program}` would run {}, a program in the workspace (PATH lists a workspace \
                 folder)",
                candidate.display()
            ));
        }
        if is_shim(&candidate) {
            return Some(format!(
                "`{program}` resolves to {}, a version-manager shim or toolchain proxy that \
                 picks the real program from files in the workspace",
                candidate.display()
            ));
        }
        return None;
    }
    None
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// A shim of pyenv, rbenv, asdf, mise, nodenv... (a `shims` folder) or a proxy binary
/// (rustup, mise, volta, proto): which real program it runs depends on files in the current
/// folder and its parents (`.python-version`, `.tool-versions`, `rust-toolchain.toml`).
fn is_shim(p: &Path) -> bool {
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let in_shims = |q: &Path| q.components().any(|c| c.as_os_str() == "shims");
    in_shims(p)
        || in_shims(&real)
        || matches!(
            real.file_name().and_then(|n| n.to_str()),
            Some("rustup" | "rustup-init" | "mise" | "rtx" | "asdf" | "volta-shim" | "proto-shim")
        )
}

/// Why git, run in `cwd` (canonical, inside the canonical `workspace`) with `args`, may run
/// or read what the workspace controls, or a repository outside it. Repository discovery
/// goes up from `cwd` as git's does: in each folder a `.git` folder, a `.git` file (a
/// pointer to a repository elsewhere), or the folder itself being a repository (bare:
/// `HEAD`, `objects/`, `refs/`).
pub(crate) fn git_hazard(workspace: &Path, cwd: &Path, args: &[String]) -> Option<String> {
    if std::env::var_os("GIT_DIR").is_some() || std::env::var_os("GIT_COMMON_DIR").is_some() {
        return Some("GIT_DIR is set: git would use a repository chosen by the environment".into());
    }
    for dir in cwd.ancestors() {
        let inside = dir.starts_with(workspace);
        let dotgit = dir.join(".git");
        let found = match std::fs::symlink_metadata(&dotgit) {
            Ok(m) if m.is_dir() && inside => return git_dir_hazard(dir, &dotgit, args),
            Ok(m) if !m.is_dir() && inside => {
                return Some(format!(
                    "`{}` is not a folder: it can point git at a repository elsewhere",
                    shown(workspace, &dotgit)
                ))
            }
            Ok(_) => true,
            Err(_) => looks_like_git_dir(dir),
        };
        if !found {
            continue;
        }
        return Some(if inside {
            format!(
                "`{}` looks like a bare repository, whose `config` git would obey",
                shown(workspace, dir)
            )
        } else {
            format!(
                "git would use the repository at {}, outside the workspace",
                dir.display()
            )
        });
    }
    None
}

/// `path` relative to `workspace` for messages (`.` for the workspace itself).
fn shown(workspace: &Path, path: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(r) if r.as_os_str().is_empty() => ".".into(),
        Ok(r) => r.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Whether git could take `d` for a repository (errs towards yes: any `HEAD`, `objects` and
/// `refs` entries, links included).
fn looks_like_git_dir(d: &Path) -> bool {
    ["HEAD", "objects", "refs"]
        .iter()
        .all(|e| std::fs::symlink_metadata(d.join(e)).is_ok())
}

fn git_dir_hazard(workspace: &Path, git_dir: &Path, args: &[String]) -> Option<String> {
    let mut hooks_dir = None;
    for name in ["config", "config.worktree"] {
        match config_hazard(&git_dir.join(name)) {
            Ok(entries) => {
                if let Some(e) = entries.iter().rev().find(|e| e.name() == "core.hookspath") {
                    hooks_dir = Some(e.value.clone());
                }
            }
            Err(key) => {
                return Some(format!(
                    "`.git/{name}` sets `{key}`, which may make git run a program or read \
                     elsewhere"
                ))
            }
        }
    }
    // A link inside `.git` (objects, refs…) makes git read another repository's data.
    if let Ok(entries) = std::fs::read_dir(git_dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_symlink()) {
                return Some(format!(
                    "`.git/{}` is a symbolic link: git would read another repository's data",
                    e.file_name().to_string_lossy()
                ));
            }
        }
    }
    let present = |rel: &str| std::fs::symlink_metadata(git_dir.join(rel)).is_ok();
    if present("commondir") || present("objects/info/alternates") {
        return Some("the repository shares objects or refs with another repository".into());
    }
    // `git status` may rewrite the index, which runs this hook (where core.hooksPath puts
    // the hooks, e.g. husky's `.husky/_`, too).
    if present("hooks/post-index-change") {
        return Some("`.git/hooks/post-index-change` may run when git refreshes the index".into());
    }
    if let Some(dir) = hooks_dir {
        let dir = if let Some(rest) = dir.strip_prefix("~/") {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(rest))
        } else {
            Some(workspace.join(&dir))
        };
        match dir {
            Some(d) if std::fs::symlink_metadata(d.join("post-index-change")).is_err() => {}
            _ => {
                return Some(
                    "core.hooksPath holds a post-index-change hook, which may run when git \
                     refreshes the index"
                        .into(),
                )
            }
        }
    }
    let sub = args.first().map(String::as_str);
    let recurses = matches!(sub, Some("status" | "diff"))
        || args.iter().any(|a| long_is(a, "recurse-submodules"));
    if recurses
        && (workspace.join(".gitmodules").exists()
            || present("modules")
            || index_has_gitlink(&git_dir.join("index")))
    {
        return Some(
            "the repository has submodules, whose own configuration git would obey".into(),
        );
    }
    None
}

/// The first key of a git config file outside [`GIT_CONFIG_ALLOWED`] (`section.key`), or
/// why the file cannot be vouched for: its lines must read exactly (see
/// [`crate::git_config::syntax_problem`]) and every key git itself lists must be allowed.
/// `Ok` carries git's entries (none for a missing file).
fn config_hazard(path: &Path) -> Result<Vec<ConfigEntry>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(_) => return Err("(an unreadable file)".into()),
    };
    if meta.len() > MAX_CONFIG {
        return Err("(a file too large to inspect)".into());
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Err("(an unreadable file)".into());
    };
    let text = String::from_utf8_lossy(&bytes);
    if let Some(why) = syntax_problem(&text).or_else(|| first_unlisted_key(&text)) {
        return Err(why);
    }
    let entries = git_entries(path).map_err(|e| format!("({e})"))?;
    match entries.iter().find(|e| !is_listed(e)) {
        Some(e) => Err(e.name()),
        None => Ok(entries),
    }
}

/// Whether [`GIT_CONFIG_ALLOWED`] lists one entry; git-lfs's own filter (`[filter "lfs"]`
/// running `git-lfs`) passes too.
fn is_listed(e: &ConfigEntry) -> bool {
    let listed = GIT_CONFIG_ALLOWED
        .iter()
        .find(|(s, _)| *s == e.section)
        .is_some_and(|(_, keys)| keys.contains(&"*") || keys.contains(&e.key.as_str()));
    let lfs_filter = e.section == "filter"
        && e.subsection.as_deref() == Some("lfs")
        && (e.key == "required"
            || (matches!(e.key.as_str(), "clean" | "smudge" | "process")
                && e.value.trim_matches('"').starts_with("git-lfs ")));
    listed || lfs_filter
}

/// The first `section.key` of git config `text` that [`GIT_CONFIG_ALLOWED`] does not list, as
/// written (`filter "x".clean`). git-lfs's own filter (`[filter "lfs"]` running `git-lfs`)
/// passes. Parsing errs on the side of reporting: a continuation line reads as a key.
fn first_unlisted_key(text: &str) -> Option<String> {
    let mut section = String::new();
    let mut subsection: Option<String> = None;
    let mut header = String::new();
    for raw in text.split('\n') {
        let mut line = raw.trim();
        if line.starts_with('[') {
            let Some(end) = line.find(']') else {
                return Some(line.to_string());
            };
            header = line[1..end].trim().to_string();
            let mut parts = header.splitn(2, |c: char| c.is_whitespace() || c == '.');
            section = parts.next().unwrap_or_default().to_ascii_lowercase();
            subsection = parts.next().map(|s| s.trim().trim_matches('"').to_string());
            // git reads a key after the header on the same line.
            line = line[end + 1..].trim();
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let (key_raw, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line.split_whitespace().next().unwrap_or_default(), ""),
        };
        let entry = ConfigEntry {
            section: section.clone(),
            subsection: subsection.clone(),
            key: key_raw.to_ascii_lowercase(),
            value: value.to_string(),
        };
        if !is_listed(&entry) {
            return Some(format!("{header}.{key_raw}"));
        }
    }
    None
}

/// Whether the index may hold a gitlink (a submodule entry, mode 160000). A byte scan: it can
/// only err towards "yes".
fn index_has_gitlink(index: &Path) -> bool {
    match std::fs::metadata(index) {
        Err(_) => false,
        Ok(m) if m.len() > MAX_INDEX => true,
        Ok(_) => std::fs::read(index)
            .map(|b| b.windows(4).any(|w| w == [0, 0, 0xE0, 0]))
            .unwrap_or(true),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::path::PathBuf;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn write(p: &Path, content: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    #[cfg(unix)]
    fn executable(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        write(p, "#!/bin/sh\n");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A canonical temp folder and whether one of its ancestors already holds a repository
    /// (then git in it is never vouched for).
    fn temp() -> (tempfile::TempDir, PathBuf, bool) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let in_repo = base
            .ancestors()
            .any(|a| a.join(".git").exists() || looks_like_git_dir(a));
        (dir, base, in_repo)
    }

    const INIT_CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\
        \tbare = false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://x/y.git\n\
        \tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\
        \tmerge = refs/heads/main\n";

    #[test]
    fn git_config_keys() {
        assert_eq!(first_unlisted_key(INIT_CONFIG), None);
        let cases: &[(&str, &str)] = &[
            ("[core]\n\tfsmonitor = sh x.sh\n", "core.fsmonitor"),
            ("[core]\n\tpager = sh\n", "core.pager"),
            ("[Core]\n\tFSMonitor = sh\n", "Core.FSMonitor"),
            ("[core] fsmonitor = sh\n", "core.fsmonitor"),
            ("[core]\r\n\tworktree = /x\r\n", "core.worktree"),
            ("[include]\n\tpath = ../x\n", "include.path"),
            (
                "[includeIf \"gitdir:/\"]\n\tpath = x\n",
                "includeIf \"gitdir:/\".path",
            ),
            ("[diff \"x\"]\n\ttextconv = sh\n", "diff \"x\".textconv"),
            ("[diff]\n\texternal = sh\n", "diff.external"),
            ("[filter \"x\"]\n\tclean = sh\n", "filter \"x\".clean"),
            (
                "[filter \"lfs\"]\n\tclean = sh evil\n",
                "filter \"lfs\".clean",
            ),
            ("[gpg]\n\tprogram = sh\n", "gpg.program"),
            ("[log]\n\tshowSignature = true\n", "log.showSignature"),
            (
                "[remote \"o\"]\n\tuploadpack = sh\n",
                "remote \"o\".uploadpack",
            ),
            (
                "[extensions]\n\tpartialClone = o\n",
                "extensions.partialClone",
            ),
        ];
        // What gh, VS Code, husky, git-lfs and everyday settings write passes.
        let everyday = "[core]\n\thooksPath = .husky/_\n\teditor = code --wait\n\
            [remote \"origin\"]\n\tgh-resolved = base\n\tpromisor = true\n\
            [branch \"main\"]\n\tvscode-merge-base = origin/main\n\
            [credential]\n\thelper = store\n\
            [filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\
            \tprocess = git-lfs filter-process\n\trequired = true\n\
            [diff]\n\talgorithm = histogram\n\tcolorMoved = zebra\n\
            [merge]\n\tconflictstyle = zdiff3\n[commit]\n\tgpgsign = true\n\
            [gpg]\n\tformat = ssh\n[status]\n\tshowUntrackedFiles = all\n\
            [alias]\n\tst = status\n[log]\n\tdate = iso\n[rerere]\n\tenabled = true\n\
            [maintenance]\n\tauto = false\n[pull]\n\trebase = true\n";
        assert_eq!(first_unlisted_key(everyday), None);
        for (text, key) in cases {
            assert_eq!(first_unlisted_key(text).as_deref(), Some(*key), "{text}");
        }
    }

    #[test]
    fn git_repository_hazards() {
        let (_d, base, in_repo) = temp();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        // No repository at all: git finds nothing to obey.
        assert_eq!(git_hazard(&ws, &ws, &w("status")).is_some(), in_repo);
        write(&ws.join(".git/config"), INIT_CONFIG);
        write(&ws.join(".git/hooks/pre-commit.sample"), "");
        write(&ws.join(".git/hooks/pre-commit"), "");
        assert_eq!(git_hazard(&ws, &ws, &w("status")), None);
        type Setup = fn(&Path);
        let hazards: &[(&str, Setup)] = &[
            ("status", |ws| {
                write(&ws.join(".git/config"), "[core]\n\tfsmonitor = sh evil\n")
            }),
            ("log", |ws| {
                write(&ws.join(".git/config.worktree"), "[core]\n\tpager = sh\n")
            }),
            ("log", |ws| {
                write(&ws.join(".git/objects/info/alternates"), "/x\n")
            }),
            ("status", |ws| {
                write(&ws.join(".git/hooks/post-index-change"), "")
            }),
            ("status", |ws| {
                write(&ws.join(".git/config"), "[core]\n\thooksPath = .husky/_\n");
                write(&ws.join(".husky/_/post-index-change"), "");
            }),
            ("log", |ws| {
                std::fs::create_dir_all(ws.join("../elsewhere/objects")).unwrap();
                std::os::unix::fs::symlink("../../elsewhere/objects", ws.join(".git/objects"))
                    .unwrap();
            }),
            ("status", |ws| write(&ws.join(".gitmodules"), "")),
            ("diff", |ws| write(&ws.join(".git/modules/x/config"), "")),
            ("status", |ws| {
                let mut idx = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
                idx.extend_from_slice(&[0u8; 24]);
                idx.extend_from_slice(&[0, 0, 0xE0, 0]);
                std::fs::write(ws.join(".git/index"), idx).unwrap();
            }),
        ];
        for (i, (sub, setup)) in hazards.iter().enumerate() {
            let ws = base.join(format!("ws{i}"));
            write(&ws.join(".git/config"), INIT_CONFIG);
            setup(&ws);
            assert!(git_hazard(&ws, &ws, &w(sub)).is_some(), "case {i}");
        }
        // husky's hooksPath without a post-index-change hook is harmless.
        let ws = base.join("husky");
        write(
            &ws.join(".git/config"),
            &format!("{INIT_CONFIG}[core]\n\thooksPath = .husky/_\n"),
        );
        write(&ws.join(".husky/_/pre-commit"), "");
        assert_eq!(git_hazard(&ws, &ws, &w("status")).is_some(), in_repo);
        // Submodules matter only to commands that go into them.
        let ws = base.join("subm");
        write(&ws.join(".git/config"), INIT_CONFIG);
        write(&ws.join(".gitmodules"), "");
        assert_eq!(git_hazard(&ws, &ws, &w("log")).is_some(), in_repo);
        assert!(git_hazard(&ws, &ws, &w("grep --recurse-submodules x")).is_some());
        // `.git` as a file, a link, a bare repository as the workspace, a repository above.
        let ws = base.join("gitfile");
        write(&ws.join(".git"), "gitdir: /elsewhere\n");
        assert!(git_hazard(&ws, &ws, &w("status")).is_some());
        let ws = base.join("bare");
        write(&ws.join("HEAD"), "ref: refs/heads/main\n");
        std::fs::create_dir_all(ws.join("objects")).unwrap();
        std::fs::create_dir_all(ws.join("refs")).unwrap();
        write(&ws.join("config"), "[core]\n\tfsmonitor = sh\n");
        assert!(git_hazard(&ws, &ws, &w("status")).is_some());
        let repo = base.join("repo");
        write(&repo.join(".git/config"), INIT_CONFIG);
        std::fs::create_dir_all(repo.join("sub/ws")).unwrap();
        let d = git_hazard(&repo.join("sub/ws"), &repo.join("sub/ws"), &w("log")).unwrap();
        assert!(d.contains("outside the workspace"), "{d}");
    }

    #[cfg(unix)]
    #[test]
    fn programs_found_in_the_workspace_or_through_shims() {
        let (_d, base, _) = temp();
        let ws = base.join("ws");
        let sys = base.join("sys");
        executable(&sys.join("cat"));
        executable(&ws.join("bin/cat"));
        executable(&base.join("pyenv/shims/tree"));
        executable(&sys.join("tree"));
        let path = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        let check = |p: &std::ffi::OsString, prog: &str| {
            program_hazard(prog, &ws, &ws, Some(p.as_os_str())).is_some()
        };
        assert!(!check(&path(&[&sys]), "cat"));
        assert!(check(&path(&[&ws.join("bin"), &sys]), "cat"));
        assert!(!check(&path(&[&sys, &ws.join("bin")]), "cat"));
        assert!(check(&path(&[Path::new("bin"), &sys]), "cat"));
        assert!(check(&path(&[&base.join("pyenv/shims"), &sys]), "tree"));
        assert!(!check(&path(&[&sys]), "tree"));
        // Builtins never look in PATH; a program found nowhere cannot run.
        assert!(!check(&path(&[&ws.join("bin")]), "echo"));
        assert!(!check(&path(&[&sys]), "rg"));
        // A rustup proxy: `cargo` is a link to `rustup`.
        executable(&base.join("cargo-home/bin/rustup"));
        std::os::unix::fs::symlink("rustup", base.join("cargo-home/bin/ls")).unwrap();
        assert!(check(&path(&[&base.join("cargo-home/bin"), &sys]), "ls"));
    }
}
