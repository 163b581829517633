//! Whether a hook command runs a program the workspace picks: a script in the workspace
//! (`./scripts/fmt.sh`, `sh scripts/lint.sh`, `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.py`) or
//! a build tool or package script that runs the workspace's code (`npm run lint`, `make`,
//! `cargo test`, `pytest`…). Such a hook runs what the agent may have just edited, so even a
//! user's own hook runs it inside the sandbox unless the user marks the hook.

use std::path::Path;

use crate::shell::parse_plain_commands;

/// Interpreters whose first file argument is the program.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "deno", "bun", "ruby",
    "perl", "php", "lua", "tsx", "ts-node",
];

/// Why `command` (a hook's, run in `workspace`) runs a program the workspace picks; `None`
/// when it runs only programs from elsewhere.
pub fn workspace_picks(command: &str, workspace: &Path) -> Option<String> {
    let ws = workspace.display().to_string();
    let mut expanded = command.to_string();
    for var in ["CLAUDE_PROJECT_DIR", "CAIRN_PROJECT_DIR"] {
        expanded = expanded
            .replace(&format!("${{{var}}}"), &ws)
            .replace(&format!("${var}"), &ws);
    }
    // A line that is not plain shell is read word by word (quotes dropped): a guess that only
    // ever moves a hook inside.
    let commands = parse_plain_commands(&expanded).unwrap_or_else(|_| {
        vec![expanded
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
            .collect()]
    });
    commands.iter().find_map(|words| picks(words, workspace))
}

fn picks(words: &[String], workspace: &Path) -> Option<String> {
    let program = words.first()?;
    if in_workspace(program, workspace) {
        return Some(format!("it runs `{program}` from the workspace"));
    }
    let base = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let rest = &words[1..];
    let first = rest
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(String::as_str);
    if INTERPRETERS.contains(&base) {
        if let Some(file) = first.filter(|f| in_workspace(f, workspace)) {
            return Some(format!("it runs `{file}` from the workspace with {base}"));
        }
        if base.starts_with("python") && rest.first().is_some_and(|w| w == "-m") {
            return Some(format!(
                "`{base} -m` runs a module the workspace may provide"
            ));
        }
        return None;
    }
    let runs_project = match base {
        "make" | "gmake" | "just" | "rake" | "tox" | "nox" | "pytest" | "gradle" | "gradlew"
        | "mvn" | "ant" | "cmake" | "ninja" | "meson" | "bazel" | "npx" | "pnpx" | "bunx" => true,
        "npm" | "pnpm" | "yarn" => !matches!(first, Some("--version" | "-v" | "help")),
        "cargo" => matches!(
            first,
            Some("build" | "run" | "test" | "check" | "clippy" | "bench" | "doc" | "install")
        ),
        "go" => matches!(first, Some("run" | "test" | "build" | "generate" | "vet")),
        "uv" | "poetry" | "pipenv" | "hatch" | "pdm" => matches!(first, Some("run")),
        "bundle" => matches!(first, Some("exec")),
        _ => false,
    };
    runs_project.then(|| format!("`{base}` runs the workspace's own code"))
}

/// Whether `word` names a file in the workspace: a relative path with a folder part
/// (`scripts/x.sh`, `./x`), or an absolute one under it.
fn in_workspace(word: &str, workspace: &Path) -> bool {
    let p = Path::new(word);
    if p.is_absolute() {
        return crate::lexical::fold_dots_saturating(p).starts_with(workspace);
    }
    !word.starts_with('~') && !word.starts_with('$') && word.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_scripts_and_build_tools_are_picked_by_the_workspace() {
        let ws = Path::new("/home/me/proj");
        for cmd in [
            "./scripts/fmt.sh",
            "sh scripts/fmt.sh",
            "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.py",
            "python3 ${CLAUDE_PROJECT_DIR}/.claude/hooks/guard.py",
            "npm run lint",
            "make check",
            "cargo test -q",
            "jq -r .tool_input.command | bash tools/check.sh",
            "python3 -m mypy .",
            "/home/me/proj/bin/hook",
        ] {
            assert!(workspace_picks(cmd, ws).is_some(), "{cmd}");
        }
        for cmd in [
            "notify-send 'Cairn needs you'",
            "python3 /home/me/bin/guard.py",
            "~/bin/check.sh",
            "jq -r .tool_input.command",
            "cargo --version",
            "/home/me/proj-other/bin/hook",
        ] {
            assert_eq!(workspace_picks(cmd, ws), None, "{cmd}");
        }
    }
}
