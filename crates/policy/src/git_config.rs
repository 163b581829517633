//! Reading a repository's git config the way git reads it: git's own parser lists the keys
//! (`git config --file … --list -z`, run with no system or global config and from a neutral
//! folder, which parses and executes nothing), and a strict syntax check refuses what a
//! simple line reader could misread (several headers on a line, a lone carriage return,
//! control characters, a key that is not a plain name).

use std::path::Path;
use std::process::{Command, Stdio};

/// One `section[.subsection].key` entry with its value, as git lists it (section and key
/// lowercased, the subsection as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigEntry {
    /// The section, lowercased (`core`).
    pub section: String,
    /// The subsection (`origin` in `remote.origin.url`).
    pub subsection: Option<String>,
    /// The key, lowercased (`fsmonitor`).
    pub key: String,
    /// The value (empty for a bare boolean key).
    pub value: String,
}

impl ConfigEntry {
    /// `section.key` or `section.subsection.key`, as git names it.
    pub fn name(&self) -> String {
        match &self.subsection {
            Some(s) => format!("{}.{s}.{}", self.section, self.key),
            None => format!("{}.{}", self.section, self.key),
        }
    }
}

/// The entries of the config file at `path` as git itself parses them (includes not
/// followed: an `include.path` entry is listed like any key). `Err` says why git could not
/// list them (a syntax git rejects, git missing).
pub(crate) fn git_entries(path: &Path) -> Result<Vec<ConfigEntry>, String> {
    let out = Command::new("git")
        .arg("config")
        .arg("--file")
        .arg(path)
        .args(["--no-includes", "--list", "-z"])
        .current_dir("/")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CEILING_DIRECTORIES", "/")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_CONFIG")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("git cannot read it: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("git cannot read it: {}", err.trim()));
    }
    Ok(parse_listing(&out.stdout))
}

/// Parses `git config --list -z` output: `name\nvalue` (or `name`) records ended by NUL.
fn parse_listing(bytes: &[u8]) -> Vec<ConfigEntry> {
    bytes
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|record| {
            let text = String::from_utf8_lossy(record);
            let (name, value) = text.split_once('\n').unwrap_or((&text, ""));
            let (section, rest) = name.split_once('.').unwrap_or((name, ""));
            let (subsection, key) = match rest.rsplit_once('.') {
                Some((sub, key)) => (Some(sub.to_string()), key),
                None => (None, rest),
            };
            ConfigEntry {
                section: section.to_ascii_lowercase(),
                subsection,
                key: key.to_ascii_lowercase(),
                value: value.to_string(),
            }
        })
        .collect()
}

/// Why config `text` cannot be read exactly line by line: a carriage return not ending a
/// line, a control character, a second section header or a non-name after a header, a key
/// that is not a plain name. `None`: every line is a comment, a header, or `key [= value]`.
pub(crate) fn syntax_problem(text: &str) -> Option<String> {
    for (n, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let at = |what: &str| Some(format!("(line {}: {what})", n + 1));
        if line.contains('\r') {
            return at("a carriage return inside a line, which git reads as a space");
        }
        if line.chars().any(|c| c.is_control() && c != '\t') {
            return at("a control character");
        }
        let mut rest = line.trim_matches([' ', '\t']);
        if rest.starts_with('[') {
            let Some(end) = header_end(rest) else {
                return at("a section header that does not close");
            };
            rest = rest[end + 1..].trim_matches([' ', '\t']);
            if rest.starts_with('[') {
                return at("several section headers on one line");
            }
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let key_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        let key = &rest[..key_len];
        let after = rest[key_len..].trim_start_matches([' ', '\t']);
        let plain = key.starts_with(|c: char| c.is_ascii_alphabetic())
            && (after.is_empty()
                || after.starts_with('=')
                || after.starts_with('#')
                || after.starts_with(';'));
        if !plain {
            return at("a line that is not `key = value`");
        }
    }
    None
}

/// Where the header at the start of `line` ends (its `]`), skipping a quoted subsection.
fn header_end(line: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in line.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn strict_syntax_refuses_what_a_line_reader_misreads() {
        for ok in [
            "[core]\n\tbare = false\n",
            "[core]\r\n\tbare = false\r\n",
            "[remote \"o]x\"]\n\turl = u ; c\n",
            "[core] bare = false\n# c\n; c\n\n",
            "[core]\n\tfilemode\n",
        ] {
            assert_eq!(syntax_problem(ok), None, "{ok:?}");
        }
        for bad in [
            "[user] [core] fsmonitor = x\n",
            "[user]\r[core]\rfsmonitor = x\n",
            "[core]\n\x0bfsmonitor = x\n",
            "[core\n",
            "[user]\n[core] \"x\" = y\n",
            "[user]\n=x\n",
        ] {
            assert!(syntax_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn git_lists_the_keys_it_reads_and_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let m = marker.display();
        let hostile = dir.path().join("hostile");
        std::fs::write(
            &hostile,
            format!("[core]\n\tpager = touch {m}\n\tfsmonitor = touch {m}\n"),
        )
        .unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            format!(
                "[user] [core] fsmonitor = \"touch {m}\"\n[core]\rpager = touch {m}\n\
                 [include]\n\tpath = {}\n[remote \"a.b\"]\n\turl = x\n",
                hostile.display()
            ),
        )
        .unwrap();
        let names: Vec<String> = git_entries(&config)
            .unwrap()
            .iter()
            .map(ConfigEntry::name)
            .collect();
        assert_eq!(
            names,
            [
                "core.fsmonitor",
                "core.pager",
                "include.path",
                "remote.a.b.url"
            ]
        );
        assert!(!marker.exists(), "listing the config ran a program");
        std::fs::write(&config, "[core\n").unwrap();
        assert!(git_entries(&config).is_err());
    }
}
