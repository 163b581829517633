//! The git CLI in a worktree, as the user would run it, with the repository's hooks off.

use std::path::Path;
use std::process::Command;

use crate::error::{io, Result};

/// Runs git in `dir` with the repository's hooks off (and an identity for the commits it
/// makes when the user has none configured).
pub(crate) fn run(dir: &Path, args: &[&str]) -> Result<std::process::Output> {
    let mut c = Command::new("git");
    c.current_dir(dir).args(["-c", "core.hooksPath=/dev/null"]);
    // Asked of git itself: it reads the configuration (and environment) the commit will use.
    let has = |key: &str| {
        Command::new("git")
            .current_dir(dir)
            .args(["config", "--get", key])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("user.name") {
        c.args(["-c", "user.name=Cairn"]);
    }
    if !has("user.email") {
        c.args(["-c", "user.email=cairn@localhost"]);
    }
    c.args(args).output().map_err(io("running git"))
}
