//! Permission decisions for tool calls, in the reference order (seed §8.1), extended with
//! persistent rules and protected paths:
//! deny rule → read-only mode → workspace boundary → protected path → ask rule →
//! read-only tool → auto mode → shell policy → allow rule / command allowlists →
//! session tool allowlist → ask the user.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use cairn_policy::catastrophic::catastrophic;
use cairn_policy::paths::{canonical_workspace, physical_path};
use cairn_policy::risky_options::risky_option;
use cairn_policy::{NotKnownSafe, ReadDenials, ReadScope, RuleDecision, RuleSet, ShellAnalysis};
use cairn_protocol::{Mode, ToolMeta};
use serde::{Deserialize, Serialize};

use crate::permission_reads::{exec_cwd, mentioned_denied, run_dir};

/// The outcome of evaluating one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may run (when `needs_user` is false).
    pub allowed: bool,
    /// Which rule decided, shown to the user and in events.
    pub reason: String,
    /// The approver must decide.
    pub needs_user: bool,
}

impl Decision {
    fn allow(reason: impl Into<String>) -> Self {
        Decision {
            allowed: true,
            reason: reason.into(),
            needs_user: false,
        }
    }
    fn deny(reason: impl Into<String>) -> Self {
        Decision {
            allowed: false,
            reason: reason.into(),
            needs_user: false,
        }
    }
    fn ask(reason: impl Into<String>) -> Self {
        Decision {
            allowed: false,
            reason: reason.into(),
            needs_user: true,
        }
    }
}

/// When shell commands may run without asking (seed §8.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShellPolicy {
    /// Ask for everything not allowlisted (default).
    #[default]
    Approve,
    /// No prompt only when an OS sandbox is really enforced.
    Sandbox,
    /// Known-safe read-only commands pass (sandboxed or not); everything else asks.
    Workspace,
    /// Never ask for shell commands (auto mode for the shell only).
    All,
}

/// Session permission state that survives a restore.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionState {
    /// Current mode.
    pub mode: Mode,
    /// Tools the user allowed for the session.
    pub allow_tools: BTreeSet<String>,
    /// Programs the user allowed for the session (simple commands only).
    pub allow_commands: BTreeSet<String>,
    /// Directories outside the workspace the user granted: absolute path → writable.
    #[serde(default)]
    pub granted_dirs: BTreeMap<String, bool>,
}

/// Paths inside the workspace that always need the user, in every mode.
pub const PROTECTED: &[&str] = &[".git", ".agent", ".cairn"];

/// Evaluates tool calls against mode, workspace, rules and allowlists.
#[derive(Debug, Clone)]
pub struct PermissionEngine {
    workspace: PathBuf,
    /// Configured command-allowlist prefixes (`--allow-command`).
    allowed_commands: Vec<String>,
    rules: RuleSet,
    shell_policy: ShellPolicy,
    sandbox_enforced: bool,
    state: PermissionState,
    /// Folders of the engine's own the tools may read (saved oversized tool results); not
    /// part of the saved state, never writable.
    readable_dirs: Vec<String>,
    /// Folders commands never read unasked (Cairn's state dir).
    private_dirs: Vec<PathBuf>,
}

impl PermissionEngine {
    /// A permission engine for a workspace and mode.
    pub fn new(workspace: PathBuf, mode: Mode, allowed_commands: Vec<String>) -> Self {
        PermissionEngine {
            workspace,
            allowed_commands,
            rules: RuleSet::new(),
            shell_policy: ShellPolicy::Approve,
            sandbox_enforced: false,
            state: PermissionState {
                mode,
                ..Default::default()
            },
            readable_dirs: Vec::new(),
            private_dirs: Vec::new(),
        }
    }

    /// Keeps known-safe commands from reading `dir` unasked (Cairn's state dir).
    pub fn add_private_dir(&mut self, dir: &Path) {
        if !self.private_dirs.iter().any(|d| d == dir) {
            self.private_dirs.push(dir.to_path_buf());
        }
    }

    /// Whether `command`, run by tool `name` in `cwd`, is a known read-only command (it opens
    /// no checkpoint command window).
    pub fn is_known_read_only(&self, name: &str, command: &str, cwd: Option<&str>) -> bool {
        self.known_safe(name, command, cwd).is_ok()
    }

    /// Whether `command` may run unasked as known-safe read-only commands without a sandbox:
    /// read-only forms whose files stay in the workspace or granted folders (seed §8.4).
    /// `cwd` is where the command runs (relative to the workspace); `name` the tool, whose
    /// deny path rules bind what the command may read.
    fn known_safe(&self, name: &str, command: &str, cwd: Option<&str>) -> Result<(), NotKnownSafe> {
        let mut scope = ReadScope::new(&self.workspace).with_denials(self.read_denials(name));
        if let Some(cwd) = cwd {
            scope = scope.with_cwd(Path::new(cwd));
        }
        for dir in self
            .readable_dirs
            .iter()
            .chain(self.state.granted_dirs.keys())
        {
            scope = scope.with_readable(Path::new(dir));
        }
        for dir in &self.private_dirs {
            scope = scope.with_forbidden(dir);
        }
        scope.check_command(command)
    }

    /// The deny path rules that bind what tool `name` reads (walking tools skip those paths).
    pub fn read_denials(&self, name: &str) -> ReadDenials {
        ReadDenials::new(&self.rules, name, &self.workspace)
    }

    /// Lets tools read `dir` (outside the workspace) for this session, read-only.
    pub fn add_readable_dir(&mut self, dir: &std::path::Path) {
        let dir = dir.display().to_string();
        if !self.readable_dirs.contains(&dir) {
            self.readable_dirs.push(dir);
        }
    }

    /// Folders tools may read besides the workspace and the user's grants.
    pub fn readable_dirs(&self) -> &[String] {
        &self.readable_dirs
    }

    /// Sets persistent rules.
    pub fn set_rules(&mut self, rules: RuleSet) {
        self.rules = rules;
    }

    /// The persistent rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Sets the shell policy and whether an OS sandbox really wraps shell commands.
    pub fn set_shell_policy(&mut self, policy: ShellPolicy, sandbox_enforced: bool) {
        self.shell_policy = policy;
        self.sandbox_enforced = sandbox_enforced;
    }

    /// The shell policy and whether an OS sandbox really wraps shell commands.
    pub fn shell_policy(&self) -> (ShellPolicy, bool) {
        (self.shell_policy, self.sandbox_enforced)
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.state.mode
    }

    /// Changes the mode (takes effect for the next call).
    pub fn set_mode(&mut self, mode: Mode) {
        self.state.mode = mode;
    }

    /// The session state to persist.
    pub fn state(&self) -> &PermissionState {
        &self.state
    }

    /// Restores persisted session state.
    pub fn restore(&mut self, state: PermissionState) {
        self.state = state;
    }

    /// Allows a tool for the rest of the session.
    pub fn allow_tool_for_session(&mut self, name: &str) {
        self.state.allow_tools.insert(name.to_string());
    }

    /// Allows a simple command (by its program name) for the rest of the session.
    pub fn allow_command_for_session(&mut self, command: &str) {
        if let Some(program) = simple_command_program(command) {
            self.state.allow_commands.insert(program);
        }
    }

    /// Grants access to a directory outside the workspace for the session.
    pub fn grant_directory(&mut self, path: &str, writable: bool) {
        let entry = self
            .state
            .granted_dirs
            .entry(path.to_string())
            .or_insert(false);
        *entry |= writable;
    }

    /// Revokes a session tool allowance.
    pub fn revoke_tool(&mut self, name: &str) -> bool {
        self.state.allow_tools.remove(name)
    }

    /// Revokes a session command allowance.
    pub fn revoke_command(&mut self, program: &str) -> bool {
        self.state.allow_commands.remove(program)
    }

    /// Decides one call of tool `name` with metadata `meta` and parsed `args`.
    pub fn evaluate(&self, name: &str, meta: &ToolMeta, args: &serde_json::Value) -> Decision {
        self.evaluate_call(name, meta, args, None)
    }

    /// Decides one call whose written paths are `targets` (from [`crate::Tool::write_targets`];
    /// `None`: its `path` argument).
    pub fn evaluate_call(
        &self,
        name: &str,
        meta: &ToolMeta,
        args: &serde_json::Value,
        targets: Option<Vec<String>>,
    ) -> Decision {
        let mode = self.state.mode;
        let writes = meta.capabilities.iter().any(|c| c == "write");
        let execs = meta.capabilities.iter().any(|c| c == "exec");
        let path = args.get("path").and_then(|p| p.as_str());
        let targets: Vec<String> = match targets {
            Some(t) => t,
            None => path.map(str::to_string).into_iter().collect(),
        };
        let rule = if writes && !targets.is_empty() {
            self.rules
                .decide_targets(name, args, &self.workspace, &targets)
        } else {
            self.rules.decide(name, args, &self.workspace)
        };
        // 0. A deny rule is absolute.
        if let Some(r) = rule.filter(|r| r.decision == RuleDecision::Deny) {
            return Decision::deny(format!("denied by rule `{}` ({})", r.text, r.source));
        }
        // 1. Read-only modes forbid side effects outright.
        if mode.is_read_only() && meta.mutating {
            return Decision::deny(format!(
                "{name} has side effects, and the session is in {} mode (read-only)",
                mode.as_str()
            ));
        }
        // 1b. A command the model asks to run outside the OS sandbox (`sandbox: false`)
        //     always needs the user, in every mode: no allowlist, rule, shell policy or
        //     session allowance covers it (and the request offers no "always allow").
        if execs && self.sandbox_enforced && wants_unsandboxed(args) {
            return Decision::ask(format!(
                "{name} asks to run a command outside the sandbox (`sandbox: false`; asked \
                 every time, in every mode): {}",
                args.get("command").and_then(|c| c.as_str()).unwrap_or("")
            ));
        }
        if writes {
            // 2. Writes outside the workspace (and outside granted writable dirs) are refused,
            //    whatever the mode: as written and where symlinks really lead.
            if let Some(path) = targets.iter().find(|p| !self.may_write_at(p)) {
                return Decision::deny(format!(
                    "{path} is outside the workspace {}",
                    self.workspace.display()
                ));
            }
            // 2a. Cairn's own state and config folders (saved sessions and their permissions,
            //     MCP and permission settings) are never written by tools, in any mode.
            if let Some(path) = targets.iter().find(|p| self.in_private_dir(p)) {
                return Decision::deny(format!(
                    "{path} is inside Cairn's own state or config folder, which tools never write"
                ));
            }
            // 2b. Protected paths (reached directly or through a symlink) always need the user.
            for path in &targets {
                if let Some(p) = protected_component(&self.workspace, path) {
                    return Decision::ask(format!(
                        "{name} writes {path}, inside the protected `{p}` folder (asked in every mode)"
                    ));
                }
            }
        }
        // 2b'. A command that names a protected folder needs the user too, unless the OS
        //      sandbox (which keeps those folders read-only) confines it, or it is a known
        //      read-only command. A literal check: the sandbox is what holds against a
        //      command built to hide the name.
        let cwd = exec_cwd(args);
        if execs && meta.mutating && !self.sandbox_enforced {
            // Known read-only commands (`cat .git/HEAD`) only look.
            if let Some(cmd) = args
                .get("command")
                .and_then(|c| c.as_str())
                .filter(|c| self.known_safe(name, c, cwd).is_err())
            {
                if let Some(dir) = self.mentioned_private(cmd) {
                    return Decision::ask(format!(
                        "{name} runs a command that names Cairn's own folder {} (asked in every \
                         mode): {cmd}",
                        dir.display()
                    ));
                }
                let dir = run_dir(&self.workspace, args);
                if let Some(p) = protected_component(&self.workspace, &dir.display().to_string())
                    .or_else(|| mentioned_protected(&self.workspace, &dir, cmd))
                {
                    return Decision::ask(format!(
                        "{name} runs a command that names the protected `{p}` folder (asked in \
                         every mode): {cmd}"
                    ));
                }
            }
        }
        // 2b''. Reading a process's environment or memory (`/proc/$PPID/environ`) never runs
        //       unasked, whatever the mode, sandbox or allowlist.
        if execs {
            // `input` is what `input_command` types into a running shell.
            let typed = ["command", "input"]
                .iter()
                .find_map(|k| args.get(*k).and_then(|c| c.as_str()));
            if let Some(cmd) = typed {
                if let Some(why) = cairn_policy::proc_secrets::reads_process_secrets(cmd) {
                    return Decision::ask(format!(
                        "{name} runs a command that may read another process's secrets ({why}; \
                         asked in every mode): {cmd}"
                    ));
                }
            }
        }
        // 2b'''. A command that names a path a deny rule keeps from being read asks, in
        //       every mode (a literal check, like 2b').
        if execs {
            if let Some(cmd) = args.get("command").and_then(|c| c.as_str()) {
                let dir = run_dir(&self.workspace, args);
                if let Some((path, rule)) = mentioned_denied(&self.read_denials(name), &dir, cmd) {
                    return Decision::ask(format!(
                        "{name} runs a command that names {path}, denied by rule {rule} \
                         (asked in every mode): {cmd}"
                    ));
                }
            }
        }
        // 2c'. Reaching this machine or its local network (a dev server, but also cloud
        //      metadata and admin pages) needs the user, except in auto mode.
        if mode != Mode::Auto && meta.capabilities.iter().any(|c| c == "network") {
            if let Some(url) = args.get("url").and_then(|u| u.as_str()) {
                if let Some(host) = cairn_policy::net::local_address(url) {
                    return Decision::ask(format!(
                        "{name} reaches {host}, an address on this machine or its local \
                         network: {url}"
                    ));
                }
            }
        }
        // 2d. Catastrophic commands (removing `/`, home or the workspace, recursive chmod of
        //     them) ask in every mode, sandboxed or not, and no allowance covers them.
        if let Some(cmd) = args
            .get("command")
            .and_then(|c| c.as_str())
            .filter(|_| execs)
        {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            if let Some(why) = catastrophic(cmd, &self.workspace, home.as_deref()) {
                return Decision::ask(format!(
                    "{name} runs a catastrophic command (asked in every mode): {why}"
                ));
            }
        }
        // 2e. A deny or ask rule that could apply to a part of the command that cannot be
        //     analysed asks (a deny is final: the user decides what cannot be checked).
        if let Some((r, why)) = self
            .rules
            .uncertain(name, args, &self.workspace)
            .filter(|_| rule.is_none_or(|r| r.decision == RuleDecision::Allow))
        {
            return Decision::ask(format!(
                "rule `{}` ({}) may apply: the command {why}",
                r.text, r.source
            ));
        }
        // 2c. An ask rule asks even in auto mode.
        if let Some(r) = rule.filter(|r| r.decision == RuleDecision::Ask) {
            return Decision::ask(format!("rule `{}` ({}) asks for this", r.text, r.source));
        }
        // 3. Read-only and approval-free tools run freely.
        if !meta.mutating || !meta.requires_approval {
            return Decision::allow("read-only or approval-free tool");
        }
        // 4. Auto mode allows side effects inside the workspace.
        if mode == Mode::Auto {
            return Decision::allow("auto mode");
        }
        let command = args
            .get("command")
            .and_then(|c| c.as_str())
            .filter(|_| execs);
        // 5. Shell policy.
        let mut not_safe = None;
        if let Some(cmd) = command {
            match self.shell_policy {
                ShellPolicy::All => return Decision::allow("shell policy `all`"),
                ShellPolicy::Sandbox if self.sandbox_enforced => {
                    return Decision::allow("runs inside the OS sandbox");
                }
                ShellPolicy::Workspace => match self.known_safe(name, cmd, cwd) {
                    Ok(()) => return Decision::allow("known-safe read-only command"),
                    Err(why) => not_safe = Some(why),
                },
                _ => {}
            }
        }
        // 6. Allow rules and command allowlists.
        if let Some(r) = rule.filter(|r| r.decision == RuleDecision::Allow) {
            return Decision::allow(format!("allowed by rule `{}` ({})", r.text, r.source));
        }
        if let Some(cmd) = command {
            if let Some(prefix) = self
                .allowed_commands
                .iter()
                .find(|p| command_matches_prefix(cmd, p))
            {
                return Decision::allow(format!("command allowlisted (`{prefix}`)"));
            }
            if let Some(program) = simple_command_program(cmd).filter(|_| !risky_after(cmd, 1)) {
                if self.state.allow_commands.contains(&program) {
                    return Decision::allow(format!("`{program}` allowed for this session"));
                }
            }
        }
        // 7. Session tool allowlist.
        if self.state.allow_tools.contains(name) {
            return Decision::allow(format!("{name} allowed for this session"));
        }
        // 8. Ask.
        let what = match (command, path) {
            (Some(c), _) => match ShellAnalysis::of(c) {
                ShellAnalysis::Opaque(why) => format!("runs a command that {why}: {c}"),
                ShellAnalysis::Compound(_) => format!("runs several commands: {c}"),
                ShellAnalysis::Simple(_) => format!("runs a command: {c}"),
            },
            (None, _) if writes && !targets.is_empty() => format!("writes {}", targets.join(", ")),
            _ => "has side effects".to_string(),
        };
        match not_safe {
            // Why the workspace policy did not let it through (e.g. it reads outside).
            Some(
                why @ (NotKnownSafe::ReadsOutside(_)
                | NotKnownSafe::FollowsLinks(_)
                | NotKnownSafe::WorkspaceCode(_)
                | NotKnownSafe::DeniedPath(_)
                | NotKnownSafe::NotReadOnly(_)),
            ) => Decision::ask(format!("{name} {what} ({why})")),
            _ => Decision::ask(format!("{name} {what}")),
        }
    }
}

impl PermissionEngine {
    /// Whether `path` (as written or where its links lead) is inside a private folder.
    fn in_private_dir(&self, path: &str) -> bool {
        let lexical = normalize(&self.workspace, path);
        let real = physical_path(&self.workspace, path);
        self.private_dirs.iter().any(|dir| {
            let canon = canonical_workspace(dir);
            [lexical.as_ref(), real.as_ref()]
                .into_iter()
                .flatten()
                .any(|p| p.starts_with(dir) || p.starts_with(&canon))
        })
    }

    /// The private folder a command line names as a path, if any.
    fn mentioned_private(&self, command: &str) -> Option<&Path> {
        let tokens = command
            .split(|c: char| c.is_whitespace() || ";&|<>()'\"`=,{}".contains(c))
            .filter(|t| !t.is_empty() && !t.starts_with('-'));
        for token in tokens {
            if self.in_private_dir(token) {
                let lexical = normalize(&self.workspace, token);
                return self
                    .private_dirs
                    .iter()
                    .find(|d| lexical.as_ref().is_some_and(|p| p.starts_with(d)))
                    .or(self.private_dirs.first())
                    .map(PathBuf::as_path);
            }
        }
        None
    }

    /// Whether a write to `path` stays inside the workspace or a writable granted directory,
    /// both lexically and physically (symlinks followed).
    fn may_write_at(&self, path: &str) -> bool {
        let real = physical_path(&self.workspace, path);
        let inside = |dir: &Path| {
            lexically_inside(dir, path)
                && real
                    .as_ref()
                    .is_some_and(|r| r.starts_with(canonical_workspace(dir)) || r.starts_with(dir))
        };
        inside(&self.workspace)
            || self
                .state
                .granted_dirs
                .iter()
                .any(|(dir, w)| *w && inside(Path::new(dir)))
    }
}

/// Whether `command` is more than one plain simple command.
pub fn has_shell_operators(command: &str) -> bool {
    !matches!(ShellAnalysis::of(command), ShellAnalysis::Simple(_))
}

/// Word-boundary prefix match on one plain simple command (never a compound or expanding one).
pub fn command_matches_prefix(command: &str, prefix: &str) -> bool {
    let ShellAnalysis::Simple(words) = ShellAnalysis::of(command) else {
        return false;
    };
    let ShellAnalysis::Simple(prefix_words) = ShellAnalysis::of(prefix) else {
        return false;
    };
    words.len() >= prefix_words.len()
        && words[..prefix_words.len()] == prefix_words[..]
        && risky_option(&words, prefix_words.len()).is_none()
}

/// Whether a plain command has an option past its first `from` words that writes, runs a
/// program or changes configuration (no allowance of those words covers it).
fn risky_after(command: &str, from: usize) -> bool {
    match ShellAnalysis::of(command) {
        ShellAnalysis::Simple(words) => risky_option(&words, from).is_some(),
        _ => true,
    }
}

/// What an "always allow" answer to a call of `name` with `args` may grant: the program of a
/// plain simple command for shell tools (nothing for a command with operators: no allowance
/// covers those), else the tool.
pub fn always_allow(name: &str, args: &serde_json::Value) -> Option<cairn_protocol::AlwaysAllow> {
    // Without the workspace, judged as if run in `/`: `.` and `*` count as the workspace.
    always_allow_in(name, args, Path::new("/"))
}

/// [`always_allow`] for a call in `workspace`: a catastrophic command (removing `/`, home,
/// the workspace or a folder above it) or a call outside the sandbox is never offered one.
pub fn always_allow_in(
    name: &str,
    args: &serde_json::Value,
    workspace: &Path,
) -> Option<cairn_protocol::AlwaysAllow> {
    if wants_unsandboxed(args) {
        return None;
    }
    match args.get("command") {
        Some(command) => command
            .as_str()
            .filter(|c| {
                let home = std::env::var_os("HOME").map(PathBuf::from);
                catastrophic(c, workspace, home.as_deref()).is_none()
            })
            .and_then(simple_command_program)
            .map(|program| cairn_protocol::AlwaysAllow::Command { program }),
        None => Some(cairn_protocol::AlwaysAllow::Tool {
            name: name.to_string(),
        }),
    }
}

/// Whether a shell call asks to run outside the OS sandbox (`"sandbox": false`).
pub fn wants_unsandboxed(args: &serde_json::Value) -> bool {
    match args.get("sandbox") {
        Some(serde_json::Value::Bool(b)) => !b,
        Some(serde_json::Value::String(s)) => s.trim().eq_ignore_ascii_case("false"),
        _ => false,
    }
}

/// The program name of one plain simple command, for session command allowances.
pub fn simple_command_program(command: &str) -> Option<String> {
    match ShellAnalysis::of(command) {
        ShellAnalysis::Simple(words) => words.into_iter().next().filter(|p| !p.contains('/')),
        _ => None,
    }
}

/// Whether `path` (relative to `workspace` or absolute) stays inside it, by lexical normalisation.
pub fn lexically_inside(workspace: &Path, path: &str) -> bool {
    normalize(workspace, path).is_some_and(|p| p.starts_with(workspace))
}

fn normalize(workspace: &Path, path: &str) -> Option<PathBuf> {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        workspace.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// The protected folder a workspace path falls in (case-insensitively, so `.GIT` counts), as
/// written or where its symlinks lead.
fn protected_component(workspace: &Path, path: &str) -> Option<&'static str> {
    let find = |rel: &Path| {
        rel.components().find_map(|c| match c {
            Component::Normal(s) => {
                let s = s.to_string_lossy().to_lowercase();
                PROTECTED.iter().copied().find(|p| s == *p)
            }
            _ => None,
        })
    };
    let lexical =
        normalize(workspace, path).and_then(|p| p.strip_prefix(workspace).ok().and_then(&find));
    lexical.or_else(|| {
        let real = physical_path(workspace, path)?;
        let rel = real
            .strip_prefix(canonical_workspace(workspace))
            .or_else(|_| real.strip_prefix(workspace))
            .ok()?;
        find(rel)
    })
}

/// The protected folder a command line run in `dir` names as a path (`.git/hooks/x`,
/// `./.agent`, a symlink into one), if any.
fn mentioned_protected(workspace: &Path, dir: &Path, command: &str) -> Option<&'static str> {
    command
        .split(|c: char| c.is_whitespace() || ";&|<>()'\"`=,{}".contains(c))
        .filter(|t| !t.is_empty() && !t.starts_with('-'))
        .find_map(|token| protected_component(workspace, &dir.join(token).display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::RiskLevel;
    use serde_json::json;

    fn write_meta() -> ToolMeta {
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
    }
    fn shell_meta() -> ToolMeta {
        ToolMeta::mutating("shell", RiskLevel::High, &["exec"])
    }

    #[test]
    fn fetching_a_local_address_asks_except_in_auto_mode() {
        let web = ToolMeta {
            capabilities: vec!["network".into(), "read".into()],
            ..ToolMeta::read_only("web")
        };
        let ws = std::env::temp_dir().join("cairn-perm-net");
        let fetch =
            |p: &PermissionEngine, url: &str| p.evaluate("web_fetch", &web, &json!({ "url": url }));
        let mut p = PermissionEngine::new(ws, Mode::Interactive, vec![]);
        let d = fetch(&p, "http://169.254.169.254/latest/meta-data/");
        assert!(d.needs_user && d.reason.contains("local network"), "{d:?}");
        assert!(fetch(&p, "http://localhost:3000/").needs_user);
        let d = fetch(&p, "https://docs.rs/serde");
        assert!(d.allowed && !d.needs_user, "{d:?}");
        p.set_mode(Mode::Plan);
        assert!(
            fetch(&p, "http://127.0.0.1/").needs_user,
            "read-only modes ask too"
        );
        p.set_mode(Mode::Auto);
        assert!(
            !fetch(&p, "http://127.0.0.1/").needs_user,
            "auto mode allows it"
        );
    }

    #[test]
    fn commands_naming_a_protected_folder_ask_in_every_mode() {
        let ws = std::env::temp_dir().join("cairn-perm-protected");
        let mut p = PermissionEngine::new(ws.clone(), Mode::Auto, vec![]);
        p.set_shell_policy(ShellPolicy::All, false);
        let shell = |p: &PermissionEngine, c: &str| {
            p.evaluate("run_shell", &shell_meta(), &json!({ "command": c }))
        };
        for c in [
            "echo evil > .git/hooks/post-checkout",
            "cp x ./.git/hooks/pre-commit",
            "sh -c 'cat hook >> .git/config'",
            "rm -rf .agent",
            "mv a .cairn/b",
        ] {
            let d = shell(&p, c);
            assert!(d.needs_user, "{c}: {d:?}");
            assert!(d.reason.contains("protected"), "{c}: {}", d.reason);
        }
        for c in [
            "git status",
            "cat .gitignore",
            "cat .git/HEAD",
            "ls src/.github",
            "echo git",
            "cargo test --all",
        ] {
            let d = shell(&p, c);
            assert!(!d.needs_user, "{c}: {d:?}");
        }
        // The sandbox keeps protected folders read-only: no need to ask there.
        p.set_shell_policy(ShellPolicy::All, true);
        assert!(!shell(&p, "echo x > .git/hooks/x").needs_user);
    }

    #[test]
    fn always_allow_offers_a_program_a_tool_or_nothing() {
        use cairn_protocol::AlwaysAllow;
        let command = |c: &str| always_allow("run_shell", &json!({ "command": c }));
        assert_eq!(
            command("cargo test --all"),
            Some(AlwaysAllow::Command {
                program: "cargo".into()
            })
        );
        for compound in [
            "echo hi > out.txt",
            "ls && rm -rf x",
            "cat $(ls)",
            "./script.sh",
            "",
        ] {
            assert_eq!(command(compound), None, "{compound}");
        }
        assert_eq!(always_allow("run_shell", &json!({ "command": 7 })), None);
        for catastrophic in [
            "rm -rf /",
            "rm -rf ~",
            "sudo rm -fr $HOME",
            "rm -rf .",
            "chmod -R 777 /",
        ] {
            assert_eq!(command(catastrophic), None, "{catastrophic}");
        }
        assert_eq!(
            always_allow("write_file", &json!({"path": "a"})),
            Some(AlwaysAllow::Tool {
                name: "write_file".into()
            })
        );
    }

    #[test]
    fn running_outside_the_sandbox_asks_in_every_mode_and_is_never_remembered() {
        let ws = std::env::temp_dir().join("cairn-perm-unsandboxed");
        let mut p = PermissionEngine::new(ws, Mode::Auto, vec!["git commit".into()]);
        p.set_shell_policy(ShellPolicy::All, true);
        p.allow_tool_for_session("run_shell");
        p.allow_command_for_session("git commit");
        let args = json!({"command": "git commit -m x", "sandbox": false});
        for mode in [Mode::Auto, Mode::Interactive] {
            p.set_mode(mode);
            let d = p.evaluate("run_shell", &shell_meta(), &args);
            assert!(
                d.needs_user && d.reason.contains("outside the sandbox"),
                "{d:?}"
            );
            let sandboxed = json!({"command": "git commit -m x"});
            assert!(
                !p.evaluate("run_shell", &shell_meta(), &sandboxed)
                    .needs_user
            );
        }
        for mode in [Mode::Plan, Mode::Discuss] {
            p.set_mode(mode);
            let d = p.evaluate("run_shell", &shell_meta(), &args);
            assert!(!d.allowed && !d.needs_user, "{d:?}");
        }
        assert_eq!(always_allow("run_shell", &args), None);
        let as_text = json!({"command": "ls", "sandbox": "false"});
        assert_eq!(always_allow("exec_command", &as_text), None);
        // Without a sandbox the argument changes nothing.
        p.set_mode(Mode::Auto);
        p.set_shell_policy(ShellPolicy::Approve, false);
        assert!(!p.evaluate("run_shell", &shell_meta(), &args).needs_user);
    }

    #[test]
    fn prefix_matching_respects_word_boundaries_and_operators() {
        assert!(command_matches_prefix("ls -la", "ls"));
        assert!(!command_matches_prefix("lsof", "ls"));
        assert!(!command_matches_prefix("ls; rm -rf /", "ls"));
        assert!(!command_matches_prefix("ls && rm x", "ls"));
        assert!(!command_matches_prefix("ls $(rm x)", "ls"));
        assert!(!command_matches_prefix("ls `rm x`", "ls"));
        assert!(!command_matches_prefix("ls > f", "ls"));
        assert!(command_matches_prefix("git status --short", "git status"));
        assert!(!command_matches_prefix("git stash", "git status"));
        assert!(!command_matches_prefix("ls\nrm x", "ls"));
        assert!(command_matches_prefix("'git' status", "git status"));
    }

    #[test]
    fn decision_order() {
        let ws = PathBuf::from("/w");
        let mut p = PermissionEngine::new(ws.clone(), Mode::Interactive, vec!["cargo test".into()]);
        let read = ToolMeta::read_only("file");
        assert!(
            p.evaluate("read_file", &read, &json!({"path": "a"}))
                .allowed
        );
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "a"}));
        assert!(d.needs_user);
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "../x"}));
        assert!(!d.allowed && !d.needs_user);
        let d = p.evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "cargo test -p x"}),
        );
        assert!(d.allowed && !d.needs_user);
        let d = p.evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "cargo test; rm -rf ~"}),
        );
        assert!(d.needs_user);
        p.set_mode(Mode::Plan);
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "a"}));
        assert!(!d.allowed && !d.needs_user);
        assert!(
            p.evaluate("read_file", &read, &json!({"path": "a"}))
                .allowed
        );
        p.set_mode(Mode::Auto);
        assert!(
            p.evaluate("write_file", &write_meta(), &json!({"path": "a"}))
                .allowed
        );
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "/etc/passwd"}));
        assert!(!d.allowed, "auto mode never writes outside the workspace");
        let d = p.evaluate(
            "write_file",
            &write_meta(),
            &json!({"path": ".git/hooks/pre-commit"}),
        );
        assert!(d.needs_user, "protected paths ask even in auto mode");
        let d = p.evaluate(
            "write_file",
            &write_meta(),
            &json!({"path": "sub/.GIT/config"}),
        );
        assert!(d.needs_user);
    }

    #[test]
    fn session_allowances() {
        let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
        p.allow_tool_for_session("write_file");
        assert!(
            p.evaluate("write_file", &write_meta(), &json!({"path": "a"}))
                .allowed
        );
        p.allow_command_for_session("npm test");
        assert!(
            p.evaluate(
                "run_shell",
                &shell_meta(),
                &json!({"command": "npm run build"})
            )
            .allowed
        );
        assert!(
            p.evaluate(
                "run_shell",
                &shell_meta(),
                &json!({"command": "npm x | sh"})
            )
            .needs_user
        );
        p.allow_command_for_session("rm -rf / ; ls");
        assert_eq!(p.state().allow_commands.len(), 1);
    }

    #[test]
    fn workspace_shell_policy_passes_only_known_safe_commands() {
        let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
        p.set_shell_policy(ShellPolicy::Workspace, false);
        let ask = |p: &PermissionEngine, c: &str| {
            p.evaluate("run_shell", &shell_meta(), &json!({"command": c}))
                .needs_user
        };
        assert!(!ask(&p, "git status"));
        assert!(!ask(&p, "cat a | wc -l"));
        assert!(ask(&p, "git status && rm x"));
        assert!(ask(&p, "find . -delete"));
        assert!(ask(&p, "cat a > b"));
        // The ask says which part is not read-only.
        let reason = p
            .evaluate(
                "run_shell",
                &shell_meta(),
                &json!({"command": "sort x | uniq -c"}),
            )
            .reason;
        assert!(
            reason.contains("`uniq` is not a known read-only command"),
            "{reason}"
        );
        p.set_shell_policy(ShellPolicy::Sandbox, true);
        assert!(!ask(&p, "make"));
        p.set_shell_policy(ShellPolicy::Sandbox, false);
        assert!(ask(&p, "make"));
        // `workspace` means read-only commands, with or without the sandbox.
        p.set_shell_policy(ShellPolicy::Workspace, true);
        assert!(ask(&p, "rm -rf src README.md"));
        assert!(!ask(&p, "git status"));
        assert!(!ask(&p, "bash -lc 'git status'"));
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn symlinks_and_patch_targets_cannot_carry_a_write_past_the_boundary() {
        use std::os::unix::fs::symlink;
        let dir = std::env::temp_dir().join(format!("cairn-perm-{}", std::process::id()));
        let ws = dir.join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        let ws = std::fs::canonicalize(&ws).unwrap();
        symlink(".git/hooks", ws.join("h")).unwrap();
        symlink("../out", ws.join("o")).unwrap();
        let p = PermissionEngine::new(ws.clone(), Mode::Auto, vec![]);
        let write = |path: &str| p.evaluate("write_file", &write_meta(), &json!({"path": path}));
        assert!(
            write("h/pre-commit").needs_user,
            "a symlink into .git still asks"
        );
        let d = write("o/new.txt");
        assert!(
            !d.allowed && !d.needs_user,
            "a symlink out of the workspace is refused"
        );
        assert!(write("plain.txt").allowed);
        let patch = |targets: &[&str]| {
            p.evaluate_call(
                "apply_patch",
                &write_meta(),
                &json!({"patch": "…"}),
                Some(targets.iter().map(|t| t.to_string()).collect()),
            )
        };
        assert!(patch(&["a.txt", ".agent/mcp.json"]).needs_user);
        let d = patch(&["a.txt", "../out/x"]);
        assert!(!d.allowed && !d.needs_user && d.reason.contains("../out/x"));
        assert!(patch(&["a.txt", "b.txt"]).allowed);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn lexical_containment() {
        let ws = Path::new("/w/proj");
        assert!(lexically_inside(ws, "a/b"));
        assert!(lexically_inside(ws, "./a/../b"));
        assert!(lexically_inside(ws, "/w/proj/x"));
        assert!(!lexically_inside(ws, "../proj2/x"));
        assert!(!lexically_inside(ws, "/w/projX"));
        assert!(!lexically_inside(ws, "a/../../x"));
    }
}
