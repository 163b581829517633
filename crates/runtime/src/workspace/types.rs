//! What the files panel shows of a workspace, as both the app and any other face send it.

use serde::Serialize;
use ts_rs::TS;

/// An entry of a workspace folder in the files panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct FileEntry {
    /// File or folder name.
    pub name: String,
    /// Path relative to the workspace, `/`-separated.
    pub path: String,
    /// A folder (expandable).
    pub dir: bool,
    /// A symbolic link (shown, not followed).
    pub link: bool,
}

/// One folder of the workspace, as the files panel shows it (ignored entries left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct DirListing {
    /// The folder, relative to the workspace ("" = the root).
    pub path: String,
    /// Folders first, then files, by name.
    pub entries: Vec<FileEntry>,
    /// The folder holds more entries than were listed.
    pub truncated: bool,
}

/// Every file of the workspace (ignored ones left out), for `@path` completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct FileIndex {
    /// Relative paths, sorted.
    pub files: Vec<String>,
    /// The workspace holds more files than were listed.
    pub truncated: bool,
}

/// Whether the files panel refreshes live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct WatchStatus {
    /// The file watcher runs.
    pub watching: bool,
    /// Why it does not, when it does not.
    pub error: Option<String>,
}

/// What the file watcher tells the files panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum FilesEvent {
    /// Folders whose listing changed ("" = the root); `all`: refresh every shown folder.
    Changed {
        /// Changed folders, relative to the workspace.
        dirs: Vec<String>,
        /// Too many changes (or an error) to name: refresh everything shown.
        all: bool,
    },
    /// The watcher reported an error (live refresh may have stopped).
    Failed {
        /// What went wrong.
        message: String,
    },
}
