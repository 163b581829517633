//! Real git for tests: repositories made with the git CLI in an isolated configuration (no
//! system or global config), and a digest of a `.git` folder to prove what changed in it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `git args` in `dir` with an isolated configuration; panics when it fails (tests).
#[allow(clippy::expect_used, clippy::panic)]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs");
    if !out.status.success() {
        panic!(
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository in `dir` with `files` (path, content) committed on `main`.
#[allow(clippy::expect_used)]
pub fn repo_with(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).expect("create the repository folder");
    git(dir, &["init", "-q"]);
    for (path, content) in files {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create a folder");
        }
        std::fs::write(&p, content).expect("write a file");
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "init"]);
}

/// Every path (relative), mode, byte and link target under `git_dir`, except below the relative prefixes
/// in `except`, as one string (compare two to prove nothing else changed).
#[allow(clippy::expect_used)]
pub fn digest(git_dir: &Path, except: &[&str]) -> String {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![git_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rel = d
            .strip_prefix(git_dir)
            .unwrap_or(&d)
            .to_string_lossy()
            .into_owned();
        if except
            .iter()
            .any(|e| rel == *e || rel.starts_with(&format!("{e}/")))
        {
            continue;
        }
        if d.is_dir() {
            stack.extend(
                std::fs::read_dir(&d)
                    .expect("list a folder")
                    .flatten()
                    .map(|e| e.path()),
            );
        }
        files.push(d);
    }
    files.sort();
    let mut out = String::new();
    for f in files {
        let meta = std::fs::symlink_metadata(&f).expect("stat");
        let rel = f.strip_prefix(git_dir).unwrap_or(&f).display().to_string();
        out.push_str(&format!("{rel} {:o}", meta.permissions().mode()));
        if meta.is_file() {
            let bytes = std::fs::read(&f).expect("read");
            out.push_str(&format!(" {}:{}", bytes.len(), fnv(&bytes)));
        } else if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&f).expect("read a link");
            out.push_str(&format!(" -> {}", target.display()));
        }
        out.push('\n');
    }
    out
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}
