//! The read-only classification against a peer corpus of known-safe and dangerous commands
//! (`tests/fixtures/read_only_commands.toml`): no dangerous command passes, every known-safe
//! one does, and a read-only command wrapped in `bash -lc '…'` / `sh -c '…'` is read-only.

use std::path::Path;

use cairn_policy::ReadScope;
use serde::Deserialize;

/// The corpus file.
#[derive(Debug, Deserialize)]
struct Corpus {
    safe: Vec<String>,
    #[serde(rename = "unsafe")]
    dangerous: Vec<String>,
}

#[test]
fn no_dangerous_command_is_read_only_and_every_safe_one_is() {
    let text = std::fs::read_to_string(
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
            .join("tests/fixtures/read_only_commands.toml"),
    )
    .unwrap();
    let corpus: Corpus = toml::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(status.success(), "git init");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    for (f, c) in [
        ("README.md", "# x\n"),
        ("file.txt", "foo\n"),
        ("src/main.rs", "fn main() {}\n"),
    ] {
        std::fs::write(ws.join(f), c).unwrap();
    }
    let scope = ReadScope::new(&ws);
    let ran_unasked: Vec<&String> = corpus
        .dangerous
        .iter()
        .filter(|c| scope.check_command(c).is_ok())
        .collect();
    let asked: Vec<String> = corpus
        .safe
        .iter()
        .filter_map(|c| scope.check_command(c).err().map(|e| format!("{c}: {e}")))
        .collect();
    assert!(
        ran_unasked.is_empty(),
        "{} of {} dangerous commands would run unasked: {ran_unasked:?}",
        ran_unasked.len(),
        corpus.dangerous.len()
    );
    assert!(asked.is_empty(), "known-safe commands that ask: {asked:#?}");
    assert!(corpus.dangerous.len() >= 130 && corpus.safe.len() >= 50);
}
