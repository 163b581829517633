//! Changes Cairn itself makes to a workspace outside an agent turn (applying a worktree back
//! to its folder), recorded as change-turns so a restore undoes them like any other.

use crate::error::Result;
use crate::log::{TurnKind, TurnRecord};
use crate::store::validate_session;
use crate::vcs::{change_name, now, Vcs};
use crate::windows::{now_ms, WindowKind};

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
}
