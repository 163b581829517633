//! The attack corpus (`fixtures/attacks.toml`): every case is one tool call proposed by a
//! scripted model to a real engine session with the real core tools, the real permission
//! engine and (for `sandboxed` cases) real bubblewrap, in a fresh temp workspace full of
//! traps (symlinks out of it and into `.git`, dangling links, a hard link, protected
//! folders). The approver denies every prompt. Each case states its outcome, and every case
//! proves on disk that nothing outside the workspace, nothing in `.git` / `.agent` / `.cairn`
//! and nothing in the user's home changed (for `asks` / `denied` / `refused`: nothing at all).

mod attack_reads;
use crate::common;
mod home_plants;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod link_swap;
mod trust;

use std::collections::BTreeMap;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{
    CommandWrapper, EngineConfig, ExecEnvironment, PermissionState, Session, ShellPolicy,
    ToolRegistry, WrappedCommand,
};
use cairn_policy::sandbox::{bwrap_path, bwrap_works};
use cairn_policy::{RuleDecision, RuleSet, RuleSpec};
use cairn_protocol::{ApprovalDecision, Event, Mode, ToolStatus};
use common::collect;
use serde::Deserialize;
use serde_json::{json, Value};

/// The corpus file.
#[derive(Debug, Deserialize)]
struct Corpus {
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

/// One attack (or, with `tools`, one attack per listed path tool).
#[derive(Debug, Deserialize, Clone)]
struct Case {
    id: String,
    #[serde(default = "interactive")]
    mode: String,
    #[serde(default = "approve")]
    policy: String,
    /// Run shell commands inside bubblewrap (the sandbox is enforced).
    #[serde(default)]
    sandbox: bool,
    /// `--allow-command` prefixes.
    #[serde(default)]
    allow_commands: Vec<String>,
    /// Programs the user allowed for the session ("always allow this command").
    #[serde(default)]
    session_commands: Vec<String>,
    /// Persistent user rules: `allow|ask|deny <rule>`.
    #[serde(default)]
    rules: Vec<String>,
    /// One tool call...
    tool: Option<String>,
    args: Option<Value>,
    /// ...or each of these commands run with each of `tools` (`run_shell`, `exec_command`,
    /// `run_shell_background`: run_shell with `background: true`).
    #[serde(default)]
    commands: Vec<String>,
    /// ...or a path tried with each of these tools (write_file, replace_in_file,
    /// apply_patch, apply_unified_diff).
    #[serde(default)]
    tools: Vec<String>,
    path: Option<String>,
    /// asks | denied | refused | runs | sandboxed (ran inside the sandbox, unasked) |
    /// succeeds (ran inside the sandbox, unasked, and worked).
    expect: String,
    /// Text the result must hold (a `succeeds` case's proof that it worked).
    #[serde(default)]
    output: Option<String>,
    /// Per-tool overrides of `expect` for `tools` cases.
    #[serde(default)]
    expect_for: BTreeMap<String, String>,
    /// Workspace entries removed before the case (a protected folder that does not exist yet).
    #[serde(default)]
    remove: Vec<String>,
}

fn interactive() -> String {
    "interactive".into()
}
fn approve() -> String {
    "approve".into()
}

/// The temp world of one case: `base/ws` (the workspace), `base/outside`, `base/state`.
struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
    state: PathBuf,
}

/// A file name in the user's home that no case may create.
const HOME_MARKER: &str = "cairn-attack-corpus-marker";

fn home() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
}

/// Builds the trap-filled workspace. It lives under the target dir, not `/tmp`, because the
/// sandbox keeps `/tmp` writable by design.
fn world() -> World {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    let state = base.join("state");
    for d in [&ws, &outside, &state] {
        std::fs::create_dir_all(d).unwrap();
    }
    let w = |rel: &str, content: &str| {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    };
    git2::Repository::init(&ws).unwrap();
    w(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    w(".agent/mcp.json", "{\"mcpServers\": {}}\n");
    w(".cairn/settings.toml", "# cairn\n");
    w("a.txt", "alpha\ntop secret\n");
    w("src/main.rs", "fn main() {}\n");
    w("secrets/key.txt", "top secret\n");
    w("sub/inside.txt", "inside\n");
    std::fs::write(outside.join("secret"), "top secret\n").unwrap();
    symlink(&outside, ws.join("out_link")).unwrap();
    symlink(".git", ws.join("git_link")).unwrap();
    symlink(".git/hooks", ws.join("hooks_link")).unwrap();
    symlink(".agent", ws.join("agent_link")).unwrap();
    symlink(".cairn", ws.join("cairn_link")).unwrap();
    symlink(
        ws.join(".git/hooks/post-checkout"),
        ws.join("dangling_hook"),
    )
    .unwrap();
    symlink(outside.join("created"), ws.join("dangling_out")).unwrap();
    symlink("../../outside", ws.join("sub/up")).unwrap();
    symlink("../.git", ws.join("src/gitlink")).unwrap();
    symlink(&outside, ws.join("src/escape")).unwrap();
    symlink("secrets", ws.join("sec_link")).unwrap();
    std::fs::hard_link(outside.join("secret"), ws.join("hard_secret")).unwrap();
    World {
        _dir: dir,
        base,
        ws,
        outside,
        state,
    }
}

/// Path → what is there (kind, content or link target, permission bits).
type Snapshot = BTreeMap<PathBuf, (char, Vec<u8>, u32)>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

fn walk(p: &Path, out: &mut Snapshot) {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return;
    };
    let mode = meta.mode();
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(p).unwrap();
        out.insert(
            p.to_path_buf(),
            ('l', target.to_string_lossy().as_bytes().to_vec(), mode),
        );
    } else if meta.is_dir() {
        out.insert(p.to_path_buf(), ('d', Vec::new(), mode));
        let mut entries: Vec<_> = std::fs::read_dir(p).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            walk(&e.path(), out);
        }
    } else {
        out.insert(
            p.to_path_buf(),
            ('f', std::fs::read(p).unwrap_or_default(), mode),
        );
    }
}

/// Entries that must never change unapproved: outside the workspace and protected folders.
fn guarded(s: &Snapshot, w: &World) -> Snapshot {
    let protected = [".git", ".agent", ".cairn"].map(|p| w.ws.join(p));
    s.iter()
        .filter(|(p, _)| p.starts_with(&w.outside) || protected.iter().any(|q| p.starts_with(q)))
        .map(|(p, v)| (p.clone(), v.clone()))
        .collect()
}

fn diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (p, v) in before {
        match after.get(p) {
            None => out.push(format!("removed {}", p.display())),
            Some(a) if a != v => out.push(format!("changed {}", p.display())),
            _ => {}
        }
    }
    for p in after.keys() {
        if !before.contains_key(p) {
            out.push(format!("created {}", p.display()));
        }
    }
    out
}

/// What every sandboxed command prints first, from inside the sandbox: proof that the
/// case's command really ran there (a sandbox that cannot start would pass every "the
/// attack changed nothing" check without it).
const RAN: &str = "CAIRN-CORPUS-RAN-7F3A";

/// What a sandbox that could not start prints instead of the command's output.
const NOT_STARTED: [&str; 2] = ["could not start this command", "bwrap:"];

/// The runtime's own session sandbox for `w`: the spec and wrapper a session in `w.ws` with
/// state dir `w.state` gets (allow-list filesystem, seccomp, private caches; no network),
/// every command first printing [`RAN`] inside it.
fn runtime_sandbox(w: &World) -> ExecEnvironment {
    let opts = cairn_runtime::sandbox::SandboxOptions {
        mode: cairn_policy::sandbox::SandboxMode::Required,
        network: cairn_runtime::sandbox_net::SandboxNetwork::None,
        ..Default::default()
    };
    let (mut exec, _) = cairn_runtime::sandbox::exec_environment_with(&w.ws, &w.state, &opts)
        .expect("the runtime's session sandbox");
    let inner = exec.wrapper.take().expect("a sandbox wrapper");
    exec.wrapper = Some(Arc::new(Marked { inner }));
    exec
}

/// Runs [`RAN`]'s `echo` inside the wrapped sandbox before the command itself.
struct Marked {
    inner: Arc<dyn CommandWrapper>,
}

impl Marked {
    fn mark(argv: Vec<String>) -> Vec<String> {
        let mut out = vec![
            "sh".to_string(),
            "-c".to_string(),
            format!("echo {RAN}; exec \"$@\""),
            "sh".to_string(),
        ];
        out.extend(argv);
        out
    }
}

impl CommandWrapper for Marked {
    fn wrap(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> Vec<String> {
        self.inner.wrap(Self::mark(argv), extra_writable)
    }
    fn wrap_guarded(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> WrappedCommand {
        self.inner.wrap_guarded(Self::mark(argv), extra_writable)
    }
    fn wrap_hiding(
        &self,
        argv: Vec<String>,
        extra_writable: &[PathBuf],
        hidden: &[PathBuf],
    ) -> WrappedCommand {
        self.inner
            .wrap_hiding(Self::mark(argv), extra_writable, hidden)
    }
    fn wrap_call(
        &self,
        argv: Vec<String>,
        extra_writable: &[PathBuf],
        hidden: &[PathBuf],
        net: Option<Arc<dyn cairn_runtime::netproxy::gate::NetGate>>,
    ) -> WrappedCommand {
        self.inner
            .wrap_call(Self::mark(argv), extra_writable, hidden, net)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// Why a sandboxed call's output does not show that its command ran inside the sandbox.
fn not_run(result: &str) -> Option<String> {
    if let Some(e) = NOT_STARTED.iter().find(|e| result.contains(*e)) {
        return Some(format!("the sandbox did not start (`{e}`)"));
    }
    (!result.contains(RAN)).then(|| "no sign that the command ran inside the sandbox".into())
}

fn fill(text: &str, w: &World) -> String {
    text.replace("{outside}", &w.outside.display().to_string())
        .replace("{ws}", &w.ws.display().to_string())
        .replace(
            "{home_marker}",
            &home().join(HOME_MARKER).display().to_string(),
        )
}

fn fill_value(v: &Value, w: &World) -> Value {
    match v {
        Value::String(s) => Value::String(fill(s, w)),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill_value(x, w)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), fill_value(x, w)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The arguments of a path-tool call that writes `path`.
fn path_args(tool: &str, path: &str) -> Value {
    match tool {
        "write_file" => json!({"path": path, "content": "pwned\n"}),
        "replace_in_file" => {
            json!({"path": path, "old_string": "top secret", "new_string": "pwned"})
        }
        "apply_patch" => json!({
            "patch": format!("*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch\n")
        }),
        "apply_unified_diff" => json!({
            "diff": format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+pwned\n")
        }),
        other => panic!("no path arguments for {other}"),
    }
}

fn mode_of(s: &str) -> Mode {
    match s {
        "discuss" => Mode::Discuss,
        "plan" => Mode::Plan,
        "interactive" => Mode::Interactive,
        "auto" => Mode::Auto,
        other => panic!("unknown mode {other}"),
    }
}

fn policy_of(s: &str) -> ShellPolicy {
    match s {
        "approve" => ShellPolicy::Approve,
        "workspace" => ShellPolicy::Workspace,
        "sandbox" => ShellPolicy::Sandbox,
        "all" => ShellPolicy::All,
        other => panic!("unknown shell policy {other}"),
    }
}

fn rules_of(lines: &[String]) -> RuleSet {
    let mut set = RuleSet::new();
    for line in lines {
        let (decision, rule) = line.split_once(' ').expect("`allow|ask|deny <rule>`");
        let decision = match decision {
            "allow" => RuleDecision::Allow,
            "ask" => RuleDecision::Ask,
            "deny" => RuleDecision::Deny,
            other => panic!("unknown decision {other}"),
        };
        set.add_spec(
            &RuleSpec {
                rule: rule.to_string(),
                decision,
                matches: Vec::new(),
                not_match: Vec::new(),
                project: None,
            },
            "user settings",
        )
        .unwrap();
    }
    set
}

/// What one call did: whether the user was asked, and how the call finished.
struct Observed {
    asked: bool,
    status: Option<ToolStatus>,
    result: String,
}

async fn run_case(
    case: &Case,
    tool: &str,
    args: Value,
    w: &World,
    bwrap: Option<&Path>,
) -> Observed {
    let mut config = EngineConfig::new(w.ws.clone(), w.state.clone(), "fake-model");
    config.mode = mode_of(&case.mode);
    config.allowed_commands = case.allow_commands.clone();
    let mut registry = ToolRegistry::new();
    registry.register_all(cairn_tools::core_tools());
    let llm = FakeLlm::new(vec![
        FakeReply::tool("attack", tool, args),
        FakeReply::text("done"),
    ]);
    let exec = if case.sandbox {
        assert!(bwrap.is_some(), "bwrap");
        runtime_sandbox(w)
    } else {
        ExecEnvironment::default()
    };
    let state = PermissionState {
        mode: config.mode,
        allow_commands: case.session_commands.iter().cloned().collect(),
        ..Default::default()
    };
    let session = Session::builder(config, Arc::new(llm.clone()))
        .tools(registry)
        .approver(Arc::new(ScriptedApprover::new(
            vec![],
            ApprovalDecision::Deny,
        )))
        .permission_state(state)
        .permission_rules(rules_of(&case.rules), policy_of(&case.policy), case.sandbox)
        .exec_environment(exec)
        .build();
    let events = collect(session.run("go")).await;
    let asked = events
        .iter()
        .any(|e| matches!(e, Event::PermissionRequired(_)));
    let status = events.iter().find_map(|e| match e {
        Event::ToolFinished(f) if f.req_id == "attack" => Some(f.status),
        _ => None,
    });
    let result = common::tool_results(&llm)
        .into_iter()
        .map(|(_, c)| c)
        .collect::<Vec<_>>()
        .join("\n");
    Observed {
        asked,
        status,
        result,
    }
}

/// Checks one outcome; returns a failure message.
fn check(
    expect: &str,
    o: &Observed,
    unchanged_all: &[String],
    unchanged_guarded: &[String],
) -> Option<String> {
    let ok = match expect {
        "asks" => o.asked && o.status == Some(ToolStatus::Denied) && unchanged_all.is_empty(),
        "denied" => !o.asked && o.status == Some(ToolStatus::Denied) && unchanged_all.is_empty(),
        "refused" => !o.asked && o.status == Some(ToolStatus::Error) && unchanged_all.is_empty(),
        "runs" => {
            !o.asked
                && matches!(o.status, Some(ToolStatus::Ok) | Some(ToolStatus::Error))
                && unchanged_guarded.is_empty()
        }
        "sandboxed" | "succeeds" => {
            if let Some(why) = not_run(&o.result) {
                return Some(format!(
                    "expected {expect}: {why}; result: {}",
                    o.result.chars().take(300).collect::<String>()
                ));
            }
            let finished = if expect == "succeeds" {
                o.status == Some(ToolStatus::Ok)
            } else {
                matches!(o.status, Some(ToolStatus::Ok) | Some(ToolStatus::Error))
            };
            !o.asked && finished && unchanged_guarded.is_empty()
        }
        other => return Some(format!("unknown expectation {other}")),
    };
    (!ok).then(|| {
        format!(
            "expected {expect}; asked={} status={:?}; changed anywhere: {unchanged_all:?}; \
             changed outside/protected: {unchanged_guarded:?}; result: {}",
            o.asked,
            o.status,
            o.result.chars().take(300).collect::<String>()
        )
    })
}

/// The tool and arguments that run `command` with `tool` (see [`Case::commands`]).
fn command_call(tool: &str, command: &str) -> (String, Value) {
    match tool {
        "run_shell_background" => (
            "run_shell".into(),
            json!({"command": command, "background": true}),
        ),
        "run_shell" | "exec_command" => (tool.into(), json!({ "command": command })),
        other => panic!("no command arguments for {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attack_corpus_yields_no_unapproved_side_effects() {
    run_corpus("attacks.toml", 150).await;
}

/// Deny/ask rules × wrappers × command tools, allowlists × risky options, catastrophic
/// commands × modes (`fixtures/rules_attacks.toml`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_corpus_holds_against_wrappers_options_and_catastrophes() {
    run_corpus("rules_attacks.toml", 150).await;
}

/// Runs every case of `fixtures/<file>`; at least `min` calls.
async fn run_corpus(file: &str, min: usize) {
    let text = std::fs::read_to_string(
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
            .join("tests/fixtures")
            .join(file),
    )
    .unwrap();
    let corpus: Corpus = toml::from_str(&text).unwrap();
    let bwrap = bwrap_path().filter(|_| bwrap_works());
    let demanded = std::env::var("CAIRN_SANDBOX_TEST").as_deref() == Ok("1");
    assert!(
        bwrap.is_some() || !demanded,
        "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
    );
    let home_marker = home().join(HOME_MARKER);
    assert!(!home_marker.exists(), "stale {}", home_marker.display());

    let mut ids = std::collections::BTreeSet::new();
    let (mut ran, mut skipped) = (0usize, 0usize);
    let mut by_outcome: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &corpus.cases {
        assert!(ids.insert(case.id.clone()), "duplicate case id {}", case.id);
        let calls: Vec<(String, Option<String>, String)> = match (&case.tool, &case.path) {
            (Some(t), None) => vec![(t.clone(), None, case.expect.clone())],
            (None, None) if !case.commands.is_empty() => {
                assert!(
                    !case.tools.is_empty(),
                    "{}: `commands` needs `tools`",
                    case.id
                );
                case.tools
                    .iter()
                    .flat_map(|t| {
                        let e = case.expect_for.get(t).unwrap_or(&case.expect).clone();
                        case.commands
                            .iter()
                            .map(move |c| (t.clone(), Some(c.clone()), e.clone()))
                    })
                    .collect()
            }
            (None, Some(p)) => {
                assert!(!case.tools.is_empty(), "{}: `path` needs `tools`", case.id);
                case.tools
                    .iter()
                    .map(|t| {
                        let e = case.expect_for.get(t).unwrap_or(&case.expect).clone();
                        (t.clone(), Some(p.clone()), e)
                    })
                    .collect()
            }
            _ => panic!("{}: give `tool` + `args`, or `tools` + `path`", case.id),
        };
        if case.sandbox && bwrap.is_none() {
            eprintln!("skipped {}: bubblewrap cannot run here", case.id);
            skipped += calls.len();
            continue;
        }
        for (tool, path, expect) in calls {
            let w = world();
            for gone in &case.remove {
                let p = w.ws.join(gone);
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).unwrap();
                } else {
                    std::fs::remove_file(&p).unwrap();
                }
            }
            let (tool, args) = match &path {
                Some(c) if !case.commands.is_empty() => command_call(&tool, &fill(c, &w)),
                Some(p) => (tool.clone(), path_args(&tool, &fill(p, &w))),
                None => (
                    tool.clone(),
                    fill_value(case.args.as_ref().expect("args"), &w),
                ),
            };
            let before = snapshot(&w.base);
            let observed = run_case(case, &tool, args, &w, bwrap.as_deref()).await;
            let mut after = snapshot(&w.base);
            after.retain(|p, _| !p.starts_with(&w.state));
            let mut before_all = before.clone();
            before_all.retain(|p, _| !p.starts_with(&w.state));
            let mut all = diff(&before_all, &after);
            let mut guarded_diff = diff(&guarded(&before, &w), &guarded(&after, &w));
            if home_marker.exists() {
                let _ = std::fs::remove_file(&home_marker);
                all.push(format!("created {}", home_marker.display()));
                guarded_diff.push(format!("created {}", home_marker.display()));
            }
            let label = match &path {
                Some(c) if !case.commands.is_empty() => format!("{} [{tool}] {c}", case.id),
                Some(_) => format!("{} [{tool}]", case.id),
                None => case.id.clone(),
            };
            if let Some(f) = check(&expect, &observed, &all, &guarded_diff) {
                failures.push(format!("{label}: {f}"));
            }
            if let Some(want) = &case.output {
                if !observed.result.contains(&fill(want, &w)) {
                    failures.push(format!(
                        "{label}: the result lacks `{want}`: {}",
                        observed.result.chars().take(300).collect::<String>()
                    ));
                }
            }
            *by_outcome.entry(expect).or_default() += 1;
            ran += 1;
        }
    }
    eprintln!(
        "attack corpus {file}: {ran} calls run, {skipped} skipped (no sandbox); by outcome: {by_outcome:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} attack cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        ran + skipped >= min,
        "the corpus {file} has only {} calls",
        ran + skipped
    );
}

/// The patch tools name their files inside the patch text; every wrapper around them (stale
/// notices, switched-off call descriptions) must still report those paths to the engine, or
/// protected-path and boundary checks would silently see no path at all.
#[test]
fn patch_targets_survive_every_tool_wrapper() {
    let patch = json!({"patch": "*** Begin Patch\n*** Add File: .git/x\n+x\n*** End Patch\n"});
    let diff = json!({"diff": "--- /dev/null\n+++ b/.git/x\n@@ -0,0 +1 @@\n+x\n"});
    let wrapped = cairn_tools::disable_call_descriptions(
        cairn_tools::core_tools(),
        &["apply_patch", "apply_unified_diff"],
    );
    for tools in [cairn_tools::core_tools(), wrapped] {
        for (name, args) in [("apply_patch", &patch), ("apply_unified_diff", &diff)] {
            let t = common::tool(&tools, name);
            assert_eq!(
                t.write_targets(args),
                Some(vec![".git/x".to_string()]),
                "{name}"
            );
        }
    }
}
