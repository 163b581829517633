//! The checkpoint store of one workspace: snapshots recorded per session as change-turns,
//! with diff and restore. All state lives under the state dir; the workspace's `.git` is
//! never written.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::{Oid, Signature, Time};
use serde::{Deserialize, Serialize};

use crate::attrib::{Cause, Foreign};
use crate::cache::MODE_TREE;
use crate::config::VcsConfig;
use crate::error::{io, Result, VcsError};
use crate::fsops::{FsWriter, TreeWriter};
use crate::log::{PendingFile, SessionLog, TurnKind, TurnRecord};
use crate::restore::{self, Journal, RestoreOptions, RestoreReport};
use crate::snapshot::{Snapshotter, TreeSnapshot};
use crate::store::{read_json, validate_session, write_json, write_json_with, Store};
use crate::treediff;
use crate::windows::{now_ms, Registry, WindowKind};

const LAST_REF: &str = "refs/cairn/last";

fn session_ref(id: &str) -> String {
    format!("refs/cairn/sessions/{id}")
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// How to resolve a restore that was interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Write the rest of the target state and record the restore.
    Finish,
    /// Put every planned path back to its pre-restore state.
    RollBack,
}

/// A restore that was interrupted (found at start-up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingRestore {
    /// The session that started it.
    pub session: String,
    /// Its target change-turn.
    pub to_turn: u32,
    /// The paths it planned to change.
    pub paths: Vec<String>,
    /// Set when it is the apply of a worktree (its NAME), not a restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_from: Option<String>,
}

/// A workspace's checkpoint store, opened for snapshots, queries and restores.
pub struct Vcs {
    pub(crate) store: Store,
    pub(crate) snap: Snapshotter,
    pub(crate) writer: Arc<dyn TreeWriter>,
    config: VcsConfig,
    pub(crate) windows: Registry,
    /// This process's open command windows (touched while they run).
    pub(crate) open_windows: Vec<String>,
}

impl Vcs {
    /// Opens (creating if needed) the store of `workspace` under `state_dir`.
    pub fn open(state_dir: &Path, workspace: &Path, config: VcsConfig) -> Result<Vcs> {
        let ws = workspace.canonicalize().map_err(|e| VcsError::Workspace {
            path: workspace.to_path_buf(),
            reason: e.to_string(),
        })?;
        if !ws.is_dir() {
            return Err(VcsError::Workspace {
                path: ws,
                reason: "not a folder".into(),
            });
        }
        fs::create_dir_all(state_dir).map_err(io(format!("creating {}", state_dir.display())))?;
        let state = state_dir
            .canonicalize()
            .map_err(io(format!("resolving {}", state_dir.display())))?;
        let store = Store::open(&state, &ws)?;
        let snap = Snapshotter::new(
            &ws,
            &store.repo_dir(),
            &store.index_path(),
            &store.sync_dir(),
            &[state],
            config.clone(),
        )?;
        Ok(Vcs {
            windows: Registry::new(store.root()),
            open_windows: Vec::new(),
            store,
            snap,
            writer: Arc::new(FsWriter),
            config,
        })
    }

    /// Replaces the writer restores use (tests inject failures with it).
    pub fn with_writer(mut self, writer: Arc<dyn TreeWriter>) -> Vcs {
        self.writer = writer;
        self
    }

    /// The workspace (canonical).
    pub fn workspace(&self) -> &Path {
        self.store.workspace()
    }

    /// The store's folder.
    pub fn store_dir(&self) -> &Path {
        self.store.root()
    }

    /// Sets (or clears) the observer of long snapshots: called with the entries done and,
    /// once known, their total, only after a snapshot has run for over a second and at most
    /// ten times a second.
    pub fn set_progress(&mut self, progress: Option<crate::progress::ProgressFn>) {
        self.snap.set_progress(progress);
    }

    /// Takes a snapshot of the work tree without recording it in any session.
    pub fn snapshot(&mut self) -> Result<TreeSnapshot> {
        let _lock = self.store.lock()?;
        self.snap_tree()
    }

    /// Writes the stat cache to disk.
    pub fn flush(&mut self) -> Result<()> {
        let _lock = self.store.lock()?;
        self.snap.flush()
    }

    pub(crate) fn snap_tree(&mut self) -> Result<TreeSnapshot> {
        let prev = self
            .store
            .repo
            .refname_to_id(LAST_REF)
            .ok()
            .and_then(|id| self.store.repo.find_commit(id).ok())
            .map(|c| c.tree_id());
        self.snap.snapshot(&self.store.repo, prev)
    }

    pub(crate) fn commit(&mut self, log: &mut SessionLog, tree: Oid, message: &str) -> Result<Oid> {
        let repo = &self.store.repo;
        let parent = log
            .head
            .as_deref()
            .and_then(|h| Oid::from_str(h).ok())
            .and_then(|id| repo.find_commit(id).ok());
        if let Some(p) = &parent {
            if p.tree_id() == tree {
                return Ok(p.id());
            }
        }
        let sig = Signature::new(
            "Cairn",
            "cairn@localhost",
            &Time::new(chrono::Utc::now().timestamp(), 0),
        )?;
        let t = repo.find_tree(tree)?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        let id = repo.commit(None, &sig, &sig, message, &t, &parents)?;
        set_ref(repo, &session_ref(&log.session_id), id, "cairn snapshot")?;
        set_ref(repo, LAST_REF, id, "cairn snapshot")?;
        log.head = Some(id.to_string());
        Ok(id)
    }

    pub(crate) fn load_log(&self, session: &str) -> Result<SessionLog> {
        let path = self.store.session_path(session)?;
        let mut log = read_json(&path)?.unwrap_or_else(|| SessionLog {
            session_id: session.to_string(),
            ..SessionLog::default()
        });
        let pending_path = self.store.pending_path(session)?;
        match read_json::<PendingFile>(&pending_path) {
            Ok(Some(p)) if p.turns == log.turns.len() => {
                log.pending = p.pending;
                log.head = p.head.or(log.head);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "ignoring an unreadable in-progress turn marker"),
        }
        Ok(log)
    }

    /// Saves the whole log durably and drops the in-progress marker.
    pub(crate) fn save_log(&self, log: &mut SessionLog) -> Result<()> {
        log.updated_at = now();
        write_json(&self.store.session_path(&log.session_id)?, log)?;
        let pending = self.store.pending_path(&log.session_id)?;
        match fs::remove_file(&pending) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io(format!("removing {}", pending.display()))(e))
            }
            _ => Ok(()),
        }
    }

    /// Saves only the in-progress turn and chain head (fast: no fsync).
    pub(crate) fn save_pending(&self, log: &SessionLog) -> Result<()> {
        let file = PendingFile {
            turns: log.turns.len(),
            pending: log.pending.clone(),
            head: log.head.clone(),
        };
        write_json_with(&self.store.pending_path(&log.session_id)?, &file, false)
    }

    pub(crate) fn tree_of(&self, commit: &str) -> Result<Oid> {
        Ok(self
            .store
            .repo
            .find_commit(Oid::from_str(commit)?)?
            .tree_id())
    }

    /// The session's change-turns, oldest first.
    pub fn turns(&self, session: &str) -> Result<Vec<TurnRecord>> {
        Ok(self.load_log(session)?.turns)
    }

    /// The tree of checkpoint `n`: after change-turn `n`, or before the first for `0`.
    pub(crate) fn checkpoint_tree(&self, log: &SessionLog, n: u32) -> Result<Oid> {
        let count = log.turns.len() as u32;
        if count == 0 {
            return Err(VcsError::NoCheckpoints(log.session_id.clone()));
        }
        if n > count {
            return Err(VcsError::NoSuchTurn {
                turn: n,
                first: 0,
                count,
            });
        }
        match n {
            0 => self.tree_of(&log.turns[0].before),
            n => self.tree_of(&log.turns[n as usize - 1].after),
        }
    }

    /// The unified diff of change-turn `n` (1-based).
    pub fn diff_turn(&self, session: &str, n: u32) -> Result<String> {
        let log = self.load_log(session)?;
        let count = log.turns.len() as u32;
        if n == 0 || n > count {
            return Err(VcsError::NoSuchTurn {
                turn: n,
                first: 1,
                count,
            });
        }
        let t = &log.turns[n as usize - 1];
        let Some(own) = crate::listing::own_paths(t) else {
            return Ok(String::new());
        };
        crate::diff::unified(
            &self.store.repo,
            self.tree_of(&t.before)?,
            self.tree_of(&t.after)?,
            &own,
        )
    }

    /// The unified diff between checkpoints `from` and `to` (0 = before the first change),
    /// optionally limited to `paths`.
    pub fn diff_checkpoints(
        &self,
        session: &str,
        from: u32,
        to: u32,
        paths: &[String],
    ) -> Result<String> {
        let log = self.load_log(session)?;
        let a = self.checkpoint_tree(&log, from)?;
        let b = self.checkpoint_tree(&log, to)?;
        crate::diff::unified(&self.store.repo, a, b, paths)
    }

    /// The change-turns that touched `path` (a file, or anything under a folder).
    pub fn file_history(&self, session: &str, path: &str) -> Result<Vec<TurnRecord>> {
        let p = path.trim_start_matches("./").trim_end_matches('/');
        let dir = format!("{p}/");
        Ok(self
            .load_log(session)?
            .turns
            .into_iter()
            .filter(|t| t.files.iter().any(|f| f == p || f.starts_with(&dir)))
            .collect())
    }

    /// Restores the workspace (or `opts.paths`) to checkpoint `opts.to_turn`. The current
    /// state is snapshotted first and the restore is recorded as a change-turn, so it can be
    /// undone by restoring to the turn before it. `session_turn` is recorded with it.
    pub fn restore(
        &mut self,
        session: &str,
        session_turn: u32,
        opts: &RestoreOptions,
    ) -> Result<RestoreReport> {
        validate_session(session)?;
        let _lock = self.store.lock()?;
        let restore_started = now_ms();
        self.check_no_journal()?;
        let mut log = self.load_log(session)?;
        let target = self.checkpoint_tree(&log, opts.to_turn)?;
        let ts = self.snap_tree()?;
        let pre_commit = self.commit(
            &mut log,
            ts.tree,
            &format!("cairn: before restore to turn {}", opts.to_turn),
        )?;
        let windows = self.windows.load()?;
        let user = crate::attrib::foreign_since(
            &self.store.repo,
            &log,
            opts.to_turn,
            ts.tree,
            &windows,
            now_ms(),
        )?;
        let root = self.store.workspace().to_path_buf();
        let not_covered = checkpoint_excluded(&log, opts.to_turn);
        let (actions, mut report) = restore::plan(
            &self.store.repo,
            &root,
            ts.tree,
            target,
            &user,
            &not_covered,
            opts,
        )?;
        if opts.dry_run || actions.is_empty() {
            self.save_log(&mut log)?;
            return Ok(report);
        }
        let mut summary = format!("restore to turn {}", opts.to_turn);
        if !opts.paths.is_empty() {
            summary.push_str(&format!(" ({})", opts.paths.join(", ")));
        }
        // The user's changes since the last change-turn get a change-turn of their own, so
        // restoring to it (undoing this restore) brings them back even where --force
        // overwrote them.
        self.record_user_changes(&mut log, ts.tree, &pre_commit, session_turn, &ts.excluded)?;
        let journal = Journal {
            session: session.to_string(),
            to_turn: opts.to_turn,
            pre_commit: pre_commit.to_string(),
            pre_tree: ts.tree.to_string(),
            target_tree: target.to_string(),
            summary,
            actions,
            excluded: ts.excluded,
            applied_from: None,
        };
        self.save_log(&mut log)?;
        write_json(&self.store.journal_path(), &journal)?;
        restore::apply(
            &self.store.repo,
            &root,
            self.writer.as_ref(),
            &journal.actions,
            true,
            target,
        )
        .map_err(|e| VcsError::Unfinished {
            session: session.to_string(),
            to: opts.to_turn,
            source: Box::new(e),
        })?;
        report.turn = self.finish_restore(&mut log, &journal, session_turn)?;
        // What a restore wrote is its session's, for the other sessions' attribution.
        let written: Vec<String> = journal.actions.iter().map(action_name).collect();
        self.windows
            .record(session, WindowKind::File, restore_started, &written)?;
        Ok(report)
    }

    /// Records what changed between the last change-turn and `current` (its commit) as
    /// a [`TurnKind::User`] change-turn; nothing when nothing did.
    pub(crate) fn record_user_changes(
        &self,
        log: &mut SessionLog,
        current: Oid,
        current_commit: &Oid,
        session_turn: u32,
        excluded: &[crate::walk::Excluded],
    ) -> Result<()> {
        let Some(last) = log.turns.last() else {
            return Ok(());
        };
        let last_tree = self.tree_of(&last.after)?;
        let changes = treediff::diff(&self.store.repo, Some(last_tree), Some(current))?;
        if changes.is_empty() {
            return Ok(());
        }
        // Whose they are, as far as the window registry knows (the user's by default).
        let from = last.span.map(|s| s.1);
        let windows = self.windows.load()?;
        let others = changes
            .iter()
            .map(|c| {
                let path = String::from_utf8_lossy(&c.path).into_owned();
                let cause = from
                    .and_then(|f| {
                        crate::attrib::classify(
                            &windows,
                            &log.session_id,
                            &path,
                            f,
                            now_ms(),
                            false,
                        )
                    })
                    .unwrap_or(Cause::Outside);
                Foreign { path, cause }
            })
            .collect();
        let rec = TurnRecord {
            turn: log.turns.len() as u32 + 1,
            session_turn,
            files: changes.iter().map(change_name).collect(),
            summary: "changes outside the agent's turns".into(),
            at: now(),
            before: last.after.clone(),
            after: current_commit.to_string(),
            kind: TurnKind::User,
            excluded: excluded.to_vec(),
            excluded_before: last.excluded.clone(),
            others,
            span: Some((from.unwrap_or_else(now_ms), now_ms())),
            restored_to: None,
            applied_from: None,
        };
        log.turns.push(rec);
        Ok(())
    }

    pub(crate) fn check_no_journal(&self) -> Result<()> {
        let path = self.store.journal_path();
        if let Some(j) = read_json::<Journal>(&path)? {
            return Err(VcsError::PendingRestore {
                journal: path,
                what: j.what(),
                session: j.session,
                to: j.to_turn,
            });
        }
        Ok(())
    }

    pub(crate) fn finish_restore(
        &mut self,
        log: &mut SessionLog,
        j: &Journal,
        session_turn: u32,
    ) -> Result<Option<u32>> {
        let root = self.store.workspace().to_path_buf();
        let pre_tree = Oid::from_str(&j.pre_tree)?;
        let after_tree = restore::result_tree(&self.store.repo, &root, pre_tree, &j.actions, true)?;
        if self.snap.last() == Some(pre_tree) {
            self.snap.set_last(after_tree);
        }
        let after = self.commit(log, after_tree, &format!("cairn: {}", j.summary))?;
        let turn = log.turns.len() as u32 + 1;
        log.turns.push(TurnRecord {
            turn,
            session_turn,
            files: j.actions.iter().map(action_name).collect(),
            summary: j.summary.clone(),
            at: now(),
            before: j.pre_commit.clone(),
            after: after.to_string(),
            kind: if j.applied_from.is_some() {
                TurnKind::Apply
            } else {
                TurnKind::Restore
            },
            excluded: j.excluded.clone(),
            excluded_before: j.excluded.clone(),
            others: Vec::new(),
            // Its end bounds the gap after it (for attributing what changed there).
            span: Some((now_ms(), now_ms())),
            restored_to: j.applied_from.is_none().then_some(j.to_turn),
            applied_from: j.applied_from.clone(),
        });
        self.save_log(log)?;
        remove_journal(&self.store.journal_path())?;
        Ok(Some(turn))
    }

    /// The interrupted restore waiting to be finished or rolled back, if any.
    pub fn pending_restore(&self) -> Result<Option<PendingRestore>> {
        Ok(
            read_json::<Journal>(&self.store.journal_path())?.map(|j| PendingRestore {
                paths: j.actions.iter().map(action_name).collect(),
                applied_from: j.applied_from,
                session: j.session,
                to_turn: j.to_turn,
            }),
        )
    }

    /// Finishes or rolls back an interrupted restore.
    pub fn recover(&mut self, how: Recovery, session_turn: u32) -> Result<RestoreReport> {
        let _lock = self.store.lock()?;
        let path = self.store.journal_path();
        let j: Journal = read_json(&path)?.ok_or(VcsError::NothingToRecover)?;
        let root = self.store.workspace().to_path_buf();
        let forward = how == Recovery::Finish;
        let keep = Oid::from_str(if forward { &j.target_tree } else { &j.pre_tree })?;
        restore::apply(
            &self.store.repo,
            &root,
            self.writer.as_ref(),
            &j.actions,
            forward,
            keep,
        )?;
        let mut report = RestoreReport {
            to_turn: j.to_turn,
            ..RestoreReport::default()
        };
        for a in &j.actions {
            let side = if forward { &a.new } else { &a.old };
            match side {
                Some(_) => report.restored.push(action_name(a)),
                None => report.deleted.push(action_name(a)),
            }
        }
        if forward {
            let mut log = self.load_log(&j.session)?;
            report.turn = self.finish_restore(&mut log, &j, session_turn)?;
        } else {
            remove_journal(&path)?;
        }
        Ok(report)
    }

    /// Forgets a session's checkpoints (its files are not touched).
    pub fn forget(&mut self, session: &str) -> Result<()> {
        validate_session(session)?;
        let _lock = self.store.lock()?;
        if let Ok(mut r) = self.store.repo.find_reference(&session_ref(session)) {
            r.delete()?;
        }
        for path in [
            self.store.session_path(session)?,
            self.store.pending_path(session)?,
        ] {
            match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io(format!("removing {}", path.display()))(e));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The store's configuration.
    pub(crate) fn config(&self) -> &VcsConfig {
        &self.config
    }

    /// Internal access for storage accounting.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// Session log files of this store.
    pub(crate) fn session_files(&self) -> Result<Vec<PathBuf>> {
        let dir = self.store.root().join("sessions");
        let mut out = Vec::new();
        for e in fs::read_dir(&dir)
            .map_err(io(format!("listing {}", dir.display())))?
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "json") {
                out.push(e.path());
            }
        }
        Ok(out)
    }
}

/// Points ref `name` at `id`. A `.lock` of it left by a process killed while updating it
/// is removed and the update retried: callers hold the store lock, so no live process
/// holds that ref lock.
fn set_ref(repo: &git2::Repository, name: &str, id: Oid, message: &str) -> Result<()> {
    match repo.reference(name, id, true, message) {
        Err(e) if e.code() == git2::ErrorCode::Locked => {
            let lock = repo.path().join(format!("{name}.lock"));
            tracing::debug!(lock = %lock.display(), "removing a stale ref lock");
            let _ = fs::remove_file(&lock);
            repo.reference(name, id, true, message)?;
            Ok(())
        }
        other => other.map(|_| ()).map_err(Into::into),
    }
}

pub(crate) fn remove_journal(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io(format!("removing {}", path.display()))(e))
        }
        _ => Ok(()),
    }
}

pub(crate) fn change_name(c: &treediff::Change) -> String {
    let dir = c.new.or(c.old).is_some_and(|(_, m)| m == MODE_TREE);
    let mut s = String::from_utf8_lossy(&c.path).into_owned();
    if dir {
        s.push('/');
    }
    s
}

pub(crate) fn action_name(a: &restore::Action) -> String {
    let dir = a
        .new
        .as_ref()
        .or(a.old.as_ref())
        .is_some_and(|(_, m)| *m == MODE_TREE);
    let mut s = String::from_utf8_lossy(&a.path).into_owned();
    if dir {
        s.push('/');
    }
    s
}

/// What the checkpoint a restore to `to_turn` goes back to did not cover (empty when the log
/// predates this record or the turn does not exist).
fn checkpoint_excluded(log: &SessionLog, to_turn: u32) -> Vec<crate::walk::Excluded> {
    match to_turn {
        0 => log
            .turns
            .first()
            .map(|t| t.excluded_before.clone())
            .unwrap_or_default(),
        n => log
            .turns
            .get(n as usize - 1)
            .map(|t| t.excluded.clone())
            .unwrap_or_default(),
    }
}
