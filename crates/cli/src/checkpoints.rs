//! `cairn turns`, `cairn diff` and `cairn restore`: a session's change-turns, their diffs, and
//! rolling the workspace back (see docs/cli.md).

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_runtime::checkpoints::{open_session_vcs, turn_json};
use cairn_runtime::{RuntimeError, VcsMode};
use cairn_vcs::{Recovery, RestoreOptions, RestoreReport, VcsError};
use clap::{Args, ValueEnum};

use crate::EXIT_USAGE;

/// `--vcs` values of `cairn run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VcsArg {
    /// Per-turn snapshots in Cairn's own store, never in the user's `.git`.
    Auto,
    /// No snapshots.
    Off,
}

impl From<VcsArg> for VcsMode {
    fn from(v: VcsArg) -> Self {
        match v {
            VcsArg::Auto => VcsMode::Auto,
            VcsArg::Off => VcsMode::Off,
        }
    }
}

/// Options of `cairn turns`.
#[derive(Debug, Args)]
pub struct TurnsArgs {
    /// The session.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// Where sessions live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
}

/// Options of `cairn diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The session.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// The change-turn (from 1).
    #[arg(long, value_name = "N")]
    pub turn: u32,
    /// Where sessions live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// How to resolve an interrupted restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecoverArg {
    /// Write the rest of the target state.
    Finish,
    /// Put every planned path back as it was before the restore.
    Rollback,
}

/// Options of `cairn restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The session.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// Restore to the state right after this change-turn; 0 = before the first change.
    #[arg(long, value_name = "N", required_unless_present = "recover")]
    pub to_turn: Option<u32>,
    /// Only these paths (repeatable; files or folders).
    #[arg(long = "path", value_name = "P")]
    pub paths: Vec<String>,
    /// Print what would be written, deleted and overwritten; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also overwrite files changed outside the agent's turns (still undoable).
    #[arg(long)]
    pub force: bool,
    /// Resolve an interrupted restore: finish it or roll it back.
    #[arg(long, value_enum, value_name = "HOW", conflicts_with_all = ["to_turn", "dry_run", "paths"])]
    pub recover: Option<RecoverArg>,
    /// Where sessions live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn state_dir(d: Option<PathBuf>) -> PathBuf {
    d.unwrap_or_else(cairn_runtime::default_state_dir)
}

fn fail_open(e: RuntimeError) -> ExitCode {
    errln!("error: {e}");
    ExitCode::from(EXIT_USAGE)
}

/// Usage-type errors (bad turn, unknown session) exit 2; everything else 1.
fn fail(e: VcsError) -> ExitCode {
    errln!("error: {e}");
    match e {
        VcsError::NoSuchTurn { .. }
        | VcsError::NoCheckpoints(_)
        | VcsError::InvalidSession(_)
        | VcsError::PathOutside(_)
        | VcsError::PendingRestore { .. }
        | VcsError::NothingToRecover => ExitCode::from(EXIT_USAGE),
        _ => ExitCode::FAILURE,
    }
}

/// `cairn turns`.
pub fn turns(args: TurnsArgs) -> ExitCode {
    let (vcs, _) = match open_session_vcs(&state_dir(args.state_dir), &args.session) {
        Ok(v) => v,
        Err(e) => return fail_open(e),
    };
    let list = match vcs.listing(&args.session, false) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    for t in list.iter().map(|e| &e.record) {
        if args.json {
            outln!("{}", turn_json(t));
        } else {
            outln!(
                "{:>3}  session turn {:<3} {}  {} file(s)  {}",
                t.turn,
                t.session_turn,
                t.at,
                t.files.len(),
                t.summary
            );
            for f in &t.files {
                outln!("       {f}");
            }
            // Changed meanwhile by someone else: not this turn's, kept by a restore.
            for o in t.others.iter().take(5) {
                outln!(
                    "       not this session's: {} ({})",
                    o.path,
                    o.cause.label()
                );
            }
            if t.others.len() > 5 {
                outln!("       not this session's: {} more", t.others.len() - 5);
            }
            // What its checkpoints could not hold cannot be brought back by a restore.
            let mut missing: Vec<_> = t.excluded_before.iter().chain(&t.excluded).collect();
            missing.sort_by(|a, b| a.path.cmp(&b.path));
            missing.dedup_by(|a, b| a.path == b.path);
            for e in missing.iter().take(5) {
                outln!("       not covered: {} ({})", e.path, e.reason);
            }
            if missing.len() > 5 {
                outln!("       not covered: {} more", missing.len() - 5);
            }
        }
    }
    if list.is_empty() && !args.json {
        errln!("no change-turns recorded for session {}", args.session);
    }
    ExitCode::SUCCESS
}

/// `cairn diff`.
pub fn diff(args: DiffArgs) -> ExitCode {
    let (vcs, _) = match open_session_vcs(&state_dir(args.state_dir), &args.session) {
        Ok(v) => v,
        Err(e) => return fail_open(e),
    };
    match vcs.diff_turn(&args.session, args.turn) {
        Ok(text) => {
            out!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// `cairn restore`.
pub fn restore(args: RestoreArgs) -> ExitCode {
    let dir = state_dir(args.state_dir);
    // Not while another process has the session open (a turn may be running there).
    let _lock = match cairn_runtime::SessionStore::new(&dir).lock(&args.session) {
        Ok(l) => l,
        Err(e) => return fail_open(e.into()),
    };
    let (mut vcs, turns) = match open_session_vcs(&dir, &args.session) {
        Ok(v) => v,
        Err(e) => return fail_open(e),
    };
    let result = match (args.recover, args.to_turn) {
        (Some(how), _) => {
            let how = match how {
                RecoverArg::Finish => Recovery::Finish,
                RecoverArg::Rollback => Recovery::RollBack,
            };
            vcs.recover(how, turns)
        }
        (None, Some(to_turn)) => {
            let opts = RestoreOptions {
                to_turn,
                paths: args.paths,
                dry_run: args.dry_run,
                force: args.force,
            };
            vcs.restore(&args.session, turns, &opts)
        }
        (None, None) => {
            errln!("error: --to-turn N is required");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let report = match result {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if args.json {
        match serde_json::to_string(&report) {
            Ok(line) => outln!("{line}"),
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print_report(&report, &args.session);
    }
    if !report.conflicts.is_empty() {
        // A partial restore (or the plan of one): paths were kept. Scripts must not take it
        // for a full one (the report names them and why).
        if args.json {
            let verb = if report.dry_run { "would be" } else { "were" };
            errln!(
                "{} path(s) {verb} left alone (the report says why; --force overwrites those \
                 changed outside the agent's turns, never the others)",
                report.conflicts.len()
            );
        }
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn print_report(r: &RestoreReport, session: &str) {
    let verb = if r.dry_run { "would " } else { "" };
    for p in &r.restored {
        let how = match (r.overwritten.contains(p), r.dry_run) {
            (true, true) => "overwrite",
            (true, false) => "overwrote",
            (false, true) => "restore",
            (false, false) => "restored",
        };
        outln!("{verb}{how:<10} {p}");
    }
    for p in &r.deleted {
        outln!(
            "{verb}{:<10} {p}",
            if r.dry_run { "delete" } else { "deleted" }
        );
    }
    for c in &r.conflicts {
        outln!("{:<10} {} ({})", "kept", c.path, c.reason);
    }
    for m in &r.missing {
        outln!(
            "{:<10} {m} (in neither the current state nor the target)",
            "missing"
        );
    }
    if r.restored.is_empty() && r.deleted.is_empty() {
        if r.conflicts.is_empty() {
            outln!(
                "nothing to change: the covered files already match turn {}",
                r.to_turn
            );
        } else {
            outln!(
                "nothing else to change: only the {} path(s) kept above differ from turn {}",
                r.conflicts.len(),
                r.to_turn
            );
        }
    }
    if let Some(t) = r.turn {
        errln!(
            "recorded as change-turn {t}; undo with: cairn restore --session {session} --to-turn {}",
            t - 1
        );
    }
    if !r.conflicts.is_empty() {
        errln!(
            "{} path(s) changed outside the agent's turns were left alone (--force overwrites them; still undoable)",
            r.conflicts.len()
        );
    }
}

/// `cairn checkpoints …`: the checkpoint store of a workspace.
#[derive(Debug, clap::Subcommand)]
pub enum CheckpointsCmd {
    /// Size of the workspace's checkpoint store against its budget.
    Usage(StoreArgs),
    /// Drop sessions past retention (then the oldest while over budget) and prune objects no
    /// session reaches.
    Gc(StoreArgs),
}

/// Which workspace's store.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The workspace [default: current dir].
    #[arg(short, long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Where sessions and snapshots live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `cairn checkpoints usage|gc`.
pub fn store_cmd(cmd: CheckpointsCmd) -> ExitCode {
    let (args, gc) = match cmd {
        CheckpointsCmd::Usage(a) => (a, false),
        CheckpointsCmd::Gc(a) => (a, true),
    };
    let ws = match args
        .workspace
        .clone()
        .map(Ok)
        .unwrap_or_else(std::env::current_dir)
    {
        Ok(w) => w,
        Err(e) => {
            errln!("error: cannot read the current dir: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let config = cairn_vcs::VcsConfig {
        watch: false,
        ..cairn_vcs::VcsConfig::default()
    };
    let state = state_dir(args.state_dir);
    if gc {
        // Removed worktrees past their retention (their kept state and files, which may hold
        // secrets such as .env) go with the checkpoints.
        let layout = cairn_runtime::worktrees::layout(&state);
        if let Ok(repo) = cairn_worktree::Repo::discover(&ws, &layout) {
            match cairn_worktree::prune_expired(&repo) {
                Ok(gone) => {
                    for name in gone {
                        errln!(
                            "forgot removed worktree {name}: its {}-day retention ended",
                            cairn_worktree::RETENTION_DAYS
                        );
                    }
                }
                Err(e) => errln!("note: cannot drop expired worktree removals: {e}"),
            }
        }
    }
    // A workspace that never had a checkpoint has no store: say so, create nothing.
    let canonical = ws.canonicalize().unwrap_or_else(|_| ws.clone());
    if ws.is_dir() && !cairn_vcs::store_dir(&state, &canonical).is_dir() {
        if args.json {
            outln!("{}", serde_json::json!({ "store": null }));
        } else {
            outln!(
                "no checkpoint store for {} yet (nothing to measure or collect)",
                canonical.display()
            );
        }
        return ExitCode::SUCCESS;
    }
    let mut vcs = match cairn_vcs::Vcs::open(&state, &ws, config) {
        Ok(v) => v,
        Err(e @ VcsError::Workspace { .. }) => {
            errln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => return fail(e),
    };
    let value = if gc {
        match vcs.gc() {
            Ok(r) => {
                if !args.json {
                    outln!(
                        "dropped {} session(s), pruned {} object(s): {} → {} bytes{}",
                        r.dropped_sessions.len(),
                        r.pruned_objects,
                        r.bytes_before,
                        r.bytes_after,
                        if r.over_budget {
                            " (still over budget)"
                        } else {
                            ""
                        }
                    );
                }
                serde_json::to_value(r)
            }
            Err(e) => return fail(e),
        }
    } else {
        match vcs.usage() {
            Ok(u) => {
                if !args.json {
                    outln!(
                        "{} bytes in {} session(s), budget {} bytes{}  ({})",
                        u.bytes,
                        u.sessions,
                        u.budget_bytes,
                        if u.over_budget {
                            " — OVER BUDGET"
                        } else {
                            ""
                        },
                        vcs.store_dir().display()
                    );
                }
                let worktrees = cairn_runtime::worktrees::usage(&ws, &state).ok().flatten();
                if let (false, Some(w)) = (args.json, &worktrees) {
                    if w.count > 0 {
                        outln!(
                            "worktrees: {} bytes in {}, budget {} bytes{}",
                            w.bytes,
                            w.count,
                            w.budget_bytes,
                            if w.over_budget {
                                " — OVER BUDGET"
                            } else {
                                ""
                            }
                        );
                    }
                }
                serde_json::to_value(u).map(|mut v| {
                    // The repository's worktrees (null outside a git repository).
                    v["worktrees"] = serde_json::to_value(&worktrees).unwrap_or_default();
                    v
                })
            }
            Err(e) => return fail(e),
        }
    };
    if args.json {
        match value {
            Ok(v) => outln!("{v}"),
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
