//! The allow-list filesystem of the sandbox (issue 35): nothing of the user's home enters
//! unless named. `$HOME` is an empty tmpfs into which only toolchains are bound back
//! read-only, plus configuration files generated from an allow-list of keys (git's
//! `user.name`, `user.email`, `init.defaultBranch`); other users' homes, `/root`, `/srv`,
//! `/mnt`, `/media`, `/var/lib` and `/run` (the session bus, the agents' sockets, docker's
//! socket) are empty; `/etc` keeps no secrets (`shadow`, `gshadow`, `sudoers*`, host keys,
//! `ssl/private`). The workspace, granted folders, private caches and the user's extra
//! folders are mounted on top, as before; hidden paths stay hidden even when named here.

use std::path::{Path, PathBuf};

/// Folders shown empty (read-only) inside, each that exists on the host.
pub const ABSENT: &[&str] = &[
    "/home", "/root", "/srv", "/mnt", "/media", "/var/lib", "/run",
];

/// Files and folders of `/etc` that hold secrets (readable when Cairn runs as root).
pub const ETC_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/etc/NetworkManager/system-connections",
    "/etc/wireguard",
];

/// Toolchains under `$HOME` bound back read-only when present.
pub const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo/bin",
    ".cargo/env",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".nvm",
    ".pyenv",
    ".asdf",
    ".local/share/mise",
    ".sdkman",
    ".volta",
    ".bun/bin",
    ".deno/bin",
    "go",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
];

/// Toolchains outside the home that live in an emptied folder, bound back read-only when
/// present (Homebrew on Linux).
pub const SYSTEM_TOOLCHAINS: &[&str] = &["/home/linuxbrew/.linuxbrew"];

/// Git config keys copied into the generated `~/.gitconfig` (never helpers, headers or
/// includes).
pub const GIT_KEYS: &[(&str, &str, &str)] = &[
    ("user", "name", "name"),
    ("user", "email", "email"),
    ("init", "defaultbranch", "defaultBranch"),
];

/// What the allow-list filesystem needs to know about the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowListFs {
    /// The home folder, an empty tmpfs inside.
    pub home: PathBuf,
    /// Paths under (or outside) the home bound back read-only (toolchains, `extraReadable`).
    pub read_only: Vec<PathBuf>,
    /// Generated files bound read-only at a path inside (host source → path inside).
    pub files: Vec<(PathBuf, PathBuf)>,
}

impl AllowListFs {
    /// The profile for `home`: its [`HOME_TOOLCHAINS`] that exist, then `extra_readable`.
    pub fn for_home(home: &Path, extra_readable: &[PathBuf]) -> Self {
        let mut read_only: Vec<PathBuf> = HOME_TOOLCHAINS
            .iter()
            .map(|rel| home.join(rel))
            .filter(|p| p.exists())
            .collect();
        read_only.extend(extra_readable.iter().cloned());
        AllowListFs {
            home: home.to_path_buf(),
            read_only,
            files: Vec::new(),
        }
    }
}

/// The host's `/etc` secrets that exist, with the SSH host keys.
fn etc_secrets() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ETC_SECRETS
        .iter()
        .map(PathBuf::from)
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    if let Ok(dir) = std::fs::read_dir("/etc/ssh") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with("_key") {
                out.push(e.path());
            }
        }
    }
    out
}

/// Whether `p` is a real folder (not a link to one).
fn real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Bubblewrap arguments emptying the host folders of [`ABSENT`], the home (left writable:
/// what a command writes there is gone when it ends), the `/etc` secrets, then binding
/// back what `fs` names. Run right after the root is bound and before anything else is
/// mounted; `resolv` is the target of `/etc/resolv.conf` when it lies in an absent folder
/// (systemd-resolved's stub), bound back so names still resolve.
pub fn allow_list_args(fs: &AllowListFs) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let s = |p: &Path| p.display().to_string();
    for dir in ABSENT.iter().map(Path::new).filter(|p| real_dir(p)) {
        a.extend(["--tmpfs".to_string(), s(dir)]);
    }
    if real_dir(&fs.home) && fs.home.parent().is_some() {
        a.extend(["--tmpfs".to_string(), s(&fs.home)]);
    }
    for p in etc_secrets() {
        if real_dir(&p) {
            a.extend(["--tmpfs".to_string(), s(&p), "--remount-ro".into(), s(&p)]);
        } else {
            a.extend(["--ro-bind".to_string(), "/dev/null".into(), s(&p)]);
        }
    }
    if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf") {
        if ABSENT.iter().any(|d| target.starts_with(d)) {
            a.extend(["--ro-bind".to_string(), s(&target), s(&target)]);
        }
    }
    let system = SYSTEM_TOOLCHAINS.iter().map(PathBuf::from);
    for p in system
        .chain(fs.read_only.iter().cloned())
        .filter(|p| p.exists())
    {
        a.extend(["--ro-bind".to_string(), s(&p), s(&p)]);
    }
    for (source, target) in fs.files.iter().filter(|(src, _)| src.exists()) {
        a.extend(["--ro-bind".to_string(), s(source), s(target)]);
    }
    a
}

/// Bubblewrap arguments making the emptied folders read-only, once everything that goes
/// inside them is mounted (the home, when it is one of them, stays writable).
pub fn allow_list_finish_args(fs: &AllowListFs) -> Vec<String> {
    ABSENT
        .iter()
        .map(Path::new)
        .filter(|p| real_dir(p) && *p != fs.home.as_path())
        .flat_map(|p| ["--remount-ro".to_string(), p.display().to_string()])
        .collect()
}

/// The text of a `~/.gitconfig` holding only [`GIT_KEYS`] from the user's global config
/// files (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, read by git's own parser with no
/// includes); a value with a line break or NUL is left out.
pub fn generated_gitconfig(global_files: &[PathBuf]) -> String {
    let mut found: Vec<(&str, &str, String)> = Vec::new();
    for f in global_files.iter().filter(|f| f.is_file()) {
        let Ok(entries) = crate::git_config::git_entries(f) else {
            continue;
        };
        for e in entries.into_iter().filter(|e| e.subsection.is_none()) {
            let Some((section, _, key)) = GIT_KEYS
                .iter()
                .find(|(sec, k, _)| *sec == e.section && *k == e.key)
            else {
                continue;
            };
            if e.value.contains(['\n', '\r', '\0']) {
                continue;
            }
            found.retain(|(s, k, _)| !(s == section && k == key));
            found.push((section, key, e.value));
        }
    }
    let mut out = String::from("# Generated by Cairn for its sandbox: an allow-list of keys.\n");
    for section in ["user", "init"] {
        let keys: Vec<&(&str, &str, String)> =
            found.iter().filter(|(s, _, _)| *s == section).collect();
        if keys.is_empty() {
            continue;
        }
        out.push_str(&format!("[{section}]\n"));
        for (_, key, value) in keys {
            let v = value.replace('\\', "\\\\").replace('"', "\\\"");
            out.push_str(&format!("\t{key} = \"{v}\"\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn only_allowed_git_keys_are_generated() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("gitconfig");
        std::fs::write(
            &f,
            "[user]\n\tname = A \\\"B\\\"\n\temail = a@b\n[credential]\n\thelper = store\n\
             [http]\n\textraHeader = Authorization: x\n[include]\n\tpath = /x\n\
             [init]\n\tdefaultBranch = main\n",
        )
        .unwrap();
        let text = generated_gitconfig(&[f]);
        assert!(text.contains("\tname = \"A \\\"B\\\"\"\n"), "{text}");
        assert!(text.contains("\temail = \"a@b\"\n"), "{text}");
        assert!(
            text.contains("[init]\n\tdefaultBranch = \"main\"\n"),
            "{text}"
        );
        for gone in ["helper", "extraHeader", "include", "/x"] {
            assert!(!text.contains(gone), "{gone}: {text}");
        }
    }

    #[test]
    fn the_home_is_emptied_and_toolchains_bound_back() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".rustup")).unwrap();
        let fs = AllowListFs::for_home(&home, &[]);
        assert_eq!(fs.read_only, vec![home.join(".rustup")]);
        let args = allow_list_args(&fs).join(" ");
        let h = home.display();
        assert!(args.contains(&format!("--tmpfs {h} ")), "{args}");
        assert!(
            args.contains(&format!("--ro-bind {h}/.rustup {h}/.rustup")),
            "{args}"
        );
    }
}
