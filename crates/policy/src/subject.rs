//! What a tool call asks permission for, as the tool names it: the command it runs, the URL
//! it reaches, the paths it reads or writes. The permission engine and the rules match these
//! typed capabilities, never a tool's argument names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A command line a call runs, with where and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The command line, as the shell gets it.
    pub command: String,
    /// The folder it runs in, relative to the workspace (`None`: the workspace itself).
    pub cwd: Option<String>,
    /// Whether the call asks to run outside the OS sandbox (`"sandbox": false`).
    pub unsandboxed: bool,
}

impl CommandRun {
    /// A command run in the workspace, inside the sandbox.
    pub fn new(command: impl Into<String>) -> Self {
        CommandRun {
            command: command.into(),
            cwd: None,
            unsandboxed: false,
        }
    }

    /// The run described by the arguments of Cairn's shell tools (`command`, `cwd`,
    /// `sandbox`); `None` when `command` is not a string.
    pub fn from_shell_args(args: &Value) -> Option<Self> {
        let command = args.get("command")?.as_str()?;
        Some(CommandRun {
            command: command.to_string(),
            cwd: args
                .get("cwd")
                .and_then(Value::as_str)
                .filter(|c| !c.trim().is_empty())
                .map(str::to_string),
            unsandboxed: refuses_sandbox(args.get("sandbox")),
        })
    }
}

/// Whether a `sandbox` argument asks to run outside the OS sandbox: `false`, or the text
/// `"false"` (any case, spaces around).
pub fn refuses_sandbox(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => !b,
        Some(Value::String(s)) => s.trim().eq_ignore_ascii_case("false"),
        _ => false,
    }
}

/// One thing a tool call needs permission for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Capability {
    /// Reads the file or folder at this path (relative to the workspace or absolute).
    ReadPath(String),
    /// Creates, changes, moves or deletes this path.
    WritePath(String),
    /// Runs a shell command line.
    RunCommand(CommandRun),
    /// Types this text into a running shell session.
    TypeInput(String),
    /// Reaches this URL.
    Network(String),
    /// A command line a tool Cairn cannot see into names (an MCP tool's `command`): deny and
    /// ask rules on commands bind it; it is never offered a command allowance.
    OpaqueCommand(String),
    /// A path a tool Cairn cannot see into names (an MCP tool's `path`): path rules match it.
    OpaquePath(String),
}

/// Everything one tool call asks permission for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionSubject {
    /// Whether the tool runs shell commands: only such a tool may be offered "always allow
    /// this command" (and have it honoured).
    pub runs_commands: bool,
    /// What this call needs, in the order the tool names them.
    pub needs: Vec<Capability>,
}

impl PermissionSubject {
    /// A call that needs nothing the rules match beyond the tool's name.
    pub fn none() -> Self {
        Self::default()
    }

    /// A call of a command-running tool; `run` is `None` when its arguments name no command.
    pub fn command(run: Option<CommandRun>) -> Self {
        PermissionSubject {
            runs_commands: true,
            needs: run.map(Capability::RunCommand).into_iter().collect(),
        }
    }

    /// A call that reads `paths`.
    pub fn reads<S: Into<String>>(paths: impl IntoIterator<Item = S>) -> Self {
        Self::none().with_all(paths.into_iter().map(|p| Capability::ReadPath(p.into())))
    }

    /// A call that writes `paths`.
    pub fn writes<S: Into<String>>(paths: impl IntoIterator<Item = S>) -> Self {
        Self::none().with_all(paths.into_iter().map(|p| Capability::WritePath(p.into())))
    }

    /// This subject needing `capability` too.
    pub fn with(mut self, capability: Capability) -> Self {
        self.needs.push(capability);
        self
    }

    /// This subject needing every one of `capabilities` too.
    pub fn with_all(mut self, capabilities: impl IntoIterator<Item = Capability>) -> Self {
        self.needs.extend(capabilities);
        self
    }

    /// The subject of a tool Cairn cannot see into (an MCP tool): its `command` and `path`
    /// arguments, which deny/ask rules and path rules still match.
    pub fn opaque(args: &Value) -> Self {
        let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
        Self::none()
            .with_all(text("command").map(Capability::OpaqueCommand))
            .with_all(text("path").map(Capability::OpaquePath))
    }

    /// The subject read from conventional argument names for a tool's capability tags
    /// (`exec`: `command`, `cwd`, `sandbox`, `input`; `write`: `targets` or `path`; `network`:
    /// `url`; otherwise `path` read, `command` opaque): what a tool that does not name its
    /// own subject gets.
    pub fn from_arguments(tags: &[String], args: &Value, targets: Option<Vec<String>>) -> Self {
        let has = |t: &str| tags.iter().any(|c| c == t);
        let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
        let mut s = if has("exec") {
            let mut s = Self::command(CommandRun::from_shell_args(args))
                .with_all(text("input").map(Capability::TypeInput));
            s.runs_commands = args.get("command").is_some();
            s
        } else {
            Self::none().with_all(text("command").map(Capability::OpaqueCommand))
        };
        if has("write") {
            let targets = targets.unwrap_or_else(|| text("path").into_iter().collect());
            s = s.with_all(targets.into_iter().map(Capability::WritePath));
        } else {
            s = s.with_all(text("path").map(Capability::ReadPath));
        }
        if has("network") {
            s = s.with_all(text("url").map(Capability::Network));
        }
        s
    }

    /// The command line the call runs, if it runs one.
    pub fn command_run(&self) -> Option<&CommandRun> {
        self.needs.iter().find_map(|c| match c {
            Capability::RunCommand(r) => Some(r),
            _ => None,
        })
    }

    /// What the call has a shell run or read: its command line, else the text it types.
    pub fn typed(&self) -> Option<&str> {
        self.command_run().map(|r| r.command.as_str()).or_else(|| {
            self.needs.iter().find_map(|c| match c {
                Capability::TypeInput(t) => Some(t.as_str()),
                _ => None,
            })
        })
    }

    /// The paths the call writes.
    pub fn written(&self) -> Vec<String> {
        self.needs
            .iter()
            .filter_map(|c| match c {
                Capability::WritePath(p) => Some(p.clone()),
                _ => None,
            })
            .collect()
    }

    /// The URLs the call reaches.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        self.needs.iter().filter_map(|c| match c {
            Capability::Network(u) => Some(u.as_str()),
            _ => None,
        })
    }

    /// The command line command rules match: the one it runs, else one it names opaquely.
    pub fn rule_command(&self) -> Option<&str> {
        self.command_run().map(|r| r.command.as_str()).or_else(|| {
            self.needs.iter().find_map(|c| match c {
                Capability::OpaqueCommand(t) => Some(t.as_str()),
                _ => None,
            })
        })
    }

    /// The paths path rules match: those it writes, else those it reads or names.
    pub fn rule_paths(&self) -> Vec<String> {
        let written = self.written();
        if !written.is_empty() {
            return written;
        }
        self.needs
            .iter()
            .filter_map(|c| match c {
                Capability::ReadPath(p) | Capability::OpaquePath(p) => Some(p.clone()),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn conventional_arguments_map_to_capabilities_by_tag() {
        let shell = PermissionSubject::from_arguments(
            &tags(&["exec"]),
            &json!({"command": "ls", "cwd": " ", "sandbox": "False "}),
            None,
        );
        assert!(shell.runs_commands);
        assert_eq!(
            shell.command_run(),
            Some(&CommandRun {
                command: "ls".into(),
                cwd: None,
                unsandboxed: true
            })
        );
        assert_eq!(shell.rule_command(), Some("ls"));
        let typed =
            PermissionSubject::from_arguments(&tags(&["exec"]), &json!({"input": "y\n"}), None);
        assert!(
            !typed.runs_commands,
            "typing into a session is not running a command"
        );
        assert_eq!(typed.typed(), Some("y\n"));
        assert_eq!(typed.rule_command(), None);
        let write =
            PermissionSubject::from_arguments(&tags(&["write"]), &json!({"path": "a"}), None);
        assert_eq!(write.written(), vec!["a".to_string()]);
        let patch = PermissionSubject::from_arguments(
            &tags(&["write"]),
            &json!({"path": "ignored"}),
            Some(vec!["x".into(), "y".into()]),
        );
        assert_eq!(patch.rule_paths(), vec!["x".to_string(), "y".to_string()]);
        let web = PermissionSubject::from_arguments(
            &tags(&["network", "read"]),
            &json!({"url": "http://h/"}),
            None,
        );
        assert_eq!(web.urls().collect::<Vec<_>>(), vec!["http://h/"]);
        let mcp = PermissionSubject::from_arguments(
            &tags(&["mcp"]),
            &json!({"command": "rm x", "path": "p"}),
            None,
        );
        let opaque = PermissionSubject::opaque(&json!({"command": "rm x", "path": "p"}));
        assert_eq!(opaque.rule_command(), mcp.rule_command());
        assert_eq!(opaque.rule_paths(), mcp.rule_paths());
        assert!(!opaque.runs_commands && opaque.command_run().is_none());
        assert!(!mcp.runs_commands && mcp.command_run().is_none());
        assert_eq!(mcp.rule_command(), Some("rm x"));
        assert_eq!(mcp.rule_paths(), vec!["p".to_string()]);
    }

    #[test]
    fn the_sandbox_argument_is_refused_only_by_false() {
        for (v, refused) in [
            (json!(false), true),
            (json!("false"), true),
            (json!(" FALSE "), true),
            (json!(true), false),
            (json!("no"), false),
            (json!(0), false),
        ] {
            assert_eq!(refuses_sandbox(Some(&v)), refused, "{v}");
        }
        assert!(!refuses_sandbox(None));
    }
}
