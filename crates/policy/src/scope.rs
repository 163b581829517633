//! The known-safe check when no OS sandbox confines commands (shell policy `workspace`,
//! seed §8.4: without the sandbox, paths are checked against the workspace). A command runs
//! unasked only when it is a known read-only form, every file it may open stays inside the
//! workspace (or a folder the user granted) after following symbolic links and out of Cairn's
//! state folder, `/proc`, `/sys` and `/dev`, and no workspace file picks the program it runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::paths::{canonical_workspace, kernel_path, normalize_lexically};
use crate::read_rules::ReadDenials;
use crate::safe::is_read_only_form;
use crate::safe_args::{path_candidates, reads_through_links, HARMLESS_DEVICES};
use crate::shell::ShellAnalysis;
use crate::workspace_code::{git_hazard, program_hazard};

/// Why a command may not run unasked as a known-safe read-only command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotKnownSafe {
    /// The line is not plain simple commands of literal words.
    #[error("runs a command that {0}")]
    NotPlain(String),
    /// A program, or an option of it, outside the known read-only set.
    #[error("`{0}` is not a known read-only command in this form")]
    NotReadOnly(String),
    /// An argument names a file outside the workspace (or in Cairn's state folder).
    #[error("reads outside the workspace: {0}")]
    ReadsOutside(String),
    /// The command follows symbolic links while walking or comparing folders.
    #[error("`{0}` follows symbolic links inside folders, which may lead outside the workspace")]
    FollowsLinks(String),
    /// Which program runs, or what it executes, depends on files in the workspace.
    #[error("{0}")]
    WorkspaceCode(String),
    /// It may read a path a deny rule keeps from reading.
    #[error("may read {0}")]
    DeniedPath(String),
}

/// Programs that search file content under the folder they run in when given no path
/// (`rg x`): whether a word is the pattern or a path is not told apart, so the working
/// folder always counts as walked.
const SEARCHES_BY_DEFAULT: &[&str] = &["rg", "ag"];

/// Programs that list names under the folder they run in when no path is given (`find`,
/// `ls -R`).
const LISTS_BY_DEFAULT: &[&str] = &["find", "tree", "du", "ls", "fd"];

/// Git subcommands that show names and history but no file content.
const GIT_NAMES_ONLY: &[&str] = &["status", "branch", "rev-parse", "remote", "tag"];

/// Where known-safe commands may read when no sandbox confines them.
#[derive(Debug, Clone)]
pub struct ReadScope {
    workspace: PathBuf,
    canonical: PathBuf,
    /// Where the command runs (the workspace unless [`ReadScope::with_cwd`]).
    cwd: PathBuf,
    /// Granted folders: (as given, canonical).
    readable: Vec<(PathBuf, PathBuf)>,
    /// Never readable, even inside the workspace: (as given, canonical).
    forbidden: Vec<(PathBuf, PathBuf)>,
    search_path: Option<OsString>,
    /// Deny path rules that bind the command's reads.
    denials: ReadDenials,
    /// Whether the command runs inside the OS sandbox, whose boundary confines what a link
    /// leads to (the home is empty, denied paths are mounted away): following links inside
    /// folders is then no reason to ask.
    confined: bool,
}

impl ReadScope {
    /// A scope for commands run in `workspace`, looked up in this process's `PATH`.
    pub fn new(workspace: &Path) -> Self {
        let workspace = absolute(workspace);
        ReadScope {
            canonical: canonical_workspace(&workspace),
            cwd: workspace.clone(),
            workspace,
            readable: Vec::new(),
            forbidden: Vec::new(),
            search_path: std::env::var_os("PATH"),
            denials: ReadDenials::default(),
            confined: false,
        }
    }

    /// The command runs inside the OS sandbox (issue 35): `grep -R`, `rg -L`, `find -L` and
    /// `diff` of folders, which follow links, pass; every other check stays.
    pub fn confined(mut self, confined: bool) -> Self {
        self.confined = confined;
        self
    }

    /// Also lets commands read under `dir` (a folder the user granted).
    pub fn with_readable(mut self, dir: &Path) -> Self {
        let dir = absolute(dir);
        self.readable.push((dir.clone(), canonical_workspace(&dir)));
        self
    }

    /// Keeps commands out of `dir` even inside the workspace or a granted folder (Cairn's
    /// state folder: saved sessions, the vault).
    pub fn with_forbidden(mut self, dir: &Path) -> Self {
        let dir = absolute(dir);
        self.forbidden
            .push((dir.clone(), canonical_workspace(&dir)));
        self
    }

    /// Runs commands in `dir` (relative to the workspace, or absolute): their relative paths
    /// and git's repository discovery start there.
    pub fn with_cwd(mut self, dir: &Path) -> Self {
        self.cwd = normalize_lexically(&self.workspace.join(dir));
        self
    }

    /// Keeps commands from reading what `denials` deny (a known-safe command that may read a
    /// denied file, or walk a folder holding one, is not vouched for).
    pub fn with_denials(mut self, denials: ReadDenials) -> Self {
        self.denials = denials;
        self
    }

    /// Looks programs up in `path` instead (`None`: no `PATH`, the shell's default).
    pub fn with_search_path(mut self, path: Option<OsString>) -> Self {
        self.search_path = path;
        self
    }

    /// Checks a whole command line: every part must be known-safe here.
    pub fn check_command(&self, command: &str) -> Result<(), NotKnownSafe> {
        if self.cwd != self.workspace {
            // The working folder itself must be where commands may read.
            let cwd = self.cwd.display().to_string();
            self.check_path(&cwd).map_err(|e| match e {
                NotKnownSafe::ReadsOutside(what) => {
                    NotKnownSafe::ReadsOutside(format!("the working folder {what}"))
                }
                other => other,
            })?;
        }
        match ShellAnalysis::of(command) {
            ShellAnalysis::Simple(words) => self.check_words(&words),
            ShellAnalysis::Compound(parts) => parts.iter().try_for_each(|w| self.check_words(w)),
            ShellAnalysis::Opaque(why) => Err(NotKnownSafe::NotPlain(why)),
        }
    }

    /// Checks one plain simple command (its words).
    pub fn check_words(&self, words: &[String]) -> Result<(), NotKnownSafe> {
        let program = words.first().map(String::as_str).unwrap_or_default();
        // `bash -lc 'git status'` is as read-only as the script it runs.
        if let Some((shell, script)) = crate::effective::shell_c_script(words) {
            if let Some(why) = program_hazard(
                shell,
                &self.workspace,
                &self.canonical,
                self.search_path.as_deref(),
            ) {
                return Err(NotKnownSafe::WorkspaceCode(why));
            }
            return self.check_command(script);
        }
        if !is_read_only_form(words) {
            return Err(NotKnownSafe::NotReadOnly(program.to_string()));
        }
        if reads_through_links(words) && !self.confined {
            return Err(NotKnownSafe::FollowsLinks(program.to_string()));
        }
        let candidates = path_candidates(words);
        for c in &candidates {
            self.check_path(c)?;
        }
        self.check_denials(program, words, &candidates)?;
        // diff follows the links it meets in the folders it compares.
        if program == "diff"
            && !self.confined
            && !words.iter().any(|a| a == "--no-dereference")
            && candidates
                .iter()
                .any(|c| kernel_path(&self.cwd, c).is_some_and(|p| p.is_dir()))
        {
            return Err(NotKnownSafe::FollowsLinks(program.to_string()));
        }
        if let Some(why) = program_hazard(
            program,
            &self.workspace,
            &self.canonical,
            self.search_path.as_deref(),
        ) {
            return Err(NotKnownSafe::WorkspaceCode(why));
        }
        if program == "git" {
            let cwd = canonical_workspace(&self.cwd);
            let args = words.get(1..).unwrap_or_default();
            if let Some(why) = git_hazard(&self.canonical, &cwd, args) {
                return Err(NotKnownSafe::WorkspaceCode(why));
            }
        }
        Ok(())
    }

    /// Whether the command may read what a deny rule denies: a denied path among its
    /// arguments, a folder holding one that it may walk (its working folder for programs that
    /// walk by default), or file content from git history.
    fn check_denials(
        &self,
        program: &str,
        words: &[String],
        candidates: &[String],
    ) -> Result<(), NotKnownSafe> {
        let Some(first) = self.denials.first_rule() else {
            return Ok(());
        };
        let by = |r: &crate::Rule, what: &str| {
            Err(NotKnownSafe::DeniedPath(format!(
                "{what}, denied by rule `{}` ({})",
                r.text, r.source
            )))
        };
        if program == "git" {
            let sub = words.get(1).map(String::as_str).unwrap_or_default();
            if !GIT_NAMES_ONLY.contains(&sub) {
                return by(first, "files from the repository");
            }
        }
        let mut walked: Vec<&str> = candidates.iter().map(String::as_str).collect();
        let recursive_grep = program == "grep"
            && words[1..].iter().any(|a| {
                a.starts_with("--r")
                    || a.starts_with("--d")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R', 'd']))
            });
        let names_a_path = || {
            candidates
                .iter()
                .any(|c| kernel_path(&self.cwd, c).is_some_and(|p| p.exists()))
        };
        if SEARCHES_BY_DEFAULT.contains(&program)
            || recursive_grep
            || (LISTS_BY_DEFAULT.contains(&program) && !names_a_path())
        {
            walked.push(".");
        }
        for c in walked {
            if c.is_empty() || c == "-" {
                continue;
            }
            let lexical = normalize_lexically(&self.cwd.join(c));
            let physical = kernel_path(&self.cwd, c);
            for p in std::iter::once(&lexical).chain(physical.as_ref()) {
                if let Some(r) = self.denials.denied(p) {
                    return by(r, c);
                }
            }
            if let Some(dir) = physical.as_ref().filter(|p| p.is_dir()) {
                if let Some(r) = self.denials.denied_within(dir) {
                    return by(r, &format!("{c} (a folder holding denied files)"));
                }
            }
        }
        Ok(())
    }

    /// Whether `arg`, as a path relative to the workspace, stays where commands may read.
    fn check_path(&self, arg: &str) -> Result<(), NotKnownSafe> {
        if arg.is_empty() || arg == "-" {
            return Ok(());
        }
        if arg.starts_with('~') {
            return Err(NotKnownSafe::ReadsOutside(arg.to_string()));
        }
        let lexical = normalize_lexically(&self.cwd.join(arg));
        if is_harmless_device(&lexical) {
            return Ok(());
        }
        let Some(physical) = kernel_path(&self.cwd, arg) else {
            return Err(NotKnownSafe::ReadsOutside(format!(
                "{arg} (its symbolic links cannot be resolved)"
            )));
        };
        let outside = |note: &str| {
            let mut shown = arg.to_string();
            if physical != lexical {
                shown.push_str(&format!(" (→ {})", physical.display()));
            }
            shown.push_str(note);
            Err(NotKnownSafe::ReadsOutside(shown))
        };
        for p in [&lexical, &physical] {
            if is_system_view(p) {
                return outside("");
            }
            if self
                .forbidden
                .iter()
                .any(|(given, canon)| p.starts_with(given) || p.starts_with(canon))
            {
                return outside(", in Cairn's state folder");
            }
        }
        let inside = |given: &Path, canon: &Path| {
            lexical.starts_with(given)
                && (physical.starts_with(canon) || physical.starts_with(given))
        };
        if inside(&self.workspace, &self.canonical)
            || self.readable.iter().any(|(g, c)| inside(g, c))
        {
            Ok(())
        } else {
            outside("")
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

fn is_harmless_device(p: &Path) -> bool {
    HARMLESS_DEVICES.iter().any(|d| p == Path::new(d))
}

/// The kernel's views of processes and devices (`/proc/<pid>/environ`, `/dev/fd/N`): never
/// inside any workspace, whatever its root.
fn is_system_view(p: &Path) -> bool {
    !is_harmless_device(p) && ["/proc", "/sys", "/dev"].iter().any(|v| p.starts_with(v))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    struct World {
        _dir: tempfile::TempDir,
        base: PathBuf,
        ws: PathBuf,
    }

    /// `base/ws` with files, folders and links in and out; `base/outside/secret`;
    /// `base/granted` (granted, with Cairn's state in `base/granted/.state`); another state
    /// folder inside the workspace (`ws/.cairn-state`).
    fn world() -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let write = |p: PathBuf| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        };
        for f in [
            "a.txt",
            "src/main.rs",
            "d1/x",
            "d2/x",
            ".cairn-state/vault.toml",
        ] {
            write(ws.join(f));
        }
        write(base.join("outside/secret"));
        write(base.join("granted/x.txt"));
        write(base.join("granted/.state/vault.toml"));
        write(ws.join("rust-toolchain.toml"));
        symlink(base.join("outside"), ws.join("out_link")).unwrap();
        symlink("a.txt", ws.join("in_link")).unwrap();
        symlink("/proc/self/environ", ws.join("environ")).unwrap();
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        symlink("../../outside", ws.join("sub/up")).unwrap();
        World {
            _dir: dir,
            base,
            ws,
        }
    }

    fn scope(w: &World) -> ReadScope {
        ReadScope::new(&w.ws)
            .with_readable(&w.base.join("granted"))
            .with_forbidden(&w.ws.join(".cairn-state"))
            .with_forbidden(&w.base.join("granted/.state"))
            .with_search_path(Some("/usr/bin:/bin".into()))
    }

    #[test]
    fn known_safe_commands_without_a_sandbox() {
        let w = world();
        let s = scope(&w);
        // (command; expected: "ok", or the start of the refusal's text)
        let cases: &[(&str, &str)] = &[
            ("cat a.txt", "ok"),
            ("cat ./a.txt src/main.rs in_link", "ok"),
            ("cat {ws}/a.txt", "ok"),
            ("cat a.txt | wc -l", "ok"),
            ("head -5 a.txt -", "ok"),
            ("grep -rn /api/ src", "ok"),
            ("grep -e /api/ -r .", "ok"),
            ("cut -d/ -f1 a.txt", "ok"),
            ("sed -n 1,2p a.txt", "ok"),
            ("echo /etc/passwd", "ok"),
            ("diff a.txt /dev/null", "ok"),
            ("diff a.txt src/main.rs", "ok"),
            ("diff --no-dereference d1 d2", "ok"),
            ("cat {base}/granted/x.txt", "ok"),
            (
                "cat /proc/self/stat",
                "reads outside the workspace: /proc/self/stat",
            ),
            (
                "grep -a -o 'OPENAI_API_KEY=[A-Za-z0-9_-]*' /proc/{pid}/environ | cut -c1-20",
                "reads outside the workspace: /proc/{pid}/environ",
            ),
            (
                "cat /etc/hostname",
                "reads outside the workspace: /etc/hostname",
            ),
            (
                "git diff --no-index /etc/hostname m",
                "reads outside the workspace: /etc/hostname",
            ),
            ("cat {base}/outside/secret", "reads outside the workspace"),
            ("cat ../outside/secret", "reads outside the workspace"),
            ("cat a/../../outside/secret", "reads outside the workspace"),
            (
                "cat out_link/secret",
                "reads outside the workspace: out_link/secret (→",
            ),
            ("cat sub/up/secret", "reads outside the workspace"),
            (
                "cat environ",
                "reads outside the workspace: environ (→ /proc/",
            ),
            ("cat '~/x'", "reads outside the workspace: ~/x"),
            ("cat '~root/x'", "reads outside the workspace"),
            ("head /dev/fd/0", "reads outside the workspace"),
            ("cat /dev/stdin", "reads outside the workspace"),
            ("ls /sys", "reads outside the workspace"),
            ("cat .cairn-state/vault.toml", "reads outside the workspace"),
            (
                "cat {base}/granted/.state/vault.toml",
                "reads outside the workspace",
            ),
            (
                "grep --file=/etc/passwd a.txt",
                "reads outside the workspace",
            ),
            ("grep -f/etc/passwd a.txt", "reads outside the workspace"),
            (
                "sort --random-source=/etc/passwd a.txt",
                "reads outside the workspace",
            ),
            ("find / -name x", "reads outside the workspace: /"),
            ("diff d1 d2", "`diff` follows symbolic links"),
            ("grep -R x .", "`grep` follows symbolic links"),
            ("rg -L x", "`rg` follows symbolic links"),
            ("git -C /elsewhere status", "`git` is not a known read-only"),
            ("cargo --version", "`cargo` is not a known read-only"),
            ("date --s=now", "`date` is not a known read-only"),
            ("file --co -m m", "`file` is not a known read-only"),
            ("cat < /etc/passwd", "runs a command that redirects"),
            ("cat a.txt > b", "runs a command that redirects"),
        ];
        let pid = std::process::id().to_string();
        let fill = |t: &str| {
            t.replace("{ws}", &w.ws.display().to_string())
                .replace("{base}", &w.base.display().to_string())
                .replace("{pid}", &pid)
        };
        for (cmd, want) in cases {
            let cmd = fill(cmd);
            let got = s.check_command(&cmd);
            match *want {
                "ok" => assert_eq!(got, Ok(()), "{cmd}"),
                want => {
                    let text = got.err().map(|e| e.to_string()).unwrap_or_default();
                    assert!(text.starts_with(&fill(want)), "{cmd}: {text:?}");
                }
            }
        }
    }

    #[test]
    fn a_workspace_root_of_slash_still_keeps_proc_out() {
        let s = ReadScope::new(Path::new("/")).with_search_path(None);
        assert!(s.check_command("cat /proc/self/environ").is_err());
        assert!(s.check_command("cat /dev/fd/0").is_err());
        assert!(s.check_command("cat /sys/x").is_err());
        assert_eq!(s.check_command("cat /dev/null"), Ok(()));
    }
}
