//! `cairn worktrees …` and the worktree part of `cairn run --worktree NAME`.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_protocol::{Event, Progress};
use cairn_runtime::worktrees::{self, Prepared};
use cairn_runtime::SessionStore;
use cairn_worktree::{Repo, StateStore, WorktreeError};
use clap::{Args, Subcommand};

use crate::run::RunArgs;
use crate::EXIT_USAGE;

/// Where: the workspace and the state dir.
#[derive(Debug, Clone, Args)]
pub struct Place {
    /// A folder of the repository [default: current dir].
    #[arg(short, long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Where sessions, checkpoints and worktree records live [default: the app's data dir].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// `cairn worktrees [list]` and its subcommands.
#[derive(Debug, Args)]
pub struct WorktreesArgs {
    #[command(subcommand)]
    command: Option<WorktreesCmd>,
    #[command(flatten)]
    place: Place,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

/// What to do with worktrees.
#[derive(Debug, Subcommand)]
pub enum WorktreesCmd {
    /// The worktrees Cairn created for the repository, one per line.
    List {
        #[command(flatten)]
        place: Place,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Unified diff of the worktree against its base commit.
    Diff {
        /// The worktree's NAME.
        name: String,
        #[command(flatten)]
        place: Place,
    },
    /// Merge the worktree's changes into the folder (3-way per file; undoable).
    Apply {
        /// The worktree's NAME.
        name: String,
        #[command(flatten)]
        place: Place,
        /// Say what would happen; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Record the apply in this folder session [default: the newest free one, else a new
        /// one].
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Settle the conflicting PATH by keeping the folder's version (the worktree's counts
        /// as applied; the worktree keeps it). Repeatable.
        #[arg(long, value_name = "PATH")]
        keep: Vec<String>,
        /// Settle the conflicting PATH by taking the worktree's version (part of the apply's
        /// change-turn: its undo brings the folder's back). Repeatable.
        #[arg(long, value_name = "PATH")]
        take: Vec<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove the worktree (refused while it has changes neither applied nor committed).
    Remove {
        /// The worktree's NAME.
        name: String,
        #[command(flatten)]
        place: Place,
        /// Remove even with unapplied changes (its state stays restorable for 30 days).
        #[arg(long)]
        force: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Commit everything changed in the worktree on its branch cairn/NAME.
    Commit {
        /// The worktree's NAME.
        name: String,
        #[command(flatten)]
        place: Place,
        /// The commit message.
        #[arg(short, long, value_name = "TEXT")]
        message: String,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bring the folder's HEAD into the worktree (merge, or --rebase); conflicts are listed and
    /// left in the worktree.
    Update {
        /// The worktree's NAME.
        name: String,
        #[command(flatten)]
        place: Place,
        /// Rebase the worktree's commits instead of merging.
        #[arg(long)]
        rebase: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Hand a session over between the folder and a worktree, with its history (a copy of
    /// the session in the new place; the folder's changes carried, or the worktree's applied).
    Handoff {
        /// The session to hand over.
        #[arg(long, value_name = "ID")]
        session: String,
        /// Into worktree NAME.
        #[arg(
            long,
            value_name = "NAME",
            conflicts_with = "to_folder",
            required_unless_present = "to_folder"
        )]
        to: Option<String>,
        /// Back to the folder.
        #[arg(long)]
        to_folder: bool,
        /// Where sessions live [default: the app's data dir].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Recreate a worktree removed with --force, in its last state.
    Restore {
        /// The worktree's NAME.
        name: String,
        #[command(flatten)]
        place: Place,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

impl Place {
    fn state_dir(&self) -> PathBuf {
        self.state_dir
            .clone()
            .unwrap_or_else(cairn_runtime::default_state_dir)
    }

    fn workspace(&self) -> Result<PathBuf, WorktreeError> {
        match &self.workspace {
            Some(w) => Ok(w.clone()),
            None => std::env::current_dir()
                .map_err(|e| WorktreeError::Usage(format!("cannot read the current dir: {e}"))),
        }
    }

    fn repo(&self) -> Result<Repo, WorktreeError> {
        Repo::discover(&self.workspace()?, &worktrees::layout(&self.state_dir()))
    }
}

/// Prints `e` (as JSON `{"error"}` when `json`) and maps it to the contract's exit status.
fn fail(e: &WorktreeError, json: bool) -> ExitCode {
    if json {
        outln!("{}", serde_json::json!({ "error": e.to_string() }));
    }
    errln!("error: {e}");
    ExitCode::from(worktrees::exit_code(e))
}

/// Runs a `cairn worktrees` command.
pub fn run(args: WorktreesArgs) -> ExitCode {
    match args.command {
        None => list(&args.place, args.json),
        Some(WorktreesCmd::List { place, json }) => {
            let place = Place {
                workspace: place.workspace.or(args.place.workspace),
                state_dir: place.state_dir.or(args.place.state_dir),
            };
            list(&place, json || args.json)
        }
        Some(WorktreesCmd::Diff { name, place }) => diff(&place, &name),
        Some(WorktreesCmd::Apply {
            name,
            place,
            dry_run,
            session,
            keep,
            take,
            json,
        }) => {
            let resolutions: Vec<(String, worktrees::Resolution)> = keep
                .into_iter()
                .map(|p| (p, worktrees::Resolution::KeepFolder))
                .chain(
                    take.into_iter()
                        .map(|p| (p, worktrees::Resolution::TakeWorktree)),
                )
                .collect();
            apply(
                &place,
                &name,
                dry_run,
                session.as_deref(),
                &resolutions,
                json,
            )
        }
        Some(WorktreesCmd::Remove {
            name,
            place,
            force,
            json,
        }) => remove(&place, &name, force, json),
        Some(WorktreesCmd::Restore { name, place, json }) => restore(&place, &name, json),
        Some(WorktreesCmd::Commit {
            name,
            place,
            message,
            json,
        }) => commit(&place, &name, &message, json),
        Some(WorktreesCmd::Update {
            name,
            place,
            rebase,
            json,
        }) => update(&place, &name, rebase, json),
        Some(WorktreesCmd::Handoff {
            session,
            to,
            to_folder: _,
            state_dir,
            json,
        }) => handoff(state_dir, &session, to, json),
    }
}

fn list(place: &Place, json: bool) -> ExitCode {
    let ws = match place.workspace() {
        Ok(w) => w,
        Err(e) => return fail(&e, json),
    };
    let state_dir = place.state_dir();
    let repo = match place.repo() {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    if let Ok(gone) = cairn_worktree::prune_expired(&repo) {
        for name in gone {
            errln!(
                "forgot removed worktree {name}: its {}-day retention ended",
                cairn_worktree::RETENTION_DAYS
            );
        }
    }
    let rows = match worktrees::list(&ws, &state_dir) {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    if json {
        for row in &rows {
            match serde_json::to_string(row) {
                Ok(line) => outln!("{line}"),
                Err(e) => errln!("error: {e}"),
            }
        }
        return ExitCode::SUCCESS;
    }
    if let Ok(Some(u)) = worktrees::usage(&ws, &state_dir) {
        if u.count > 0 {
            errln!(
                "{} worktree(s), {} bytes on disk (build output included), budget {} bytes{}",
                u.count,
                u.bytes,
                u.budget_bytes,
                if u.over_budget {
                    " — OVER BUDGET: remove some"
                } else {
                    ""
                }
            );
        }
    }
    for row in &rows {
        if let Some(why) = &row.broken {
            outln!("{}  {}  BROKEN: {why}", row.name, row.branch);
            continue;
        }
        outln!(
            "{}  {}  {} changed, {} unapplied, {} commit(s) ahead  {} session(s)  {}",
            row.name,
            row.branch,
            row.changed_files,
            row.unapplied_files,
            row.commits_ahead,
            row.sessions.len(),
            row.path
        );
    }
    for record in repo.records.all().unwrap_or_default() {
        if let Some(removed) = &record.removed {
            errln!(
                "{}  removed {}, its work kept: `cairn worktrees restore {}` brings it back",
                record.name,
                removed.at,
                record.name
            );
        }
    }
    if rows.is_empty() {
        errln!(
            "no worktrees created by Cairn for {}",
            repo.folder.display()
        );
    }
    ExitCode::SUCCESS
}

fn diff(place: &Place, name: &str) -> ExitCode {
    let run = || -> Result<String, WorktreeError> {
        let repo = place.repo()?;
        let record = cairn_worktree::owned(&repo, name)?;
        cairn_worktree::check(&repo, &record)?;
        let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
        cairn_worktree::diff(&store, &record)
    };
    match run() {
        Ok(text) => {
            out!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, false),
    }
}

fn apply(
    place: &Place,
    name: &str,
    dry_run: bool,
    session: Option<&str>,
    resolutions: &[(String, worktrees::Resolution)],
    json: bool,
) -> ExitCode {
    let ws = match place.workspace() {
        Ok(w) => w,
        Err(e) => return fail(&e, json),
    };
    let state_dir = place.state_dir();
    let target = match session {
        Some(id) => worktrees::ApplyTarget::Session(id.to_string()),
        None => worktrees::ApplyTarget::Auto,
    };
    let done = if dry_run || resolutions.is_empty() {
        worktrees::apply(&ws, &state_dir, name, dry_run, &target)
    } else {
        worktrees::apply_resolving(&ws, &state_dir, name, &target, resolutions)
    };
    let report = match done {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    if json {
        match serde_json::to_string(&report) {
            Ok(line) => outln!("{line}"),
            Err(e) => errln!("error: {e}"),
        }
    } else {
        let verb = if dry_run { "would apply" } else { "applied" };
        for p in &report.applied {
            outln!("{verb}  {p}");
        }
        for c in &report.conflicts {
            outln!("conflict  {}  ({})", c.path, c.reason);
        }
        for s in &report.skipped {
            errln!("not applied  {s}");
        }
        if report.applied.is_empty() && report.conflicts.is_empty() {
            errln!("nothing to apply: worktree {name} has no changes since its last apply");
        }
        if let Some(undo) = &report.undo {
            errln!("undo with: {undo}");
        }
        if !report.conflicts.is_empty() {
            errln!(
                "{} file(s) left untouched: resolve them by hand, or apply again with --keep PATH \
                 (the folder's version) or --take PATH (the worktree's); the worktree keeps its \
                 version",
                report.conflicts.len()
            );
        }
    }
    if report.conflicts.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn remove(place: &Place, name: &str, force: bool, json: bool) -> ExitCode {
    // The runtime's one removal (sessions in it locked meanwhile), then the user's (and the
    // trusted project's) WorktreeRemove hooks, run in the folder.
    let run = || -> Result<cairn_worktree::Removal, WorktreeError> {
        let workspace = place.workspace()?;
        let state_dir = place.state_dir();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| WorktreeError::Usage(format!("cannot start: {e}")))?;
        let (removal, problems) = rt.block_on(worktrees::remove_with_hooks(
            &workspace,
            &state_dir,
            name,
            force,
            &[],
        ))?;
        for p in problems {
            errln!("note: {p}");
        }
        Ok(removal)
    };
    match run() {
        Ok(r) => {
            if json {
                match serde_json::to_string(&r) {
                    Ok(line) => outln!("{line}"),
                    Err(e) => errln!("error: {e}"),
                }
            } else {
                print_removal(name, &r);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, json),
    }
}

/// What a removal did, in words: the kept branch and its commits, what stays restorable,
/// what was lost or left out.
fn print_removal(name: &str, r: &cairn_worktree::Removal) {
    outln!("removed worktree {name}");
    if r.branch_deleted {
        outln!("deleted branch cairn/{name} (no commits beyond its base)");
    } else if r.commits_ahead > 0 {
        outln!(
            "kept branch cairn/{name}: it has {} commit(s) beyond its base not merged into the \
             folder",
            r.commits_ahead
        );
        for c in &r.unmerged_commits {
            outln!("  {c}");
        }
    }
    for f in &r.kept {
        outln!("kept  {f}");
    }
    if let Some(until) = &r.restorable_until {
        outln!(
            "{} unapplied file(s) and {} ignored, included or nested-repository path(s) kept \
             until {until}: `cairn worktrees restore {name}` brings them back",
            r.unapplied.len(),
            r.kept.len()
        );
    }
    for f in &r.not_kept {
        errln!("lost (--force): {f}");
    }
    if !r.dropped.is_empty() {
        errln!(
            "not kept (dependency and build folders): {}",
            cairn_worktree::listed(&r.dropped)
        );
    }
}

fn commit(place: &Place, name: &str, message: &str, json: bool) -> ExitCode {
    match place
        .repo()
        .and_then(|repo| cairn_worktree::commit(&repo, name, message))
    {
        Ok(c) => {
            if json {
                match serde_json::to_string(&c) {
                    Ok(line) => outln!("{line}"),
                    Err(e) => errln!("error: {e}"),
                }
            } else {
                outln!(
                    "committed {} on {}",
                    &c.commit[..12.min(c.commit.len())],
                    c.branch
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, json),
    }
}

fn update(place: &Place, name: &str, rebase: bool, json: bool) -> ExitCode {
    let how = if rebase {
        cairn_worktree::UpdateHow::Rebase
    } else {
        cairn_worktree::UpdateHow::Merge
    };
    let r = match place
        .repo()
        .and_then(|repo| cairn_worktree::update(&repo, name, how))
    {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    if json {
        match serde_json::to_string(&r) {
            Ok(line) => outln!("{line}"),
            Err(e) => errln!("error: {e}"),
        }
    } else if r.up_to_date {
        outln!(
            "worktree {name} already has the folder's HEAD {}",
            &r.head[..r.head.len().min(12)]
        );
    } else if r.conflicts.is_empty() {
        outln!(
            "brought the folder's HEAD {} into worktree {name}",
            &r.head[..r.head.len().min(12)]
        );
    } else {
        for c in &r.conflicts {
            outln!("conflict  {c}");
        }
        errln!(
            "{} file(s) in conflict in the worktree: resolve them there, commit (or `git rebase              --continue`), then update again",
            r.conflicts.len()
        );
    }
    if r.conflicts.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn handoff(state_dir: Option<PathBuf>, session: &str, to: Option<String>, json: bool) -> ExitCode {
    let state_dir = state_dir.unwrap_or_else(cairn_runtime::default_state_dir);
    let to = match to {
        Some(name) => worktrees::HandoffTo::Worktree(name),
        None => worktrees::HandoffTo::Folder,
    };
    let h = match worktrees::handoff(&state_dir, session, &to) {
        Ok(h) => h,
        Err(e) => return fail(&e, json),
    };
    let conflicts = h.apply.as_ref().map_or(0, |a| a.conflicts.len());
    if json {
        match serde_json::to_string(&h) {
            Ok(line) => outln!("{line}"),
            Err(e) => errln!("error: {e}"),
        }
    } else {
        outln!(
            "session {} continues as {} in {}",
            session,
            h.session,
            h.workspace
        );
        if let Some(a) = &h.apply {
            for c in &a.conflicts {
                outln!("conflict  {}  ({})", c.path, c.reason);
            }
        }
        for s in &h.skipped {
            errln!("note: not copied into the worktree: {s}");
        }
    }
    if conflicts == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn restore(place: &Place, name: &str, json: bool) -> ExitCode {
    let run = || -> Result<cairn_worktree::Record, WorktreeError> {
        let repo = place.repo()?;
        cairn_worktree::restore(&repo, name)
    };
    match run() {
        Ok(r) => {
            if json {
                outln!(
                    "{}",
                    serde_json::json!({"name": r.name, "path": r.path, "branch": r.branch})
                );
            } else {
                outln!("restored worktree {} at {}", r.name, r.path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, json),
    }
}

/// The workspace of worktree session `id` when `-w` names its repository's folder (or a
/// folder in it): the session's own; `Ok(None)` for a folder session or without `-w`.
pub fn continued_workspace(args: &RunArgs, id: &str) -> Result<Option<PathBuf>, ExitCode> {
    let Some(given) = &args.workspace else {
        return Ok(None);
    };
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(cairn_runtime::default_state_dir);
    let Ok(saved) = SessionStore::new(&state_dir).load(id) else {
        // Said by the session's opening.
        return Ok(None);
    };
    let Some(name) = saved.worktree else {
        return Ok(None);
    };
    let session_ws = PathBuf::from(&saved.workspace);
    let given = given.canonicalize().unwrap_or_else(|_| given.clone());
    if given.starts_with(&session_ws) || session_ws.starts_with(&given) {
        return Ok(Some(session_ws));
    }
    match worktrees::trusted(&session_ws, &state_dir, &name) {
        Ok(record) if given.starts_with(&record.folder) => Ok(Some(session_ws)),
        Ok(record) => {
            errln!(
                "error: session {id} runs in worktree {name} of {}, not in {}",
                record.folder.display(),
                given.display()
            );
            Err(ExitCode::from(EXIT_USAGE))
        }
        Err(e) => {
            errln!("error: {e}");
            Err(ExitCode::from(worktrees::exit_code(&e)))
        }
    }
}

/// Prepares the worktree of `cairn run --worktree NAME`: `Ok(None)` when `--session` already
/// names a session of that worktree; `Err` is the exit status after the error was said.
pub fn for_run(args: &RunArgs, name: &str) -> Result<Option<Prepared>, ExitCode> {
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(cairn_runtime::default_state_dir);
    if let Some(id) = &args.session {
        if args.carry_changes {
            errln!("error: --carry-changes only applies when a worktree is created, not with --session");
            return Err(ExitCode::from(EXIT_USAGE));
        }
        return match SessionStore::new(&state_dir).load(id) {
            Ok(saved) if saved.worktree.as_deref() == Some(name) => Ok(None),
            Ok(saved) => {
                match saved.worktree {
                    Some(other) => errln!("error: session {id} runs in worktree {other}, not {name}"),
                    None => errln!(
                        "error: session {id} is a folder session: --worktree starts a new session in a worktree (drop --session)"
                    ),
                }
                Err(ExitCode::from(EXIT_USAGE))
            }
            Err(e) => {
                errln!("error: {e}");
                Err(ExitCode::from(EXIT_USAGE))
            }
        };
    }
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => {
                errln!("error: cannot read the current dir: {e}");
                return Err(ExitCode::from(EXIT_USAGE));
            }
        },
    };
    let reporter = ProgressReporter::new(args.json);
    let report = |done: u64, total: Option<u64>| reporter.report(done, total);
    match worktrees::prepare(&workspace, &state_dir, name, args.carry_changes, &report) {
        Ok(p) => {
            reporter.finish();
            if p.worktree.created && !args.json {
                errln!(
                    "created worktree {} at {} (branch {})",
                    name,
                    p.worktree.path,
                    p.worktree.branch
                );
            }
            for s in &p.skipped {
                errln!("note: not copied into the worktree: {s}");
            }
            if p.worktree.created && p.left_out > 0 {
                errln!(
                    "note: {} uncommitted change(s) of the folder stay out of the new worktree \
                     (--carry-changes copies them in)",
                    p.left_out
                );
            }
            Ok(Some(p))
        }
        Err(e) => {
            if args.json {
                outln!("{}", serde_json::json!({ "error": e.to_string() }));
            }
            errln!("error: {e}");
            Err(ExitCode::from(worktrees::exit_code(&e)))
        }
    }
}

/// `progress` events of a worktree creation: only once it runs for over a second, at most
/// ten a second, and a last one at the end.
struct ProgressReporter {
    json: bool,
    throttle: worktrees::faces::ProgressThrottle,
}

impl ProgressReporter {
    fn new(json: bool) -> Self {
        ProgressReporter {
            json,
            throttle: worktrees::faces::ProgressThrottle::new(),
        }
    }

    fn report(&self, done: u64, total: Option<u64>) {
        if self.throttle.due(done, total) {
            self.emit(done, total);
        }
    }

    fn finish(&self) {
        if let Some(total) = self.throttle.shown_total() {
            let total = total.unwrap_or(0);
            self.emit(total, Some(total));
        }
    }

    fn emit(&self, done: u64, total: Option<u64>) {
        let ev = Event::Progress(Progress {
            task: "worktree".into(),
            done,
            total,
        });
        if self.json {
            if let Ok(line) = serde_json::to_string(&ev) {
                outln!("{line}");
            }
        } else {
            match total {
                Some(t) => errln!("creating worktree: {done}/{t} files"),
                None => errln!("creating worktree: {done} files"),
            }
        }
    }
}
