//! `@path` mentions in a prompt, for the app and `cairn run` alike: the workspace files they
//! name are read and attached as context (their text reaches the model as
//! `<file path="…">` blocks). A mention is `@` at the start of the text or after a space or
//! `(`, followed by a path (`@"a b.txt"` when it holds spaces). Words that name no file
//! (`@team`) are plain text; a mention that cannot be attached (outside the workspace,
//! missing, binary, too big, denied by a rule, over the limits) is listed with its reason
//! and its content is never read into the prompt.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use cairn_engine::attachments::ContextFile;
use cairn_engine::ReadDenials;

/// Most files one message may mention.
pub const MAX_MENTIONS: usize = 10;
/// Largest mentioned file, in bytes.
pub const MAX_MENTION_BYTES: u64 = 256 * 1024;
/// Largest total of the mentioned files of one message, in bytes.
pub const MAX_MENTION_TOTAL: u64 = 1024 * 1024;
/// Bytes looked at to tell a binary file (a NUL byte) from text.
const SNIFF: usize = 8000;

/// Trailing punctuation a mention at the end of a sentence may carry.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];

/// Why a mention was not attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It leaves the workspace (absolute, `..`, `~`, or a symbolic link out); the detail
    /// says how.
    Outside(String),
    /// It looks like a path but names nothing in the workspace.
    Missing,
    /// It names a folder or another non-file.
    NotAFile,
    /// A deny rule keeps it from being read.
    Denied {
        /// The rule as written.
        rule: String,
        /// Where the rule comes from.
        source: String,
    },
    /// It holds a NUL byte or is not UTF-8.
    Binary,
    /// It is over [`MAX_MENTION_BYTES`].
    TooBig {
        /// Its size in bytes.
        size: u64,
    },
    /// The message already mentions [`MAX_MENTIONS`] files.
    TooMany,
    /// It would take the message's files over [`MAX_MENTION_TOTAL`].
    OverTotal,
    /// It could not be read.
    Unreadable(String),
}

impl Refusal {
    /// Whether the mention may just be a word that names no file (missing, a folder): the
    /// app sends such prompts as they are, but refuses every other reason.
    pub fn maybe_a_word(&self) -> bool {
        matches!(self, Refusal::Missing | Refusal::NotAFile)
    }
}

/// A mention that was not attached, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.mention, .reason))]
pub struct Skipped {
    /// The mention's path as written (without `@`), or its workspace-relative form once
    /// resolved.
    pub mention: String,
    /// Why.
    pub reason: Refusal,
}

fn describe(m: &str, reason: &Refusal) -> String {
    match reason {
        Refusal::Outside(detail) => format!("cannot attach @{m}: {detail}"),
        Refusal::Missing => format!("@{m} names no file in the workspace"),
        Refusal::NotAFile => format!("@{m} is not a file"),
        Refusal::Denied { rule, source } => {
            format!("cannot attach @{m}: denied by rule `{rule}` ({source})")
        }
        Refusal::Binary => format!(
            "@{m} is a binary file: only text files can be mentioned (paste or drop images instead)"
        ),
        Refusal::TooBig { size } => format!(
            "@{m} is {size} bytes: mentioned files are limited to {} KB",
            MAX_MENTION_BYTES / 1024
        ),
        Refusal::TooMany => {
            format!("at most {MAX_MENTIONS} files can be mentioned in one message")
        }
        Refusal::OverTotal => format!(
            "the mentioned files hold more than {} KB together: mention fewer",
            MAX_MENTION_TOTAL / 1024
        ),
        Refusal::Unreadable(e) => format!("cannot read @{m}: {e}"),
    }
}

/// What the mentions of one prompt came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mentions {
    /// The files attached, in the order first mentioned (each once).
    pub files: Vec<ContextFile>,
    /// The mentions not attached, in order.
    pub skipped: Vec<Skipped>,
}

impl Mentions {
    /// The first mention the app refuses to send (see [`Refusal::maybe_a_word`]).
    pub fn first_refusal(&self) -> Option<&Skipped> {
        self.skipped.iter().find(|s| !s.reason.maybe_a_word())
    }
}

/// The `@` tokens of `text`, in order (quotes removed).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let starts = c == '@' && (i == 0 || matches!(chars[i - 1].1, ' ' | '\t' | '\n' | '('));
        if !starts {
            i += 1;
            continue;
        }
        let rest = &text[at + 1..];
        if let Some(quoted) = rest.strip_prefix('"') {
            if let Some(end) = quoted.find('"') {
                out.push(quoted[..end].to_string());
                i += quoted[..end].chars().count() + 3;
                continue;
            }
        }
        let word: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        i += word.chars().count() + 1;
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// Checks a workspace-relative path typed by the page or the user: no `..`, not absolute.
pub fn check_relative(rel: &str) -> Result<(), String> {
    if rel.contains('\0') {
        return Err("a path cannot contain a NUL byte".into());
    }
    let p = Path::new(rel);
    if p.is_absolute() || rel.starts_with('~') {
        return Err(format!(
            "`{rel}` is not relative to the workspace: only paths inside the workspace are allowed"
        ));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!(
            "`{rel}` goes up with `..`: only paths inside the workspace are allowed"
        ));
    }
    Ok(())
}

/// Resolves a workspace-relative path (symlinks followed) to an absolute one inside the
/// workspace, with its canonical relative form.
pub fn resolve_path(workspace: &Path, rel: &str) -> Result<(PathBuf, String), String> {
    check_relative(rel)?;
    let input = if rel.trim().is_empty() { "." } else { rel };
    let p = cairn_tools::paths::resolve(workspace, input).map_err(|e| match e {
        cairn_engine::ToolError::OutsideWorkspace(_) => {
            format!("`{rel}` leads outside the workspace (through a symbolic link)")
        }
        other => other.to_string(),
    })?;
    Ok((p.abs, p.rel))
}

/// Whether a token looks like a path rather than a handle (`@team`): it holds `/` or `.`.
fn looks_like_path(token: &str) -> bool {
    token.contains('/') || token.contains('.')
}

/// Reads a mentioned file's text (`abs` resolved, inside the workspace): opened refusing
/// any link along the path (one a command swapped in since it was resolved is refused, never
/// followed); refused when binary or over the cap (the size is checked before anything is
/// read).
fn read_text(abs: &Path) -> Result<String, Refusal> {
    let unreadable = |e: std::io::Error| Refusal::Unreadable(e.to_string());
    let size = std::fs::symlink_metadata(abs).map_err(unreadable)?.len();
    if size > MAX_MENTION_BYTES {
        return Err(Refusal::TooBig { size });
    }
    let bytes = cairn_tools::read_bytes_no_links(abs, MAX_MENTION_BYTES + 1)
        .map_err(|e| Refusal::Unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_MENTION_BYTES {
        return Err(Refusal::TooBig {
            size: bytes.len() as u64,
        });
    }
    if bytes[..bytes.len().min(SNIFF)].contains(&0) {
        return Err(Refusal::Binary);
    }
    String::from_utf8(bytes).map_err(|_| Refusal::Binary)
}

/// Where one token leads: a file to read, a refusal, or nothing (a plain word).
enum Target {
    File(PathBuf, String),
    Refused(Skipped),
    Word,
}

fn target(workspace: &Path, token: &str) -> Target {
    let stripped = token.trim_end_matches(TRAILING);
    let mut last = None;
    for candidate in [token, stripped] {
        if candidate.is_empty() {
            continue;
        }
        if let Err(e) = check_relative(candidate) {
            if looks_like_path(candidate) {
                return Target::Refused(Skipped {
                    mention: candidate.to_string(),
                    reason: Refusal::Outside(e),
                });
            }
            continue;
        }
        let (abs, rel) = match resolve_path(workspace, candidate) {
            Ok(r) => r,
            Err(e) => {
                return Target::Refused(Skipped {
                    mention: candidate.to_string(),
                    reason: Refusal::Outside(e),
                })
            }
        };
        if abs.is_file() {
            return Target::File(abs, rel);
        }
        last = Some(abs);
    }
    match last {
        Some(abs) if looks_like_path(stripped) => Target::Refused(Skipped {
            mention: stripped.to_string(),
            reason: if abs.exists() {
                Refusal::NotAFile
            } else {
                Refusal::Missing
            },
        }),
        _ => Target::Word,
    }
}

/// The files `text` mentions, read from `workspace`, and the mentions not attached with
/// their reasons; tokens that look like no path are plain words (neither).
pub fn resolve(workspace: &Path, text: &str, denials: &ReadDenials) -> Mentions {
    let mut seen = BTreeSet::new();
    let mut out = Mentions::default();
    let mut total = 0u64;
    for token in tokens(text) {
        let (abs, rel) = match target(workspace, &token) {
            Target::File(abs, rel) => (abs, rel),
            Target::Refused(s) => {
                out.skipped.push(s);
                continue;
            }
            Target::Word => continue,
        };
        let refuse = |reason| Skipped {
            mention: rel.clone(),
            reason,
        };
        if let Some(rule) = denials.denied(&abs) {
            out.skipped.push(refuse(Refusal::Denied {
                rule: rule.text.clone(),
                source: rule.source.clone(),
            }));
            continue;
        }
        if !seen.insert(rel.clone()) {
            continue;
        }
        if out.files.len() == MAX_MENTIONS {
            out.skipped.push(refuse(Refusal::TooMany));
            continue;
        }
        let text = match read_text(&abs) {
            Ok(t) => t,
            Err(reason) => {
                out.skipped.push(refuse(reason));
                continue;
            }
        };
        if total + text.len() as u64 > MAX_MENTION_TOTAL {
            out.skipped.push(refuse(Refusal::OverTotal));
            continue;
        }
        total += text.len() as u64;
        out.files.push(ContextFile { path: rel, text });
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The app's view: the first refusal as an error, else the attached files.
    fn app(ws: &Path, text: &str, denials: &ReadDenials) -> Result<Vec<ContextFile>, String> {
        let m = resolve(ws, text, denials);
        match m.first_refusal() {
            Some(s) => Err(s.to_string()),
            None => Ok(m.files),
        }
    }

    #[test]
    fn tokens_start_after_a_space_and_may_be_quoted() {
        assert_eq!(
            tokens("see @src/a.rs, (@b.txt) and @\"my notes.md\" but not a@b.com"),
            ["src/a.rs,", "b.txt)", "my notes.md"]
        );
        assert_eq!(tokens("@x\n@y @"), ["x", "y"]);
        assert!(tokens("no mentions").is_empty());
    }

    fn none() -> ReadDenials {
        ReadDenials::default()
    }

    /// Issue 35: a mention's file is opened refusing any link along its resolved path, so a
    /// link a command swaps in between resolving and reading is never followed.
    #[test]
    fn a_link_swapped_in_after_resolving_is_not_followed() {
        let ws = ws();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "PRIVATE-KEY").unwrap();
        std::fs::create_dir(root.join("notes")).unwrap();
        std::fs::write(root.join("notes/id_rsa"), "harmless").unwrap();
        let abs = root.join("notes/id_rsa");
        assert_eq!(read_text(&abs).unwrap(), "harmless");
        // The folder becomes a link to the outside one, after resolution.
        std::fs::remove_dir_all(root.join("notes")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("notes")).unwrap();
        match read_text(&abs) {
            Err(Refusal::Unreadable(e)) => assert!(!e.contains("PRIVATE-KEY"), "{e}"),
            other => panic!("read through a swapped link: {:?}", other.map(|t| t.len())),
        }
    }

    #[test]
    fn a_file_a_deny_rule_covers_is_refused() {
        let ws = ws();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        std::fs::create_dir(root.join("secrets")).unwrap();
        std::fs::write(root.join("secrets/key.txt"), "k").unwrap();
        std::os::unix::fs::symlink("secrets", root.join("alias")).unwrap();
        // A project rule file's deny rules count (only its allow rules are ignored).
        std::fs::create_dir(root.join(".agent")).unwrap();
        std::fs::write(
            root.join(".agent/permissions.toml"),
            "[[rule]]\nrule = \"*(secrets/**)\"\ndecision = \"deny\"\n",
        )
        .unwrap();
        // Loaded as the session loads a project's rule file (as project rules).
        let mut rules = cairn_policy::RuleSet::new();
        rules
            .load_file_for(&root.join(".agent/permissions.toml"), true, None)
            .unwrap();
        let denials = ReadDenials::new(&rules, "read_file", &root);
        for bad in ["@secrets/key.txt", "@alias/key.txt"] {
            let m = resolve(&root, bad, &denials);
            assert!(m.files.is_empty(), "{bad}: the content is not read");
            assert!(
                matches!(&m.skipped[0].reason, Refusal::Denied { rule, .. } if rule == "*(secrets/**)"),
                "{bad}: {:?}",
                m.skipped
            );
            let err = app(&root, bad, &denials).unwrap_err();
            assert!(
                err.contains("denied by rule `*(secrets/**)`"),
                "{bad}: {err}"
            );
        }
        assert_eq!(app(&root, "@src/a.rs", &denials).unwrap().len(), 1);
    }

    fn ws() -> tempfile::TempDir {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        std::fs::write(ws.path().join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(ws.path().join("my notes.md"), "notes").unwrap();
        ws
    }

    #[test]
    fn mentioned_files_are_read_once_and_plain_words_are_skipped() {
        let ws = ws();
        let m = resolve(
            ws.path(),
            "look at @src/a.rs. Then @\"my notes.md\" and @src/a.rs again, @team @nothing.rs @src/",
            &none(),
        );
        let paths: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "my notes.md"]);
        assert_eq!(m.files[0].text, "fn a() {}\n");
        // `@team` is a word; a path-like name of nothing, or of a folder, is listed but is
        // no refusal for the app.
        let skipped: Vec<(&str, &Refusal)> = m
            .skipped
            .iter()
            .map(|s| (s.mention.as_str(), &s.reason))
            .collect();
        assert_eq!(
            skipped,
            [
                ("nothing.rs", &Refusal::Missing),
                ("src/", &Refusal::NotAFile)
            ]
        );
        assert!(m.first_refusal().is_none());
        // A folder is not a file: nothing attached.
        assert!(app(ws.path(), "@src", &none()).unwrap().is_empty());
    }

    #[test]
    fn escapes_binaries_and_big_files_are_refused() {
        let ws = ws();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            ws.path().join("link.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).unwrap();
        let secret = outside.path().join("secret.txt");
        for bad in [
            "@../secret.txt".to_string(),
            "@src/../../secret.txt".to_string(),
            format!("@{}", secret.display()),
            "@link.txt".to_string(),
            "@out/secret.txt".to_string(),
        ] {
            let m = resolve(ws.path(), &bad, &none());
            assert!(m.files.is_empty(), "{bad}");
            assert!(
                matches!(m.skipped[0].reason, Refusal::Outside(_)),
                "{bad}: {:?}",
                m.skipped
            );
            let err = app(ws.path(), &bad, &none()).unwrap_err();
            assert!(
                err.contains("inside the workspace") || err.contains("outside the workspace"),
                "{bad}: {err}"
            );
        }
        std::fs::write(ws.path().join("blob.bin"), b"ab\0cd").unwrap();
        let err = app(ws.path(), "@blob.bin", &none()).unwrap_err();
        assert!(err.contains("binary"), "{err}");
        std::fs::write(ws.path().join("latin1.txt"), b"caf\xe9").unwrap();
        assert!(app(ws.path(), "@latin1.txt", &none())
            .unwrap_err()
            .contains("binary"));
        let big = "x".repeat(MAX_MENTION_BYTES as usize + 1);
        std::fs::write(ws.path().join("big.txt"), big).unwrap();
        let err = app(ws.path(), "@big.txt", &none()).unwrap_err();
        assert!(err.contains("limited to 256 KB"), "{err}");
        // What can be attached still is; the rest is listed with its reason.
        let m = resolve(ws.path(), "@big.txt @src/a.rs @blob.bin", &none());
        assert_eq!(m.files.len(), 1);
        let reasons: Vec<&Refusal> = m.skipped.iter().map(|s| &s.reason).collect();
        assert_eq!(
            reasons,
            [
                &Refusal::TooBig {
                    size: MAX_MENTION_BYTES + 1
                },
                &Refusal::Binary
            ]
        );
    }

    #[test]
    fn too_many_or_too_much_is_refused_past_the_limit() {
        let ws = ws();
        let mut text = String::new();
        for i in 0..=MAX_MENTIONS {
            std::fs::write(ws.path().join(format!("f{i}.txt")), "x").unwrap();
            text.push_str(&format!("@f{i}.txt "));
        }
        let err = app(ws.path(), &text, &none()).unwrap_err();
        assert!(err.contains("at most 10 files"), "{err}");
        let m = resolve(ws.path(), &text, &none());
        assert_eq!(m.files.len(), MAX_MENTIONS);
        assert_eq!(m.skipped[0].mention, "f10.txt");
        assert_eq!(m.skipped[0].reason, Refusal::TooMany);
        let quarter = "y".repeat(MAX_MENTION_BYTES as usize);
        for i in 0..5 {
            std::fs::write(ws.path().join(format!("q{i}.txt")), &quarter).unwrap();
        }
        let m = resolve(
            ws.path(),
            "@q0.txt @q1.txt @q2.txt @q3.txt @q4.txt @src/a.rs",
            &none(),
        );
        assert_eq!(m.files.len(), 4);
        let over: Vec<(&str, &Refusal)> = m
            .skipped
            .iter()
            .map(|s| (s.mention.as_str(), &s.reason))
            .collect();
        assert_eq!(
            over,
            [
                ("q4.txt", &Refusal::OverTotal),
                ("src/a.rs", &Refusal::OverTotal)
            ]
        );
        assert!(m.skipped[0].to_string().contains("more than 1024 KB"));
    }
}
