//! A turn's steps in the checkpoint store: the snapshot before each side effect (opening a
//! command's window), the one after each command (closing it), and the change-turn recorded
//! at the turn's end with its attribution.

use git2::Oid;

use crate::error::Result;
use crate::log::{summarize, After, Pending, SessionLog, Step, StepKind, TurnKind, TurnRecord};
use crate::store::validate_session;
use crate::treediff;
use crate::vcs::{change_name, now, Vcs};
use crate::windows::{now_ms, WindowKind};

/// A side effect about to be snapshotted.
struct StepStart<'a> {
    session_turn: u32,
    tool: &'a str,
    call_id: &'a str,
    kind: StepKind,
    window: Option<String>,
}

impl Vcs {
    /// Snapshots before a side-effecting tool call of `session_turn` (the first one of a turn
    /// becomes the turn's "before" state).
    pub fn begin_step(
        &mut self,
        session: &str,
        session_turn: u32,
        tool: &str,
        call_id: &str,
        kind: StepKind,
    ) -> Result<()> {
        validate_session(session)?;
        let started = std::time::Instant::now();
        let _lock = self.store.lock()?;
        let mut log = self.load_log(session)?;
        if log
            .pending
            .as_ref()
            .is_some_and(|p| p.session_turn != session_turn)
        {
            self.close_pending(&mut log, "(interrupted turn)", true)?;
            self.save_log(&mut log)?;
        }
        let loaded_us = started.elapsed().as_micros() as u64;
        // The window opens before the snapshot, so whatever the command changes is after both.
        let window = match kind {
            StepKind::Command => Some(self.windows.open(session, WindowKind::Command)?),
            StepKind::File | StepKind::ReadOnly => None,
        };
        let step = StepStart {
            session_turn,
            tool,
            call_id,
            kind,
            window,
        };
        let window = step.window.clone();
        let r = self.snap_step(&mut log, step, started, loaded_us);
        match (&r, window) {
            // The call will not run: its window must not stay open for the other sessions.
            (Err(_), Some(w)) => {
                let _ = self.windows.close(&w, Some(&[]));
            }
            (Ok(()), Some(w)) => self.open_windows.push(w),
            _ => {}
        }
        r
    }

    /// Touches this process's open command windows (call every [`crate::windows::HEARTBEAT`]
    /// while a command runs), so a crash leaves them bounded.
    pub fn heartbeat(&self) {
        for w in &self.open_windows {
            self.windows.touch(w);
        }
    }

    fn snap_step(
        &mut self,
        log: &mut SessionLog,
        s: StepStart<'_>,
        started: std::time::Instant,
        loaded_us: u64,
    ) -> Result<()> {
        let StepStart {
            session_turn,
            tool,
            call_id,
            kind,
            window,
        } = s;
        let snap_from = now_ms();
        let ts = self.snap_tree()?;
        let snap_us = started.elapsed().as_micros() as u64;
        let msg = format!("cairn: before {tool} ({call_id}) in turn {session_turn}");
        let c = self.commit(log, ts.tree, &msg)?.to_string();
        tracing::debug!(
            loaded_us,
            snap_us,
            commit_us = started.elapsed().as_micros() as u64,
            full = ts.full_walk,
            hashed = ts.hashed,
            "snapshot before a side effect"
        );
        let step = Step {
            tool: tool.to_string(),
            call_id: call_id.to_string(),
            commit: c.clone(),
            kind: Some(kind),
            snap_ms: Some((snap_from, now_ms())),
            window,
            after: None,
            produced: Vec::new(),
        };
        log.pending
            .get_or_insert_with(|| Pending {
                session_turn,
                before: c,
                steps: Vec::new(),
                excluded_before: ts.excluded,
            })
            .steps
            .push(step);
        self.save_pending(log)
    }

    /// Records that the side effect `call_id` of `session_turn` returned: a command's window
    /// is closed by a snapshot, a file tool's written paths are kept (and published to the
    /// other sessions of the workspace).
    pub fn end_step(
        &mut self,
        session: &str,
        session_turn: u32,
        call_id: &str,
        produced: &[String],
    ) -> Result<()> {
        validate_session(session)?;
        let _lock = self.store.lock()?;
        let mut log = self.load_log(session)?;
        let Some(pending) = log
            .pending
            .as_ref()
            .filter(|p| p.session_turn == session_turn)
        else {
            return Ok(());
        };
        let Some(i) = pending.steps.iter().rposition(|s| s.call_id == call_id) else {
            return Ok(());
        };
        let step = pending.steps[i].clone();
        let mut updated = step.clone();
        updated.produced = produced.to_vec();
        let mut changed = Vec::new();
        if step.kind == Some(StepKind::Command) {
            let snap_from = now_ms();
            let ts = self.snap_tree()?;
            let msg = format!(
                "cairn: after {} ({call_id}) in turn {session_turn}",
                step.tool
            );
            let c = self.commit(&mut log, ts.tree, &msg)?.to_string();
            updated.after = Some(After {
                commit: c,
                snap_ms: (snap_from, now_ms()),
            });
            let before = self.tree_of(&step.commit)?;
            changed = treediff::diff(&self.store.repo, Some(before), Some(ts.tree))?
                .iter()
                .map(|c| String::from_utf8_lossy(&c.path).into_owned())
                .collect();
        }
        if let Some(w) = updated.window.take() {
            self.open_windows.retain(|o| *o != w);
            self.windows.close(&w, Some(&changed))?;
        }
        if step.kind == Some(StepKind::File) && !produced.is_empty() {
            let opened = step.snap_ms.map_or_else(now_ms, |s| s.0);
            self.windows
                .record(session, WindowKind::File, opened, produced)?;
        }
        if let Some(p) = log.pending.as_mut() {
            p.steps[i] = updated;
        }
        self.save_pending(&log)
    }

    /// Ends a turn: snapshots and records a change-turn if files changed since its first
    /// side effect. Turns without side effects record nothing.
    pub fn end_turn(
        &mut self,
        session: &str,
        session_turn: u32,
        input: &str,
    ) -> Result<Option<TurnRecord>> {
        validate_session(session)?;
        let _lock = self.store.lock()?;
        let mut log = self.load_log(session)?;
        let Some(p) = &log.pending else {
            return Ok(None);
        };
        let crashed = p.session_turn != session_turn;
        let summary = if crashed {
            "(interrupted turn)".to_string()
        } else {
            summarize(input)
        };
        let rec = self.close_pending(&mut log, &summary, crashed)?;
        self.save_log(&mut log)?;
        // The turn is recorded; the stat cache only speeds up the next snapshot.
        if let Err(e) = self.snap.flush() {
            tracing::warn!(error = %e, "cannot write the checkpoint stat cache");
        }
        Ok(rec)
    }

    /// Records the pending turn. A turn its process never ended (`crashed`: killed) ends at
    /// its last snapshot, taken before its last side effect: what changed after that (that
    /// effect, and whatever the user did since) counts as changed outside the agent's turns,
    /// so a restore keeps it rather than overwriting the user's work.
    fn close_pending(
        &mut self,
        log: &mut SessionLog,
        summary: &str,
        crashed: bool,
    ) -> Result<Option<TurnRecord>> {
        let Some(p) = log.pending.take() else {
            return Ok(None);
        };
        let started_ms = p.steps.first().and_then(|s| s.snap_ms).map(|s| s.0);
        let (after, after_tree, excluded, end) = if crashed {
            let last = p.steps.last().map_or(&p.before, |s| {
                s.after.as_ref().map_or(&s.commit, |a| &a.commit)
            });
            let commit = Oid::from_str(last)?;
            (commit, self.tree_of(last)?, p.excluded_before.clone(), None)
        } else {
            let from_ms = now_ms();
            let ts = self.snap_tree()?;
            let msg = format!("cairn: end of turn {}", p.session_turn);
            let c = self.commit(log, ts.tree, &msg)?;
            let end = crate::attrib::Point {
                tree: ts.tree,
                from_ms,
                to_ms: now_ms(),
            };
            (c, ts.tree, ts.excluded, Some(end))
        };
        // No window of this turn stays open, whatever happened to its calls.
        for w in p.steps.iter().filter_map(|s| s.window.as_deref()) {
            self.open_windows.retain(|o| o != w);
            self.windows.close(w, None)?;
        }
        let ended_ms = end.as_ref().map_or_else(now_ms, |e| e.to_ms);
        let before_tree = self.tree_of(&p.before)?;
        let changes = treediff::diff(&self.store.repo, Some(before_tree), Some(after_tree))?;
        if changes.is_empty() {
            return Ok(None);
        }
        // Logs from before attribution (steps without a kind) count every change as the turn's.
        let attributed = started_ms.is_some()
            && p.steps.first().is_some_and(|s| s.commit == p.before)
            && p.steps.iter().all(|s| s.kind.is_some());
        let (files, others, span) = if attributed {
            let timeline = crate::attrib::timeline(&self.store.repo, &p.steps, end)?;
            let windows = self.windows.load()?;
            let paths: Vec<Vec<u8>> = changes.iter().map(|c| c.path.clone()).collect();
            let (own, others) = crate::attrib::attribute(
                &self.store.repo,
                &windows,
                &log.session_id,
                &timeline,
                &paths,
            )?;
            let files = changes
                .iter()
                .filter(|c| own.contains(&c.path))
                .map(change_name)
                .collect();
            (files, others, started_ms.map(|s| (s, ended_ms)))
        } else {
            (changes.iter().map(change_name).collect(), Vec::new(), None)
        };
        let rec = TurnRecord {
            turn: log.turns.len() as u32 + 1,
            session_turn: p.session_turn,
            files,
            others,
            span,
            summary: summary.to_string(),
            at: now(),
            before: p.before,
            after: after.to_string(),
            kind: TurnKind::Agent,
            excluded,
            excluded_before: p.excluded_before,
            restored_to: None,
            applied_from: None,
        };
        log.turns.push(rec.clone());
        Ok(Some(rec))
    }
}
