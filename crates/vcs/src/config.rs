//! What the checkpoint store covers and how much it may keep.

/// Coverage limits and storage policy of a workspace's checkpoint store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VcsConfig {
    /// Files not tracked by the user's git that are larger than this are not snapshotted
    /// (reported as excluded). Tracked files are always covered.
    pub max_untracked_file_bytes: u64,
    /// A new untracked folder (absent from the previous snapshot, with no tracked file in it)
    /// holding more files than this is skipped as a whole (reported as excluded). Only applies
    /// when the workspace is inside a git repository.
    pub max_untracked_dir_files: usize,
    /// Folder and file names never snapshotted (build outputs, dependency caches).
    pub default_excludes: Vec<String>,
    /// Watch the workspace for changes so snapshots after small edits skip the full walk.
    pub watch: bool,
    /// Storage budget of the store in bytes; `gc` drops the oldest sessions to stay under it.
    pub budget_bytes: u64,
    /// Sessions whose last checkpoint is older than this many days are dropped by `gc`.
    pub retention_days: u32,
}

/// Folder names excluded by default: dependency caches and build outputs.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "dist",
    "build",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    ".gradle",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
];

impl Default for VcsConfig {
    fn default() -> Self {
        VcsConfig {
            max_untracked_file_bytes: 10 * 1024 * 1024,
            max_untracked_dir_files: 2000,
            default_excludes: DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect(),
            watch: true,
            budget_bytes: 2 * 1024 * 1024 * 1024,
            retention_days: 30,
        }
    }
}
