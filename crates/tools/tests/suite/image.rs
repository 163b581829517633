//! describe_image: a real image file, a scripted vision model.

use crate::common;

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{LlmOutcome, OutcomeStatus, ToolError};
use cairn_protocol::{ContentPart, Message};
use cairn_tools::{describe_image_tool, VisionConfig};
use common::Ws;
use serde_json::json;

fn png(ws: &Ws, name: &str, w: u32, h: u32) {
    image::RgbImage::from_pixel(w, h, image::Rgb([255, 0, 0]))
        .save_with_format(ws.root.join(name), image::ImageFormat::Png)
        .unwrap();
}

#[tokio::test]
async fn describes_an_image_through_the_vision_model() {
    let ws = Ws::new();
    png(&ws, "shot.png", 40, 20);
    let vision = FakeLlm::new(vec![FakeReply::text("A solid red rectangle.")]);
    let tool = describe_image_tool(Some(VisionConfig {
        llm: Arc::new(vision.clone()),
        model: "vision-1".into(),
    }))
    .unwrap();
    let out = ws
        .call(
            &tool,
            json!({"path": "shot.png", "question": "What colour is it?"}),
        )
        .await
        .unwrap()
        .content;
    assert_eq!(
        out,
        "Description of shot.png (40×20 px) by the vision model vision-1:\nA solid red rectangle."
    );
    let req = &vision.requests()[0];
    assert_eq!(req.model, "vision-1");
    assert!(req.tools.is_empty());
    let Message::User { content } = &req.messages[0] else {
        panic!("{:?}", req.messages)
    };
    assert!(matches!(&content[0], ContentPart::Text { text } if text == "What colour is it?"));
    assert!(
        matches!(&content[1], ContentPart::Image { mime_type, data } if mime_type == "image/png" && !data.is_empty())
    );
}

#[tokio::test]
async fn failures_are_clear() {
    let ws = Ws::new();
    png(&ws, "a.png", 10, 10);
    ws.write("notes.txt", "not an image");
    let vision = FakeLlm::new(vec![FakeReply::outcome(LlmOutcome::new(
        OutcomeStatus::Failed,
        Some("model overloaded".into()),
    ))]);
    let tool = describe_image_tool(Some(VisionConfig {
        llm: Arc::new(vision),
        model: "vision-1".into(),
    }))
    .unwrap();
    let e = ws.call(&tool, json!({"path": "a.png"})).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("vision model vision-1 failed: failed: model overloaded"),
        "{e}"
    );
    let e = ws
        .call(&tool, json!({"path": "notes.txt"}))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("not a PNG, JPEG, GIF or WebP image"),
        "{e}"
    );
    let e = ws
        .call(&tool, json!({"path": "gone.png"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
    let e = ws
        .call(&tool, json!({"path": "/etc/hostname"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::OutsideWorkspace(_)), "{e}");
    assert!(describe_image_tool(None).is_none());
}
