//! Cairn's state folder: writable, free space, and what checkpoints and worktrees take.

use std::path::Path;

use super::probes::DiskProbe;
use super::{CheckRow, CheckStatus, Fix};

/// Below this much free space sessions and checkpoints may fail to save.
pub const LOW_SPACE: u64 = 512 * 1024 * 1024;
/// Below this much, a warning.
pub const SOME_SPACE: u64 = 2 * 1024 * 1024 * 1024;

/// Human-readable bytes (`1.5 GB`).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Bytes under `dir` (files only, links not followed); 0 when it does not exist.
fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0u64;
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            total = total.saturating_add(size_of(&e.path()));
        } else if ft.is_file() {
            total = total.saturating_add(e.metadata().map(|m| m.len()).unwrap_or(0));
        }
    }
    total
}

/// Creates the folder if needed and writes a file there, as a session would.
fn writable(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let probe = dir.join(format!(".cairn-doctor-{}", std::process::id()));
    let r = std::fs::write(&probe, b"ok").map_err(|e| e.to_string());
    let _ = std::fs::remove_file(&probe);
    r
}

/// The rows of the state folder `dir`.
pub fn check(dir: &Path, disk: &dyn DiskProbe) -> Vec<CheckRow> {
    let shown = dir.display().to_string();
    let mut rows = Vec::new();
    rows.push(match writable(dir) {
        Ok(()) => CheckRow::new(
            "state",
            "state folder",
            CheckStatus::Ok,
            format!("{shown} is writable"),
        ),
        Err(e) => CheckRow::new(
            "state",
            "state folder",
            CheckStatus::Problem,
            format!("{shown} is not writable ({e}): sessions cannot be saved"),
        )
        .fix(Fix::StateUnwritable),
    });
    rows.push(match disk.free_bytes(dir) {
        Some(free) if free < LOW_SPACE => CheckRow::new(
            "state",
            "free space",
            CheckStatus::Problem,
            format!(
                "only {} free: sessions and checkpoints may fail to save",
                human(free)
            ),
        )
        .fix(Fix::FreeSpace),
        Some(free) if free < SOME_SPACE => CheckRow::new(
            "state",
            "free space",
            CheckStatus::Warning,
            format!("{} free", human(free)),
        )
        .fix(Fix::FreeSpaceSoon),
        Some(free) => CheckRow::new(
            "state",
            "free space",
            CheckStatus::Ok,
            format!("{} free", human(free)),
        ),
        None => CheckRow::new(
            "state",
            "free space",
            CheckStatus::Warning,
            "the free space could not be read",
        ),
    });
    let checkpoints = size_of(&dir.join("vcs"));
    let worktrees_root = crate::worktrees::worktrees_root(dir);
    let worktrees = size_of(&worktrees_root);
    let budget = crate::worktrees::budget_bytes(dir);
    let status = if worktrees > budget {
        CheckStatus::Warning
    } else {
        CheckStatus::Ok
    };
    let use_row = CheckRow::new(
        "state",
        "disk use",
        status,
        format!(
            "checkpoints {}, worktrees {} (budget {})",
            human(checkpoints),
            human(worktrees),
            human(budget)
        ),
    );
    rows.push(if status == CheckStatus::Warning {
        use_row.fix(Fix::RemoveWorktrees)
    } else {
        use_row
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(1536), "1.5 KB");
        assert_eq!(human(3 * 1024 * 1024 * 1024), "3.0 GB");
    }
}
