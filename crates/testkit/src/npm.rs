//! Pinned npm packages the tests run (the MCP reference server, the MCP conformance suite):
//! installed by `scripts/setup.sh` next to their `package.json`, else once into a test temp
//! dir with `npm ci --prefer-offline`. Without `node`/`npm`, or offline, the reason to skip.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `program --version` runs.
pub fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The folder where `entry` (a path inside `node_modules`) is installed: `pkg` (the package
/// folder with `package.json` and the lock file) when setup installed it there, else `tmp`
/// after copying `files` from `pkg` and running `npm ci` there. `Err` is the reason to skip
/// (`CAIRN_SKIP_NPM_TESTS=1`, no `node` or `npm`, a failed install).
pub fn installed(pkg: &Path, tmp: &Path, files: &[&str], entry: &str) -> Result<PathBuf, String> {
    if std::env::var("CAIRN_SKIP_NPM_TESTS").is_ok_and(|v| v == "1") {
        return Err("CAIRN_SKIP_NPM_TESTS=1".into());
    }
    if !have("node") {
        return Err("`node` is not installed".into());
    }
    if pkg.join(entry).is_file() {
        return Ok(pkg.to_path_buf());
    }
    std::fs::create_dir_all(tmp).map_err(|e| e.to_string())?;
    for f in files {
        std::fs::copy(pkg.join(f), tmp.join(f)).map_err(|e| format!("copy {f}: {e}"))?;
    }
    if tmp.join(entry).is_file() {
        return Ok(tmp.to_path_buf());
    }
    if !have("npm") {
        return Err("`npm` is not installed".into());
    }
    let out = Command::new("npm")
        .args([
            "ci",
            "--prefer-offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .current_dir(tmp)
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !out.status.success() || !tmp.join(entry).is_file() {
        return Err(format!(
            "`npm ci` failed (offline?): {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(5)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    Ok(tmp.to_path_buf())
}
