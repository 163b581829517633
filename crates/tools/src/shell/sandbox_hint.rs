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

/// What a tool that ignores the proxy prints when it tries to resolve a name itself.
const DNS_SIGNS: &[&str] = &[
    "could not resolve host",
    "enotfound",
    "eai_again",
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
];

/// A note for a failed sandboxed command whose output shows a sandbox refusal, or `None`.
/// Output that begins with bubblewrap's own error and exit code 1 means the sandbox could not
/// start the command at all, which the note says instead.
pub(crate) fn hint(output: &str, exit_code: Option<i32>) -> Option<String> {
    if let Some(setup) = output
        .lines()
        .next()
        .filter(|l| l.starts_with("bwrap: ") && exit_code == Some(1))
    {
        tracing::warn!(target: "cairn::sandbox", "the sandbox could not start a command: {setup}");
        return Some(format!(
            "[sandbox: Cairn's sandbox could not start this command ({setup}), so it did not \
             run. This is a problem of the sandbox's set-up, not of the command: tell the user \
             what bubblewrap said. Calling the tool again with \"sandbox\": false runs it \
             outside the sandbox once the user approves it.]"
        ));
    }
    let lower = output.to_lowercase();
    if let Some(sign) = DNS_SIGNS.iter().find(|s| lower.contains(*s)) {
        return Some(format!(
            "[sandbox: this command ran inside Cairn's sandbox, and its output shows \"{sign}\": \
             inside the sandbox names are not resolved at all; the only way out is Cairn's \
             proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it), which asks the user \
             about hosts no rule allows. A tool that ignores those variables cannot reach the \
             network: configure it to use the proxy, or ask the user to allow the host \
             (a rule `Network(host)`, --allow-domain) if the proxy refused it.]"
        ));
    }
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
    fn name_resolution_failures_are_told_as_the_sandbox_network() {
        for out in [
            "curl: (6) Could not resolve host: example.com",
            "npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org",
            "Error: getaddrinfo EAI_AGAIN example.com",
        ] {
            let h = hint(out, Some(6)).unwrap_or_default();
            assert!(h.contains("names are not resolved"), "{out}: {h}");
        }
    }

    #[test]
    fn sandbox_refusals_get_a_hint_other_failures_do_not() {
        let h = hint(
            "touch: cannot touch '/home/u/x': Read-only file system",
            Some(1),
        )
        .unwrap_or_default();
        assert!(h.contains("\"sandbox\": false") && h.contains("read-only file system"));
        assert!(h.contains("most likely the sandbox refused it"));
        assert!(hint("error: could not compile `app`", Some(101)).is_none());
    }

    #[test]
    fn a_sandbox_that_could_not_start_the_command_is_named_as_such() {
        let out = "bwrap: Can't create file at /home/u/.config/x: Read-only file system\n";
        let h = hint(out, Some(1)).unwrap_or_default();
        assert!(h.contains("could not start this command"), "{h}");
        assert!(h.contains("Can't create file at /home/u/.config/x"), "{h}");
        assert!(!h.contains("most likely the sandbox refused it"), "{h}");
        // The command's own output that merely mentions bwrap later, or another exit code.
        let later = hint("make: ok\nbwrap: Read-only file system\n", Some(1)).unwrap_or_default();
        assert!(
            later.contains("most likely the sandbox refused it"),
            "{later}"
        );
        let other = hint(out, Some(2)).unwrap_or_default();
        assert!(
            other.contains("most likely the sandbox refused it"),
            "{other}"
        );
    }
}
