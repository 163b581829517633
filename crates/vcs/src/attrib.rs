//! Whose change is whose. A turn's snapshots cut it into intervals: the session's own command
//! windows (snapshotted before and after each command), and the gaps between them. A path a
//! file tool of the session reported as written is the session's. A path that changed in one
//! of its command windows is the session's when no other session ran a command meanwhile,
//! else *uncertain*. Anything else that changed is someone else's: another session's when
//! that session's file tool wrote it or only that session's commands ran meanwhile, else the
//! user's (changed outside any agent's command).

use std::collections::{BTreeSet, HashMap};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::log::{SessionLog, StepKind, TurnKind};
use crate::treediff;
use crate::windows::{Window, WindowKind};

/// Why a path changed during a turn is not that turn's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "camelCase")]
pub enum Cause {
    /// Another session's: its file tool wrote it, or only its commands ran meanwhile.
    #[serde(rename_all = "camelCase")]
    Session {
        /// The sessions.
        sessions: Vec<String>,
    },
    /// Changed while this session's command ran alongside other sessions' commands.
    #[serde(rename_all = "camelCase")]
    Uncertain {
        /// The other sessions whose commands ran meanwhile.
        sessions: Vec<String>,
    },
    /// Changed while no agent command ran: the user's (or another program's).
    Outside,
}

impl Cause {
    /// Why a restore keeps such a path, for its conflict list.
    pub fn reason(&self) -> String {
        match self {
            Cause::Session { sessions } if sessions.len() == 1 => format!(
                "changed by another session ({}); kept even with --force",
                sessions[0]
            ),
            Cause::Session { sessions } => format!(
                "changed by other sessions ({}); kept even with --force",
                sessions.join(", ")
            ),
            Cause::Uncertain { sessions } => format!(
                "uncertain: overlapping commands of sessions {} (use --force to overwrite; it stays recoverable)",
                sessions.join(", ")
            ),
            Cause::Outside => "changed outside the agent's commands (use --force to overwrite; it stays recoverable)".into(),
        }
    }

    /// A short label for listings: whose change it is.
    pub fn label(&self) -> String {
        match self {
            Cause::Session { sessions } => format!("changed by session {}", sessions.join(", ")),
            Cause::Uncertain { sessions } => {
                format!("uncertain: overlapping commands of {}", sessions.join(", "))
            }
            Cause::Outside => "changed outside the agent's commands".into(),
        }
    }

    /// Whether `--force` may overwrite it (never another session's known work).
    pub fn forceable(&self) -> bool {
        !matches!(self, Cause::Session { .. })
    }

    fn rank(&self) -> u8 {
        match self {
            Cause::Outside => 0,
            Cause::Uncertain { .. } => 1,
            Cause::Session { .. } => 2,
        }
    }

    /// The stronger of two causes (another session's beats uncertain beats the user's).
    pub(crate) fn max(self, other: Cause) -> Cause {
        match (self, other) {
            (Cause::Session { sessions: a }, Cause::Session { sessions: b }) => Cause::Session {
                sessions: merged(a, b),
            },
            (Cause::Uncertain { sessions: a }, Cause::Uncertain { sessions: b }) => {
                Cause::Uncertain {
                    sessions: merged(a, b),
                }
            }
            (a, b) if b.rank() > a.rank() => b,
            (a, _) => a,
        }
    }
}

fn merged(a: Vec<String>, b: Vec<String>) -> Vec<String> {
    let set: BTreeSet<String> = a.into_iter().chain(b).collect();
    set.into_iter().collect()
}

/// A path changed during a turn that is not (only) the turn's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Foreign {
    /// Path relative to the workspace.
    pub path: String,
    /// Whose it is.
    #[serde(flatten)]
    pub cause: Cause,
}

/// One snapshot of a turn's timeline: its tree and when it was taken.
pub(crate) struct Point {
    pub tree: Oid,
    pub from_ms: i64,
    pub to_ms: i64,
}

/// What the interval after a point is.
pub(crate) enum Span {
    /// Between the session's own side effects (a file tool's `produced` paths are its own).
    Gap { produced: Vec<String> },
    /// One of the session's own command windows.
    Command,
}

/// A turn's timeline: `points[i]` and `points[i + 1]` bound `spans[i]`.
#[derive(Default)]
pub(crate) struct Timeline {
    pub points: Vec<Point>,
    pub spans: Vec<Span>,
}

/// How a change to `path` in `[from, to]` counts; `None` = the session's own. Only windows
/// of other sessions that overlap the interval and changed `path` (or whose changes are not
/// known) are candidates.
pub(crate) fn classify(
    windows: &[Window],
    me: &str,
    path: &str,
    from: i64,
    to: i64,
    own_window: bool,
) -> Option<Cause> {
    let candidates: Vec<&Window> = windows
        .iter()
        .filter(|w| w.session != me && w.overlaps(from, to) && w.may_have_changed(path))
        .collect();
    let sessions = |kind: Option<WindowKind>| -> Vec<String> {
        candidates
            .iter()
            .filter(|w| kind.is_none_or(|k| w.kind == k))
            .map(|w| w.session.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let writers = sessions(Some(WindowKind::File));
    if !writers.is_empty() {
        return Some(Cause::Session { sessions: writers });
    }
    let commands = sessions(None);
    match (own_window, commands.is_empty()) {
        (true, true) => None,
        (true, false) => Some(Cause::Uncertain { sessions: commands }),
        (false, false) => Some(Cause::Session { sessions: commands }),
        (false, true) => Some(Cause::Outside),
    }
}

fn norm(p: &str) -> &str {
    p.trim_start_matches("./").trim_end_matches('/')
}

/// Splits the changes `changed` (paths of the whole turn) into the session's own and the
/// others', walking the timeline interval by interval.
pub(crate) fn attribute(
    repo: &Repository,
    windows: &[Window],
    me: &str,
    timeline: &Timeline,
    changed: &[Vec<u8>],
) -> Result<(BTreeSet<Vec<u8>>, Vec<Foreign>)> {
    let wanted: BTreeSet<&[u8]> = changed.iter().map(Vec::as_slice).collect();
    let mut own: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut foreign: HashMap<Vec<u8>, Cause> = HashMap::new();
    for (i, span) in timeline.spans.iter().enumerate() {
        let (Some(a), Some(b)) = (timeline.points.get(i), timeline.points.get(i + 1)) else {
            break;
        };
        if a.tree == b.tree {
            continue;
        }
        for c in treediff::diff(repo, Some(a.tree), Some(b.tree))? {
            if !wanted.contains(c.path.as_slice()) {
                continue;
            }
            let path = String::from_utf8_lossy(&c.path).into_owned();
            let cause = match span {
                Span::Gap { produced } if produced.iter().any(|p| norm(p) == path) => None,
                Span::Gap { .. } => classify(windows, me, &path, a.from_ms, b.to_ms, false),
                Span::Command => classify(windows, me, &path, a.from_ms, b.to_ms, true),
            };
            match cause {
                None => {
                    own.insert(c.path);
                }
                Some(cause) => {
                    let merged = match foreign.remove(&c.path) {
                        Some(old) => old.max(cause),
                        None => cause,
                    };
                    foreign.insert(c.path, merged);
                }
            }
        }
    }
    let mut others: Vec<Foreign> = foreign
        .into_iter()
        .map(|(p, cause)| Foreign {
            path: String::from_utf8_lossy(&p).into_owned(),
            cause,
        })
        .collect();
    others.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((own, others))
}

/// The timeline of a pending turn's steps, ending at `end`.
pub(crate) fn timeline(
    repo: &Repository,
    steps: &[crate::log::Step],
    end: Option<Point>,
) -> Result<Timeline> {
    let tree = |c: &str| -> Result<Oid> { Ok(repo.find_commit(Oid::from_str(c)?)?.tree_id()) };
    let mut t = Timeline::default();
    for s in steps {
        let (from_ms, to_ms) = s.snap_ms.unwrap_or((0, 0));
        t.points.push(Point {
            tree: tree(&s.commit)?,
            from_ms,
            to_ms,
        });
        match (&s.after, s.kind) {
            (Some(after), _) => {
                t.spans.push(Span::Command);
                t.points.push(Point {
                    tree: tree(&after.commit)?,
                    from_ms: after.snap_ms.0,
                    to_ms: after.snap_ms.1,
                });
                t.spans.push(Span::Gap {
                    produced: Vec::new(),
                });
            }
            (None, Some(StepKind::File)) => t.spans.push(Span::Gap {
                produced: s.produced.clone(),
            }),
            // A command whose end was never snapshotted ran until the next snapshot.
            (None, Some(StepKind::Command)) => t.spans.push(Span::Command),
            (None, _) => t.spans.push(Span::Gap {
                produced: Vec::new(),
            }),
        }
    }
    match end {
        Some(p) => t.points.push(p),
        // Crashed: the turn ends at its last snapshot.
        None => {
            t.spans.pop();
        }
    }
    Ok(t)
}

/// Paths a restore to checkpoint `to` must not silently revert, with why: changes outside
/// the session's change-turns after that checkpoint (up to `pre`, the current tree), and
/// what the later change-turns recorded as someone else's.
pub(crate) fn foreign_since(
    repo: &Repository,
    log: &SessionLog,
    to: u32,
    pre: Oid,
    windows: &[Window],
    now_ms: i64,
) -> Result<HashMap<Vec<u8>, Cause>> {
    let tree = |c: &str| -> Result<Oid> { Ok(repo.find_commit(Oid::from_str(c)?)?.tree_id()) };
    let mut out: HashMap<Vec<u8>, Cause> = HashMap::new();
    let mut add = |path: Vec<u8>, cause: Cause| {
        let merged = match out.remove(&path) {
            Some(old) => old.max(cause),
            None => cause,
        };
        out.insert(path, merged);
    };
    let count = log.turns.len();
    for k in to as usize..=count {
        // The gap after checkpoint k (its turn's end) up to the next turn, or now.
        let a = match k {
            0 => tree(&log.turns[0].before)?,
            k => tree(&log.turns[k - 1].after)?,
        };
        let next = log.turns.get(k);
        let b = match next {
            Some(t) => tree(&t.before)?,
            None => pre,
        };
        let from = match k {
            0 => None,
            k => log.turns[k - 1].span.map(|s| s.1),
        };
        let until = next.and_then(|t| t.span.map(|s| s.0)).unwrap_or(now_ms);
        for c in treediff::diff(repo, Some(a), Some(b))? {
            let path = String::from_utf8_lossy(&c.path).into_owned();
            let cause = from
                .and_then(|f| classify(windows, &log.session_id, &path, f, until, false))
                .unwrap_or(Cause::Outside);
            add(c.path, cause);
        }
        let Some(t) = next else { continue };
        for f in &t.others {
            add(f.path.as_bytes().to_vec(), f.cause.clone());
        }
        // The user's own change-turns after the target are theirs too.
        if t.kind == TurnKind::User && t.others.is_empty() {
            for c in treediff::diff(repo, Some(tree(&t.before)?), Some(tree(&t.after)?))? {
                add(c.path, Cause::Outside);
            }
        }
    }
    Ok(out)
}
