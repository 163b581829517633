//! Every process Cairn starts gets a session of its own (`setsid`): it has no controlling
//! terminal, so it cannot push bytes into the terminal Cairn asks its questions on
//! (`TIOCSTI`), read the user's keystrokes from `/dev/tty`, or be stopped by the terminal's
//! job control. It is also the leader of its own process group (group id = its pid), so
//! stopping that group stops what it started, as before.
//!
//! PTY commands are not started through here: they get a new session on their own
//! terminal (portable-pty), which keeps Ctrl-C and `/dev/tty` prompts working.

/// Makes `cmd`'s child call `setsid()` before it runs its program. Use instead of
/// `process_group(0)` (a process group leader cannot start a session).
pub fn own_session(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec; it only makes the
    // `setsid` system call, which is async-signal-safe, allocates nothing and takes no lock.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
}

/// [`own_session`] for a tokio command.
pub fn own_session_tokio(cmd: &mut tokio::process::Command) {
    own_session(cmd.as_std_mut());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_child_leads_a_session_of_its_own() {
        // `cat` waits on its stdin until the test closes it.
        let mut cmd = std::process::Command::new("cat");
        own_session(&mut cmd);
        let mut child = cmd.stdin(std::process::Stdio::piped()).spawn().unwrap();
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let sid = nix::unistd::getsid(Some(pid)).unwrap();
        drop(child.stdin.take());
        child.wait().unwrap();
        assert_eq!(sid, pid);
        assert_ne!(Ok(sid), nix::unistd::getsid(None));
    }
}
