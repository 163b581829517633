//! Commands that read another process's secrets: its environment, memory, mappings, command
//! line or open files through `/proc` (`/proc/$PPID/environ`, `/proc/self/../42/mem`, a glob
//! like `/p*/*/environ`), the kernel's memory devices, or `ps e` (which prints every
//! process's environment). Such a command never runs unasked, in any mode and whatever
//! allowlist covers it. The check is literal (quotes and backslashes removed): it catches the
//! direct forms; the real protection is that Cairn's own environment holds no key after
//! start-up (`cairn_engine::secret_env`).

/// System-wide `/proc` files that describe the machine, not a process: readable unasked.
const HARMLESS_PROC: &[&str] = &[
    "cpuinfo",
    "meminfo",
    "loadavg",
    "uptime",
    "version",
    "stat",
    "filesystems",
    "partitions",
    "swaps",
    "sys",
];

/// Words that name a process's secrets wherever they appear.
const SECRET_WORDS: &[&str] = &["environ", "/dev/mem", "/dev/kmem", "kcore"];

/// Why `command` may read a process's secrets, if it may.
pub fn reads_process_secrets(command: &str) -> Option<String> {
    let text: String = command
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    let lower = text.to_ascii_lowercase();
    if let Some(w) = SECRET_WORDS.iter().find(|w| lower.contains(*w)) {
        return Some(format!("it names `{w}`, a process's environment or memory"));
    }
    let mut from = 0;
    while let Some(at) = lower[from..].find("proc").map(|i| from + i) {
        from = at + 4;
        let before = lower[..at].chars().next_back();
        let after = lower[from..].chars().next();
        if after.is_some_and(|c| !c.is_whitespace() && !"/;&|<>)`".contains(c)) {
            continue;
        }
        // `/proc…`, or a relative `proc/…` at the start of a word (after `cd /`).
        let starts_path = before == Some('/')
            || (before.is_none_or(|c| c.is_whitespace() || "=;&|<>(".contains(c))
                && lower[from..].starts_with('/'));
        if !starts_path {
            continue;
        }
        let rest = lower[from..].trim_start_matches('/');
        let first: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && !";&|<>()`".contains(*c))
            .collect();
        let entry = first.split('/').next().unwrap_or_default();
        if entry.is_empty()
            || !HARMLESS_PROC.contains(&entry)
            || first.contains(['*', '?', '[', '$'])
        {
            return Some(format!(
                "it reads `/proc/{first}`, where processes' environments and memory live"
            ));
        }
    }
    if shows_environments(&lower) {
        return Some("`ps e` prints every process's environment".into());
    }
    None
}

/// Whether a `ps` in the line has a BSD-style option word containing `e`.
fn shows_environments(line: &str) -> bool {
    let mut after_ps = false;
    for token in line.split(|c: char| c.is_whitespace()) {
        if token.is_empty() {
            continue;
        }
        if token.contains([';', '&', '|']) {
            after_ps = false;
        }
        if token == "ps" || token.ends_with("/ps") {
            after_ps = true;
            continue;
        }
        if after_ps && !token.starts_with('-') && token.contains('e') {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_and_memory_reads_are_caught() {
        for cmd in [
            "grep -a OPENAI_API_KEY /proc/$PPID/environ",
            "tr '\\0' '\\n' < /proc/$PPID/environ | rev",
            "cut -c1-20 /proc/self/../42/environ",
            "cat /proc/42/en'vi'ron",
            "cat /p*/self/environ",
            "cat /proc/*/cmdline",
            "head -c 100 /proc/self/mem",
            "cat /proc/$PPID/maps",
            "ls -l /proc/1/fd",
            "cd / && cat proc/1/status",
            "cat /proc//1/status",
            "ps eww -p 1",
            "ps aux e",
            "dd if=/dev/mem bs=1 count=10",
        ] {
            assert!(reads_process_secrets(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "cat /proc/cpuinfo",
            "cat /proc/meminfo | head",
            "ls src/process",
            "nproc",
            "ps -ef",
            "ps aux",
            "grep -r procedure src",
            "cargo test",
        ] {
            assert_eq!(reads_process_secrets(cmd), None, "{cmd}");
        }
    }
}
