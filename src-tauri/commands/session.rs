//! Session commands: start, resume, rename and delete sessions; mode; the answers the
//! engine waits for (approvals, questions, plans, directories); permission rules.

use std::path::Path;
use std::sync::Arc;

use cairn_protocol::{ApprovalDecision, DirectoryGrant, Message, Mode, PlanReview, UserAnswer};
use tauri::{Runtime, State, Window};

use super::current;
use crate::dialogs::CardRect;
use crate::error::{IpcError, IpcResult};
use crate::runtime::{OpenRequest, SessionRuntime};
use crate::state::AppState;
use crate::types::{PermissionRules, SessionStatus, SessionView};
use cairn_runtime::llm_setup::ProviderChoice;

pub(crate) fn open_runtime(
    state: &AppState,
    workspace: &Path,
    session_id: Option<String>,
    choice: &ProviderChoice,
    worktree: Option<cairn_protocol::WorktreeRef>,
) -> IpcResult<Arc<SessionRuntime>> {
    Ok(crate::runtime::open(
        &state.host,
        OpenRequest {
            state_dir: &state.config.state_dir,
            workspace,
            session_id,
            llm: state.llm_for(choice),
            host: state.config.host,
            attention: state.attention.clone(),
            terminals: state.terminals.clone(),
            worktree,
        },
    )?)
}

/// Starts a new session in the window's workspace and shows it. The one shown before keeps
/// running in the background if a turn of it runs or waits (else it is closed).
#[tauri::command]
pub async fn new_session<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<SessionView> {
    let label = window.label();
    let workspace = state
        .slot(label)
        .workspace
        .ok_or_else(IpcError::no_workspace)?;
    let choice = state.provider_choice();
    let runtime =
        tokio::task::block_in_place(|| open_runtime(&state, &workspace, None, &choice, None))?;
    super::board::show(&state, label, runtime.clone()).await?;
    remember_session(&state, &workspace, &runtime.id());
    Ok(cairn_runtime::host::view::view(&runtime)?)
}

/// Remembers the session a workspace shows, to reopen it at the next start.
pub(crate) fn remember_session(state: &AppState, workspace: &Path, id: &str) {
    let ws = workspace.display().to_string();
    if let Err(e) = state.update_settings(|s| s.remember_session(&ws, id)) {
        tracing::warn!(error = %e, "cannot remember the open session");
    }
}

/// Shows session `id` in this window: one it runs in the background at once (its turn
/// goes on), else resumed from disk (its workspace becomes the window's). The session shown
/// before keeps running in the background if a turn of it runs or waits.
#[tauri::command]
pub async fn open_session<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
) -> IpcResult<SessionView> {
    let label = window.label();
    let slot = state.slot(label);
    if let Some(current) = slot.session.as_ref().filter(|c| c.id() == id) {
        return Ok(cairn_runtime::host::view::view_with_pending(current).await?);
    }
    if let Some(running) = slot.background.iter().find(|r| r.id() == id).cloned() {
        super::board::show(&state, label, running.clone()).await?;
        if let Some(ws) = &slot.workspace {
            remember_session(&state, ws, &id);
        }
        return Ok(cairn_runtime::host::view::view_with_pending(&running).await?);
    }
    if state
        .open_sessions()
        .iter()
        .any(|(l, r)| l != label && r.id() == id)
    {
        return Err(IpcError::new(
            crate::error::ErrorCode::OpenElsewhere,
            "This session is open in another window.",
        ));
    }
    let store = cairn_runtime::SessionStore::new(&state.config.state_dir);
    let saved = store.load(&id)?;
    let session_ws = cairn_runtime::resolve_workspace(Path::new(&saved.workspace))?;
    // A worktree session opens in the window of the folder its worktree was made from.
    let workspace = match &saved.worktree {
        Some(name) => tokio::task::block_in_place(|| {
            cairn_runtime::worktrees::folder_of(&session_ws, &state.config.state_dir, name)
        })?,
        None => session_ws.clone(),
    };
    if slot.workspace.as_deref() != Some(workspace.as_path()) {
        // Another workspace: its sessions replace this one's.
        super::workspace::close_session_of(&state, label).await?;
    }
    let settings = state.settings();
    let provider = if saved.provider.is_empty() {
        state.provider_choice().provider
    } else {
        saved.provider.clone()
    };
    let choice = ProviderChoice {
        base_url: settings.base_url_for(&provider),
        model: saved.model.clone(),
        reasoning: settings.reasoning.clone(),
        provider,
    };
    let runtime =
        tokio::task::block_in_place(|| open_runtime(&state, &session_ws, Some(id), &choice, None))?;
    remember_session(&state, &workspace, &runtime.id());
    state.with_slot(label, |slot| slot.workspace = Some(workspace));
    super::board::show(&state, label, runtime.clone()).await?;
    // Reading the log and building the view (and its reply) is the heaviest step there is.
    crate::memory::release_freed_soon();
    Ok(cairn_runtime::host::view::view_with_pending(&runtime).await?)
}

/// The page of the window's session's history ending before turn group `before` (the
/// view's `historyBefore`, then each page's `first`), at most `limit` turns (default 100):
/// the transcript pages older turns in instead of taking every event at open.
#[tauri::command]
pub fn session_history<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    before: usize,
    limit: Option<usize>,
) -> IpcResult<cairn_runtime::history::HistoryPage> {
    let runtime = current(&state, window.label())?;
    let limit = limit.unwrap_or(cairn_runtime::host::view::VIEW_TURNS);
    let page = tokio::task::block_in_place(|| runtime.history(Some(before), limit))?;
    // Each page reads the log: what that took goes back to the OS, not to the next page.
    crate::memory::release_freed_soon();
    Ok(page)
}

/// The page of the window's session's history starting at turn group `from` (0: the first
/// turn; Home), at most `limit` turns (default 100): the way down from an older page, and a
/// jump to a search hit's group.
#[tauri::command]
pub fn session_history_from<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    from: usize,
    limit: Option<usize>,
) -> IpcResult<cairn_runtime::history::HistoryPage> {
    let runtime = current(&state, window.label())?;
    let limit = limit.unwrap_or(cairn_runtime::host::view::VIEW_TURNS);
    let page = tokio::task::block_in_place(|| runtime.history_from(from, limit))?;
    // Each page reads the log: what that took goes back to the OS, not to the next page.
    crate::memory::release_freed_soon();
    Ok(page)
}

/// The page of the window's session's history around chat turn `turn` (a timeline entry's
/// turn), at most `limit` turns (default 100); `null` when the log has no such turn.
#[tauri::command]
pub fn session_history_at_turn<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    turn: u32,
    limit: Option<usize>,
) -> IpcResult<Option<cairn_runtime::history::HistoryPage>> {
    let runtime = current(&state, window.label())?;
    let limit = limit.unwrap_or(cairn_runtime::host::view::VIEW_TURNS);
    let page = tokio::task::block_in_place(|| runtime.history_at_turn(turn, limit))?;
    // Each page reads the log: what that took goes back to the OS, not to the next page.
    crate::memory::release_freed_soon();
    Ok(page)
}

/// Searches the window's session's whole log for `query` (case-insensitive, prompts and
/// answers), wherever the transcript's loaded page is.
#[tauri::command]
pub fn search_session<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    query: String,
) -> IpcResult<cairn_runtime::history_search::SessionSearch> {
    let runtime = current(&state, window.label())?;
    let found = tokio::task::block_in_place(|| runtime.search(&query))?;
    crate::memory::release_freed_soon();
    Ok(found)
}

/// The live state of the window's session.
#[tauri::command]
pub fn session_status<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<SessionStatus> {
    Ok(cairn_runtime::host::view::status(
        current(&state, window.label())?.as_ref(),
    ))
}

/// Renames a session (open or not).
#[tauri::command]
pub fn rename_session(state: State<'_, AppState>, id: String, name: String) -> IpcResult<()> {
    let name = name.trim();
    if name.is_empty() {
        return Err(IpcError::invalid("A session name cannot be empty."));
    }
    if name.chars().count() > 200 {
        return Err(IpcError::invalid(
            "A session name is at most 200 characters.",
        ));
    }
    if let Some((_, r)) = state
        .open_sessions()
        .into_iter()
        .find(|(_, r)| r.id() == id)
    {
        r.rename(name)?;
        state.host.touch();
        return Ok(());
    }
    let store = cairn_runtime::SessionStore::new(&state.config.state_dir);
    let mut saved = store.load(&id)?;
    saved.name = name.to_string();
    store.save(&saved)?;
    state.host.touch();
    Ok(())
}

/// Deletes a session's files. The window's own session is closed first (not while a turn
/// runs); a session open in another window is refused.
#[tauri::command]
pub async fn delete_session<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
) -> IpcResult<()> {
    let label = window.label();
    if let Some((owner, _)) = state
        .open_sessions()
        .into_iter()
        .find(|(_, r)| r.id() == id)
    {
        if owner != label {
            return Err(IpcError::new(
                crate::error::ErrorCode::OpenElsewhere,
                "This session is open in another window.",
            ));
        }
        super::board::close_one(&state, label, &id).await?;
    }
    let store = cairn_runtime::SessionStore::new(&state.config.state_dir);
    let dir = store.session_dir(&id)?;
    if !dir.join("state.json").exists() {
        return Err(IpcError::not_found(format!("There is no session `{id}`.")));
    }
    std::fs::remove_dir_all(&dir).map_err(|e| {
        IpcError::new(
            crate::error::ErrorCode::Storage,
            format!("cannot delete {}: {e}", dir.display()),
        )
    })?;
    if let Err(e) = state.update_settings(|s| s.forget_session(&id)) {
        tracing::warn!(error = %e, "cannot forget the deleted session");
    }
    tracing::info!(session = %id, "session deleted");
    state.host.touch();
    Ok(())
}

/// Changes the permission mode (takes effect for the next tool call).
#[tauri::command]
pub fn set_mode<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    mode: Mode,
) -> IpcResult<()> {
    current(&state, window.label())?.set_mode(mode);
    Ok(())
}

/// Answers the approval of tool call `req_id` from the chat; false when it was already
/// answered (for example in the native dialog).
#[tauri::command]
pub fn answer_approval<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    req_id: String,
    decision: ApprovalDecision,
) -> IpcResult<bool> {
    Ok(current(&state, window.label())?
        .pending()
        .answer_approval(&req_id, decision))
}

/// "Always allow in this project" from the chat: keeps the allowance the approval of tool
/// call `req_id` offers as a user-level rule limited to the window's project (never written
/// into the repository), answers the request with that allowance and lets every open
/// session see the rule; false when the request was answered meanwhile (the rule is kept).
#[tauri::command]
pub fn allow_in_project<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    req_id: String,
) -> IpcResult<bool> {
    let runtime = current(&state, window.label())?;
    Ok(state.host.allow_in_project(&runtime, &req_id)?)
}

/// Where the awaiting approval's chat card is in the page (`None`: no card waits): the native
/// approval dialog is placed clear of it, and an open one moves off it.
#[tauri::command]
pub fn approval_card_at(state: State<'_, AppState>, card: Option<CardRect>) {
    state.dialogs.avoid(card);
}

/// Answers the agent's pending `ask_user` question.
#[tauri::command]
pub fn answer_question<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    answer: UserAnswer,
    request_id: Option<String>,
) -> IpcResult<bool> {
    Ok(current(&state, window.label())?
        .pending()
        .answer_question(request_id.as_deref(), answer))
}

/// Accepts or rejects the proposed plan.
#[tauri::command]
pub fn answer_plan<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    review: PlanReview,
    request_id: Option<String>,
) -> IpcResult<bool> {
    Ok(current(&state, window.label())?
        .pending()
        .answer_plan(request_id.as_deref(), review))
}

/// Grants or denies the pending directory request.
#[tauri::command]
pub fn answer_directory<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    grant: DirectoryGrant,
    request_id: Option<String>,
) -> IpcResult<bool> {
    Ok(current(&state, window.label())?
        .pending()
        .answer_directory(request_id.as_deref(), grant))
}

/// Answers an MCP server's pending request for information (a form or a page); accepting a
/// page opens it in the system browser here, only after the user agreed.
#[tauri::command]
pub fn answer_elicitation<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    answer: cairn_protocol::ElicitationAnswer,
    request_id: String,
    open_url: Option<String>,
) -> IpcResult<bool> {
    if let (Some(url), cairn_protocol::ElicitationAnswer::Accept { .. }) = (&open_url, &answer) {
        if let Err(e) = cairn_runtime::mcp_auth::open_web_page(url) {
            tracing::warn!("the page a server asked to open was not opened: {e}");
        }
    }
    Ok(current(&state, window.label())?
        .pending()
        .answer_elicitation(Some(&request_id), answer))
}

/// A diff of what the pending call `req_id` would change, for file edits.
#[tauri::command]
pub fn edit_preview<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    req_id: String,
) -> IpcResult<Option<String>> {
    let runtime = current(&state, window.label())?;
    Ok(runtime
        .pending()
        .approval_request(&req_id)
        .and_then(|req| crate::preview::edit_preview(runtime.workspace(), &req)))
}

/// The full result of tool call `call_id` as the model saw it (available once its
/// iteration was saved).
#[tauri::command]
pub fn tool_result<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    call_id: String,
) -> IpcResult<Option<String>> {
    let saved = current(&state, window.label())?.saved();
    Ok(saved.messages.iter().find_map(|m| match m {
        Message::Tool(r) if r.call_id == call_id => Some(r.content.clone()),
        _ => None,
    }))
}

/// The session's permission allowances and the persistent rules in force.
#[tauri::command]
pub fn permission_rules<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<PermissionRules> {
    let runtime = current(&state, window.label())?;
    Ok(runtime.rules_view())
}

/// Revokes a tool's session allowance.
#[tauri::command]
pub fn revoke_tool<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
) -> IpcResult<PermissionRules> {
    let runtime = current(&state, window.label())?;
    if !runtime.revoke_tool(&name) {
        return Err(IpcError::not_found(format!(
            "`{name}` was not allowed for this session."
        )));
    }
    Ok(runtime.rules_view())
}

/// Revokes a command's session allowance (by program name).
#[tauri::command]
pub fn revoke_command<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    program: String,
) -> IpcResult<PermissionRules> {
    let runtime = current(&state, window.label())?;
    if !runtime.revoke_command(&program) {
        return Err(IpcError::not_found(format!(
            "`{program}` was not allowed for this session."
        )));
    }
    Ok(runtime.rules_view())
}

/// Removes a rule from the user-level permissions file: the global one with this text, or
/// with `project` (a listed rule's [`PersistentRule::project`]) the one limited to that
/// project, leaving the same text elsewhere. Open sessions stop applying it.
#[tauri::command]
pub fn revoke_rule<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    text: String,
    project: Option<String>,
) -> IpcResult<PermissionRules> {
    let runtime = current(&state, window.label())?;
    let removed = cairn_runtime::permissions::revoke_user_rule_for(&text, project.as_deref())?;
    if removed == 0 {
        return Err(IpcError::not_found(format!(
            "No rule `{text}` in the user permissions file."
        )));
    }
    tracing::info!(rule = %text, project = ?project, "persistent rule revoked");
    state.host.reload_rules();
    Ok(runtime.rules_view())
}
