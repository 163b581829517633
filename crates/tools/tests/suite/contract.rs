//! The tool set's contract: names, argument names, metadata, optional tools, call descriptions.

use crate::common;

use std::sync::Arc;

use cairn_engine::testing::FakeLlm;
use cairn_protocol::RiskLevel;
use cairn_tools::web::SearchProvider;
use cairn_tools::{
    builtin_tools, core_tools, read_only_tools, TerminalManager, ToolOptions, VisionConfig,
    WebSearchConfig,
};
use common::tool;

const CORE: [&str; 20] = [
    "read_file",
    "list_files",
    "write_file",
    "replace_in_file",
    "apply_patch",
    "apply_unified_diff",
    "grep",
    "run_shell",
    "shell_task_output",
    "shell_task_kill",
    "exec_command",
    "input_command",
    "git_status",
    "git_log",
    "git_diff",
    "web_fetch",
    "todo_write",
    "ask_user",
    "propose_plan",
    "request_directory",
];

fn props(t: &cairn_engine::ToolHandle) -> Vec<String> {
    let mut p: Vec<String> = t.schema().parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    p.sort();
    p
}

#[test]
fn core_tools_have_the_contract_names_arguments_and_meta() {
    let tools = core_tools();
    let names: Vec<String> = tools.iter().map(|t| t.schema().name).collect();
    assert_eq!(names, CORE);
    for t in &tools {
        let s = t.schema();
        assert_eq!(s.parameters["type"], "object", "{}", s.name);
        assert!(!s.description.is_empty());
        for (_, prop) in s.parameters["properties"].as_object().unwrap() {
            assert!(prop["description"].is_string(), "{}: {prop}", s.name);
        }
        for req in s.parameters["required"].as_array().into_iter().flatten() {
            assert!(
                s.parameters["properties"]
                    .get(req.as_str().unwrap())
                    .is_some(),
                "{}: required {req} is not a property",
                s.name
            );
        }
    }
    // Argument names from docs/cli.md (extensions allowed, these must exist).
    let has = |name: &str, args: &[&str]| {
        let p = props(&tool(&tools, name));
        for a in args {
            assert!(p.contains(&a.to_string()), "{name} lacks `{a}`: {p:?}");
        }
    };
    has("read_file", &["path", "offset", "limit"]);
    has("list_files", &["path", "depth", "include_hidden"]);
    has("write_file", &["path", "content"]);
    has(
        "replace_in_file",
        &["path", "old_string", "new_string", "replace_all"],
    );
    has("apply_patch", &["patch"]);
    has("apply_unified_diff", &["diff"]);
    has("run_shell", &["command", "timeout_ms", "background"]);
    has("shell_task_output", &["task_id", "tail_lines"]);
    has("shell_task_kill", &["task_id"]);
    has(
        "grep",
        &["pattern", "path", "glob", "ignore_case", "max_results"],
    );
    has("web_fetch", &["url", "max_chars"]);
    has("git_status", &["path"]);
    has("git_log", &["path", "max_count"]);
    has("git_diff", &["path", "staged", "rev"]);
    has("todo_write", &["todos"]);
    has("ask_user", &["question", "options", "allow_text", "multi"]);
    has("propose_plan", &["plan"]);
    has("request_directory", &["path", "reason", "writable"]);
    has("exec_command", &["command", "cwd", "yield_ms"]);
    has(
        "input_command",
        &["session_id", "input", "yield_ms", "kill"],
    );

    let meta = |n: &str| tool(&tools, n).meta();
    for n in [
        "read_file",
        "list_files",
        "grep",
        "shell_task_output",
        "git_status",
        "git_log",
        "git_diff",
        "web_fetch",
    ] {
        assert!(meta(n).is_read_only(), "{n} must be read-only");
    }
    for n in [
        "write_file",
        "replace_in_file",
        "apply_patch",
        "apply_unified_diff",
    ] {
        let m = meta(n);
        assert!(
            m.mutating && m.requires_approval && m.risk == RiskLevel::Medium,
            "{n}"
        );
        assert_eq!(
            (m.category.as_str(), m.capabilities.clone()),
            ("file", vec!["write".to_string()]),
            "{n}"
        );
    }
    for n in ["run_shell", "exec_command", "input_command"] {
        let m = meta(n);
        assert!(
            m.mutating && m.requires_approval && m.risk == RiskLevel::High,
            "{n}"
        );
        assert_eq!(
            (m.category.as_str(), m.capabilities.clone()),
            ("shell", vec!["exec".to_string()]),
            "{n}"
        );
    }
    let k = meta("shell_task_kill");
    assert!(k.mutating && !k.requires_approval);
    for n in [
        "todo_write",
        "ask_user",
        "propose_plan",
        "request_directory",
    ] {
        let m = meta(n);
        assert!(
            !m.mutating && !m.requires_approval,
            "{n} runs without a prompt"
        );
    }
    assert!(meta("web_fetch")
        .capabilities
        .contains(&"network".to_string()));

    let ro: Vec<String> = read_only_tools().iter().map(|t| t.schema().name).collect();
    assert_eq!(
        ro,
        [
            "read_file",
            "list_files",
            "grep",
            "git_status",
            "git_log",
            "git_diff"
        ]
    );
    assert!(read_only_tools().iter().all(|t| t.meta().is_read_only()));
}

#[test]
fn long_running_tools_offer_a_switchable_call_description() {
    let tools = core_tools();
    for n in ["run_shell", "exec_command", "input_command", "web_fetch"] {
        assert!(
            props(&tool(&tools, n)).contains(&"description".to_string()),
            "{n}"
        );
    }
    assert!(!props(&tool(&tools, "read_file")).contains(&"description".to_string()));
    let tools = builtin_tools(ToolOptions {
        no_call_description: vec!["run_shell".into()],
        ..ToolOptions::default()
    })
    .unwrap();
    assert!(!props(&tool(&tools, "run_shell")).contains(&"description".to_string()));
    assert!(props(&tool(&tools, "exec_command")).contains(&"description".to_string()));
}

#[tokio::test]
async fn a_switched_off_description_is_dropped_from_the_arguments() {
    let ws = common::Ws::new();
    let tools = builtin_tools(ToolOptions {
        no_call_description: vec!["run_shell".into()],
        ..ToolOptions::default()
    })
    .unwrap();
    let out = ws
        .call(
            &tool(&tools, "run_shell"),
            serde_json::json!({"command": "echo ok", "description": "Say ok"}),
        )
        .await
        .unwrap();
    assert!(out.content.starts_with("ok\n"), "{}", out.content);
}

#[test]
fn optional_tools_exist_only_when_configured() {
    let names = |tools: &[cairn_engine::ToolHandle]| -> Vec<String> {
        tools.iter().map(|t| t.schema().name).collect()
    };
    let plain = builtin_tools(ToolOptions::default()).unwrap();
    // `media` is always offered (it answers "unsupported by this model" for what no model reads).
    let mut expected: Vec<&str> = CORE.to_vec();
    expected.push("media");
    assert_eq!(
        names(&plain),
        expected,
        "no web_search, describe_image, read_image or terminals by default"
    );
    assert!(cairn_tools::web_search_tool(None).unwrap().is_none());

    let manager = Arc::new(TerminalManager::new());
    let full = builtin_tools(ToolOptions {
        web_search: Some(WebSearchConfig::new(SearchProvider::Searxng {
            url: "http://127.0.0.1:9".into(),
        })),
        vision: Some(VisionConfig {
            llm: Arc::new(FakeLlm::new(vec![])),
            model: "vision-model".into(),
        }),
        terminals: Some((manager, "project-a".into())),
        ..ToolOptions::default()
    })
    .unwrap();
    let n = names(&full);
    for extra in [
        "web_search",
        "describe_image",
        "terminal_list",
        "terminal_read",
    ] {
        assert!(n.contains(&extra.to_string()), "{extra} missing: {n:?}");
    }
    let m = tool(&full, "web_search").meta();
    assert!(m.is_read_only() && m.capabilities.contains(&"network".to_string()));
    assert!(tool(&full, "terminal_read").meta().is_read_only());

    // An empty key is a configuration error, not a silently broken tool.
    let Err(e) = cairn_tools::web_search_tool(Some(&WebSearchConfig::new(SearchProvider::Brave {
        api_key: " ".into(),
    }))) else {
        panic!("an empty key must be refused");
    };
    assert!(e.to_string().contains("API key is empty"), "{e}");
    // Keys never show in debug output.
    let dbg = format!(
        "{:?}",
        WebSearchConfig::new(SearchProvider::Tavily {
            api_key: "tvly-secret".into()
        })
    );
    assert!(!dbg.contains("tvly-secret"), "{dbg}");
}

/// Each tool names what a call asks permission for, and the rules see in it what they saw
/// when the engine read the argument names.
#[test]
fn every_tool_names_what_it_asks_permission_for() {
    use cairn_engine::{Capability, CommandRun, PermissionSubject};
    use serde_json::json;
    let vision = || VisionConfig {
        llm: Arc::new(FakeLlm::new(vec![])),
        model: "vision-model".into(),
    };
    let mut all = builtin_tools(ToolOptions {
        web_search: Some(WebSearchConfig::new(SearchProvider::Searxng {
            url: "http://127.0.0.1:9".into(),
        })),
        vision: Some(vision()),
        terminals: Some((Arc::new(TerminalManager::new()), "p".into())),
        ..ToolOptions::default()
    })
    .unwrap();
    all.extend(
        builtin_tools(ToolOptions {
            session_vision: true,
            session_model: Some(vision()),
            ..ToolOptions::default()
        })
        .unwrap()
        .into_iter()
        .filter(|t| t.schema().name == "read_image"),
    );
    let none = PermissionSubject::none;
    let reads = |p: &str| PermissionSubject::reads([p]);
    let writes = |p: &[&str]| PermissionSubject::writes(p.iter().copied());
    let patch =
        "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n-a\n+b\n*** End Patch";
    let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n";
    let cases = [
        ("read_file", json!({"path": "src/a.rs"}), reads("src/a.rs")),
        ("list_files", json!({"path": "src"}), reads("src")),
        ("list_files", json!({}), none()),
        ("grep", json!({"pattern": "x", "path": "src"}), reads("src")),
        ("git_status", json!({"path": "src"}), reads("src")),
        ("git_log", json!({"path": "a"}), reads("a")),
        ("git_diff", json!({"path": "a"}), reads("a")),
        ("media", json!({"path": "a.mp3"}), reads("a.mp3")),
        ("describe_image", json!({"path": "a.png"}), reads("a.png")),
        ("read_image", json!({"path": "a.png"}), reads("a.png")),
        (
            "request_directory",
            json!({"path": "/data"}),
            reads("/data"),
        ),
        (
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
            writes(&["a.txt"]),
        ),
        (
            "replace_in_file",
            json!({"path": "a.txt", "old_string": "a", "new_string": "b"}),
            writes(&["a.txt"]),
        ),
        (
            "apply_patch",
            json!({ "patch": patch }),
            writes(&["run.sh", "bin/run.sh"]),
        ),
        ("apply_patch", json!({"patch": "not a patch"}), none()),
        (
            "apply_unified_diff",
            json!({ "diff": diff }),
            writes(&["x.txt"]),
        ),
        (
            "run_shell",
            json!({"command": "ls", "sandbox": false}),
            PermissionSubject::command(Some(CommandRun {
                command: "ls".into(),
                cwd: None,
                unsandboxed: true,
            })),
        ),
        (
            "exec_command",
            json!({"command": "make", "cwd": "sub"}),
            PermissionSubject::command(Some(CommandRun {
                command: "make".into(),
                cwd: Some("sub".into()),
                unsandboxed: false,
            })),
        ),
        (
            "input_command",
            json!({"session_id": "cmd-1", "input": "y\n"}),
            none().with(Capability::TypeInput("y\n".into())),
        ),
        (
            "web_fetch",
            json!({"url": "https://docs.rs/"}),
            none().with(Capability::Network("https://docs.rs/".into())),
        ),
        ("web_search", json!({"query": "q"}), none()),
        ("shell_task_output", json!({"task_id": "t1"}), none()),
        ("shell_task_kill", json!({"task_id": "t1"}), none()),
        ("todo_write", json!({"todos": []}), none()),
        ("ask_user", json!({"question": "?"}), none()),
        ("propose_plan", json!({"plan": "p"}), none()),
        ("terminal_list", json!({}), none()),
        ("terminal_read", json!({"terminal_id": "1"}), none()),
    ];
    let mut covered: Vec<String> = cases.iter().map(|(n, _, _)| n.to_string()).collect();
    covered.sort();
    covered.dedup();
    let mut names: Vec<String> = all.iter().map(|t| t.schema().name).collect();
    names.sort();
    assert_eq!(covered, names, "every built-in tool has a case");
    for (name, args, expected) in cases {
        let t = tool(&all, name);
        let subject = t.permission_subject(&args);
        assert_eq!(subject, expected, "{name} {args}");
        assert_eq!(
            subject.runs_commands,
            name == "run_shell" || name == "exec_command",
            "{name}"
        );
        let legacy = PermissionSubject::from_arguments(
            &t.meta().capabilities,
            &args,
            t.write_targets(&args),
        );
        assert_eq!(subject.rule_command(), legacy.rule_command(), "{name}");
        assert_eq!(subject.rule_paths(), legacy.rule_paths(), "{name}");
        assert_eq!(subject.command_run(), legacy.command_run(), "{name}");
        assert_eq!(subject.typed(), legacy.typed(), "{name}");
        assert_eq!(subject.written(), legacy.written(), "{name}");
        assert!(subject.urls().eq(legacy.urls()), "{name}");
    }
}

#[test]
fn every_core_tool_reports_its_kind_through_the_wrappers() {
    use cairn_protocol::ToolKind::*;
    let kinds: std::collections::BTreeMap<String, cairn_protocol::ToolKind> = core_tools()
        .iter()
        .map(|t| (t.schema().name, t.kind()))
        .collect();
    let want = [
        ("read_file", Read),
        ("list_files", Search),
        ("write_file", Edit),
        ("replace_in_file", Edit),
        ("apply_patch", Edit),
        ("apply_unified_diff", Edit),
        ("grep", Search),
        ("run_shell", Command),
        ("shell_task_output", Command),
        ("shell_task_kill", Command),
        ("exec_command", Command),
        ("input_command", Command),
        ("git_status", Git),
        ("git_log", Git),
        ("git_diff", Git),
        ("web_fetch", Web),
        ("todo_write", Todo),
        ("ask_user", Question),
        ("propose_plan", Question),
        ("request_directory", Question),
    ];
    for (name, kind) in want {
        assert_eq!(kinds.get(name), Some(&kind), "{name}");
    }
    // Wrapped to drop the call description: the kind still comes through.
    let stripped = cairn_tools::disable_call_descriptions(core_tools(), &["run_shell"]);
    let shell = stripped
        .iter()
        .find(|t| t.schema().name == "run_shell")
        .unwrap();
    assert_eq!(shell.kind(), Command);
}
