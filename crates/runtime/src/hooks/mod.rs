//! The user's hooks, in Claude Code's schema ([`config`]), run at the engine's gate points
//! and around worktree creation and removal ([`run::CommandGate`]). The user's own file runs
//! as it is; the project's `.agent/hooks.json` runs a repository's programs, so it stays off
//! until the user trusts that exact file for that repository (the workspace trust shared
//! with project MCP servers, [`crate::mcp_trust`]); any change needs a new trust.

pub mod config;
pub mod run;
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
            config::project_path(workspace).display(),
            workspace.display()
        ))
    }

    /// The project's hooks held back, as a typed fact, if any.
    pub fn skipped(&self, workspace: &Path) -> Option<crate::skipped::SkippedView> {
        (!self.held.is_empty()).then(|| crate::skipped::SkippedView {
            kind: crate::skipped::SkippedKind::Hooks,
            name: self.held.len().to_string(),
            file: config::project_path(workspace).display().to_string(),
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
    let mut out = LoadedHooks::default();
    if let Some(user) = config::user_path() {
        let (defs, warnings, _) = config::load(&user, HookSource::User(user.clone()));
        out.active.extend(defs);
        out.warnings.extend(warnings);
    }
    let project = config::project_path(workspace);
    let (defs, warnings, text) = config::load(&project, HookSource::Project(project.clone()));
    out.warnings.extend(warnings);
    if let Some(text) = text {
        if crate::mcp_trust::entry_trusted(workspace, TRUST_ENTRY, &fingerprint(&text)) {
            out.active.extend(defs);
        } else {
            out.held.extend(defs);
        }
    }
    out
}

/// The digest the trust records of a hook file's content.
pub fn fingerprint(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Trusts the project's hook file as it is now; `Ok(false)` when there is none.
pub fn trust(workspace: &Path) -> Result<bool, String> {
    let path = config::project_path(workspace);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    crate::mcp_trust::trust_entry(workspace, TRUST_ENTRY, &fingerprint(&text))?;
    Ok(true)
}
