//! read_file, list_files, write_file and replace_in_file through the `Tool` trait.

use crate::common;
mod large_edits;

use std::os::unix::fs::PermissionsExt;

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use common::{tool, Ws};
use serde_json::json;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages() {
    let ws = Ws::new();
    ws.write("a.txt", &numbered(5));
    let read = tool(&core_tools(), "read_file");
    let out = ws.call(&read, json!({"path": "a.txt"})).await.unwrap();
    assert_eq!(
        out.content,
        "     1\tline 1\n     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n"
    );
    let out = ws
        .call(&read, json!({"path": "a.txt", "offset": 2, "limit": 2}))
        .await
        .unwrap();
    assert!(
        out.content
            .starts_with("     2\tline 2\n     3\tline 3\n\n[Showing lines 2-3 of 5."),
        "{}",
        out.content
    );
    assert!(out.content.contains("offset=4"));
    assert!(out.produced_files.is_empty());
}

#[tokio::test]
async fn read_file_default_limit_is_2000_lines_with_a_footer() {
    let ws = Ws::new();
    ws.write("big.txt", &numbered(2500));
    let read = tool(&core_tools(), "read_file");
    let out = ws.call(&read, json!({"path": "big.txt"})).await.unwrap();
    assert!(out.content.contains("  2000\tline 2000\n"));
    assert!(!out.content.contains("line 2001"));
    assert!(
        out.content.contains("lines 1-2000 of 2500") && out.content.contains("offset=2001"),
        "{}",
        &out.content[out.content.len() - 200..]
    );
}

#[tokio::test]
async fn read_file_refuses_binary_directories_and_missing_files() {
    let ws = Ws::new();
    std::fs::write(ws.root.join("bin.dat"), b"abc\0def").unwrap();
    std::fs::create_dir(ws.root.join("dir")).unwrap();
    let read = tool(&core_tools(), "read_file");
    let e = ws
        .call(&read, json!({"path": "bin.dat"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.contains("binary")),
        "{e}"
    );
    let e = ws.call(&read, json!({"path": "dir"})).await.unwrap_err();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.contains("list_files")),
        "{e}"
    );
    let e = ws
        .call(&read, json!({"path": "nope.txt"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
}

#[tokio::test]
async fn bad_arguments_are_invalid_arguments() {
    let ws = Ws::new();
    let tools = core_tools();
    let read = tool(&tools, "read_file");
    for args in [
        json!({}),
        json!({"path": 3}),
        json!({"path": "a", "limit": "many"}),
        json!({"path": "a", "limit": 0}),
    ] {
        let e = ws.call(&read, args.clone()).await.unwrap_err();
        assert!(matches!(e, ToolError::InvalidArguments(_)), "{args}: {e}");
    }
    let e = ws
        .call(&tool(&tools, "write_file"), json!({"path": "a"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::InvalidArguments(m) if m.contains("content")),
        "{e}"
    );
    // Numbers as strings are accepted.
    ws.write("a", "x\ny\n");
    let out = ws
        .call(&read, json!({"path": "a", "offset": "2"}))
        .await
        .unwrap();
    assert!(out.content.starts_with("     2\ty"));
}

#[tokio::test]
async fn list_files_respects_gitignore_hidden_and_depth() {
    let ws = Ws::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "");
    ws.write("src/deep/er/x.rs", "");
    ws.write("target/debug/app", "");
    ws.write("build.log", "");
    ws.write(".env", "");
    ws.write(".git/config", "");
    ws.write("README.md", "");
    let list = tool(&core_tools(), "list_files");

    let out = ws.call(&list, json!({})).await.unwrap().content;
    assert_eq!(out, "README.md\nsrc/\nsrc/deep/\nsrc/main.rs\n");

    let out = ws
        .call(&list, json!({"include_hidden": true, "depth": 1}))
        .await
        .unwrap()
        .content;
    assert_eq!(out, ".env\n.gitignore\nREADME.md\nsrc/\n");

    let out = ws
        .call(&list, json!({"path": "src", "depth": 10}))
        .await
        .unwrap()
        .content;
    assert_eq!(
        out,
        "src/deep/\nsrc/deep/er/\nsrc/deep/er/x.rs\nsrc/main.rs\n"
    );

    let e = ws
        .call(&list, json!({"path": "README.md"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.contains("read_file")),
        "{e}"
    );
    let e = ws
        .call(&list, json!({"path": "missing"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)));
}

#[tokio::test]
async fn list_files_is_capped() {
    let ws = Ws::new();
    for i in 0..1100 {
        ws.write(&format!("many/f{i:04}"), "");
    }
    let list = tool(&core_tools(), "list_files");
    let out = ws
        .call(&list, json!({"path": "many"}))
        .await
        .unwrap()
        .content;
    assert_eq!(out.lines().filter(|l| l.starts_with("many/")).count(), 1000);
    assert!(
        out.contains("capped at 1000"),
        "{}",
        &out[out.len() - 200..]
    );
}

#[tokio::test]
async fn write_file_creates_then_overwrites_atomically() {
    let ws = Ws::new();
    let write = tool(&core_tools(), "write_file");
    let out = ws
        .call(
            &write,
            json!({"path": "new/dir/a.txt", "content": "one\ntwo\n"}),
        )
        .await
        .unwrap();
    assert!(
        out.content
            .starts_with("Created new/dir/a.txt (8 bytes, 2 lines)"),
        "{}",
        out.content
    );
    assert_eq!(out.produced_files, ["new/dir/a.txt"]);
    assert_eq!(ws.read("new/dir/a.txt"), "one\ntwo\n");

    let p = ws.root.join("new/dir/a.txt");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
    let abs = p.to_str().unwrap().to_string();
    let out = ws
        .call(&write, json!({"path": abs, "content": "x"}))
        .await
        .unwrap();
    assert!(
        out.content
            .starts_with("Overwrote new/dir/a.txt (1 bytes, 1 lines; +1 −2 lines)"),
        "{}",
        out.content
    );
    assert_eq!(out.produced_files, ["new/dir/a.txt"]);
    assert_eq!(ws.read("new/dir/a.txt"), "x");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let entries: Vec<_> = std::fs::read_dir(ws.root.join("new/dir"))
        .unwrap()
        .collect();
    assert_eq!(entries.len(), 1, "no temp files left behind");

    let e = ws
        .call(&write, json!({"path": "new", "content": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::Failed(_)), "{e}");
}

#[tokio::test]
async fn replace_in_file_replaces_once_and_shows_a_diff() {
    let ws = Ws::new();
    ws.write("a.rs", "fn a() {\n    let x = 1;\n}\n");
    let replace = tool(&core_tools(), "replace_in_file");
    let out = ws
        .call(
            &replace,
            json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;"}),
        )
        .await
        .unwrap();
    assert_eq!(ws.read("a.rs"), "fn a() {\n    let x = 2;\n}\n");
    assert_eq!(out.produced_files, ["a.rs"]);
    assert!(
        out.content
            .starts_with("Replaced 1 occurrence in a.rs (+1 −1 lines)."),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("-    let x = 1;\n+    let x = 2;\n"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn replace_in_file_errors_not_found_ambiguous_and_identical() {
    let ws = Ws::new();
    ws.write("a.txt", "foo\nbar\nfoo\n    indented line\n");
    let replace = tool(&core_tools(), "replace_in_file");
    let e = ws
        .call(
            &replace,
            json!({"path": "a.txt", "old_string": "baz", "new_string": "x"}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.contains("not found")),
        "{e}"
    );
    let e = ws
        .call(
            &replace,
            json!({"path": "a.txt", "old_string": "indented line\nnext", "new_string": "x"}),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("Line 4"), "{e}");
    let e = ws
        .call(
            &replace,
            json!({"path": "a.txt", "old_string": "foo", "new_string": "x"}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.contains("2 times") && m.contains("replace_all")),
        "{e}"
    );
    let e = ws
        .call(
            &replace,
            json!({"path": "a.txt", "old_string": "foo", "new_string": "foo"}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    let e = ws
        .call(
            &replace,
            json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
    assert_eq!(
        ws.read("a.txt"),
        "foo\nbar\nfoo\n    indented line\n",
        "unchanged after errors"
    );
}

#[tokio::test]
async fn replace_in_file_replace_all() {
    let ws = Ws::new();
    ws.write("a.txt", "foo bar foo\nfoo\n");
    let replace = tool(&core_tools(), "replace_in_file");
    let out = ws
        .call(
            &replace,
            json!({"path": "a.txt", "old_string": "foo", "new_string": "baz", "replace_all": true}),
        )
        .await
        .unwrap();
    assert_eq!(ws.read("a.txt"), "baz bar baz\nbaz\n");
    assert!(
        out.content.starts_with("Replaced 3 occurrences"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn replace_in_file_handles_crlf_files() {
    let ws = Ws::new();
    ws.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    let replace = tool(&core_tools(), "replace_in_file");
    ws.call(
        &replace,
        json!({"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("w.txt"), "1\r\n2\r\nthree\r\n");
}

#[tokio::test]
async fn write_file_keeps_crlf_refuses_binary_and_summarises_the_change() {
    let ws = Ws::new();
    ws.write("win.txt", "a\r\nb\r\n");
    let write = tool(&core_tools(), "write_file");
    let out = ws
        .call(&write, json!({"path": "win.txt", "content": "a\nB\nc\n"}))
        .await
        .unwrap();
    assert_eq!(ws.read("win.txt"), "a\r\nB\r\nc\r\n");
    assert!(out.content.contains("+2 −1 lines"), "{}", out.content);
    assert!(
        out.content.contains("+B\r\n") || out.content.contains("+B"),
        "{}",
        out.content
    );

    std::fs::write(ws.root.join("img.bin"), b"\x89PNG\0\0data").unwrap();
    let e = ws
        .call(&write, json!({"path": "img.bin", "content": "text"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("binary"), "{e}");
    assert_eq!(
        std::fs::read(ws.root.join("img.bin")).unwrap(),
        b"\x89PNG\0\0data"
    );

    let e = ws
        .call(&write, json!({"path": "nul.txt", "content": "a\u{0}b"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    assert!(!ws.root.join("nul.txt").exists());

    let out = ws
        .call(&write, json!({"path": "win.txt", "content": "a\nB\nc\n"}))
        .await
        .unwrap();
    assert!(out.content.contains("nothing changed"), "{}", out.content);
}

#[tokio::test]
async fn conflict_guard_protects_what_the_user_typed() {
    let ws = Ws::new();
    ws.write("story.md", "# Story\nonce upon a time\n");
    let tools = core_tools();
    let read = tool(&tools, "read_file");
    let write = tool(&tools, "write_file");
    let replace = tool(&tools, "replace_in_file");
    ws.call(&read, json!({"path": "story.md"})).await.unwrap();

    // The user types in their editor after the agent read the file.
    ws.write(
        "story.md",
        "# Story\nonce upon a time\nthe user's new line\n",
    );
    let e = ws
        .call(
            &write,
            json!({"path": "story.md", "content": "# Story\nrewritten\n"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed on disk after you last read it"), "{e}");
    assert!(e.contains("+the user's new line"), "{e}");
    let e = ws
        .call(
            &replace,
            json!({"path": "story.md", "old_string": "once", "new_string": "twice"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed on disk"), "{e}");
    assert_eq!(
        ws.read("story.md"),
        "# Story\nonce upon a time\nthe user's new line\n"
    );

    // Re-reading makes the fresh content the agent's baseline; edits chain afterwards.
    ws.call(&read, json!({"path": "story.md"})).await.unwrap();
    ws.call(
        &replace,
        json!({"path": "story.md", "old_string": "once", "new_string": "twice"}),
    )
    .await
    .unwrap();
    ws.call(
        &replace,
        json!({"path": "story.md", "old_string": "twice", "new_string": "thrice"}),
    )
    .await
    .unwrap();
    assert_eq!(
        ws.read("story.md"),
        "# Story\nthrice upon a time\nthe user's new line\n"
    );

    // A file deleted behind the agent's back is not silently recreated.
    std::fs::remove_file(ws.root.join("story.md")).unwrap();
    let e = ws
        .call(&write, json!({"path": "story.md", "content": "x"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("was deleted on disk"), "{e}");

    // Files the agent never read are written normally.
    ws.write("other.txt", "old");
    ws.call(&write, json!({"path": "other.txt", "content": "new"}))
        .await
        .unwrap();
    assert_eq!(ws.read("other.txt"), "new");
}

#[tokio::test]
async fn list_files_can_show_ignored_entries_marked() {
    let ws = Ws::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "");
    ws.write("target/debug/app", "");
    ws.write("build.log", "");
    let list = tool(&core_tools(), "list_files");
    let out = ws
        .call(&list, json!({"include_ignored": true}))
        .await
        .unwrap()
        .content;
    assert_eq!(
        out,
        "build.log [ignored]\nsrc/\nsrc/main.rs\ntarget/ [ignored]\n"
    );
}

#[tokio::test]
async fn read_only_files_are_refused_and_nothing_changes() {
    let ws = Ws::new();
    let p = ws.write("ro.txt", "ro\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let tools = core_tools();
    for (name, args) in [
        ("write_file", json!({"path": "ro.txt", "content": "RW\n"})),
        (
            "replace_in_file",
            json!({"path": "ro.txt", "old_string": "ro", "new_string": "RW"}),
        ),
    ] {
        let e = ws.call(&tool(&tools, name), args).await.unwrap_err();
        assert!(e.to_string().contains("is read-only"), "{name}: {e}");
        assert_eq!(ws.read("ro.txt"), "ro\n");
    }
}

#[tokio::test]
async fn a_file_in_another_encoding_is_flagged_on_read_and_not_corrupted_on_write() {
    let ws = Ws::new();
    std::fs::write(ws.root.join("latin1.txt"), b"caf\xe9\nplain\n").unwrap();
    let tools = core_tools();
    let out = ws
        .call(&tool(&tools, "read_file"), json!({"path": "latin1.txt"}))
        .await
        .unwrap()
        .content;
    assert!(out.contains("caf\u{FFFD}"), "{out}");
    assert!(out.contains("1 line(s) shown are not valid UTF-8"), "{out}");
    // Writing back what was shown would turn the é byte into U+FFFD for good.
    let e = ws
        .call(
            &tool(&tools, "write_file"),
            json!({"path": "latin1.txt", "content": "caf\u{FFFD}\nchanged\n"}),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not UTF-8 text"), "{e}");
    assert_eq!(
        std::fs::read(ws.root.join("latin1.txt")).unwrap(),
        b"caf\xe9\nplain\n"
    );
    // A plain UTF-8 file reads without the note.
    ws.write("utf8.txt", "café\n");
    let out = ws
        .call(&tool(&tools, "read_file"), json!({"path": "utf8.txt"}))
        .await
        .unwrap()
        .content;
    assert!(!out.contains("not valid UTF-8"), "{out}");
}

#[tokio::test]
async fn write_file_refuses_a_path_that_names_a_folder() {
    let ws = Ws::new();
    let e = ws
        .call(
            &tool(&core_tools(), "write_file"),
            json!({"path": "newdir/", "content": "x"}),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("ends with a slash"), "{e}");
    assert!(!ws.root.join("newdir").exists());
}

#[tokio::test]
async fn list_files_shows_a_name_with_a_newline_as_one_quoted_entry() {
    let ws = Ws::new();
    ws.write("new\nline.txt", "x");
    ws.write("plain.txt", "y");
    let out = ws
        .call(&tool(&core_tools(), "list_files"), json!({}))
        .await
        .unwrap()
        .content;
    assert_eq!(out, "\"new\\nline.txt\"\nplain.txt\n");
}

#[tokio::test]
async fn utf16_text_with_a_byte_order_mark_is_read_decoded() {
    let ws = Ws::new();
    let mut bytes = vec![0xFF, 0xFE];
    for u in "héllo\r\nwörld\r\n".encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    std::fs::write(ws.root.join("win.txt"), &bytes).unwrap();
    let tools = core_tools();
    let out = ws
        .call(&tool(&tools, "read_file"), json!({"path": "win.txt"}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("     1\théllo\n     2\twörld\n"), "{out}");
    assert!(out.contains("is UTF-16LE text, shown decoded"), "{out}");
    // Editing it is still refused, and nothing changes.
    let e = ws
        .call(
            &tool(&tools, "write_file"),
            json!({"path": "win.txt", "content": "x\n"}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::Failed(_)), "{e}");
    assert_eq!(std::fs::read(ws.root.join("win.txt")).unwrap(), bytes);
}
