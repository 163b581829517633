#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The built-in OCR server: on through `tesseract` when it is there (a stand-in script here,
//! so the test runs everywhere), disabled cleanly with a reason when it is not.

mod common;

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
        ServerStatus::Disabled { reason } => assert!(reason.contains("tesseract"), "{reason}"),
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
    let missing = h
        .call("mcp__ocr__recognize", json!({"path": "nope.png"}))
        .await
        .unwrap_err();
    assert!(matches!(missing, ToolError::NotFound(_)), "{missing:?}");
    let bad = h.call("mcp__ocr__recognize", json!({})).await.unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments(_)), "{bad:?}");
    h.manager.close_all().await;
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
    });
    let all = with_builtin_defaults(user);
    assert_eq!(all.servers.len(), 1);
    assert!(!all.servers[0].enabled);
}
