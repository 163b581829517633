//! Diff previews of file edits waiting for approval, so the chat can show what a write
//! would change before the user allows it.

use std::path::Path;

use cairn_protocol::ApprovalRequest;
use similar::TextDiff;

/// Largest file read for a preview.
const MAX_PREVIEW_FILE: u64 = 2 * 1024 * 1024;

/// A unified diff of what the pending call would change, when it edits a file inside the
/// workspace (`write_file`, `replace_in_file`) or carries its own patch (`apply_patch`,
/// `apply_unified_diff`); `None` otherwise.
pub fn edit_preview(workspace: &Path, req: &ApprovalRequest) -> Option<String> {
    let args = &req.arguments;
    let s = |k: &str| args.get(k).and_then(|v| v.as_str());
    match req.name.as_str() {
        "apply_patch" => s("patch").map(str::to_string),
        "apply_unified_diff" => s("diff").map(str::to_string),
        "write_file" => {
            let path = s("path")?;
            let before = read_inside(workspace, path)?;
            Some(unified(
                path,
                before.as_deref().unwrap_or(""),
                s("content")?,
            ))
        }
        "replace_in_file" => {
            let path = s("path")?;
            let before = read_inside(workspace, path)??;
            let (old, new) = (s("old_string")?, s("new_string")?);
            if old.is_empty() || !before.contains(old) {
                return None;
            }
            let all = args
                .get("replace_all")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let after = if all {
                before.replace(old, new)
            } else {
                before.replacen(old, new, 1)
            };
            Some(unified(path, &before, &after))
        }
        _ => None,
    }
}

/// A pending edit as whole texts: the file it changes (relative, as the call names it), its
/// text before (`None` for a new file) and after, for faces that show diffs as old and new
/// text (an editor over ACP). `write_file` and `replace_in_file` inside the workspace only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditTexts {
    /// The path as the call names it.
    pub path: String,
    /// The text before the edit; `None` when the file does not exist yet.
    pub old: Option<String>,
    /// The text after the edit.
    pub new: String,
}

/// The whole texts of what the call `name(args)` would change (see [`EditTexts`]).
pub fn edit_texts(workspace: &Path, name: &str, args: &serde_json::Value) -> Option<EditTexts> {
    let s = |k: &str| args.get(k).and_then(|v| v.as_str());
    let path = s("path")?;
    match name {
        "write_file" => {
            let old = read_inside(workspace, path)?;
            Some(EditTexts {
                path: path.to_string(),
                old,
                new: s("content")?.to_string(),
            })
        }
        "replace_in_file" => {
            let before = read_inside(workspace, path)??;
            let (old, new) = (s("old_string")?, s("new_string")?);
            if old.is_empty() || !before.contains(old) {
                return None;
            }
            let all = args
                .get("replace_all")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let after = if all {
                before.replace(old, new)
            } else {
                before.replacen(old, new, 1)
            };
            Some(EditTexts {
                path: path.to_string(),
                old: Some(before),
                new: after,
            })
        }
        _ => None,
    }
}

/// The text of `path` (relative to the workspace) now, for showing it after an edit: `None`
/// outside the workspace, too large, or unreadable.
pub fn text_now(workspace: &Path, path: &str) -> Option<String> {
    read_inside(workspace, path).flatten()
}

/// `Some(None)` for a file that does not exist yet; `None` outside the workspace or unreadable.
fn read_inside(workspace: &Path, path: &str) -> Option<Option<String>> {
    if !cairn_engine::permission::lexically_inside(workspace, path) {
        return None;
    }
    let abs = workspace.join(path);
    match std::fs::metadata(&abs) {
        Ok(m) if m.len() > MAX_PREVIEW_FILE || !m.is_file() => None,
        Ok(_) => std::fs::read_to_string(&abs).ok().map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
        Err(_) => None,
    }
}

fn unified(path: &str, before: &str, after: &str) -> String {
    TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn req(name: &str, args: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            task_id: "t".into(),
            req_id: "c".into(),
            request_id: "rq_c".into(),
            name: name.into(),
            arguments: args,
            reason: String::new(),
            category: String::new(),
            always_allow: None,
        }
    }

    #[test]
    fn previews_writes_and_replacements_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let d = edit_preview(
            dir.path(),
            &req(
                "write_file",
                serde_json::json!({"path": "a.txt", "content": "one\n2\n"}),
            ),
        )
        .unwrap();
        assert!(
            d.contains("-two") && d.contains("+2") && d.contains("b/a.txt"),
            "{d}"
        );
        let d = edit_preview(
            dir.path(),
            &req(
                "write_file",
                serde_json::json!({"path": "new.txt", "content": "hi\n"}),
            ),
        )
        .unwrap();
        assert!(d.contains("+hi"), "{d}");
        let d = edit_preview(
            dir.path(),
            &req(
                "replace_in_file",
                serde_json::json!({"path": "a.txt", "old_string": "two", "new_string": "zwei"}),
            ),
        )
        .unwrap();
        assert!(d.contains("-two") && d.contains("+zwei"), "{d}");
        assert!(edit_preview(
            dir.path(),
            &req(
                "write_file",
                serde_json::json!({"path": "../x", "content": "x"})
            )
        )
        .is_none());
        assert!(edit_preview(dir.path(), &req("run_shell", serde_json::json!({}))).is_none());
        assert_eq!(
            edit_preview(
                dir.path(),
                &req("apply_patch", serde_json::json!({"patch": "P"}))
            ),
            Some("P".to_string())
        );
    }

    #[test]
    fn edit_texts_give_the_whole_old_and_new_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let t = edit_texts(
            dir.path(),
            "replace_in_file",
            &serde_json::json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
        )
        .unwrap();
        assert_eq!(t.old.as_deref(), Some("one\ntwo\n"));
        assert_eq!(t.new, "one\n2\n");
        let t = edit_texts(
            dir.path(),
            "write_file",
            &serde_json::json!({"path": "new.txt", "content": "hi\n"}),
        )
        .unwrap();
        assert_eq!((t.old, t.new.as_str()), (None, "hi\n"));
        assert!(edit_texts(
            dir.path(),
            "write_file",
            &serde_json::json!({"path": "../x", "content": "x"})
        )
        .is_none());
        assert_eq!(text_now(dir.path(), "a.txt").as_deref(), Some("one\ntwo\n"));
        assert_eq!(text_now(dir.path(), "missing.txt"), None);
    }
}
