//! Attachments (seed §13): validation, storage, reading back, and base64 sent only in the
//! turn that carries them.

use crate::common;

use std::sync::{Arc, Mutex};

use cairn_engine::attachments::{
    data_url, normalize_attachments, outbound, read_stored_attachment, save_attachments,
    strip_attachments, AttachmentError, InlineAttachments, MessageAttachment, TurnAttachments,
    MAX_ATTACHMENT_BYTES,
};
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineHook, ToolRegistry};
use cairn_protocol::{ContentPart, Event, Message, Mode, TurnStatus};
use common::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nfake-image-bytes";

fn att(name: &str, mime: &str, bytes: &[u8]) -> MessageAttachment {
    MessageAttachment {
        name: name.into(),
        mime_type: mime.into(),
        data_url: data_url(mime, bytes),
    }
}

fn images(m: &Message) -> usize {
    match m {
        Message::User { content } => content
            .iter()
            .filter(|p| matches!(p, ContentPart::Image { .. }))
            .count(),
        _ => 0,
    }
}

#[test]
fn normalisation_enforces_count_type_data_and_size() {
    let ok = normalize_attachments(vec![att("../../etc/shot.png", "image/png", PNG)]).unwrap();
    assert_eq!(ok[0].name, "shot.png");
    assert_eq!(ok[0].mime_type, "image/png");
    assert!(normalize_attachments(Vec::new()).unwrap().is_empty());
    // An image whose bytes are not what its type says is refused before anything runs.
    for (mime, bytes) in [
        ("image/png", &b"not really a png"[..]),
        ("image/jpeg", PNG),
        ("image/webp", b"RIFF0000WAVE"),
    ] {
        match normalize_attachments(vec![att("fake", mime, bytes)]) {
            Err(AttachmentError::Data { reason, .. }) => {
                assert!(reason.contains(mime), "{reason}")
            }
            other => panic!("{mime}: {other:?}"),
        }
    }
    assert!(normalize_attachments(vec![att("a.gif", "image/gif", b"GIF89a...")]).is_ok());
    assert!(normalize_attachments(vec![att("a.mp3", "audio/mpeg", b"anything")]).is_ok());

    let five = vec![att("a.png", "image/png", PNG); 5];
    assert!(matches!(
        normalize_attachments(five),
        Err(AttachmentError::TooMany(5))
    ));
    for mime in ["text/html", "application/pdf", "image/svg+xml", "image/"] {
        let r = normalize_attachments(vec![att("x", mime, PNG)]);
        assert!(matches!(r, Err(AttachmentError::Type { .. })), "{mime}");
    }
    let mut mismatch = att("a.png", "image/png", PNG);
    mismatch.data_url = data_url("video/mp4", PNG);
    assert!(matches!(
        normalize_attachments(vec![mismatch]),
        Err(AttachmentError::Data { .. })
    ));
    let mut garbage = att("a.png", "image/png", PNG);
    garbage.data_url = "data:image/png;base64,!!!not base64!!!".into();
    let err = normalize_attachments(vec![garbage]).unwrap_err();
    assert!(err.to_string().contains("base64"), "{err}");
    let mut not_url = att("a.png", "image/png", PNG);
    not_url.data_url = "https://example.com/a.png".into();
    assert!(matches!(
        normalize_attachments(vec![not_url]),
        Err(AttachmentError::Data { .. })
    ));

    let big = vec![0u8; MAX_ATTACHMENT_BYTES as usize + 1];
    let r = normalize_attachments(vec![att("big.mp4", "video/mp4", &big)]);
    assert!(matches!(r, Err(AttachmentError::TooLarge { .. })));
    let four_mb = vec![0u8; 4 * 1024 * 1024];
    let three = vec![
        att("a.wav", "audio/wav", &four_mb),
        att("b.wav", "audio/wav", &four_mb),
        att("c.wav", "audio/wav", &four_mb),
    ];
    let err = normalize_attachments(three).unwrap_err();
    assert!(err.to_string().contains("10 MB"), "{err}");
    let two = vec![
        att("a.wav", "audio/wav", &four_mb),
        att("b.wav", "audio/wav", &four_mb),
    ];
    assert_eq!(normalize_attachments(two).unwrap().len(), 2);
}

#[test]
fn stored_attachments_read_back_and_nothing_else_does() {
    let dir = TempDir::new();
    let list = normalize_attachments(vec![att("shot.png", "image/png", PNG)]).unwrap();
    let refs = save_attachments(&dir.0, &list).unwrap();
    assert_eq!(refs[0].size, PNG.len() as u64);
    assert!(refs[0].path.starts_with("attachments/") && refs[0].path.ends_with("-shot.png"));
    let back = read_stored_attachment(&dir.0, &refs[0].path).unwrap();
    assert_eq!(back.name, "shot.png");
    assert_eq!(back.mime_type, "image/png");
    assert_eq!(back.size, PNG.len() as u64);
    assert_eq!(
        data_url("image/png", PNG),
        format!("data:image/png;base64,{}", back.base64)
    );

    std::fs::write(dir.0.join("state.json"), "secret").unwrap();
    std::fs::create_dir_all(dir.0.join("attachments/sub")).unwrap();
    std::fs::write(dir.0.join("attachments/sub/x.png"), "x").unwrap();
    for bad in [
        "state.json",
        "../state.json",
        "attachments/../state.json",
        "attachments/sub/x.png",
        "/etc/passwd",
        "attachments\\..\\state.json",
        "attachments/",
        "attachments/.hidden",
        "./attachments/x.png",
    ] {
        let r = read_stored_attachment(&dir.0, bad);
        assert!(
            matches!(r, Err(AttachmentError::BadPath(_))),
            "{bad}: {r:?}"
        );
    }
}

#[test]
fn outbound_adds_inline_parts_only_to_their_message_and_strip_removes_data() {
    let inline = InlineAttachments {
        message_text: "look".into(),
        parts: vec![ContentPart::Image {
            mime_type: "image/png".into(),
            data: "AAAA".into(),
        }],
    };
    let history = vec![Message::user("look"), Message::assistant_text("ok")];
    let sent = outbound(&history, std::slice::from_ref(&inline));
    assert_eq!(images(&sent[0]), 1);
    assert_eq!(history, outbound(&history, &[]));
    let other = vec![Message::user("something else")];
    assert_eq!(outbound(&other, std::slice::from_ref(&inline)), other);
    let mut with_data = sent.clone();
    assert_eq!(strip_attachments(&mut with_data), 1);
    assert_eq!(images(&with_data[0]), 0);
    assert!(!serde_json::to_string(&with_data).unwrap().contains("AAAA"));
}

/// Records whether any checkpointed state ever held image data.
#[derive(Default)]
struct StateSpy(Mutex<Vec<usize>>);

impl EngineHook for StateSpy {
    fn on_event(&self, _event: &Event) {}
    fn on_state(&self, state: &cairn_engine::StateSnapshot<'_>) {
        self.0
            .lock()
            .unwrap()
            .push(state.messages.iter().map(images).sum());
    }
}

#[tokio::test]
async fn base64_goes_out_only_in_the_turn_that_carries_it() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("c1", "echo", serde_json::json!({"x": 1})),
        FakeReply::text("I see a cat"),
        FakeReply::text("still remember the cat"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(echo_tool("echo"));
    let spy = Arc::new(StateSpy::default());
    let s = cairn_engine::Session::builder(config(&dir, Mode::Interactive), Arc::new(llm.clone()))
        .tools(reg)
        .hook(spy.clone())
        .build();
    let list = normalize_attachments(vec![
        att("cat.png", "image/png", PNG),
        att("purr.wav", "audio/wav", b"RIFF"),
    ])
    .unwrap();
    let refs = save_attachments(&dir.0.join(".state"), &list).unwrap();
    let ev = collect(s.run_with_attachments(
        "what is this?",
        TurnAttachments {
            attachments: list,
            refs: refs.clone(),
            files: Vec::new(),
        },
    ))
    .await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let start = ev.iter().find_map(|e| match e {
        Event::TurnStart(t) => Some(t.clone()),
        _ => None,
    });
    let start = start.unwrap();
    assert_eq!(start.attachment_count, Some(2));
    let carried = start.attachments.unwrap();
    assert!(
        matches!(&carried[0], cairn_protocol::CarriedRef::Stored(s) if s.path == refs[0].path),
        "{carried:?}"
    );

    let ev = collect(s.run("and now?")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 3);
    // Both requests of the first turn carry the image (audio is referenced, not inlined).
    for r in &reqs[..2] {
        assert_eq!(r.messages.iter().map(images).sum::<usize>(), 1);
    }
    // The next turn sends no image data, but the references are in history.
    assert_eq!(reqs[2].messages.iter().map(images).sum::<usize>(), 0);
    let text = serde_json::to_string(&reqs[2].messages).unwrap();
    assert!(text.contains(&refs[0].path) && text.contains(&refs[1].path));
    // No checkpoint ever held the base64.
    let seen = spy.0.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|n| *n == 0), "{seen:?}");
    assert_eq!(s.messages().await.iter().map(images).sum::<usize>(), 0);
}

#[test]
fn mentioned_files_go_into_the_message_and_the_refs_but_not_the_typed_input() {
    let turn = TurnAttachments {
        attachments: Vec::new(),
        refs: Vec::new(),
        files: vec![cairn_engine::attachments::ContextFile {
            path: "src/a \"q\".rs".into(),
            text: "fn a() {}".into(),
        }],
    };
    let (message, inline) = turn.split("explain @src/a.rs", std::path::Path::new("/state"));
    let text = message.text();
    assert!(
        text.starts_with(
            "explain @src/a.rs\n\n<file path=\"src/a &quot;q&quot;.rs\">\nfn a() {}\n</file>"
        ),
        "{text}"
    );
    assert!(inline.parts.is_empty());
    let refs = serde_json::to_value(turn.carried()).unwrap();
    assert_eq!(refs.as_array().map(Vec::len), Some(1));
    assert_eq!(refs[0]["kind"], "file");
    assert_eq!(refs[0]["path"], "src/a \"q\".rs");
    assert_eq!(refs[0]["size"], 9);

    // A saved attachment is named by the absolute path of its copy, which tools can open.
    let saved = cairn_engine::attachments::TurnAttachments {
        attachments: Vec::new(),
        refs: vec![cairn_engine::attachments::StoredAttachment {
            name: "song.mp3".into(),
            mime_type: "audio/mpeg".into(),
            size: 3,
            path: "attachments/1-song.mp3".into(),
        }],
        files: Vec::new(),
    };
    let (message, _) = saved.split("transcribe", std::path::Path::new("/state/s1"));
    assert!(
        message
            .text()
            .ends_with("[attachment: song.mp3 (audio/mpeg, 3 bytes) saved at /state/s1/attachments/1-song.mp3]"),
        "{}",
        message.text()
    );
}

/// Issue 44: an image queued with a steering instruction reaches the model as an image, with
/// the instruction, in the running turn's next request (and only in this turn's requests).
#[tokio::test]
async fn steering_with_an_image_reaches_the_model_as_an_image() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "wait", serde_json::json!({})),
        FakeReply::text("I see the screenshot"),
    ]);
    let (wait, gate) = gated_wait_tool();
    let mut reg = ToolRegistry::new();
    reg.register(wait);
    let cfg = config(&dir, Mode::Interactive);
    let state_dir = cfg.state_dir.clone();
    let s = cairn_engine::Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .build();
    let images_in = vec![att("shot.png", "image/png", PNG)];
    let refs = save_attachments(&state_dir, &images_in).unwrap();
    let mut stream = s.run("start");
    let mut events = Vec::new();
    while let Some(e) = stream.recv().await {
        let started = matches!(e, Event::ToolStarted(_));
        events.push(e);
        if started {
            s.queue_steering_with(
                "look at this screenshot",
                TurnAttachments {
                    attachments: images_in.clone(),
                    refs: refs.clone(),
                    files: Vec::new(),
                },
            );
            gate.notify_one();
        }
    }
    assert_eq!(turn_end(&events).status, TurnStatus::Completed);
    let steered: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::QueueSteering(q) => Some(q),
            _ => None,
        })
        .collect();
    assert_eq!(steered.len(), 1);
    let listed = steered[0]
        .attachments
        .as_ref()
        .expect("the steering's attachments");
    assert_eq!(listed.len(), 1);
    assert!(
        matches!(&listed[0], cairn_protocol::CarriedRef::Stored(s) if s.name == "shot.png"),
        "{listed:?}"
    );
    let second = &llm.requests()[1].messages;
    let last = second.last().expect("the steering message");
    assert!(
        last.text().starts_with("look at this screenshot"),
        "{}",
        last.text()
    );
    assert_eq!(images(last), 1, "the image is sent as an image part");
    // The history keeps a reference, not the base64.
    let kept = s.messages().await;
    let stored = kept
        .iter()
        .find(|m| m.text().starts_with("look at this screenshot"))
        .expect("in history");
    assert_eq!(images(stored), 0);
    assert!(stored.text().contains("[attachment: shot.png"));
}
