//! Read-only git tools over libgit2 (git2): `git_status`, `git_log`, `git_diff`. They never
//! write to the repository (no index refresh, no refs, no config).

mod diff;
mod log;
mod status;

use std::path::Path;

use cairn_engine::{ToolContext, ToolError};
use git2::{ErrorCode, Repository};

use crate::paths::{self, Access};

pub use diff::{GitDiff, MAX_DIFF_BYTES};
pub use log::{GitLog, DEFAULT_MAX_COUNT, MAX_COUNT};
pub use status::GitStatus;

/// A repository opened for a tool call, and the pathspec the call's `path` maps to.
pub(crate) struct Opened {
    pub repo: Repository,
    /// Path inside the work tree to limit the output to (`None`: the whole repository).
    pub pathspec: Option<String>,
}

/// Resolves `path` (default: the workspace) and opens the repository containing it.
pub(crate) fn open(ctx: &ToolContext, path: Option<&str>) -> Result<Opened, ToolError> {
    let shown = path
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or(".")
        .to_string();
    let target = paths::resolve_for(ctx, &shown, Access::Read)?;
    let exists = target.abs.exists();
    if !exists {
        return Err(ToolError::NotFound(format!(
            "{shown} (no such file or directory)"
        )));
    }
    let start = if target.abs.is_dir() {
        target.abs.clone()
    } else {
        target
            .abs
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(target.abs.clone())
    };
    let repo = Repository::discover(&start).map_err(|e| {
        if e.code() == ErrorCode::NotFound {
            ToolError::NotFound(format!(
                "`{shown}` is not inside a git repository (no .git in it or any parent \
                 directory), so there is no git status, history or diff to show"
            ))
        } else {
            ToolError::Failed(format!(
                "cannot open the git repository at `{shown}`: {}",
                e.message()
            ))
        }
    })?;
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        return Err(ToolError::Failed(format!(
            "the repository at `{shown}` is bare (it has no work tree)"
        )));
    };
    let workdir = std::fs::canonicalize(&workdir).unwrap_or(workdir);
    let pathspec = target
        .abs
        .strip_prefix(&workdir)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty());
    Ok(Opened { repo, pathspec })
}

/// A git error as a tool error.
pub(crate) fn git_err(what: &str, e: git2::Error) -> ToolError {
    ToolError::Failed(format!("{what}: {}", e.message()))
}

/// The current branch (or detached/unborn state) in words.
pub(crate) fn head_description(repo: &Repository) -> String {
    match repo.head() {
        Ok(head) if head.is_branch() => {
            format!("On branch {}", head.shorthand().unwrap_or("(unnamed)"))
        }
        Ok(head) => match head.target() {
            Some(oid) => format!("HEAD detached at {}", short(oid)),
            None => "HEAD detached".into(),
        },
        Err(e) if e.code() == ErrorCode::UnbornBranch => {
            let name = repo
                .find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target().ok().flatten().map(str::to_string))
                .map(|t| t.trim_start_matches("refs/heads/").to_string())
                .unwrap_or_else(|| "(unknown)".into());
            format!("On branch {name} (no commits yet)")
        }
        Err(e) => format!("HEAD unreadable: {}", e.message()),
    }
}

/// An abbreviated object id.
pub(crate) fn short(oid: git2::Oid) -> String {
    let s = oid.to_string();
    s[..s.len().min(10)].to_string()
}

/// Seconds since the epoch (with offset minutes) as `YYYY-MM-DD HH:MM +hh:mm`.
pub(crate) fn format_time(t: git2::Time) -> String {
    let Some(offset) = chrono::FixedOffset::east_opt(t.offset_minutes() * 60) else {
        return t.seconds().to_string();
    };
    match chrono::DateTime::from_timestamp(t.seconds(), 0) {
        Some(dt) => dt
            .with_timezone(&offset)
            .format("%Y-%m-%d %H:%M %:z")
            .to_string(),
        None => t.seconds().to_string(),
    }
}
