//! Against a real third-party server: the reference `@modelcontextprotocol/server-everything`
//! from npm, over stdio and over legacy SSE — list, call, progress, error result, image.
//!
//! The package comes from `crates/mcp/tests/npm` (`npm ci` there, as CI's setup does); when it
//! is not installed the test runs `npm ci` into Cargo's test temp dir once. Without `node` or
//! `npm`, or when the install fails (offline), the test prints why and skips.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_engine::ToolError;
use cairn_mcp::{ServerConfig, TransportConfig};
use common::*;
use serde_json::json;

const ENTRY: &str = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";

/// The server's entry script, installing it if needed; `Err` is the reason to skip.
pub(crate) fn everything() -> Result<PathBuf, String> {
    let dir = cairn_testkit::npm::installed(
        &Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/npm"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-npm"),
        &["package.json", "package-lock.json"],
        ENTRY,
    )?;
    Ok(dir.join(ENTRY))
}

pub(crate) fn node_server(name: &str, entry: &Path, mode: &str) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Some(TransportConfig::Stdio {
            program: "node".into(),
            args: vec![entry.display().to_string(), mode.into()],
            env: Default::default(),
            cwd: None,
        }),
        enabled: true,
        startup_timeout: Some(Duration::from_secs(30)),
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("(test)"),
        held: None,
    }
}

async fn exercise(h: &Harness, server: &str) {
    let t = |tool: &str| format!("mcp__{server}__{tool}");
    let names = h.names();
    for tool in [
        "echo",
        "get-tiny-image",
        "trigger-long-running-operation",
        "get-sum",
    ] {
        assert!(names.contains(&t(tool)), "{tool} missing from {names:?}");
    }
    let out = h
        .call(&t("echo"), json!({"message": "hi from cairn"}))
        .await
        .unwrap();
    assert!(out.content.contains("hi from cairn"), "{}", out.content);
    let sum = h
        .call(&t("get-sum"), json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert!(sum.content.contains("42"), "{}", sum.content);
    let img = h.call(&t("get-tiny-image"), json!({})).await.unwrap();
    assert!(
        img.content.contains("[image: image/png, "),
        "{}",
        img.content
    );
    // Progress: 2 s in 4 steps with a 1.2 s idle limit only passes because progress resets it.
    let slow = h
        .call(
            &t("trigger-long-running-operation"),
            json!({"duration": 2, "steps": 4}),
        )
        .await
        .unwrap();
    assert!(
        slow.content.to_lowercase().contains("completed"),
        "{}",
        slow.content
    );
    // Invalid arguments come back as an `isError` result (or a protocol error): a clear tool error.
    let err = h
        .call(&t("get-sum"), json!({"a": "two"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Failed(_)), "{err:?}");
    assert!(err.to_string().contains(server), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn reference_everything_server_over_stdio() {
    let entry = match everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED reference_everything_server_over_stdio: {why}");
            return;
        }
    };
    let m = marker();
    let mut cfg = node_server("everything", &entry, "stdio");
    if let Some(TransportConfig::Stdio { args, .. }) = cfg.transport.as_mut() {
        args.push(m.clone());
    }
    let h = Harness::new(vec![cfg], |o| o.call_timeout = Duration::from_millis(1200));
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["everything"], "{failed:?}");
    exercise(&h, "everything").await;
    h.manager.close_all().await;
    assert!(eventually(Duration::from_secs(3), || processes_with(&m).is_empty()).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn reference_everything_server_over_legacy_sse() {
    let entry = match everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED reference_everything_server_over_legacy_sse: {why}");
            return;
        }
    };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::new("node")
        .arg(&entry)
        .arg("sse")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/sse");
    assert!(
        eventually(Duration::from_secs(20), || std::net::TcpStream::connect((
            "127.0.0.1",
            port
        ))
        .is_ok())
        .await,
        "the SSE server did not listen"
    );
    let cfg = ServerConfig {
        name: "ev".into(),
        transport: Some(TransportConfig::Sse {
            url,
            headers: Default::default(),
        }),
        enabled: true,
        startup_timeout: Some(Duration::from_secs(20)),
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("(test)"),
        held: None,
    };
    let h = Harness::new(vec![cfg], |o| o.call_timeout = Duration::from_millis(1200));
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["ev"], "{failed:?}");
    exercise(&h, "ev").await;
    h.manager.close_all().await;
    let _ = child.kill().await;
}

/// The reference server's picture reaches a model that sees images as an image part.
#[tokio::test(flavor = "multi_thread")]
async fn the_reference_servers_image_reaches_a_model_that_sees_images() {
    let entry = match everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!(
                "SKIPPED the_reference_servers_image_reaches_a_model_that_sees_images: {why}"
            );
            return;
        }
    };
    let h = Harness::new(vec![node_server("everything", &entry, "stdio")], |o| {
        o.images_to_model = true
    });
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["everything"], "{failed:?}");
    let img = h
        .call("mcp__everything__get-tiny-image", json!({}))
        .await
        .unwrap();
    assert!(
        img.content.contains("[image: image/png, "),
        "{}",
        img.content
    );
    assert_eq!(img.images.len(), 1, "{:?}", img.images);
    assert!(matches!(
        &img.images[0],
        cairn_protocol::ContentPart::Image { mime_type, data } if mime_type == "image/png" && !data.is_empty()
    ));
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_server_gets_the_workspace_as_its_root_and_gives_its_instructions() {
    let entry = match everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED the_reference_server_gets_the_workspace_as_its_root: {why}");
            return;
        }
    };
    let h = Harness::new(vec![node_server("every", &entry, "stdio")], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["every"], "{failed:?}");
    // Its instructions, kept for the system prompt.
    let given = h.manager.instructions();
    assert_eq!(given.len(), 1, "{given:?}");
    assert_eq!(given[0].0, "every");
    assert!(given[0].1.len() > 100, "{:?}", given[0].1);
    // The roots tool appears only for a client that declares roots (after initialization:
    // a tools/list_changed); it shows the roots the client answered roots/list with.
    let tool = "mcp__every__get-roots-list";
    assert!(
        eventually(Duration::from_secs(10), || h
            .names()
            .iter()
            .any(|n| n == tool))
        .await,
        "{tool} never appeared: {:?}",
        h.names()
    );
    let out = h.call(tool, json!({})).await.unwrap();
    let uri = url::Url::from_directory_path(h.dir.path())
        .unwrap()
        .to_string();
    assert!(out.content.contains(&uri), "{uri} not in {}", out.content);
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_servers_prompts_expand_with_their_arguments() {
    let entry = match everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED the_reference_servers_prompts_expand: {why}");
            return;
        }
    };
    let h = Harness::new(vec![node_server("every", &entry, "stdio")], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["every"], "{failed:?}");
    let prompts = h.manager.prompts();
    let args = prompts
        .iter()
        .find(|p| p.name == "args-prompt")
        .unwrap_or_else(|| panic!("no args-prompt in {prompts:?}"));
    assert_eq!(args.command, "mcp__every__args-prompt");
    assert_eq!(
        args.arguments,
        vec![("city".to_string(), true), ("state".to_string(), false)]
    );
    let text = h
        .manager
        .expand_prompt("mcp__every__args-prompt", "state=France Paris")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(text, "What's weather in Paris, France?");
    let missing = h
        .manager
        .expand_prompt("mcp__every__args-prompt", "")
        .await
        .unwrap()
        .unwrap_err();
    assert!(missing.contains("needs city"), "{missing}");
    assert!(h
        .manager
        .expand_prompt("mcp__every__nope", "")
        .await
        .is_none());
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resource_link_is_read_through_its_server_and_a_file_uri_is_never_opened() {
    let entry = match everything() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED a_resource_link_is_read_through_its_server: {why}");
            return;
        }
    };
    let h = Harness::new(vec![node_server("every", &entry, "stdio")], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["every"], "{failed:?}");
    let names = h.names();
    for tool in ["mcp__every__list_resources", "mcp__every__read_resource"] {
        assert!(
            names.iter().any(|n| n == tool),
            "{tool} missing from {names:?}"
        );
    }
    let listed = h
        .call("mcp__every__list_resources", json!({}))
        .await
        .unwrap();
    assert!(
        listed.content.contains("demo://resource/static/document/"),
        "{}",
        listed.content
    );
    // A tool returns resource links; the first (a text resource) is read through the server.
    let links = h
        .call("mcp__every__get-resource-links", json!({"count": 1}))
        .await
        .unwrap();
    assert!(
        links.content.contains("read_resource tool"),
        "{}",
        links.content
    );
    let uri = links
        .content
        .split("[resource link: ")
        .nth(1)
        .and_then(|rest| rest.split([' ', ']', ',']).next())
        .unwrap_or_else(|| panic!("no link in {}", links.content))
        .to_string();
    let read = h
        .call("mcp__every__read_resource", json!({"uri": uri}))
        .await
        .unwrap();
    assert!(!read.content.trim().is_empty(), "{uri}: {}", read.content);
    // A file URI goes to the server as any URI does; Cairn opens nothing itself.
    let file = h
        .call(
            "mcp__every__read_resource",
            json!({"uri": "file:///etc/passwd"}),
        )
        .await;
    let text = match file {
        Ok(o) => o.content,
        Err(e) => e.to_string(),
    };
    assert!(!text.contains("root:"), "{text}");
    h.manager.close_all().await;
}
