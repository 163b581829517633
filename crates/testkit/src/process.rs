//! Looking at processes from tests (Linux `/proc`): whether one is alive, which ones carry a
//! marker in their command line, and waiting for a condition such as a process being gone.

use std::time::{Duration, Instant};

/// How often [`eventually`] looks again.
const POLL: Duration = Duration::from_millis(20);

/// Whether the process `pid` is alive (a zombie counts as dead).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// Live processes other than this one whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) && alive(pid) {
                out.push(pid);
            }
        }
    }
    out
}

/// Looks at `f` until it is true (then true) or `within` has passed (then false). For state
/// outside the test's reach (other processes, the disk) that sends no event to wait on.
pub async fn eventually(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether the process `pid` is gone within `within`.
pub async fn gone_within(pid: u32, within: Duration) -> bool {
    eventually(within, || !alive(pid)).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!alive(pid));
    }

    #[tokio::test]
    async fn a_marked_child_is_found_until_it_is_gone() {
        let marker = format!("cairn-testkit-marker-{}", std::process::id());
        let mut child = std::process::Command::new("sh")
            .args(["-c", "echo ready; read _", &marker])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Once it speaks, the shell runs (before its exec the child has this binary's command line).
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line, "ready\n");
        assert_eq!(processes_with(&marker), vec![child.id()]);
        drop(child.stdin.take());
        child.wait().unwrap();
        assert!(processes_with(&marker).is_empty());
        assert!(gone_within(child.id(), Duration::from_secs(5)).await);
    }

    #[tokio::test]
    async fn eventually_says_false_when_the_condition_never_holds() {
        assert!(!eventually(Duration::from_millis(50), || false).await);
        let mut n = 0;
        assert!(
            eventually(Duration::from_secs(5), || {
                n += 1;
                n == 3
            })
            .await
        );
    }
}
