//! The system prompt for a workspace: built-in prompt + environment block + project
//! instruction files (`AGENTS.md` from the repo root down to the workspace; `CLAUDE.md` when
//! there is no `AGENTS.md`) + user-level instructions.

use std::path::{Path, PathBuf};

use cairn_engine::prompt::{build_instructions, AgentType, Environment, Lang, ProjectNote};

/// Largest instruction file read, in bytes; longer files are cut with a note.
const MAX_NOTE_BYTES: usize = 64 * 1024;

/// Instruction files that apply to `workspace`, outermost first.
pub fn project_notes(workspace: &Path) -> Vec<ProjectNote> {
    let dirs = dirs_to_repo_root(workspace);
    for name in ["AGENTS.md", "CLAUDE.md"] {
        let notes: Vec<ProjectNote> = dirs
            .iter()
            .rev()
            .filter_map(|d| read_note(&d.join(name)))
            .collect();
        if !notes.is_empty() {
            return notes;
        }
    }
    Vec::new()
}

/// The user-level instructions file (`<config>/cairn/instructions.md`), if any.
pub fn user_note() -> Option<ProjectNote> {
    let path = std::env::var_os("CAIRN_USER_INSTRUCTIONS")
        .map(PathBuf::from)
        .or_else(|| dirs::config_dir().map(|d| d.join("cairn").join("instructions.md")))?;
    read_note(&path)
}

/// The workspace and its parents up to the enclosing repository root (or only the workspace
/// when it is not inside a repository), nearest first.
fn dirs_to_repo_root(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut cur = Some(workspace);
    while let Some(d) = cur {
        out.push(d.to_path_buf());
        if d.join(".git").exists() {
            return out;
        }
        cur = d.parent();
    }
    // No repository above: only the workspace itself counts.
    out.truncate(1);
    out
}

fn read_note(path: &Path) -> Option<ProjectNote> {
    let bytes = std::fs::read(path).ok()?;
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_NOTE_BYTES)]).to_string();
    if bytes.len() > MAX_NOTE_BYTES {
        text.push_str("\n[… truncated: the file is larger than 64 KiB]");
    }
    if text.trim().is_empty() {
        return None;
    }
    Some(ProjectNote {
        source: path.display().to_string(),
        text,
    })
}

/// The environment block for a workspace.
pub fn environment(workspace: &Path, sandbox: &str) -> Environment {
    Environment {
        os: std::env::consts::OS.to_string(),
        shell: if Path::new("/bin/bash").exists() {
            "bash".into()
        } else {
            "sh".into()
        },
        workspace: workspace.display().to_string(),
        git: git_state(workspace),
        sandbox: sandbox.to_string(),
        date: chrono::Local::now().format("%Y-%m-%d").to_string(),
    }
}

fn git_state(workspace: &Path) -> String {
    let Some(root) = dirs_to_repo_root(workspace)
        .into_iter()
        .find(|d| d.join(".git").exists())
    else {
        return "not a git repository".into();
    };
    let head = std::fs::read_to_string(root.join(".git").join("HEAD")).unwrap_or_default();
    match head.trim().strip_prefix("ref: refs/heads/") {
        Some(branch) => format!("repository at {}, branch {branch}", root.display()),
        None => format!("repository at {}, detached HEAD", root.display()),
    }
}

/// The user-level note (first) and the project instruction files of `workspace`.
pub fn notes_for(workspace: &Path) -> Vec<ProjectNote> {
    notes_for_in(workspace, &crate::config_scope::ConfigScope::default())
}

/// [`notes_for`] within `scope`: the user-level note only when its user config applies (the
/// project's instruction files are text the model could read anyway: always).
pub fn notes_for_in(
    workspace: &Path,
    scope: &crate::config_scope::ConfigScope,
) -> Vec<ProjectNote> {
    let mut notes: Vec<ProjectNote> = if scope.user_config {
        user_note().into_iter().collect()
    } else {
        Vec::new()
    };
    notes.extend(project_notes(workspace));
    notes
}

/// The full system prompt for a session in `workspace`.
pub fn instructions_for(workspace: &Path, agent: AgentType, lang: Lang, sandbox: &str) -> String {
    let mut notes = Vec::new();
    if let Some(u) = user_note() {
        notes.push(u);
    }
    notes.extend(project_notes(workspace));
    build_instructions(agent, lang, &environment(workspace, sandbox), &notes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn agents_md_from_repo_root_down_to_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let ws = repo.join("pkg").join("app");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(repo.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "app rules").unwrap();
        std::fs::write(ws.join("CLAUDE.md"), "ignored when AGENTS.md exists").unwrap();
        std::fs::write(tmp.path().join("AGENTS.md"), "outside the repo").unwrap();
        let notes = project_notes(&ws);
        let texts: Vec<_> = notes.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, vec!["root rules", "app rules"]);
    }

    #[test]
    fn claude_md_is_the_fallback() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("CLAUDE.md"), "claude rules").unwrap();
        let notes = project_notes(tmp.path());
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].text, "claude rules");
    }
}
