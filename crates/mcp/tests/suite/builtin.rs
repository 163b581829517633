//! The built-in OCR server: on through `tesseract` when it is there (a stand-in script here,
//! so the test runs everywhere), disabled cleanly with a reason when it is not.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use cairn_engine::ToolError;
use cairn_mcp::config::LoadedConfig;
use cairn_mcp::{with_builtin_defaults, ServerConfig, ServerStatus};
use common::*;
use serde_json::json;

fn defaults() -> Vec<ServerConfig> {
    with_builtin_defaults(LoadedConfig::default()).servers
}

#[tokio::test(flavor = "multi_thread")]
async fn ocr_is_disabled_cleanly_without_tesseract() {
    let h = Harness::new(defaults(), |o| {
        o.tesseract = Some(PathBuf::from("/nonexistent/tesseract"))
    });
    let (ok, failed) = h.manager.connect_all().await;
    assert!(
        ok.is_empty() && failed.is_empty(),
        "nothing to start: {ok:?} {failed:?}"
    );
    match &h.manager.status()[0].status {
        ServerStatus::Disabled { reason } => assert!(
            reason.contains("tesseract") && reason.contains("multimodal model"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(h.names().is_empty());
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ocr_recognizes_an_image_through_tesseract() {
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("tesseract");
    // Prints what real tesseract would for `tesseract IMAGE stdout`.
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ -f \"$1\" ] && [ \"$2\" = stdout ] || { echo \"usage\" >&2; exit 1; }\necho \"HELLO OCR from $(basename \"$1\") $3 $4\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let h = Harness::new(defaults(), |o| o.tesseract = Some(fake.clone()));
    h.manager.connect_all().await;
    assert_eq!(
        h.manager.status()[0].status,
        ServerStatus::Ready { tools: 1 }
    );
    assert_eq!(h.names(), ["mcp__ocr__recognize"]);
    std::fs::write(h.dir.path().join("scan.png"), b"not really a png").unwrap();
    let out = h
        .call(
            "mcp__ocr__recognize",
            json!({"path": "scan.png", "lang": "eng"}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "HELLO OCR from scan.png -l eng");
    // Cairn's environment (HOME, API keys) never reaches the helper.
    std::fs::write(
        &fake,
        r#"#!/bin/sh
echo "HOME=[$HOME] KEYS=[$(env | grep -c API_KEY)] PATH=[$PATH]"
"#,
    )
    .unwrap();
    let out = h
        .call("mcp__ocr__recognize", json!({"path": "scan.png"}))
        .await
        .unwrap();
    assert_eq!(out.content, "HOME=[] KEYS=[0] PATH=[/usr/bin:/bin]");
    let missing = h
        .call("mcp__ocr__recognize", json!({"path": "nope.png"}))
        .await
        .unwrap_err();
    assert!(matches!(missing, ToolError::NotFound(_)), "{missing:?}");
    let bad = h.call("mcp__ocr__recognize", json!({})).await.unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments(_)), "{bad:?}");
    // Nothing outside the workspace: an absolute path, `..`, or a link pointing out.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.png"), b"outside").unwrap();
    std::os::unix::fs::symlink(outside.path(), h.dir.path().join("out")).unwrap();
    let up = pathdiff_up(h.dir.path(), &outside.path().join("secret.png"));
    for path in [
        outside.path().join("secret.png").display().to_string(),
        up,
        "out/secret.png".to_string(),
    ] {
        let err = h
            .call("mcp__ocr__recognize", json!({"path": path}))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ToolError::OutsideWorkspace(_)),
            "{path}: {err:?}"
        );
    }
    h.manager.close_all().await;
}

/// A `../../…` path from `dir` to `target`.
fn pathdiff_up(dir: &std::path::Path, target: &std::path::Path) -> String {
    let depth = dir.components().count() - 1;
    format!(
        "{}{}",
        "../".repeat(depth),
        target.display().to_string().trim_start_matches('/')
    )
}

#[test]
fn a_user_entry_named_ocr_replaces_or_disables_the_default() {
    let mut user = LoadedConfig::default();
    user.servers.push(ServerConfig {
        name: "ocr".into(),
        transport: None,
        enabled: false,
        startup_timeout: None,
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("mcp.json"),
        held: None,
    });
    let all = with_builtin_defaults(user);
    assert_eq!(all.servers.len(), 1);
    assert!(!all.servers[0].enabled);
}

fn fake_tesseract(dir: &std::path::Path) -> PathBuf {
    let fake = dir.join("tesseract");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"TESSERACT read $(basename \"$1\")\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    fake
}

fn png_bytes() -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
    b.extend_from_slice(&[0u8; 32]);
    b
}

#[tokio::test(flavor = "multi_thread")]
async fn ocr_falls_back_to_the_multimodal_model_without_tesseract() {
    use cairn_engine::testing::{FakeLlm, FakeReply};
    use cairn_protocol::{ContentPart, Message};
    let llm = std::sync::Arc::new(FakeLlm::new(vec![FakeReply::text(
        "INVOICE 42\nTotal: 9.99",
    )]));
    let model = cairn_mcp::OcrModel {
        llm: llm.clone(),
        model: "vision-1".into(),
    };
    let h = Harness::new(defaults(), |o| {
        o.tesseract = Some(PathBuf::from("/nonexistent/tesseract"));
        o.ocr_model = Some(model);
    });
    h.manager.connect_all().await;
    assert_eq!(
        h.manager.status()[0].status,
        ServerStatus::Ready { tools: 1 }
    );
    assert_eq!(h.names(), ["mcp__ocr__recognize"]);
    std::fs::write(h.dir.path().join("scan.png"), png_bytes()).unwrap();
    let out = h
        .call("mcp__ocr__recognize", json!({"path": "scan.png"}))
        .await
        .unwrap();
    assert_eq!(out.content, "INVOICE 42\nTotal: 9.99");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].model, "vision-1");
    assert!(reqs[0].tools.is_empty());
    let Message::User { content } = &reqs[0].messages[0] else {
        panic!("{:?}", reqs[0].messages)
    };
    assert!(
        matches!(&content[1], ContentPart::Image { mime_type, .. } if mime_type == "image/png"),
        "{content:?}"
    );
    // Formats the model cannot read are refused with the reason; nothing is sent.
    std::fs::write(h.dir.path().join("doc.pdf"), b"%PDF-1.7 ...").unwrap();
    let e = h
        .call("mcp__ocr__recognize", json!({"path": "doc.pdf"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a PNG") && e.contains("vision-1"), "{e}");
    assert_eq!(llm.requests().len(), 1);
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ocr_prefers_tesseract_over_the_model() {
    use cairn_engine::testing::{FakeLlm, FakeReply};
    let bin = tempfile::tempdir().unwrap();
    let fake = fake_tesseract(bin.path());
    let llm = std::sync::Arc::new(FakeLlm::new(vec![FakeReply::text("from the model")]));
    let model = cairn_mcp::OcrModel {
        llm: llm.clone(),
        model: "vision-1".into(),
    };
    let h = Harness::new(defaults(), |o| {
        o.tesseract = Some(fake);
        o.ocr_model = Some(model);
    });
    h.manager.connect_all().await;
    std::fs::write(h.dir.path().join("scan.png"), png_bytes()).unwrap();
    let out = h
        .call("mcp__ocr__recognize", json!({"path": "scan.png"}))
        .await
        .unwrap();
    assert_eq!(out.content, "TESSERACT read scan.png");
    assert!(llm.requests().is_empty(), "the model is only the fallback");
    h.manager.close_all().await;
}
