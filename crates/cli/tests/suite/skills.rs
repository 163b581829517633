//! Agent Skills through `cairn run`: listed in the system prompt, read with the `skill`
//! tool, and protected from writes even in auto mode.

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::checkpoints::{cairn, Out};

/// `cairn run --json` in `ws` / `state` against `server` (model `m`, no MCP) with `extra`
/// flags, then `prompt`.
async fn run(
    ws: &std::path::Path,
    state: &std::path::Path,
    server: &MockLlmServer,
    extra: &[&str],
    prompt: &str,
) -> Out {
    let (w, s, base) = (
        ws.display().to_string(),
        state.display().to_string(),
        server.base_url(),
    );
    let mut args = vec![
        "run",
        "-w",
        &w,
        "--state-dir",
        &s,
        "--base-url",
        &base,
        "--model",
        "m",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    cairn(&args, &[("CAIRN_MCP", "0")]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_skill_is_named_in_the_prompt_read_by_the_tool_and_protected() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let skill = ws.path().join(".claude/skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes from the git log\n---\n# How\nUse the TEMPLATE-77 file.\n",
    )
    .unwrap();
    std::fs::write(skill.join("template.md"), "TEMPLATE-77\n").unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "skill", json!({"name": "release-notes"})),
        Reply::tool_call(
            "c2",
            "write_file",
            json!({"path": ".claude/skills/release-notes/SKILL.md", "content": "evil"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = run(
        ws.path(),
        state.path(),
        &server,
        &["--mode", "auto", "--approve", "deny"],
        "write the notes",
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = server.requests();
    let first = requests[0].body.to_string();
    assert!(
        first.contains("release-notes") && first.contains("Write release notes from the git log"),
        "{first}"
    );
    let second = requests[1].body.to_string();
    assert!(
        second.contains("Use the TEMPLATE-77 file.") && second.contains("template.md"),
        "{second}"
    );
    let events: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "permission_required" && e["data"]["name"] == "write_file"),
        "a write into a skill folder asks even in auto mode"
    );
    assert!(std::fs::read_to_string(skill.join("SKILL.md"))
        .unwrap()
        .contains("TEMPLATE-77"));

    let w = ws.path().display().to_string();
    let listed = cairn(&["skills", "list", "-w", &w, "--json"], &[]).await;
    let row: Value = serde_json::from_str(listed.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(row["name"], "release-notes");
    assert_eq!(row["source"], "project");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_session_lists_skills_added_since_even_after_a_role_switch() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("one"), Reply::text("two")])
        .await
        .unwrap();
    let (w, s, base) = (
        ws.path().display().to_string(),
        state.path().display().to_string(),
        server.base_url(),
    );
    let run = |extra: Vec<String>| {
        let mut args: Vec<String> = [
            "run",
            "-w",
            &w,
            "--state-dir",
            &s,
            "--base-url",
            &base,
            "--model",
            "m",
            "--json",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.extend(extra);
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            cairn(&refs, &[("CAIRN_MCP", "0")]).await
        }
    };
    let first = run(vec!["first".into()]).await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    let session = first
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "turn_start")
        .and_then(|e| e["data"]["sessionId"].as_str().map(str::to_string))
        .unwrap();
    let skill = ws.path().join(".agents/skills/changelog");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: changelog\ndescription: Keep CHANGELOG-99 in order\n---\nSteps.\n",
    )
    .unwrap();
    let second = run(vec![
        "--session".into(),
        session,
        "--agent".into(),
        "cowork".into(),
        "second".into(),
    ])
    .await;
    assert_eq!(second.code, 0, "{}", second.stderr);
    let requests = server.requests();
    assert!(!requests[0].body["messages"][0]
        .to_string()
        .contains("CHANGELOG-99"));
    let system = requests[1].body["messages"][0].to_string();
    assert!(system.contains("CHANGELOG-99"), "{system}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_block_scalar_description_reaches_the_model_as_its_text_and_a_broken_one_is_named() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let skills = ws.path().join(".claude/skills");
    // As anthropics/skills writes its descriptions: a YAML block scalar over several lines.
    std::fs::create_dir_all(skills.join("claude-api")).unwrap();
    std::fs::write(
        skills.join("claude-api/SKILL.md"),
        "---\nname: claude-api\ndescription: |-\n  Build apps with the Claude API or Anthropic SDK.\n  TRIGGER when: code imports `anthropic`.\nlicense: Complete terms in LICENSE.txt\n---\n\n# Claude API\n",
    )
    .unwrap();
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(
        skills.join("broken/SKILL.md"),
        "---\nname: broken\ndescription: [never closed\n---\nbody\n",
    )
    .unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let out = run(ws.path(), state.path(), &server, &[], "hi").await;
    let w = ws.path().display().to_string();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = server.requests()[0].body.to_string();
    assert!(
        first.contains("Build apps with the Claude API or Anthropic SDK.\\nTRIGGER when: code imports `anthropic`."),
        "{first}"
    );
    assert!(
        !first.contains("|-"),
        "the block scalar's marker reached the model"
    );
    assert!(
        !first.contains("never closed"),
        "a broken front matter was guessed"
    );
    // `cairn skills list` names the broken file and what is wrong with it.
    let listed = cairn(&["skills", "list", "-w", &w], &[]).await;
    assert!(
        listed.stderr.contains("broken/SKILL.md: front matter:"),
        "{}",
        listed.stderr
    );
    assert!(listed.stdout.contains("claude-api"), "{}", listed.stdout);
}
