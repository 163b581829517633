//! OS sandboxes for shell commands: bubblewrap on Linux (read-only root, the workspace, a
//! private temp and granted folders writable, `.git`, `.agent` and `.cairn` read-only inside,
//! credentials hidden, package caches private, optional network off)
//! and a generated `sandbox-exec` profile on macOS.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether commands must, may or must not run in a sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// Use one when it works here.
    #[default]
    Auto,
    /// Never.
    Off,
    /// Always; starting without a working sandbox is an error.
    Required,
}

impl SandboxMode {
    /// Parses `auto`, `off`, `required`.
    pub fn parse(s: &str) -> Option<SandboxMode> {
        match s.trim() {
            "auto" => Some(SandboxMode::Auto),
            "off" => Some(SandboxMode::Off),
            "required" => Some(SandboxMode::Required),
            _ => None,
        }
    }
}

/// What the sandbox lets a command touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Writable workspace root.
    pub workspace: PathBuf,
    /// Extra writable folders (granted directories, caches).
    pub extra_writable: Vec<PathBuf>,
    /// Folders inside the workspace kept read-only.
    pub read_only_inside: Vec<String>,
    /// Whether the network stays reachable.
    pub network: bool,
    /// Folders kept read-only wherever they are, even under a writable bind (Cairn's state
    /// and config folders).
    pub read_only: Vec<PathBuf>,
    /// A private, empty `/tmp` for each command instead of the host's.
    pub private_tmp: bool,
    /// Paths hidden inside (credentials, Cairn's own state): an empty read-only folder or
    /// an empty file is mounted over each one that exists.
    pub hidden: Vec<PathBuf>,
    /// Private folders mounted over paths inside (host source → path inside): package
    /// caches, so what a command caches never lands in the user's own `~/.cargo` or `~/.npm`.
    pub private_binds: Vec<(PathBuf, PathBuf)>,
    /// Environment variables set inside (`TMPDIR`, cache locations).
    pub env: Vec<(String, String)>,
    /// Variables passed from Cairn's environment besides the built-in ones (the settings'
    /// `env`; see [`crate::sandbox_env`]).
    pub pass_env: Vec<String>,
    /// The allow-list filesystem ([`crate::sandbox_fs`]); `None`: the whole root read-only
    /// with the [`SandboxSpec::hidden`] paths masked, as before.
    pub allow_list: Option<crate::sandbox_fs::AllowListFs>,
    /// The seccomp filter file (see [`crate::sandbox_seccomp`]) bubblewrap installs, when
    /// one was written.
    pub seccomp: Option<PathBuf>,
    /// The network through Cairn's proxy (`--sandbox-network proxy`): a network namespace of
    /// its own whose only way out is the proxy's socket, reached through the bridge.
    pub proxy: Option<ProxyMounts>,
    /// Why the network is not what was asked for (the proxy could not be set up), for
    /// `cairn sandbox status`.
    pub network_why: Option<String>,
}

/// Where the bridge program and the proxy's socket are on the host; both are bound under
/// [`PROXY_DIR_INSIDE`] inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyMounts {
    /// The executable with the bridge mode (Cairn's own).
    pub bridge: PathBuf,
    /// The proxy's unix socket for this command (empty in a session's spec, set per
    /// command).
    pub socket: PathBuf,
}

/// The folder inside the sandbox holding the bridge program and the proxy's socket (in the
/// private `/tmp`).
pub const PROXY_DIR_INSIDE: &str = "/tmp/.cairn-net";

impl SandboxSpec {
    /// The default spec for a workspace: the [`crate::PROTECTED_FOLDERS`] read-only, a
    /// private `/tmp`, network on.
    pub fn for_workspace(workspace: &Path) -> Self {
        SandboxSpec {
            workspace: workspace.to_path_buf(),
            extra_writable: Vec::new(),
            read_only_inside: crate::PROTECTED_FOLDERS
                .iter()
                .map(|f| (*f).into())
                .collect(),
            network: true,
            read_only: Vec::new(),
            private_tmp: true,
            hidden: Vec::new(),
            private_binds: Vec::new(),
            env: Vec::new(),
            pass_env: Vec::new(),
            allow_list: None,
            seccomp: None,
            proxy: None,
            network_why: None,
        }
    }
}

/// Path of the bubblewrap binary, when installed.
pub fn bwrap_path() -> Option<PathBuf> {
    ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Whether bubblewrap can actually start a sandbox here (user namespaces may be disabled).
pub fn bwrap_works() -> bool {
    let Some(bwrap) = bwrap_path() else {
        return false;
    };
    Command::new(bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--cap-drop",
            "ALL",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The full argv that runs `argv` inside bubblewrap according to `spec`.
pub fn bwrap_argv(bwrap: &Path, spec: &SandboxSpec, argv: &[String]) -> Vec<String> {
    let mut a: Vec<String> = match &spec.seccomp {
        Some(filter) => crate::sandbox_seccomp::seccomp_prefix(filter),
        None => Vec::new(),
    };
    a.push(bwrap.display().to_string());
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
    push(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    if spec.private_tmp {
        push(&["--tmpfs", "/tmp"]);
    } else {
        push(&["--bind", "/tmp", "/tmp"]);
    }
    if let Some(fs) = &spec.allow_list {
        a.extend(crate::sandbox_fs::allow_list_args(fs));
    }
    let mut binds: Vec<&Path> = vec![spec.workspace.as_path()];
    binds.extend(spec.extra_writable.iter().map(|p| p.as_path()));
    // A hidden folder that holds a writable one is hidden first, the writable one mounted
    // back inside it; every other hidden path is hidden last, over everything.
    let mut inner: Vec<&Path> = binds.clone();
    inner.extend(spec.private_binds.iter().map(|(_, t)| t.as_path()));
    let (early, late) = crate::sandbox_home::split_hidden(spec, &inner);
    // Left writable until what goes inside is mounted, then made read-only.
    a.extend(crate::sandbox_home::hide_args(&early, false));
    for p in binds {
        if p.exists() {
            let s = p.display().to_string();
            a.extend(["--bind".to_string(), s.clone(), s]);
        }
    }
    for p in spec.read_only.iter().filter(|p| p.exists()) {
        let s = p.display().to_string();
        a.extend(["--ro-bind".to_string(), s.clone(), s]);
    }
    for inside in &spec.read_only_inside {
        let p = spec.workspace.join(inside);
        if p.exists() {
            let s = p.display().to_string();
            a.extend(["--ro-bind".to_string(), s.clone(), s]);
        }
    }
    // Nested repositories and subprojects keep theirs read-only too.
    for p in crate::sandbox_nested::nested_protected(&spec.workspace, &spec.read_only_inside) {
        let s = p.display().to_string();
        a.extend(["--ro-bind".to_string(), s.clone(), s]);
    }
    // A protected folder that does not exist yet gets an empty read-only folder mounted in
    // its place, or the command could create it (a new `.git` with hooks).
    for p in missing_protected(spec) {
        let s = p.display().to_string();
        a.extend([
            "--tmpfs".to_string(),
            s.clone(),
            "--remount-ro".to_string(),
            s,
        ]);
    }
    a.extend(crate::sandbox_home::private_bind_args(spec));
    a.extend(crate::sandbox_home::hide_args(&late, true));
    a.extend(crate::sandbox_home::remount_ro_args(&early));
    if let Some(fs) = &spec.allow_list {
        a.extend(crate::sandbox_fs::allow_list_finish_args(fs));
    }
    for (k, v) in &spec.env {
        a.extend(["--setenv".to_string(), k.clone(), v.clone()]);
    }
    if let Some(p) = &spec.proxy {
        a.extend([
            "--ro-bind".to_string(),
            p.bridge.display().to_string(),
            format!("{PROXY_DIR_INSIDE}/bridge"),
            "--bind".to_string(),
            p.socket.display().to_string(),
            format!("{PROXY_DIR_INSIDE}/proxy.sock"),
        ]);
    }
    if !spec.network || spec.proxy.is_some() {
        a.push("--unshare-net".into());
    }
    // Own PID namespace: when the command ends, whatever it left running in the background
    // dies with it instead of outliving the protections.
    a.push("--unshare-pid".into());
    // No capabilities: run as root (containers, CI), a command could otherwise remount the
    // read-only folders writable or unmount them.
    a.extend(["--cap-drop".to_string(), "ALL".to_string()]);
    if spec.seccomp.is_some() {
        a.extend([
            "--seccomp".to_string(),
            crate::sandbox_seccomp::SECCOMP_FD.to_string(),
        ]);
    }
    a.extend(["--die-with-parent".to_string(), "--chdir".to_string()]);
    a.push(spec.workspace.display().to_string());
    a.push("--".into());
    match &spec.proxy {
        Some(_) => a.extend(cairn_bridge_argv(argv)),
        None => a.extend(argv.iter().cloned()),
    }
    a
}

/// `argv` behind the bridge inside the sandbox (see `cairn_netproxy::bridge`): it listens
/// on the loopback port the proxy variables name and forwards to the proxy's socket.
fn cairn_bridge_argv(argv: &[String]) -> Vec<String> {
    let mut a = vec![
        format!("{PROXY_DIR_INSIDE}/bridge"),
        BRIDGE_ARG.to_string(),
        "--port".into(),
        BRIDGE_PORT.to_string(),
        "--socket".into(),
        format!("{PROXY_DIR_INSIDE}/proxy.sock"),
        "--".into(),
    ];
    a.extend(argv.iter().cloned());
    a
}

/// The argument that runs a Cairn binary as the network bridge (kept equal to
/// `cairn_netproxy::BRIDGE_ARG`, which a test checks).
pub const BRIDGE_ARG: &str = "__net-bridge";

/// The loopback port of the bridge inside (kept equal to `cairn_netproxy::BRIDGE_PORT`).
pub const BRIDGE_PORT: u16 = 3128;

/// What a sandboxed command leaves to clean up once it is gone: the host mount points of
/// missing protected folders, and protected links it may have replaced.
#[derive(Debug)]
pub struct SandboxGuard {
    /// Mount points of missing protected folders.
    pub mounts: crate::sandbox_mounts::MountPointGuard,
    /// Protected entries that are symbolic links.
    pub links: crate::sandbox_links::LinkGuard,
}

/// The argv running `argv` in bubblewrap with `spec` plus `extra_writable`, and the guard to
/// drop once the command is gone: it removes the host mount points of missing protected
/// folders (markers under `marker_root` let other processes see the mount points in use) and
/// puts back protected links the command replaced.
pub fn bwrap_guarded(
    bwrap: &Path,
    spec: &SandboxSpec,
    extra_writable: &[PathBuf],
    argv: &[String],
    marker_root: Option<&Path>,
) -> (Vec<String>, SandboxGuard) {
    let mut spec = spec.clone();
    spec.extra_writable.extend(extra_writable.iter().cloned());
    let guard = SandboxGuard {
        mounts: crate::sandbox_mounts::MountPointGuard::register(
            missing_protected(&spec),
            marker_root,
        ),
        links: crate::sandbox_links::LinkGuard::register(&spec),
    };
    (bwrap_argv(bwrap, &spec, argv), guard)
}

/// Protected paths of `spec` that do not exist yet (for a dangling symlink: its missing
/// target inside the workspace), as the first missing component of each. The sandbox mounts
/// an empty read-only folder there; bubblewrap creates it on the host, so callers keep a
/// [`crate::sandbox_mounts::MountPointGuard`] for these while the command runs.
pub fn missing_protected(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for inside in &spec.read_only_inside {
        let p = spec.workspace.join(inside);
        if p.exists() {
            continue;
        }
        let target = match std::fs::read_link(&p) {
            // A dangling symlink: what it points at must not be creatable either.
            Ok(t) => match p.parent() {
                Some(dir) => dir.join(t),
                None => t,
            },
            Err(_) => p,
        };
        let target = crate::paths::normalize_lexically(&target);
        if !target.starts_with(&spec.workspace) {
            // Outside the workspace the root is read-only anyway.
            continue;
        }
        if let Some(first) = first_missing(&target) {
            if !out.contains(&first) {
                out.push(first);
            }
        }
    }
    out
}

/// The first component of `path` (absolute) that does not exist.
fn first_missing(path: &Path) -> Option<PathBuf> {
    let mut cur = PathBuf::new();
    for c in path.components() {
        cur.push(c);
        if std::fs::symlink_metadata(&cur).is_err() {
            return Some(cur);
        }
    }
    None
}

/// A `sandbox-exec` (Seatbelt) profile confining writes to the workspace, temp and granted
/// folders, with `.git` and `.agent` read-only and the network optional.
pub fn macos_profile(spec: &SandboxSpec) -> String {
    let quote = |p: &Path| {
        format!(
            "\"{}\"",
            p.display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
        )
    };
    let mut s =
        String::from("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n");
    s.push_str(&format!("  (subpath {})\n", quote(&spec.workspace)));
    for p in &spec.extra_writable {
        s.push_str(&format!("  (subpath {})\n", quote(p)));
    }
    s.push_str("  (subpath \"/private/tmp\")\n  (subpath \"/private/var/folders\")\n  (literal \"/dev/null\")\n  (literal \"/dev/tty\"))\n");
    for inside in &spec.read_only_inside {
        s.push_str(&format!(
            "(deny file-write* (subpath {}))\n",
            quote(&spec.workspace.join(inside))
        ));
    }
    for p in &spec.read_only {
        s.push_str(&format!("(deny file-write* (subpath {}))\n", quote(p)));
    }
    if !spec.network {
        s.push_str("(deny network*)\n");
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn bwrap_arguments_bind_the_workspace_and_protect_git() {
        let tmp = std::env::temp_dir().join(format!("cairn-sbx-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join(".git")).unwrap();
        let mut spec = SandboxSpec::for_workspace(&tmp);
        spec.network = false;
        let argv = bwrap_argv(
            Path::new("/usr/bin/bwrap"),
            &spec,
            &["sh".into(), "-c".into(), "true".into()],
        );
        let joined = argv.join(" ");
        let ws = tmp.display().to_string();
        assert!(joined.starts_with("/usr/bin/bwrap --ro-bind / /"));
        assert!(joined.contains(&format!("--bind {ws} {ws}")));
        assert!(joined.contains(&format!("--ro-bind {ws}/.git {ws}/.git")));
        assert!(joined.contains("--unshare-net"));
        assert!(joined.contains("--unshare-pid"));
        // The other protected folders do not exist: empty read-only folders keep them
        // uncreatable (a skill planted in `.claude/skills` would reach the next session).
        for name in [".agent", ".cairn", ".agents", ".claude"] {
            assert!(joined.contains(&format!("--tmpfs {ws}/{name} --remount-ro {ws}/{name}")));
        }
        assert!(!joined.contains(&format!("--tmpfs {ws}/.git")));
        assert_eq!(
            missing_protected(&spec),
            [".agent", ".cairn", ".agents", ".claude"]
                .map(|n| tmp.join(n))
                .to_vec()
        );
        assert!(joined.ends_with("-- sh -c true"));
        let _ = std::fs::remove_dir_all(tmp);
    }

    #[test]
    fn macos_profile_text() {
        let spec = SandboxSpec {
            workspace: PathBuf::from("/Users/me/proj"),
            extra_writable: vec![PathBuf::from("/Users/me/cache")],
            read_only_inside: vec![".git".into()],
            network: false,
            read_only: vec![],
            ..SandboxSpec::for_workspace(Path::new("/Users/me/proj"))
        };
        let p = macos_profile(&spec);
        assert!(p.contains("(deny file-write*)"));
        assert!(p.contains("(subpath \"/Users/me/proj\")"));
        assert!(p.contains("(subpath \"/Users/me/cache\")"));
        assert!(p.contains("(deny file-write* (subpath \"/Users/me/proj/.git\"))"));
        assert!(p.contains("(deny network*)"));
        assert_eq!(SandboxMode::parse("required"), Some(SandboxMode::Required));
    }
}
