//! The sessions board every face can show: a workspace's sessions (the folder's and those of
//! its git worktrees), each with its live state (running, queued, waiting for an approval or
//! an answer, idle, error) and its changed-file count, and the worktrees themselves. Listing
//! worktrees and counting files read trees, so both are cached until what they depend on
//! changed ([`BoardCache`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use ts_rs::TS;

use super::view::{activity, activity_in, changed_files};
use super::{Host, SessionHandle};
use crate::store::{SessionStore, SessionSummary, StoreError};
use crate::worktrees::{Counterparts, WorktreeView};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One row of the sessions board: a session of the workspace and its live state.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct BoardRow {
    /// Session id.
    pub id: String,
    /// Display name (may be empty: the UI shows a placeholder).
    pub name: String,
    /// RFC 3339 time of the last save.
    pub updated_at: String,
    /// Turns run.
    pub turns: u32,
    /// Model id.
    pub model: String,
    /// Running, queued, waiting for the user, idle or failed.
    pub activity: super::view::SessionActivity,
    /// Files the session changed since it started (from its checkpoints); `None` before
    /// they were counted.
    pub changed_files: Option<u32>,
    /// The git worktree the session works in (its name), when Cairn made one for it.
    pub worktree: Option<String>,
    /// Its worktree was removed: the chat stays on the folder's board (its history is on
    /// disk) and goes on in the folder ("Continue in folder").
    pub worktree_removed: bool,
    /// Open in this window (shown or running in the background).
    pub open: bool,
    /// Dollars the session spent, live while it is open (`None`: not counted yet, or a
    /// request's price is unknown).
    pub cost_usd: Option<f64>,
    /// Tokens the session spent, live while it is open (`None`: not counted yet).
    pub tokens: Option<u64>,
    /// The first prompt (up to 300 characters), for the board's search.
    pub first_prompt: String,
}

/// A session the user asked to see from outside the page (a click on its notification).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct OpenRequestView {
    /// Grows with each request, so the page acts on each once.
    pub seq: u64,
    /// The session to open.
    pub id: String,
}

/// The window's sessions board, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct BoardView {
    /// Every session of the workspace.
    pub rows: Vec<BoardRow>,
    /// The session the window shows.
    pub viewed: Option<String>,
    /// A session to open now.
    pub open_request: Option<OpenRequestView>,
    /// The git worktrees Cairn made for the workspace's repository (their sessions are
    /// rows of `rows` with their `worktree` set).
    pub worktrees: Vec<WorktreeView>,
    /// Why the workspace cannot have worktrees (not in a git repository, no commit yet).
    pub worktrees_unavailable: Option<String>,
}

/// A workspace's worktrees and where their sessions work, or why it has none.
type WorktreeList = Result<(Vec<WorktreeView>, Counterparts), String>;

/// What boards keep between two builds: worktree lists and changed-file counts, each valid
/// until what it was built from changed.
#[derive(Default)]
pub struct BoardCache {
    /// Per session: (its save time when counted, files changed).
    changed_files: Mutex<HashMap<String, (String, u32)>>,
    /// Per workspace: (what they were listed at, the list or why there is none).
    worktree_lists: Mutex<HashMap<PathBuf, (String, WorktreeList)>>,
    /// Bumped when a worktree is created, applied, committed or removed.
    worktree_generation: AtomicU64,
}

impl BoardCache {
    /// A worktree was created, applied, committed or removed: lists go stale.
    pub fn worktrees_changed(&self) {
        self.worktree_generation.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a saved session's recorded requests cost, priced by its model as its turns price
/// them (`None`: nothing recorded).
fn saved_spent(s: &SessionSummary) -> Option<cairn_engine::spend::Spent> {
    let mut spent = cairn_engine::spend::Spent::zero();
    for u in &s.usage {
        spent.add(u, crate::spend_env::cost_usd(&s.model, u));
    }
    (spent.tokens > 0).then_some(spent)
}

/// The board of `workspace`: its saved sessions (the folder's and its worktrees'), and the
/// sessions of `open` (a face's, shown or running in the background) whose first turn is
/// under way; `viewed` is the one the face shows.
pub fn board(
    host: &Host,
    state_dir: &Path,
    cache: &BoardCache,
    workspace: &Path,
    open: &[Arc<SessionHandle>],
    viewed: Option<String>,
) -> Result<BoardView, StoreError> {
    let path = workspace.display().to_string();
    let saved = SessionStore::new(state_dir).list()?;
    let (worktrees, homes, worktrees_unavailable) =
        match worktrees_of(state_dir, cache, workspace, &saved) {
            Ok((w, homes)) => (w, Some(homes), None),
            Err(why) => (Vec::new(), None, Some(why)),
        };
    // A worktree session belongs to the board of the folder its worktree was made from.
    let in_worktree = |s: &SessionSummary| {
        s.worktree.as_ref().is_some_and(|name| {
            worktrees
                .iter()
                .any(|w| &w.name == name && Path::new(&s.workspace).starts_with(&w.path))
        })
    };
    // A session of a worktree of this folder that was removed stays the folder's: it
    // worked in that worktree's counterpart of this workspace.
    let in_removed = |s: &SessionSummary| {
        s.worktree.as_ref().is_some_and(|name| {
            homes
                .as_ref()
                .is_some_and(|h| Path::new(&s.workspace) == h.of(name))
                && !worktrees.iter().any(|w| &w.name == name)
        })
    };
    let mut places: Vec<(String, PathBuf)> = saved
        .iter()
        .map(|s| (s.id.clone(), PathBuf::from(&s.workspace)))
        .collect();
    let mut rows: Vec<BoardRow> = saved
        .into_iter()
        .filter(|s| {
            (s.workspace == path && s.worktree.is_none()) || in_worktree(s) || in_removed(s)
        })
        .map(|s| (saved_spent(&s), s))
        .map(|(spent, s)| BoardRow {
            worktree_removed: in_removed(&s),
            activity: activity_in(host, &s.id),
            open: false,
            // Closed sessions: what their saved requests cost (open ones: the live count).
            cost_usd: spent.and_then(|sp| sp.cost),
            tokens: spent.map(|sp| sp.tokens),
            changed_files: None,
            worktree: s.worktree,
            first_prompt: s.first_prompt,
            id: s.id,
            name: s.name,
            updated_at: s.updated_at,
            turns: s.turns,
            model: s.model,
        })
        .collect();
    // Open sessions not saved yet whose first turn is under way come first (a new session
    // with nothing run yet is not listed).
    for r in open.iter().rev() {
        let id = r.id();
        if !r.is_active() || rows.iter().any(|row| row.id == id) {
            continue;
        }
        let saved = r.saved();
        places.push((id.clone(), r.workspace().to_path_buf()));
        rows.insert(
            0,
            BoardRow {
                activity: activity(r),
                open: true,
                cost_usd: None,
                tokens: None,
                changed_files: None,
                worktree_removed: false,
                worktree: saved.worktree,
                first_prompt: crate::store::first_prompt(&saved.messages),
                id,
                name: saved.name,
                updated_at: saved.updated_at,
                turns: saved.turns,
                model: saved.model,
            },
        );
    }
    for row in &mut rows {
        let handle = open.iter().find(|r| r.id() == row.id);
        row.open = handle.is_some();
        if let Some(spent) = handle.and_then(|h| h.session().spent()) {
            row.cost_usd = spent.cost;
            row.tokens = Some(spent.tokens);
        }
    }
    // A removed worktree's checkpoints are not read (its folder is gone).
    places.retain(|(id, _)| !rows.iter().any(|r| &r.id == id && r.worktree_removed));
    fill_changed_files(state_dir, cache, &mut rows, &places);
    Ok(BoardView {
        rows,
        viewed,
        open_request: None,
        worktrees,
        worktrees_unavailable,
    })
}

/// The worktrees of the repository of `workspace`, listed again when one of their sessions
/// was saved or a worktree changed since they were listed (a listing reads their trees).
fn worktrees_of(
    state_dir: &Path,
    cache: &BoardCache,
    workspace: &Path,
    saved: &[SessionSummary],
) -> WorktreeList {
    let generation = cache.worktree_generation.load(Ordering::SeqCst);
    let mut key = generation.to_string();
    for s in saved.iter().filter(|s| s.worktree.is_some()) {
        key.push_str(&format!("|{}@{}", s.id, s.updated_at));
    }
    if let Some((at, list)) = lock(&cache.worktree_lists).get(workspace) {
        if *at == key {
            return list.clone();
        }
    }
    let list = crate::worktrees::list(workspace, state_dir)
        .and_then(|l| Ok((l, crate::worktrees::counterparts(workspace, state_dir)?)))
        .map_err(|e| unavailable(workspace, &e));
    lock(&cache.worktree_lists).insert(workspace.to_path_buf(), (key, list.clone()));
    list
}

/// Why a workspace has no worktrees, in plain words.
fn unavailable(workspace: &Path, e: &crate::worktrees::Error) -> String {
    let in_git = workspace.ancestors().any(|d| d.join(".git").exists());
    if in_git {
        format!("Worktree sessions are not available here: {e}")
    } else {
        "This folder is not in a git repository, so its sessions cannot run in worktrees of          their own: run `git init` and make a first commit to use them."
            .to_string()
    }
}

/// Changed-file counts from the checkpoints, recounted for sessions saved since they were
/// counted (a turn's last checkpoint is stored before its final save).
fn fill_changed_files(
    state_dir: &Path,
    cache: &BoardCache,
    rows: &mut [BoardRow],
    workspaces: &[(String, PathBuf)],
) {
    let stale: Vec<String> = {
        let counted = lock(&cache.changed_files);
        rows.iter()
            .filter(|r| r.turns > 0)
            .filter(|r| counted.get(&r.id).is_none_or(|(at, _)| *at != r.updated_at))
            .map(|r| r.id.clone())
            .collect()
    };
    if !stale.is_empty() {
        // Counted per workspace (a worktree session's checkpoints are of its worktree).
        let mut counts = std::collections::HashMap::new();
        let mut places: Vec<&PathBuf> = workspaces
            .iter()
            .filter(|(id, _)| stale.contains(id))
            .map(|(_, w)| w)
            .collect();
        places.sort();
        places.dedup();
        for place in places {
            let ids: Vec<String> = stale
                .iter()
                .filter(|id| workspaces.iter().any(|(i, w)| i == *id && w == place))
                .cloned()
                .collect();
            if !ids.is_empty() {
                counts.extend(changed_files(state_dir, place, &ids));
            }
        }
        let mut counted = lock(&cache.changed_files);
        for r in rows.iter().filter(|r| stale.contains(&r.id)) {
            counted.insert(
                r.id.clone(),
                (
                    r.updated_at.clone(),
                    counts.get(&r.id).copied().unwrap_or(0),
                ),
            );
        }
    }
    let counted = lock(&cache.changed_files);
    for r in rows.iter_mut() {
        r.changed_files = counted.get(&r.id).map(|(_, n)| *n);
    }
}
