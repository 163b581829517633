//! The named steps of [`super::open_session`], in the order it takes them: the restored
//! session (locked), the workspace, the roles, the model and provider, the permissions, the
//! sandbox's line for the prompt, the record to save, and the history handed to the engine.

use std::path::{Path, PathBuf};

use cairn_engine::agents::{AgentDef, AgentRegistry};
use cairn_engine::{CommandWrapper, PermissionState, SessionBuilder};

use super::defaults::{agent_type_from_env, resolve_model, resolve_workspace};
use super::RunOptions;
use crate::agents;
use crate::error::RuntimeError;
use crate::store;
use crate::store::{now, SavedSession, SessionStore};

/// The session to continue, if the options name one: loaded (rebuilt from its event log when
/// damaged) under its lock.
pub(super) struct Restored {
    /// The saved session.
    pub saved: Option<SavedSession>,
    /// Held from before loading until the session is dropped: no other process writes it.
    pub lock: Option<store::lock::SessionLock>,
    /// Why the user must be told (rebuilt from its event log).
    pub notice: Option<String>,
}

/// Step 1: loads the session `opts` continues, locked.
pub(super) fn restore(store: &SessionStore, opts: &RunOptions) -> Result<Restored, RuntimeError> {
    let Some(id) = &opts.session_id else {
        return Ok(Restored {
            saved: None,
            lock: None,
            notice: None,
        });
    };
    let lock = store.lock(id)?;
    let (saved, notice) = store.load_or_rebuild(id)?;
    Ok(Restored {
        saved: Some(saved),
        lock: Some(lock),
        notice,
    })
}

/// Step 2: the workspace: the one given (which must be the restored session's), else the
/// restored session's, else the current dir; checked by [`resolve_workspace`].
pub(super) fn workspace(
    opts: &RunOptions,
    restored: Option<&SavedSession>,
) -> Result<PathBuf, RuntimeError> {
    match (&opts.workspace, restored) {
        (None, Some(r)) if r.workspace.is_empty() => Err(RuntimeError::Config(format!(
            "session {} was rebuilt from its event log, but nothing records its \
             workspace: pass --workspace DIR",
            r.session_id
        ))),
        // A rebuilt session whose workspace nothing recorded takes the one given.
        (Some(w), Some(r)) if r.workspace.is_empty() => resolve_workspace(w),
        (Some(w), Some(r)) => {
            let w = resolve_workspace(w)?;
            if Path::new(&r.workspace) != w {
                return Err(RuntimeError::Config(format!(
                    "session {} belongs to workspace {}, not {}",
                    r.session_id,
                    r.workspace,
                    w.display()
                )));
            }
            Ok(w)
        }
        (Some(w), None) => resolve_workspace(w),
        (None, Some(r)) => resolve_workspace(Path::new(&r.workspace)),
        (None, None) => {
            let cwd = std::env::current_dir()
                .map_err(|e| RuntimeError::Config(format!("cannot read the current dir: {e}")))?;
            resolve_workspace(&cwd)
        }
    }
}

/// Step 3: the role table (built-ins, `agents.json`, the project's roles) switched to the
/// session's role. A damaged roles file only matters to a run that asks for a role.
pub(super) fn roles(
    state_dir: &Path,
    workspace: &Path,
    opts: &RunOptions,
) -> Result<(AgentRegistry, AgentDef), RuntimeError> {
    let mut agents = match agents::load_agents(state_dir) {
        Ok(a) => a,
        Err(e) if opts.agent.is_none() => {
            tracing::warn!("{e}; using the built-in roles");
            AgentRegistry::new()
        }
        Err(e) => return Err(e),
    };
    agents::add_project_agents_in(
        &mut agents,
        workspace,
        opts.provider.as_deref(),
        &opts.config,
    );
    let role_name = opts.agent.clone().unwrap_or_else(|| {
        match agent_type_from_env() {
            cairn_engine::prompt::AgentType::Code => "code",
            cairn_engine::prompt::AgentType::Cowork => "cowork",
        }
        .to_string()
    });
    let role = agents
        .switch(role_name.trim())
        .map_err(|e| RuntimeError::Config(e.to_string()))?
        .clone();
    Ok((agents, role))
}

/// Step 4: the model and provider: the options', else the role's, else the restored
/// session's (the model also from the environment; the provider defaults to `openai`).
pub(super) fn model_and_provider(
    opts: &RunOptions,
    role: &AgentDef,
    restored: Option<&SavedSession>,
) -> Result<(String, String), RuntimeError> {
    let role_model = role.model.clone().filter(|_| opts.model.is_none());
    let model = resolve_model(opts.model.clone().or(role_model.clone()))
        .or_else(|| restored.map(|r| r.model.clone()))
        .ok_or_else(|| {
            RuntimeError::Config(
                "no model: pass --model, or set CAIRN_MODEL or OPENAI_MODEL".into(),
            )
        })?;
    let provider = opts
        .provider
        .clone()
        .or_else(|| role_model.as_ref().and(role.provider.clone()))
        .or_else(|| {
            restored
                .map(|r| r.provider.clone())
                .filter(|p| !p.is_empty())
        })
        .or_else(|| crate::user_config::var("CAIRN_PROVIDER"))
        .unwrap_or_else(|| "openai".to_string());
    Ok((model, provider))
}

/// Step 5: the permission state: the restored one when it carries Cairn's seal, with the
/// options' mode.
pub(super) fn permissions(
    store: &SessionStore,
    restored: Option<&SavedSession>,
    opts: &RunOptions,
) -> Result<PermissionState, RuntimeError> {
    let mut permissions = match restored {
        Some(r) => {
            let (p, dropped) =
                store::permission_seal::restored_permissions(r, &store.session_dir(&r.session_id)?);
            if let Some(why) = dropped {
                tracing::warn!("{why}");
            }
            p
        }
        None => PermissionState::default(),
    };
    if let Some(mode) = opts.mode {
        permissions.mode = mode;
    }
    Ok(permissions)
}

/// Step 6: what the system prompt says of where commands run.
pub(super) fn sandbox_line(wrapper: Option<&dyn CommandWrapper>) -> String {
    match wrapper {
        Some(w) => format!(
            "commands run inside {}. A command that fails because of the sandbox (read-only \
             file system, permission denied outside the workspace) may be retried with \
             `sandbox: false`, which the user must approve",
            w.describe()
        ),
        None => "commands are not sandboxed; each side effect is approved per the permission mode"
            .to_string(),
    }
}

/// What a new session's record starts from.
pub(super) struct NewRecord<'a> {
    /// Its id.
    pub session_id: &'a str,
    /// Its workspace.
    pub workspace: &'a Path,
    /// Its model.
    pub model: &'a str,
    /// Its provider.
    pub provider: &'a str,
}

/// Step 7: the record saved next: the restored one with only the permissions this run really
/// has, or a new one.
pub(super) fn record(
    restored: Option<&SavedSession>,
    new: NewRecord<'_>,
    permissions: &PermissionState,
    opts: &RunOptions,
) -> SavedSession {
    if let Some(r) = restored {
        return SavedSession {
            permissions: permissions.clone(),
            ..r.clone()
        };
    }
    SavedSession {
        permissions: permissions.clone(),
        worktree: opts.worktree.as_ref().map(|w| w.name.clone()),
        ..SavedSession::new(
            new.session_id,
            &new.workspace.display().to_string(),
            new.model,
            new.provider,
            &now(),
        )
    }
}

/// Step 8: the restored history handed to the engine. An explicit role replaces the
/// restored system prompt; calls left open (an approval pending when the process died) stay
/// open for `Session::resume`, and those that had started are closed, never run twice.
pub(super) fn with_history(
    mut builder: SessionBuilder,
    restored: SavedSession,
    store: &SessionStore,
    role_prompt: Option<&str>,
) -> Result<SessionBuilder, RuntimeError> {
    let mut messages = restored.messages;
    if let Some(prompt) = role_prompt {
        if let Some(first @ cairn_protocol::Message::System { .. }) = messages.first_mut() {
            *first = cairn_protocol::Message::system(prompt.to_string());
        }
    }
    if cairn_engine::resume::has_pending_calls(&messages) {
        builder = builder.resume_pending(store.started_calls(&restored.session_id)?);
    }
    Ok(builder
        .messages(messages)
        .turns(restored.turns)
        .todos(restored.todos)
        .turn_marks(restored.turn_marks))
}
