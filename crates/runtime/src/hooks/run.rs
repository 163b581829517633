//! Running hook commands: `sh -c COMMAND` in the workspace with the event as JSON on stdin,
//! with the credential variables removed as for shell tools, killed with their process group
//! at the timeout. The user's own hooks run outside the sandbox (they are the user's
//! programs); a project's hooks (`.agent/hooks.json`, trusted) run inside the session's
//! sandbox when it has one, like the agent's commands: what they run (`sh scripts/fmt.sh`)
//! is the workspace's code, which the agent may have just edited. Exit 0 continues
//! (stdout may carry `{"decision": "block"|"approve", "reason", "additionalContext"}`),
//! exit 2 blocks with stderr as the reason, anything else is logged and ignored. Hooks see
//! calls in Claude Code's vocabulary ([`vocabulary`]: `Bash`, `Read`, `Write`, `Edit`, … with
//! `file_path`, plus `permission_mode`, `tool_use_id` and SessionStart's `source`) and may answer
//! in Claude Code's current schema too (`hookSpecificOutput.permissionDecision` `deny` / `ask`
//! / `allow`, `continue: false`), deny first, then ask, then allow.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::{Gate, GateInput, GatePoint, GateVerdict};
use tokio::io::AsyncWriteExt;

use super::config::{HookDef, HookSource};
use super::vocabulary::{self, HookCall};
use std::sync::atomic::{AtomicBool, Ordering};

/// Most bytes of a hook's output read.
const MAX_OUTPUT: usize = 64 * 1024;

/// The hooks of one session.
pub struct CommandGate {
    defs: Vec<HookDef>,
    session_id: String,
    cwd: PathBuf,
    removed_env: Vec<String>,
    /// Whether a project hook's ignored approval was said already.
    named_project_allow: AtomicBool,
    /// The session's sandbox, for the project's hooks.
    sandbox: Option<Arc<dyn cairn_engine::CommandWrapper>>,
}

impl CommandGate {
    /// A gate running `defs` for session `session_id` in `cwd`.
    pub fn new(defs: Vec<HookDef>, session_id: String, cwd: PathBuf) -> CommandGate {
        let removed_env = cairn_engine::ExecEnvironment::default()
            .without_credentials()
            .removed_env;
        CommandGate {
            defs,
            session_id,
            cwd,
            removed_env,
            named_project_allow: AtomicBool::new(false),
            sandbox: None,
        }
    }

    /// Runs the project's hooks inside `sandbox` (the session's), when there is one.
    pub fn with_sandbox(mut self, sandbox: Option<Arc<dyn cairn_engine::CommandWrapper>>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Runs the hooks of a worktree event (`WorktreeCreate`, `WorktreeRemove`) with `extra`
    /// fields; returns the problems to tell the user.
    pub async fn run_event(&self, event: &str, extra: serde_json::Value) -> Vec<String> {
        let mut problems = Vec::new();
        for def in self.defs.iter().filter(|d| d.event == event) {
            let mut input = serde_json::json!({
                "session_id": self.session_id,
                "cwd": self.cwd,
                "hook_event_name": event,
            });
            if let (Some(obj), Some(more)) = (input.as_object_mut(), extra.as_object()) {
                obj.extend(more.clone());
            }
            match self.spawn(def, &input).await {
                Outcome::Exited(0, _, _) => {}
                Outcome::Exited(code, _, err) => problems.push(format!(
                    "{event} hook `{}` exited with {code}: {}",
                    def.command,
                    err.trim()
                )),
                Outcome::Failed(why) => problems.push(why),
            }
        }
        problems
    }

    /// The hook's stdin for `g`, the call in Claude Code's vocabulary ([`vocabulary`]).
    fn input(&self, g: &GateInput, call: Option<&HookCall>) -> serde_json::Value {
        let mut v = serde_json::json!({
            "session_id": self.session_id,
            "cwd": self.cwd,
            "hook_event_name": g.point.name(),
        });
        let obj = v.as_object_mut();
        if let Some(obj) = obj {
            if let Some(mode) = g.mode {
                obj.insert(
                    "permission_mode".into(),
                    vocabulary::claude_mode(mode).into(),
                );
            }
            if let Some(id) = &g.tool_use_id {
                obj.insert("tool_use_id".into(), id.clone().into());
            }
            if let Some(source) = &g.source {
                obj.insert("source".into(), source.clone().into());
            }
            if let Some(c) = call {
                obj.insert("tool_name".into(), c.name.clone().into());
                obj.insert("tool_input".into(), c.input.clone());
                obj.insert("cairn_tool_name".into(), c.cairn_name.clone().into());
                if let Some(t) = &g.tool_input {
                    obj.insert("cairn_tool_input".into(), t.clone());
                }
            }
            if let Some(t) = &g.tool_response {
                obj.insert("tool_response".into(), t.clone());
            }
            if let Some(p) = &g.prompt {
                obj.insert("prompt".into(), p.clone().into());
            }
            if let Some(m) = &g.message {
                obj.insert("message".into(), m.clone().into());
            }
            if g.point == GatePoint::Stop {
                obj.insert("stop_hook_active".into(), g.stop_hook_active.into());
            }
        }
        v
    }

    /// The calls hooks see for `g`: none outside tool events; a patch one per file.
    fn calls(&self, g: &GateInput) -> Vec<HookCall> {
        let Some(tool) = &g.tool_name else {
            return Vec::new();
        };
        let args = g.tool_input.clone().unwrap_or(serde_json::Value::Null);
        let calls = vocabulary::hook_calls(tool, &args, &g.writes, &self.cwd);
        if calls.is_empty() {
            // A patch that names no file still reaches the hooks, under its own name.
            return vec![HookCall {
                name: tool.clone(),
                cairn_name: tool.clone(),
                input: args,
            }];
        }
        calls
    }

    async fn spawn(&self, def: &HookDef, input: &serde_json::Value) -> Outcome {
        let argv = vec!["sh".to_string(), "-c".to_string(), def.command.clone()];
        let inside = def.inside_because(&self.cwd).is_some();
        let wrapped = match (&self.sandbox, inside) {
            (Some(w), true) => w.wrap_guarded(argv, &[]),
            _ => cairn_engine::WrappedCommand::plain(argv),
        };
        let Some((program, args)) = wrapped.argv.split_first() else {
            return Outcome::Failed(format!("hook `{}`: empty command line", def.command));
        };
        let mut cmd = tokio::process::Command::new(program);
        match &wrapped.env {
            Some(env) => {
                cmd.env_clear().envs(env.iter().cloned());
            }
            None => {
                for name in &self.removed_env {
                    cmd.env_remove(name);
                }
            }
        }
        cmd.args(args)
            .current_dir(&self.cwd)
            .env("CAIRN_PROJECT_DIR", &self.cwd)
            .env("CLAUDE_PROJECT_DIR", &self.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own session and process group: no controlling terminal, killed as a group.
        cairn_engine::process_session::own_session_tokio(&mut cmd);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("hook `{}` cannot start: {e}", def.command)),
        };
        let pid = child.id();
        if let Some(mut stdin) = child.stdin.take() {
            let bytes = input.to_string();
            // A hook that does not read its input is fine.
            let _ = stdin.write_all(bytes.as_bytes()).await;
        }
        let limit = Duration::from_secs(def.timeout_secs);
        // The sandbox's guard (its mount points) lives until the hook has ended.
        let _guard = wrapped.guard;
        match tokio::time::timeout(limit, child.wait_with_output()).await {
            Ok(Ok(out)) => Outcome::Exited(
                out.status.code().unwrap_or(-1),
                lossy(&out.stdout),
                lossy(&out.stderr),
            ),
            Ok(Err(e)) => Outcome::Failed(format!("hook `{}` failed: {e}", def.command)),
            Err(_) => {
                if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                Outcome::Failed(format!(
                    "hook `{}` ran over its {} s timeout and was killed",
                    def.command, def.timeout_secs
                ))
            }
        }
    }
}

impl CommandGate {
    /// Folds one hook's JSON answer into `verdict`: the older `decision` (`block`,
    /// `approve`), `continue: false` with its `stopReason`, and `hookSpecificOutput`
    /// (`permissionDecision` `deny` / `ask` / `allow` with its reason, a permission request's
    /// `decision.behavior`, `additionalContext`). Only the user's own hooks may approve; a
    /// project hook's approval is ignored and said once.
    fn read_answer(
        &self,
        def: &HookDef,
        point: GatePoint,
        obj: &serde_json::Map<String, serde_json::Value>,
        verdict: &mut GateVerdict,
    ) {
        let text = |v: Option<&serde_json::Value>| {
            v.and_then(|r| r.as_str())
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_string)
        };
        let blocked_by = || format!("blocked by hook `{}`", def.command);
        let approve = |verdict: &mut GateVerdict| {
            if matches!(def.source, HookSource::User(_)) {
                verdict.approve = true;
            } else if !self.named_project_allow.swap(true, Ordering::SeqCst) {
                tracing::warn!(
                    hook = %def.command,
                    "a project hook answered allow; ignored (only your own hooks may approve)"
                );
            }
        };
        let reason = text(obj.get("reason"));
        match obj.get("decision").and_then(|d| d.as_str()) {
            Some("block") | Some("deny") => {
                verdict
                    .block
                    .get_or_insert(reason.clone().unwrap_or_else(blocked_by));
            }
            Some("approve") | Some("allow") => approve(verdict),
            _ => {}
        }
        // `continue: false` stops the step (a Stop hook's turn ends anyway).
        if obj.get("continue").and_then(|c| c.as_bool()) == Some(false) && point != GatePoint::Stop
        {
            verdict.block.get_or_insert(
                text(obj.get("stopReason"))
                    .or(reason.clone())
                    .unwrap_or_else(blocked_by),
            );
        }
        let specific = obj.get("hookSpecificOutput").and_then(|h| h.as_object());
        if let Some(h) = specific {
            let why = text(h.get("permissionDecisionReason"));
            match h.get("permissionDecision").and_then(|d| d.as_str()) {
                Some("deny") => {
                    verdict.block.get_or_insert(why.unwrap_or_else(blocked_by));
                }
                Some("ask") => {
                    verdict.ask.get_or_insert(why.unwrap_or_default());
                }
                Some("allow") => approve(verdict),
                _ => {}
            }
            // A permission request's answer: `{"decision": {"behavior": "allow"|"deny"}}`.
            if let Some(d) = h.get("decision").and_then(|d| d.as_object()) {
                match d.get("behavior").and_then(|b| b.as_str()) {
                    Some("deny") => {
                        verdict
                            .block
                            .get_or_insert(text(d.get("message")).unwrap_or_else(blocked_by));
                    }
                    Some("allow") => approve(verdict),
                    _ => {}
                }
            }
        }
        let ctx = obj
            .get("additionalContext")
            .or_else(|| specific.and_then(|h| h.get("additionalContext")));
        if let Some(c) = text(ctx) {
            verdict.context.push(c);
        }
    }
}

impl CommandGate {
    /// Applies a `PreToolUse` hook's `updatedInput` to `verdict`: the call's arguments with
    /// the rewritten fields under Cairn's names. A rewrite by a project hook makes the user
    /// decide the rewritten call; one of a patch (several calls to a hook) is ignored, said.
    fn read_rewrite(
        &self,
        def: &HookDef,
        g: &GateInput,
        call: Option<&HookCall>,
        obj: &serde_json::Map<String, serde_json::Value>,
        verdict: &mut GateVerdict,
    ) {
        if g.point != GatePoint::PreToolUse {
            return;
        }
        let Some(updated) = obj
            .get("hookSpecificOutput")
            .and_then(|h| h.get("updatedInput"))
            .filter(|u| u.is_object())
        else {
            return;
        };
        let (Some(call), Some(original)) = (call, g.tool_input.as_ref()) else {
            return;
        };
        let base = verdict.updated_input.as_ref().unwrap_or(original);
        match vocabulary::cairn_input(&call.cairn_name, base, updated) {
            Some(args) => {
                verdict.updated_input = Some(args);
                if matches!(def.source, HookSource::Project(_)) {
                    verdict.ask.get_or_insert(format!(
                        "the project's hook `{}` rewrote this call",
                        def.command
                    ));
                }
            }
            None => tracing::warn!(
                hook = %def.command,
                "updatedInput for {} is ignored: a patch cannot be rewritten by a hook",
                call.cairn_name
            ),
        }
    }
}

/// How a hook run ended.
enum Outcome {
    /// Exit code, stdout, stderr.
    Exited(i32, String, String),
    /// It could not run or ran too long (logged; the step goes on).
    Failed(String),
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_OUTPUT)]).into_owned()
}

#[async_trait]
impl Gate for CommandGate {
    fn wants(&self, point: GatePoint) -> bool {
        self.defs.iter().any(|d| d.event == point.name())
    }

    async fn check(&self, g: &GateInput) -> GateVerdict {
        let mut verdict = GateVerdict::default();
        let plain_context = matches!(
            g.point,
            GatePoint::SessionStart | GatePoint::UserPromptSubmit
        );
        let calls = self.calls(g);
        // The transcript, for the hooks of this point that run outside the sandbox (the
        // user's own; a sandboxed hook could not see the file).
        let transcript = (!g.history.is_empty()
            && self
                .defs
                .iter()
                .any(|d| d.event == g.point.name() && d.inside_because(&self.cwd).is_none()))
        .then(|| super::transcript::Transcript::write(&self.session_id, &g.history))
        .flatten();
        let runs: Vec<Option<&HookCall>> = if calls.is_empty() {
            vec![None]
        } else {
            calls.iter().map(Some).collect()
        };
        for call in runs {
            let names: Vec<&str> = call
                .map(|c| vec![c.name.as_str(), c.cairn_name.as_str()])
                .unwrap_or_default();
            let input = self.input(g, call);
            let mut with_transcript = input.clone();
            if let (Some(t), Some(obj)) = (&transcript, with_transcript.as_object_mut()) {
                obj.insert(
                    "transcript_path".into(),
                    t.path().display().to_string().into(),
                );
            }
            for def in self
                .defs
                .iter()
                .filter(|d| d.applies_to_any(g.point, &names))
            {
                let input = if def.inside_because(&self.cwd).is_none() {
                    &with_transcript
                } else {
                    &input
                };
                match self.spawn(def, input).await {
                    Outcome::Exited(0, stdout, _) => {
                        let answer: Option<serde_json::Value> =
                            serde_json::from_str(stdout.trim()).ok();
                        match answer.as_ref().and_then(|v| v.as_object()) {
                            Some(obj) => {
                                self.read_answer(def, g.point, obj, &mut verdict);
                                self.read_rewrite(def, g, call, obj, &mut verdict);
                            }
                            None if plain_context && !stdout.trim().is_empty() => {
                                verdict.context.push(stdout.trim().to_string());
                            }
                            None => {}
                        }
                    }
                    Outcome::Exited(2, _, stderr) => {
                        let reason = stderr.trim();
                        verdict.block.get_or_insert(if reason.is_empty() {
                            format!("blocked by hook `{}`", def.command)
                        } else {
                            reason.to_string()
                        });
                    }
                    Outcome::Exited(code, _, stderr) => tracing::warn!(
                        hook = %def.command,
                        code,
                        stderr = %stderr.trim(),
                        "a {} hook failed; ignored",
                        g.point.name()
                    ),
                    Outcome::Failed(why) => tracing::warn!("{why}; ignored"),
                }
            }
        }
        // Claude Code's precedence: deny, then ask, then allow.
        if verdict.block.is_some() {
            verdict.ask = None;
        }
        if verdict.ask.is_some() {
            verdict.approve = false;
        }
        // A block wins over an approval.
        if verdict.block.is_some() {
            verdict.approve = false;
        }
        verdict
    }
}
