//! The permission subjects of the built-in tools: what each call asks for, read from the
//! tool's own argument names (the engine reads none).

use cairn_engine::{Capability, CommandRun, PermissionSubject};
use serde_json::Value;

fn text(args: &Value, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A call that reads its `path` argument (none given: the workspace, which no rule names).
pub(crate) fn reads_path(args: &Value) -> PermissionSubject {
    PermissionSubject::reads(text(args, "path"))
}

/// A call that writes its `path` argument.
pub(crate) fn writes_path(args: &Value) -> PermissionSubject {
    PermissionSubject::writes(text(args, "path"))
}

/// A call of a shell tool: it runs its `command` (in `cwd`, outside the sandbox with
/// `sandbox: false`).
pub(crate) fn runs_command(args: &Value) -> PermissionSubject {
    PermissionSubject::command(CommandRun::from_shell_args(args))
}

/// A call that types its `input` into a running command session.
pub(crate) fn types_input(args: &Value) -> PermissionSubject {
    PermissionSubject::none().with_all(text(args, "input").map(Capability::TypeInput))
}

/// A call that fetches its `url`.
pub(crate) fn fetches_url(args: &Value) -> PermissionSubject {
    PermissionSubject::none().with_all(text(args, "url").map(Capability::Network))
}
