//! The user's home inside the sandbox: credential folders hidden, package caches private.
//!
//! Everything under `$HOME` is read-only inside (the root is), so nothing a command does can
//! plant `~/.cargo/bin/<tool>`, `~/.cargo/config.toml` or a cached tarball that runs later
//! outside. Package managers still need a writable cache: each gets a private folder (under
//! Cairn's data dir, one set per workspace) mounted where it looks, never the user's own.

use std::path::{Path, PathBuf};

use crate::sandbox::SandboxSpec;

/// Credential and profile paths under `$HOME` hidden inside the sandbox (those that exist).
pub const HIDDEN_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".vault-token",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".local/share/keyrings",
];

/// The paths to hide for a user whose home is `home`: [`HIDDEN_IN_HOME`] plus `extra`
/// (Cairn's state and config dirs, the user's own additions), each that exists, with
/// symbolic links resolved so that no alias leads around the mask.
pub fn hidden_paths(home: &Path, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let wanted = HIDDEN_IN_HOME
        .iter()
        .map(|rel| home.join(rel))
        .chain(extra.iter().cloned());
    for p in wanted {
        for q in [Some(p.clone()), std::fs::canonicalize(&p).ok()]
            .into_iter()
            .flatten()
        {
            if std::fs::symlink_metadata(&q).is_ok_and(|m| !m.file_type().is_symlink())
                && !out.contains(&q)
            {
                out.push(q);
            }
        }
    }
    out
}

/// Private package caches: where each one is mounted inside, and the variables that point
/// tools at those without a folder of their own in `$HOME`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivateCaches {
    /// Host folder (under the cache root) → path inside.
    pub binds: Vec<(PathBuf, PathBuf)>,
    /// Variables set inside.
    pub env: Vec<(String, String)>,
}

/// Creates the private caches under `root` (one folder per tool) and says where they go:
/// `<cargo_home>/registry` and `<cargo_home>/git` (never the toolchain in `bin/`, which
/// stays read-only), `~/.npm` and `~/.cache` (pip, yarn, go and the rest). A cache whose
/// folder is missing from the home is reached through its variable (`npm_config_cache`,
/// `XDG_CACHE_HOME`) instead, mounted at its own path.
pub fn private_caches(
    home: &Path,
    cargo_home: Option<&Path>,
    root: &Path,
) -> std::io::Result<PrivateCaches> {
    let mut out = PrivateCaches::default();
    let make = |name: &str| -> std::io::Result<PathBuf> {
        let p = root.join(name);
        std::fs::create_dir_all(&p)?;
        Ok(p)
    };
    if let Some(cargo) = cargo_home.filter(|c| c.is_dir()) {
        for (name, sub) in [("cargo-registry", "registry"), ("cargo-git", "git")] {
            let source = make(name)?;
            let target = cargo.join(sub);
            // Cargo makes these itself on first use; the mount needs them to exist.
            if !target.is_dir() {
                std::fs::create_dir_all(&target)?;
            }
            out.binds.push((source, target));
        }
    }
    for (name, rel, var) in [
        ("npm", ".npm", "npm_config_cache"),
        ("cache", ".cache", "XDG_CACHE_HOME"),
    ] {
        let source = make(name)?;
        let target = home.join(rel);
        if target.is_dir() {
            out.binds.push((source, target));
        } else {
            out.env
                .push((var.to_string(), source.display().to_string()));
            out.binds.push((source.clone(), source));
        }
    }
    Ok(out)
}

/// Splits `spec.hidden` into the paths that hold one of `writable` (hidden before those are
/// mounted, so they stay reachable) and the rest (hidden after everything else). A path
/// inside another hidden one is left out unless a writable mount in between shows it again: hiding
/// the outer one hides it already, and bubblewrap could not create its mount point in the
/// empty read-only folder (`~/.config/cairn/permissions.toml` inside `~/.config/cairn`
/// made every sandboxed command fail).
pub(crate) fn split_hidden(spec: &SandboxSpec, writable: &[&Path]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    spec.hidden
        .iter()
        .filter(|p| !covered(p, &spec.hidden, writable))
        .cloned()
        .partition(|h| {
            writable
                .iter()
                .any(|w| w.starts_with(h) && *w != h.as_path())
        })
}

/// Whether `p` lies inside another of `hidden` with none of `mounts` between the two.
fn covered(p: &Path, hidden: &[PathBuf], mounts: &[&Path]) -> bool {
    hidden.iter().any(|h| {
        h.as_path() != p
            && p.starts_with(h)
            && !mounts
                .iter()
                .any(|m| *m != h.as_path() && m.starts_with(h) && p.starts_with(m))
    })
}

/// Bubblewrap arguments hiding each path: an empty folder over a folder (made read-only now
/// with `read_only`, else later by [`remount_ro_args`]), an empty file (`/dev/null`) over
/// anything else.
pub(crate) fn hide_args(paths: &[PathBuf], read_only: bool) -> Vec<String> {
    let mut a = Vec::new();
    for p in paths {
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            continue;
        };
        let s = p.display().to_string();
        if meta.is_dir() {
            a.extend(["--tmpfs".to_string(), s.clone()]);
            if read_only {
                a.extend(["--remount-ro".to_string(), s]);
            }
        } else {
            a.extend(["--ro-bind".to_string(), "/dev/null".to_string(), s]);
        }
    }
    a
}

/// Bubblewrap arguments making the hidden folders among `paths` read-only.
pub(crate) fn remount_ro_args(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| p.is_dir())
        .flat_map(|p| ["--remount-ro".to_string(), p.display().to_string()])
        .collect()
}

/// Bubblewrap arguments mounting the private folders of `spec` (those whose source exists).
pub(crate) fn private_bind_args(spec: &SandboxSpec) -> Vec<String> {
    let mut a = Vec::new();
    // A private cache mounted over the workspace (or a writable folder) would hide it: a
    // workspace under `~/.cache` or `~/.cargo/registry` keeps that folder as the allow-list
    // made it (the emptied home's, gone when the command ends).
    let writable: Vec<&Path> = std::iter::once(spec.workspace.as_path())
        .chain(spec.extra_writable.iter().map(|p| p.as_path()))
        .collect();
    for (source, target) in &spec.private_binds {
        if writable.iter().any(|w| w.starts_with(target)) {
            continue;
        }
        if source.is_dir() {
            a.extend([
                "--bind".to_string(),
                source.display().to_string(),
                target.display().to_string(),
            ]);
        }
    }
    a
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_private_cache_never_covers_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        let (cache, npm) = (d.path().join("p-cache"), d.path().join("p-npm"));
        for p in [&cache, &npm] {
            std::fs::create_dir_all(p).unwrap();
        }
        let home = Path::new("/home/u");
        let mut spec = SandboxSpec::for_workspace(&home.join(".cache/proj"));
        spec.private_binds = vec![
            (cache.clone(), home.join(".cache")),
            (npm.clone(), home.join(".npm")),
        ];
        let args = private_bind_args(&spec).join(" ");
        assert!(!args.contains("/home/u/.cache"), "{args}");
        assert!(
            args.contains(&format!("--bind {} /home/u/.npm", npm.display())),
            "{args}"
        );
    }

    #[test]
    fn caches_are_private_and_credentials_hidden() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        for sub in [".cargo/bin", ".ssh", ".cache", ".config"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        std::fs::write(home.join(".netrc"), "machine x password y\n").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join(".config/gh")).unwrap();
        let root = d.path().join("caches");
        let c = private_caches(&home, Some(&home.join(".cargo")), &root).unwrap();
        assert!(c
            .binds
            .contains(&(root.join("cargo-registry"), home.join(".cargo/registry"))));
        assert!(c.binds.contains(&(root.join("cache"), home.join(".cache"))));
        // No ~/.npm: reached through npm's variable, mounted at its own path.
        assert!(c.binds.contains(&(root.join("npm"), root.join("npm"))));
        assert_eq!(
            c.env,
            vec![(
                "npm_config_cache".to_string(),
                root.join("npm").display().to_string()
            )]
        );
        assert!(!c.binds.iter().any(|(_, t)| t.ends_with(".cargo/bin")));
        let hidden = hidden_paths(&home, &[d.path().join("state")]);
        assert_eq!(hidden, vec![home.join(".ssh"), home.join(".netrc")]);
        let args = hide_args(&hidden, true).join(" ");
        let ssh = home.join(".ssh").display().to_string();
        assert!(
            args.contains(&format!("--tmpfs {ssh} --remount-ro {ssh}")),
            "{args}"
        );
        assert!(
            args.contains(&format!(
                "--ro-bind /dev/null {}",
                home.join(".netrc").display()
            )),
            "{args}"
        );
    }

    #[test]
    fn a_hidden_path_inside_another_is_hidden_by_it_unless_a_mount_shows_it_again() {
        let config = PathBuf::from("/home/u/.config/cairn");
        let rules = config.join("permissions.toml");
        let shown = config.join("shared");
        let secret = shown.join("token");
        let mut spec = SandboxSpec::for_workspace(Path::new("/home/u/ws"));
        spec.hidden = vec![config.clone(), rules.clone(), secret.clone()];
        let (early, late) = split_hidden(&spec, &[Path::new("/home/u/ws")]);
        assert!(early.is_empty());
        assert_eq!(late, vec![config.clone()]);
        let (early, late) = split_hidden(&spec, &[Path::new("/home/u/ws"), &shown]);
        assert_eq!(early, vec![config.clone()]);
        assert_eq!(late, vec![secret.clone()]);
        // A read-only bind inside is hidden with the folder (hidden last, over everything).
        spec.read_only = vec![shown];
        let (_, late) = split_hidden(&spec, &[Path::new("/home/u/ws")]);
        assert_eq!(late, vec![config]);
    }
}
