//! read_image: real image files; the image part reaches the model in the next request; the
//! session model's vision decides between read_image and describe_image (seed 000 `forModel`).

use crate::common;

use std::sync::Arc;

use base64::Engine as _;
use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{ToolError, ToolHandle};
use cairn_protocol::{ApprovalDecision, ContentPart, Message, Mode};
use cairn_tools::{builtin_tools, ReadImage, ToolOptions, VisionConfig};
use common::{collect, session, Ws};
use serde_json::json;

fn png(ws: &Ws, name: &str, w: u32, h: u32) {
    image::RgbImage::from_pixel(w, h, image::Rgb([0, 128, 255]))
        .save_with_format(ws.root.join(name), image::ImageFormat::Png)
        .unwrap();
}

fn names(tools: &[ToolHandle]) -> Vec<String> {
    tools.iter().map(|t| t.schema().name).collect()
}

fn decode(part: &ContentPart) -> (String, image::DynamicImage) {
    let ContentPart::Image { mime_type, data } = part else {
        panic!("not an image: {part:?}")
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    (mime_type.clone(), image::load_from_memory(&bytes).unwrap())
}

#[tokio::test]
async fn returns_the_image_as_an_image_part() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.root.join("shots")).unwrap();
    png(&ws, "shots/ui.png", 64, 32);
    let tool: ToolHandle = Arc::new(ReadImage);
    let out = ws
        .call(&tool, json!({"path": "shots/ui.png"}))
        .await
        .unwrap();
    assert!(
        out.content
            .starts_with("Image shots/ui.png (64×32 px image/png"),
        "{}",
        out.content
    );
    assert_eq!(out.images.len(), 1);
    let (mime, img) = decode(&out.images[0]);
    assert_eq!(mime, "image/png");
    assert_eq!((img.width(), img.height()), (64, 32));
}

#[tokio::test]
async fn large_images_are_scaled_down_before_sending() {
    let ws = Ws::new();
    png(&ws, "big.png", 3000, 1500);
    let tool: ToolHandle = Arc::new(ReadImage);
    let out = ws.call(&tool, json!({"path": "big.png"})).await.unwrap();
    assert!(
        out.content.contains("3000×1500 px, scaled to 1568×784"),
        "{}",
        out.content
    );
    let (_, img) = decode(&out.images[0]);
    assert_eq!((img.width(), img.height()), (1568, 784));
}

#[tokio::test]
async fn failures_are_clear_and_carry_no_image() {
    let ws = Ws::new();
    ws.write("notes.txt", "plain text");
    std::fs::write(ws.root.join("broken.png"), b"\x89PNG\r\n\x1a\ntruncated").unwrap();
    std::fs::write(ws.outside.join("secret.png"), b"x").unwrap();
    let tool: ToolHandle = Arc::new(ReadImage);
    let e = ws
        .call(&tool, json!({"path": "missing.png"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e:?}");
    let e = ws
        .call(&tool, json!({"path": "notes.txt"}))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("not a PNG, JPEG, GIF or WebP"),
        "{e}"
    );
    let e = ws
        .call(&tool, json!({"path": "broken.png"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("could not be decoded"), "{e}");
    let e = ws
        .call(&tool, json!({"path": "../outside/secret.png"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::OutsideWorkspace(_)), "{e:?}");
    let e = ws.call(&tool, json!({})).await.unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e:?}");
}

#[tokio::test]
async fn the_image_reaches_the_model_in_the_next_request() {
    let ws = Ws::new();
    png(&ws, "chart.png", 20, 10);
    let llm = FakeLlm::new(vec![
        FakeReply::tool("c1", "read_image", json!({"path": "chart.png"})),
        FakeReply::text("It is a blue rectangle."),
    ]);
    let approver = Arc::new(ScriptedApprover::new(vec![], ApprovalDecision::Once));
    let s = session(
        &ws,
        &llm,
        vec![Arc::new(ReadImage)],
        approver,
        Mode::Interactive,
    );
    collect(s.run("what is in chart.png?")).await;
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let result = reqs[1]
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.name, "read_image");
    assert_eq!(result.images.len(), 1);
    let (_, img) = decode(&result.images[0]);
    assert_eq!((img.width(), img.height()), (20, 10));
}

#[test]
fn the_session_models_vision_selects_read_image_or_describe_image() {
    let vision = || VisionConfig {
        llm: Arc::new(FakeLlm::new(vec![])),
        model: "vision-1".into(),
    };
    let vision_model = builtin_tools(ToolOptions {
        session_vision: true,
        session_model: Some(vision()),
        vision: Some(vision()),
        ..ToolOptions::default()
    })
    .unwrap();
    let n = names(&vision_model);
    assert!(n.contains(&"read_image".to_string()), "{n:?}");
    assert!(!n.contains(&"describe_image".to_string()), "{n:?}");
    let text_only = names(
        &builtin_tools(ToolOptions {
            vision: Some(vision()),
            ..ToolOptions::default()
        })
        .unwrap(),
    );
    assert!(
        text_only.contains(&"describe_image".to_string()),
        "{text_only:?}"
    );
    assert!(
        !text_only.contains(&"read_image".to_string()),
        "{text_only:?}"
    );
    let neither = names(&builtin_tools(ToolOptions::default()).unwrap());
    assert!(
        !neither
            .iter()
            .any(|n| n == "read_image" || n == "describe_image"),
        "{neither:?}"
    );
    assert!(neither.contains(&"media".to_string()), "{neither:?}");
}
