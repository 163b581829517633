//! The directory walker shared by `grep` and `list_files`: ripgrep's rules (`.gitignore`,
//! `.ignore`, `.git/info/exclude`, parent directories' ignore files, hidden entries skipped
//! unless asked), never descending into `.git`, and skipping what a deny rule keeps from
//! being read ([`DeniedSkips`]).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cairn_policy::ReadDenials;
use ignore::WalkBuilder;

/// A walker over `root` with Cairn's ignore rules; `include_hidden` also yields dotfiles;
/// entries `skips` denies are left out (a denied folder is not entered).
pub(crate) fn builder(root: &Path, include_hidden: bool, skips: Arc<DeniedSkips>) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(!include_hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| e.file_name() != ".git" && !skips.skip(e.path()));
    b
}

/// What a walk left out because a deny rule keeps it from being read: counted, and named
/// to the model by the rule.
#[derive(Debug, Default)]
pub(crate) struct DeniedSkips {
    denials: ReadDenials,
    count: AtomicU64,
    rules: Mutex<Vec<String>>,
}

impl DeniedSkips {
    /// Skips what `denials` deny.
    pub(crate) fn new(denials: ReadDenials) -> Arc<Self> {
        Arc::new(DeniedSkips {
            denials,
            ..Default::default()
        })
    }

    /// Whether `path` is denied (then it is counted).
    pub(crate) fn skip(&self, path: &Path) -> bool {
        let Some(rule) = self.denials.denied(path) else {
            return false;
        };
        self.count.fetch_add(1, Ordering::Relaxed);
        let text = format!("`{}` ({})", rule.text, rule.source);
        let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        if !rules.contains(&text) {
            rules.push(text);
        }
        true
    }

    /// Whether `path` is denied, without counting it.
    pub(crate) fn denials_cover(&self, path: &Path) -> bool {
        self.denials.denied(path).is_some()
    }

    /// `[N entries skipped: denied by rule …]`, or `None` when nothing was skipped.
    pub(crate) fn note(&self) -> Option<String> {
        let n = self.count.load(Ordering::Relaxed);
        if n == 0 {
            return None;
        }
        let rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        Some(format!(
            "[{n} entr{} skipped: denied by rule {}]",
            if n == 1 { "y" } else { "ies" },
            rules.join(", ")
        ))
    }
}
