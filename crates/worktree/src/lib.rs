//! Git worktrees Cairn creates so several sessions can work on one repository at once: each
//! a real `git worktree` on branch `cairn/NAME` under Cairn's worktree root, with an
//! ownership record in Cairn's state dir. Only these worktrees are ever reused, applied,
//! removed or restored; the registration and the branch are all Cairn writes into the
//! user's repository (states it keeps go to its own store, see [`store`]).

mod apply;
mod commit;
mod create;
mod diff;
mod error;
mod gitcli;
mod include;
pub mod keep;
pub mod name;
pub mod nofollow;
mod record;
mod remove;
mod repo;
mod status;
pub mod store;
mod update;

pub use apply::{
    execute, plan as plan_apply, record_applied, ApplyConflict, ApplyPlan, Resolution,
};
pub use commit::{commit, Committed};
pub use create::{check, open_or_create, CreateOptions, Opened};
pub use diff::{files as file_diffs, unified as diff, FileDiff, FileStatus};
pub use error::{listed, Result, WorktreeError};
pub use include::FILE as INCLUDE_FILE;
pub use keep::{KeepBounds, KeptFiles};
pub use record::{Record, Records, Removed};
pub use remove::{
    owned, prune_expired, recover_removals, remove, remove_within, restore, unmerged_commits,
    Removal, RETENTION_DAYS,
};
pub use repo::{Layout, Repo};
pub use status::{commits_ahead, current_state, disk_use, status, unapplied, WorktreeStatus};
pub use store::StateStore;
pub use update::{rollback_update, update, UpdateHow, Updated};
