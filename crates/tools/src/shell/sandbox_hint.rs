//! Telling the model, in words it can act on, that a sandboxed command failed because of the
//! sandbox, and how to ask for it to run outside (`sandbox: false`, approved by the user).

/// The description of the `sandbox` argument of `run_shell` and `exec_command`.
pub(crate) const SANDBOX_ARG: &str = "Default true: the command runs inside the OS sandbox \
    when one is active. Set to false only to retry a command that failed because of the \
    sandbox (a read-only file system or permission denied outside the workspace, .git read-only, \
    e.g. for git commit); the user is asked to approve every such call, in every mode.";

/// What sandbox failures print (matched case-insensitively).
const SIGNS: &[&str] = &[
    "read-only file system",
    "erofs",
    "permission denied",
    "eacces",
    "operation not permitted",
    "eperm",
];

/// A note for a failed sandboxed command whose output shows a sandbox refusal, or `None`.
pub(crate) fn hint(output: &str) -> Option<String> {
    let lower = output.to_lowercase();
    let sign = SIGNS.iter().find(|s| lower.contains(*s))?;
    Some(format!(
        "[sandbox: this command ran inside Cairn's sandbox, and its output shows \"{sign}\": \
         most likely the sandbox refused it. Inside the sandbox only the workspace, a private \
         /tmp and the folders the user allowed are writable; .git, .agent and .cairn are \
         read-only; the home folder is read-only and credentials (~/.ssh, cloud keys) are \
         hidden. If the command really needs more, call the same tool again with the same \
         command and \"sandbox\": false; the user will be asked to approve it.]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_refusals_get_a_hint_other_failures_do_not() {
        let h = hint("touch: cannot touch '/home/u/x': Read-only file system").unwrap_or_default();
        assert!(h.contains("\"sandbox\": false") && h.contains("read-only file system"));
        assert!(hint("error: could not compile `app`").is_none());
    }
}
