//! `@path` mentions in a prompt: the workspace files they name are read and attached as
//! context (their text goes into the user message the model sees). A mention is `@` at the
//! start of the text or after a space or `(`, followed by a path (`@"a b.txt"` when it holds
//! spaces). Words that name no file (`@team`) stay plain text; a mention that leaves the
//! workspace, names a file a deny rule keeps from being read, a binary file or a file over
//! the size cap is refused with a clear error.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

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

/// Whether a token looks like a path rather than a handle (`@team`): it holds `/` or `.`.
fn looks_like_path(token: &str) -> bool {
    token.contains('/') || token.contains('.')
}

/// Reads a mentioned file's text: refused when binary or over the cap.
fn read_text(abs: &Path, rel: &str) -> Result<String, String> {
    let size = std::fs::metadata(abs)
        .map_err(|e| format!("cannot read @{rel}: {e}"))?
        .len();
    if size > MAX_MENTION_BYTES {
        return Err(format!(
            "@{rel} is {size} bytes: mentioned files are limited to {} KB",
            MAX_MENTION_BYTES / 1024
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::open(abs)
        .and_then(|f| f.take(MAX_MENTION_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read @{rel}: {e}"))?;
    let binary = || {
        format!("@{rel} is a binary file: only text files can be mentioned (paste or drop images instead)")
    };
    if bytes[..bytes.len().min(SNIFF)].contains(&0) {
        return Err(binary());
    }
    String::from_utf8(bytes).map_err(|_| binary())
}

/// The files `text` mentions, read from `workspace`; tokens naming no file are skipped, a
/// file `denials` deny is refused.
pub fn resolve(
    workspace: &Path,
    text: &str,
    denials: &ReadDenials,
) -> Result<Vec<ContextFile>, String> {
    let mut seen = BTreeSet::new();
    let mut files = Vec::new();
    let mut total = 0u64;
    for token in tokens(text) {
        let stripped = token.trim_end_matches(TRAILING).to_string();
        let mut found = None;
        for candidate in [token.as_str(), stripped.as_str()] {
            if candidate.is_empty() {
                continue;
            }
            if let Err(e) = crate::files::check_relative(candidate) {
                if looks_like_path(candidate) {
                    return Err(format!("cannot attach @{candidate}: {e}"));
                }
                continue;
            }
            let (abs, rel) = match crate::files::resolve(workspace, candidate) {
                Ok(r) => r,
                Err(e) => return Err(format!("cannot attach @{candidate}: {e}")),
            };
            if abs.is_file() {
                found = Some((abs, rel));
                break;
            }
        }
        let Some((abs, rel)) = found else { continue };
        if let Some(rule) = denials.denied(&abs) {
            return Err(format!(
                "cannot attach @{rel}: denied by rule `{}` ({})",
                rule.text, rule.source
            ));
        }
        if !seen.insert(rel.clone()) {
            continue;
        }
        if files.len() == MAX_MENTIONS {
            return Err(format!(
                "at most {MAX_MENTIONS} files can be mentioned in one message"
            ));
        }
        let text = read_text(&abs, &rel)?;
        total += text.len() as u64;
        if total > MAX_MENTION_TOTAL {
            return Err(format!(
                "the mentioned files hold more than {} KB together: mention fewer",
                MAX_MENTION_TOTAL / 1024
            ));
        }
        files.push(ContextFile { path: rel, text });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

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
        let rules = cairn_runtime::permissions::load_rules(&root).unwrap();
        let denials = ReadDenials::new(&rules, "read_file", &root);
        for bad in ["@secrets/key.txt", "@alias/key.txt"] {
            let err = resolve(&root, bad, &denials).unwrap_err();
            assert!(
                err.contains("denied by rule `*(secrets/**)`"),
                "{bad}: {err}"
            );
        }
        assert_eq!(resolve(&root, "@src/a.rs", &denials).unwrap().len(), 1);
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
        let files = resolve(
            ws.path(),
            "look at @src/a.rs. Then @\"my notes.md\" and @src/a.rs again, @team @nothing.rs",
            &none(),
        )
        .unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "my notes.md"]);
        assert_eq!(files[0].text, "fn a() {}\n");
        // A folder is not a file: nothing attached.
        assert!(resolve(ws.path(), "@src", &none()).unwrap().is_empty());
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
            let err = resolve(ws.path(), &bad, &none()).unwrap_err();
            assert!(
                err.contains("inside the workspace") || err.contains("outside the workspace"),
                "{bad}: {err}"
            );
        }
        std::fs::write(ws.path().join("blob.bin"), b"ab\0cd").unwrap();
        let err = resolve(ws.path(), "@blob.bin", &none()).unwrap_err();
        assert!(err.contains("binary"), "{err}");
        std::fs::write(ws.path().join("latin1.txt"), b"caf\xe9").unwrap();
        assert!(resolve(ws.path(), "@latin1.txt", &none())
            .unwrap_err()
            .contains("binary"));
        let big = "x".repeat(MAX_MENTION_BYTES as usize + 1);
        std::fs::write(ws.path().join("big.txt"), big).unwrap();
        let err = resolve(ws.path(), "@big.txt", &none()).unwrap_err();
        assert!(err.contains("limited to 256 KB"), "{err}");
    }

    #[test]
    fn too_many_mentions_are_refused() {
        let ws = ws();
        let mut text = String::new();
        for i in 0..=MAX_MENTIONS {
            std::fs::write(ws.path().join(format!("f{i}.txt")), "x").unwrap();
            text.push_str(&format!("@f{i}.txt "));
        }
        let err = resolve(ws.path(), &text, &none()).unwrap_err();
        assert!(err.contains("at most 10 files"), "{err}");
    }
}
