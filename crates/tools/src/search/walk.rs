//! The directory walker shared by `grep` and `list_files`: ripgrep's rules (`.gitignore`,
//! `.ignore`, `.git/info/exclude`, parent directories' ignore files, hidden entries skipped
//! unless asked), never descending into `.git`.

use std::path::Path;

use ignore::WalkBuilder;

/// A walker over `root` with Cairn's ignore rules; `include_hidden` also yields dotfiles.
pub(crate) fn builder(root: &Path, include_hidden: bool) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(!include_hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    b
}
