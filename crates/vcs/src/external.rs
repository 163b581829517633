//! Changes Cairn itself makes to a workspace outside an agent turn (applying a worktree back
//! to its folder), recorded as change-turns so a restore undoes them like any other.

use std::collections::BTreeMap;

use crate::error::{Result, VcsError};
use crate::log::{TurnKind, TurnRecord};
use crate::restore::{self, Action, Journal};
use crate::store::{validate_session, write_json};
use crate::tree::{self, Edit};
use crate::treediff;
use crate::vcs::{action_name, change_name, now, remove_journal, Vcs};
use crate::walk::rel_path;
use crate::windows::{now_ms, WindowKind};

/// One path an apply writes: its bytes and git mode (`0o100644`, `0o100755`, `0o120000`),
/// or `None` to remove it.
pub type ApplyEdit = (String, Option<(Vec<u8>, u32)>);

/// What [`Vcs::apply_journaled`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// The apply's change-turn (restore to the one before it to undo); `None` when nothing
    /// changed.
    pub turn: Option<u32>,
    /// Paths left alone because the checkpoints do not cover them (too large, or in an
    /// excluded folder), so an undo could not bring their content back.
    pub uncovered: Vec<String>,
}

impl Vcs {
    /// Runs `change` (which writes to the workspace and returns the paths it wrote) between
    /// two snapshots and records what changed as an [`TurnKind::Apply`] change-turn of
    /// `session`, summarised by `summary`; the user's changes since the session's last
    /// change-turn get a [`TurnKind::User`] change-turn first. Returns the change-turn's
    /// number (restore to the one before it to undo), `None` when nothing changed, or the
    /// error `change` returned (what it wrote before failing is still recorded). `from` names
    /// what was applied (a worktree's NAME).
    pub fn record_change<E>(
        &mut self,
        session: &str,
        session_turn: u32,
        summary: &str,
        from: &str,
        change: impl FnOnce() -> std::result::Result<Vec<String>, E>,
    ) -> Result<std::result::Result<Option<u32>, E>> {
        validate_session(session)?;
        let _lock = self.store.lock()?;
        self.check_no_journal()?;
        let mut log = self.load_log(session)?;
        let before = self.snap_tree()?;
        let pre_commit = self.commit(&mut log, before.tree, &format!("cairn: before {summary}"))?;
        self.record_user_changes(
            &mut log,
            before.tree,
            &pre_commit,
            session_turn,
            &before.excluded,
        )?;
        let started = now_ms();
        let outcome = change();
        let after = self.snap_tree()?;
        let changes = crate::treediff::diff(&self.store.repo, Some(before.tree), Some(after.tree))?;
        if changes.is_empty() {
            self.save_log(&mut log)?;
            return Ok(outcome.map(|_| None));
        }
        let after_commit = self.commit(&mut log, after.tree, &format!("cairn: {summary}"))?;
        let files: Vec<String> = changes.iter().map(change_name).collect();
        let turn = log.turns.len() as u32 + 1;
        log.turns.push(TurnRecord {
            turn,
            session_turn,
            files: files.clone(),
            summary: summary.to_string(),
            at: now(),
            before: pre_commit.to_string(),
            after: after_commit.to_string(),
            kind: TurnKind::Apply,
            excluded: after.excluded.clone(),
            excluded_before: before.excluded.clone(),
            others: Vec::new(),
            span: Some((started, now_ms())),
            restored_to: None,
            applied_from: Some(from.to_string()),
        });
        self.save_log(&mut log)?;
        // What it wrote is this session's, for the other sessions' attribution.
        self.windows
            .record(session, WindowKind::File, started, &files)?;
        Ok(outcome.map(|_| Some(turn)))
    }

    /// Writes `edits` into the workspace as a journaled change-turn of `session` (kind
    /// [`TurnKind::Apply`], from worktree `from`): the state before is committed, the plan
    /// written to the restore journal, then carried out. A write that fails rolls it back
    /// (the workspace is as before, [`VcsError::ApplyRolledBack`]); a process killed
    /// half-way leaves the journal, so the next change is refused until `cairn restore
    /// --recover finish|rollback` completes or undoes it.
    pub fn apply_journaled(
        &mut self,
        session: &str,
        session_turn: u32,
        summary: &str,
        from: &str,
        edits: &[ApplyEdit],
    ) -> Result<Applied> {
        validate_session(session)?;
        let _lock = self.store.lock()?;
        self.check_no_journal()?;
        let mut log = self.load_log(session)?;
        let started = now_ms();
        let before = self.snap_tree()?;
        let pre_commit = self.commit(&mut log, before.tree, &format!("cairn: before {summary}"))?;
        self.record_user_changes(
            &mut log,
            before.tree,
            &pre_commit,
            session_turn,
            &before.excluded,
        )?;
        let root = self.store.workspace().to_path_buf();
        let repo = &self.store.repo;
        let mut planned: BTreeMap<Vec<u8>, Edit> = BTreeMap::new();
        let mut applied = Applied::default();
        for (path, edit) in edits {
            let key = path.as_bytes().to_vec();
            let covered = treediff::lookup(repo, before.tree, &key)?.is_some()
                || std::fs::symlink_metadata(root.join(rel_path(&key))).is_err();
            if !covered {
                applied.uncovered.push(path.clone());
                continue;
            }
            let e = match edit {
                Some((bytes, mode)) => Edit::Put(repo.blob(bytes)?, *mode),
                None => Edit::Delete,
            };
            planned.insert(key, e);
        }
        let mut keep = |rel: &[u8]| crate::snapshot::is_empty_dir(&root.join(rel_path(rel)));
        let target = tree::apply(repo, Some(before.tree), &planned, &mut keep)?;
        let actions: Vec<Action> = treediff::diff(repo, Some(before.tree), Some(target))?
            .into_iter()
            .map(|c| Action {
                path: c.path,
                old: c.old.map(|(id, m)| (id.to_string(), m)),
                new: c.new.map(|(id, m)| (id.to_string(), m)),
            })
            .collect();
        if actions.is_empty() {
            self.save_log(&mut log)?;
            return Ok(applied);
        }
        let journal = Journal {
            session: session.to_string(),
            to_turn: log.turns.len() as u32,
            pre_commit: pre_commit.to_string(),
            pre_tree: before.tree.to_string(),
            target_tree: target.to_string(),
            summary: summary.to_string(),
            actions,
            excluded: before.excluded,
            applied_from: Some(from.to_string()),
        };
        self.save_log(&mut log)?;
        let journal_path = self.store.journal_path();
        write_json(&journal_path, &journal)?;
        let repo = &self.store.repo;
        let forward = restore::apply(
            repo,
            &root,
            self.writer.as_ref(),
            &journal.actions,
            true,
            target,
        );
        if let Err(e) = forward {
            let back = restore::apply(
                repo,
                &root,
                self.writer.as_ref(),
                &journal.actions,
                false,
                before.tree,
            );
            return Err(match back {
                Ok(()) => {
                    remove_journal(&journal_path)?;
                    VcsError::ApplyRolledBack {
                        from: from.to_string(),
                        source: Box::new(e),
                    }
                }
                Err(_) => VcsError::ApplyUnfinished {
                    session: session.to_string(),
                    from: from.to_string(),
                    source: Box::new(e),
                },
            });
        }
        applied.turn = self.finish_restore(&mut log, &journal, session_turn)?;
        // What it wrote is this session's, for the other sessions' attribution.
        let written: Vec<String> = journal.actions.iter().map(action_name).collect();
        self.windows
            .record(session, WindowKind::File, started, &written)?;
        Ok(applied)
    }
}
