//! The user's hooks, in Claude Code's schema ([`config`]), run at the engine's gate points
//! and around worktree creation and removal ([`run::CommandGate`]). The user's own file runs
//! as it is; the project's `.agent/hooks.json` runs a repository's programs, so it stays off
//! until the user trusts that exact file for that repository (the workspace trust shared
//! with project MCP servers, [`crate::mcp_trust`]); any change needs a new trust.

pub mod config;
pub mod run;
pub mod transcript;
pub mod vocabulary;

use std::path::Path;
use std::sync::Arc;

pub use config::{HookDef, HookSource};
pub use run::CommandGate;

/// The trust entry of a project's hook file (next to its MCP servers').
pub const TRUST_ENTRY: &str = "(hooks)";

/// The hooks a session in a workspace gets.
#[derive(Debug, Default)]
pub struct LoadedHooks {
    /// Hooks that run: the user's, and the project's once trusted.
    pub active: Vec<HookDef>,
    /// The project's hooks held back for lack of trust.
    pub held: Vec<HookDef>,
    /// Problems with the files (each left out only what it concerns).
    pub warnings: Vec<String>,
}

impl LoadedHooks {
    /// What the user is told once per run about hooks that do not run, if any.
    pub fn notice(&self, workspace: &Path) -> Option<String> {
        if self.held.is_empty() {
            return None;
        }
        Some(format!(
            "{} project hook(s) in {} are off: the repository defines them, so they run only \
             once you check and trust them (`cairn hooks trust -w {}`, or Trust in the app's \
             Settings)",
            self.held.len(),
            held_files(&self.held, workspace),
            workspace.display()
        ))
    }

    /// The project's hooks held back, as a typed fact, if any.
    pub fn skipped(&self, workspace: &Path) -> Option<crate::skipped::SkippedView> {
        (!self.held.is_empty()).then(|| crate::skipped::SkippedView {
            kind: crate::skipped::SkippedKind::Hooks,
            name: self.held.len().to_string(),
            file: held_files(&self.held, workspace),
        })
    }

    /// A gate running the active hooks for a session, `None` without any.
    pub fn gate(&self, session_id: &str, cwd: &Path) -> Option<Arc<CommandGate>> {
        self.gate_in(session_id, cwd, None)
    }

    /// [`Self::gate`] with the project's hooks run inside `sandbox` (the session's).
    pub fn gate_in(
        &self,
        session_id: &str,
        cwd: &Path,
        sandbox: Option<Arc<dyn cairn_engine::CommandWrapper>>,
    ) -> Option<Arc<CommandGate>> {
        (!self.active.is_empty()).then(|| {
            Arc::new(
                CommandGate::new(
                    self.active.clone(),
                    session_id.to_string(),
                    cwd.to_path_buf(),
                )
                .with_sandbox(sandbox),
            )
        })
    }
}

/// The hooks of `workspace`: the user's file, then the project's (active only when its
/// current content is trusted for this repository).
pub fn load(workspace: &Path) -> LoadedHooks {
    load_in(workspace, &crate::config_scope::ConfigScope::default())
}

/// [`load`] within `scope`: the user's files only when its user config applies, the
/// project's as its project trust says (not read at all under `Never`).
pub fn load_in(workspace: &Path, scope: &crate::config_scope::ConfigScope) -> LoadedHooks {
    let mut out = LoadedHooks::default();
    if let Some(user) = scope.user(config::user_path()) {
        let (defs, warnings, _) = config::load(&user, HookSource::User(user.clone()));
        out.active.extend(defs);
        out.warnings.extend(warnings);
    }
    // The user's Claude Code settings, once opted in: their hooks are the user's own.
    if let Some(dir) = scope.claude_user_dir() {
        let path = dir.join("settings.json");
        let (defs, warnings, text) = config::load(&path, HookSource::User(path.clone()));
        out.active.extend(defs);
        out.warnings.extend(warnings);
        if let Some(text) = text {
            out.warnings.extend(config::not_honoured(&path, &text));
        }
    }
    if !scope.project_files() {
        return out;
    }
    let mut defs = Vec::new();
    let mut texts = Vec::new();
    for path in config::project_paths(workspace) {
        let read = crate::project_file::read(workspace, &path);
        let (d, warnings, text) = config::load_read(&path, HookSource::Project(path.clone()), read);
        out.warnings.extend(warnings);
        if let Some(text) = text {
            out.warnings.extend(config::not_honoured(&path, &text));
            defs.extend(d);
            texts.push((path, text));
        }
    }
    texts.extend(crate::commands::runnable_project_files(workspace));
    if !texts.is_empty() {
        let digest = project_fingerprint(workspace, &texts);
        if scope
            .project_trusted(|| crate::mcp_trust::entry_trusted(workspace, TRUST_ENTRY, &digest))
        {
            out.active.extend(defs);
        } else {
            out.held.extend(defs);
        }
    }
    out
}

/// The project's hook files that exist, with their text, then its command files that run
/// something or grant tools ([`crate::commands::runnable_project_files`]).
fn project_texts(workspace: &Path) -> Result<Vec<(std::path::PathBuf, String)>, String> {
    let mut texts = Vec::new();
    for path in config::project_paths(workspace) {
        match crate::project_file::read(workspace, &path) {
            Ok(t) => texts.push((path, t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("reading {}: {e}", path.display())),
        }
    }
    texts.extend(crate::commands::runnable_project_files(workspace));
    Ok(texts)
}

/// The project files the workspace trust covers as they are now (hook and settings files,
/// command files that run something or grant tools); empty when there is none.
pub fn covered_files(workspace: &Path) -> Vec<std::path::PathBuf> {
    project_texts(workspace)
        .map(|texts| texts.into_iter().map(|(p, _)| p).collect())
        .unwrap_or_default()
}

/// Whether the workspace trust covers the project's hook files (Claude Code's settings files
/// among them) and its command files with `!` lines or `allowed-tools`, as they are now.
pub fn project_files_trusted(workspace: &Path) -> bool {
    match project_texts(workspace) {
        Ok(texts) if !texts.is_empty() => crate::mcp_trust::entry_trusted(
            workspace,
            TRUST_ENTRY,
            &project_fingerprint(workspace, &texts),
        ),
        _ => false,
    }
}

/// The files the held hooks come from, for the user.
fn held_files(held: &[HookDef], workspace: &Path) -> String {
    let mut files: Vec<String> = Vec::new();
    for d in held {
        let f = d.source.path().display().to_string();
        if !files.contains(&f) {
            files.push(f);
        }
    }
    if files.is_empty() {
        config::project_path(workspace).display().to_string()
    } else {
        files.join(", ")
    }
}

/// The digest the trust records of the project's hook files as they are now: Cairn's own
/// file alone as before (so its trust stays), with Claude Code's settings files (named) after
/// it when they exist; an edit of any of them withdraws the trust.
fn project_fingerprint(workspace: &Path, texts: &[(std::path::PathBuf, String)]) -> String {
    let own = config::project_path(workspace);
    let mut joined = String::new();
    for (path, text) in texts {
        if *path == own {
            joined.insert_str(0, text);
        } else {
            let rel = path.strip_prefix(workspace).unwrap_or(path);
            joined.push_str(&format!("\0{}\0{text}", rel.display()));
        }
    }
    fingerprint(&joined)
}

/// The digest the trust records of a hook file's content.
pub fn fingerprint(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Trusts the project's hook files (`.agent/hooks.json`, `.claude/settings.json`,
/// `.claude/settings.local.json`) and its command files that run something or grant tools,
/// as they are now; `Ok(false)` when there is none.
pub fn trust(workspace: &Path) -> Result<bool, String> {
    let texts = project_texts(workspace)?;
    if texts.is_empty() {
        return Ok(false);
    }
    let digest = project_fingerprint(workspace, &texts);
    crate::mcp_trust::trust_entry(workspace, TRUST_ENTRY, &digest)?;
    Ok(true)
}
