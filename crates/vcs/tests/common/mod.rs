//! Test helpers: user repositories made with the git CLI, work-tree state listings, and a
//! byte-for-byte digest of a `.git` folder.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_vcs::{Vcs, VcsConfig};

/// Runs git in `dir` with a fixed identity and no user/system config; panics on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// A user repository with a commit, a branch, a tag and a stash entry.
pub fn user_repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    write(dir, "README.md", "# project\n");
    write(dir, "src/main.rs", "fn main() {}\n");
    write(dir, ".gitignore", "*.log\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    git(dir, &["branch", "feature"]);
    git(dir, &["tag", "v1"]);
    write(dir, "README.md", "# project (stashed edit)\n");
    git(dir, &["stash", "-q"]);
}

/// Writes a file, creating its folders.
pub fn write(root: &Path, rel: &str, content: &str) {
    write_bytes(root, rel, content.as_bytes());
}

/// Writes bytes, creating folders.
pub fn write_bytes(root: &Path, rel: &str, content: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// Reads a file as text.
pub fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

/// Everything in a folder (`.git` folders summarised by their digest): path → description.
pub fn state(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    collect(root, root, &mut out);
    out
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    if entries.is_empty() && dir != root {
        out.insert(rel(root, dir), "empty dir".into());
    }
    for e in entries {
        let p = e.path();
        let meta = fs::symlink_metadata(&p).unwrap();
        let r = rel(root, &p);
        if e.file_name() == ".git" {
            out.insert(r, format!("git {}", digest(&p)));
        } else if meta.file_type().is_symlink() {
            out.insert(
                r,
                format!("link -> {}", fs::read_link(&p).unwrap().display()),
            );
        } else if meta.is_dir() {
            collect(root, &p, out);
        } else {
            let mode = meta.permissions().mode() & 0o111 != 0;
            let data = fs::read(&p).unwrap();
            out.insert(
                r,
                format!("file x={mode} {}", String::from_utf8_lossy(&data)),
            );
        }
    }
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap().to_string_lossy().to_string()
}

/// A digest of every path, file mode and byte under `dir` (a `.git` folder or file).
pub fn digest(dir: &Path) -> String {
    let mut acc: Vec<u8> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut files: Vec<PathBuf> = Vec::new();
    while let Some(d) = stack.pop() {
        let meta = fs::symlink_metadata(&d).unwrap();
        if meta.is_dir() {
            for e in fs::read_dir(&d).unwrap().flatten() {
                stack.push(e.path());
            }
            files.push(d);
        } else {
            files.push(d);
        }
    }
    files.sort();
    for f in files {
        let meta = fs::symlink_metadata(&f).unwrap();
        acc.extend_from_slice(f.as_os_str().as_bytes());
        acc.extend_from_slice(format!(" {:o} ", meta.permissions().mode()).as_bytes());
        if meta.is_file() {
            acc.extend_from_slice(&fs::read(&f).unwrap());
        } else if meta.file_type().is_symlink() {
            acc.extend_from_slice(fs::read_link(&f).unwrap().as_os_str().as_bytes());
        }
        acc.push(0);
    }
    git2::Oid::hash_object(git2::ObjectType::Blob, &acc)
        .unwrap()
        .to_string()
}

/// Config for tests: no watcher unless asked.
pub fn config(watch: bool) -> VcsConfig {
    VcsConfig {
        watch,
        ..VcsConfig::default()
    }
}

/// Opens a store for `ws` under `state`.
pub fn open(state: &Path, ws: &Path, watch: bool) -> Vcs {
    Vcs::open(state, ws, config(watch)).unwrap()
}

/// One agent turn: snapshot before, `act` on the work tree, record at the end.
pub fn turn(
    vcs: &mut Vcs,
    session: &str,
    n: u32,
    input: &str,
    act: impl FnOnce(),
) -> Option<cairn_vcs::TurnRecord> {
    vcs.begin_step(
        session,
        n,
        "run_shell",
        &format!("call-{n}"),
        cairn_vcs::StepKind::Command,
    )
    .unwrap();
    act();
    vcs.end_turn(session, n, input).unwrap()
}
