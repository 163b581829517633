//! media: real image, audio and video files; a scripted vision model, a local transcription
//! endpoint, an MP4 written with the `mp4` crate and a stand-in ffprobe.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{ToolError, ToolHandle};
use cairn_tools::{Media, MediaConfig, TranscriptionConfig, VisionConfig};
use common::Ws;
use serde_json::json;

fn media(config: MediaConfig) -> ToolHandle {
    Arc::new(Media::new(MediaConfig {
        session_model: "text-model".into(),
        // No ffprobe unless the test provides one (the host may have FFmpeg installed).
        ffprobe: config
            .ffprobe
            .clone()
            .or_else(|| Some("/nonexistent/ffprobe".into())),
        ..config
    }))
}

fn wav(ws: &Ws, name: &str) {
    // 0.1 s of 8 kHz mono 16-bit silence.
    let samples = 800u32;
    let mut b = Vec::new();
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + samples * 2).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&8000u32.to_le_bytes());
    b.extend_from_slice(&16000u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&16u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&(samples * 2).to_le_bytes());
    b.resize(b.len() + (samples * 2) as usize, 0);
    std::fs::write(ws.root.join(name), b).unwrap();
}

fn mp4_file(ws: &Ws, name: &str) {
    let config = mp4::Mp4Config {
        major_brand: str::parse("isom").unwrap(),
        minor_version: 512,
        compatible_brands: vec![
            str::parse("isom").unwrap(),
            str::parse("iso2").unwrap(),
            str::parse("avc1").unwrap(),
            str::parse("mp41").unwrap(),
        ],
        timescale: 1000,
    };
    let file = std::fs::File::create(ws.root.join(name)).unwrap();
    let mut w = mp4::Mp4Writer::write_start(file, &config).unwrap();
    w.add_track(&mp4::TrackConfig::from(mp4::MediaConfig::AvcConfig(
        mp4::AvcConfig {
            width: 320,
            height: 240,
            seq_param_set: vec![0x67, 0x42, 0xC0, 0x1E, 0xDA, 0x02, 0x80, 0xBF],
            pic_param_set: vec![0x68, 0xCE, 0x3C, 0x80],
        },
    )))
    .unwrap();
    for i in 0..50u64 {
        w.write_sample(
            1,
            &mp4::Mp4Sample {
                start_time: i * 40,
                duration: 40,
                rendering_offset: 0,
                is_sync: i == 0,
                bytes: mp4::Bytes::from(vec![0u8, 0, 0, 4, 0x65, 0x88, 0x84, 0x00]),
            },
        )
        .unwrap();
    }
    w.write_end().unwrap();
}

#[tokio::test]
async fn images_are_described_by_the_vision_model() {
    let ws = Ws::new();
    image::RgbImage::from_pixel(30, 20, image::Rgb([0, 200, 0]))
        .save_with_format(ws.root.join("logo.png"), image::ImageFormat::Png)
        .unwrap();
    let llm = FakeLlm::new(vec![FakeReply::text("A green square logo.")]);
    let tool = media(MediaConfig {
        vision: Some(VisionConfig {
            llm: Arc::new(llm.clone()),
            model: "vision-1".into(),
        }),
        ..MediaConfig::default()
    });
    let out = ws
        .call(
            &tool,
            json!({"path": "logo.png", "question": "Which colour?"}),
        )
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "Image logo.png (30×20 px), by the model vision-1:\nA green square logo."
    );
    assert_eq!(llm.requests()[0].model, "vision-1");
}

#[tokio::test]
async fn kinds_no_model_handles_are_unsupported_by_this_model() {
    let ws = Ws::new();
    image::RgbImage::from_pixel(4, 4, image::Rgb([1, 2, 3]))
        .save_with_format(ws.root.join("a.png"), image::ImageFormat::Png)
        .unwrap();
    wav(&ws, "voice.wav");
    let tool = media(MediaConfig::default());
    let e = ws
        .call(&tool, json!({"path": "a.png"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("unsupported by this model (text-model)") && e.contains("CAIRN_VISION_MODEL"),
        "{e}"
    );
    let e = ws
        .call(&tool, json!({"path": "voice.wav"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("unsupported by this model") && e.contains("transcription"),
        "{e}"
    );
}

/// Requests the fake transcription endpoint saw: (content type, body).
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

#[tokio::test]
async fn audio_is_transcribed_through_the_transcription_endpoint() {
    let ws = Ws::new();
    wav(&ws, "memo.wav");
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let app = axum::Router::new().route(
        "/v1/audio/transcriptions",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let sink = sink.clone();
                async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    sink.lock().unwrap().push((auth, body.to_vec()));
                    axum::Json(json!({"text": " Ship the release on Friday. "}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut cfg = TranscriptionConfig::new(
        format!("http://{addr}/v1"),
        Some("sk-transcribe".into()),
        "whisper-1",
    );
    cfg.http.system_proxy = false;
    cfg.http.socks5_proxy = None;
    let tool = media(MediaConfig {
        transcription: Some(cfg),
        ..MediaConfig::default()
    });
    let out = ws.call(&tool, json!({"path": "memo.wav"})).await.unwrap();
    assert!(
        out.content
            .starts_with("Transcript of memo.wav (audio/x-wav) by the model whisper-1:"),
        "{}",
        out.content
    );
    assert!(
        out.content.ends_with("\nShip the release on Friday."),
        "{}",
        out.content
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0, "Bearer sk-transcribe");
    let body = String::from_utf8_lossy(&seen[0].1);
    assert!(
        body.contains("name=\"model\"") && body.contains("whisper-1"),
        "{body}"
    );
    assert!(
        body.contains("filename=\"memo.wav\"") && body.contains("RIFF"),
        "{body}"
    );
}

#[tokio::test]
async fn transcription_errors_are_reported_with_the_status() {
    let ws = Ws::new();
    wav(&ws, "memo.wav");
    let app = axum::Router::new().route(
        "/audio/transcriptions",
        axum::routing::post(|| async {
            (
                axum::http::StatusCode::BAD_REQUEST,
                "model does not support audio",
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut cfg = TranscriptionConfig::new(format!("http://{addr}"), None, "gpt-4o");
    cfg.http.system_proxy = false;
    let tool = media(MediaConfig {
        transcription: Some(cfg),
        ..MediaConfig::default()
    });
    let e = ws
        .call(&tool, json!({"path": "memo.wav"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("HTTP 400") && e.contains("does not support audio"),
        "{e}"
    );
}

#[tokio::test]
async fn mp4_metadata_is_read_without_ffprobe() {
    let ws = Ws::new();
    mp4_file(&ws, "demo.mp4");
    let tool = media(MediaConfig::default());
    let out = ws.call(&tool, json!({"path": "demo.mp4"})).await.unwrap();
    let t = out.content;
    assert!(
        t.starts_with("Video demo.mp4:\ncontainer: MP4/QuickTime (brand isom)"),
        "{t}"
    );
    assert!(t.contains("duration: 2.00 s"), "{t}");
    assert!(t.contains("track 1: video avc1, 320×240, 25.00 fps"), "{t}");
}

#[tokio::test]
async fn ffprobe_is_used_when_installed() {
    let ws = Ws::new();
    mp4_file(&ws, "demo.mp4");
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("ffprobe");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ -f \"$7\" ] || exit 1\necho '{\"format\":{\"format_name\":\"mov,mp4\",\"duration\":\"2.0\"},\"streams\":[{\"index\":0,\"codec_type\":\"video\",\"codec_name\":\"h264\",\"width\":320,\"height\":240,\"avg_frame_rate\":\"25/1\"}]}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tool = media(MediaConfig {
        ffprobe: Some(fake),
        ..MediaConfig::default()
    });
    let out = ws.call(&tool, json!({"path": "demo.mp4"})).await.unwrap();
    assert_eq!(
        out.content,
        "Video demo.mp4:\ncontainer: mov,mp4\nduration: 2.00 s\nstream 0: video h264, 320×240, 25.00 fps"
    );
}

#[tokio::test]
async fn other_files_and_bad_paths_fail_clearly() {
    let ws = Ws::new();
    ws.write("notes.md", "# just text");
    std::fs::write(ws.root.join("a.zip"), b"PK\x03\x04rest-of-zip").unwrap();
    let tool = media(MediaConfig::default());
    let e = ws
        .call(&tool, json!({"path": "notes.md"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an image, audio or video file"), "{e}");
    let e = ws
        .call(&tool, json!({"path": "a.zip"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("(it is application/zip)"), "{e}");
    let e = ws
        .call(&tool, json!({"path": "gone.mp3"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e:?}");
    let e = ws
        .call(&tool, json!({"path": "."}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a file"), "{e}");
}

#[tokio::test]
async fn ffprobe_runs_with_an_empty_environment() {
    let ws = Ws::new();
    mp4_file(&ws, "demo.mp4");
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("ffprobe");
    let dump = bin.path().join("env.txt");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nenv > {}\necho '{{\"format\":{{\"format_name\":\"mp4\"}},\"streams\":[]}}'\n",
            dump.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tool = media(MediaConfig {
        ffprobe: Some(fake),
        ..MediaConfig::default()
    });
    ws.call(&tool, json!({"path": "demo.mp4"})).await.unwrap();
    let env = std::fs::read_to_string(&dump).unwrap();
    // Cairn's own environment (HOME, keys, tokens) never reaches the helper.
    assert!(std::env::var_os("HOME").is_some());
    for line in env.lines() {
        let name = line.split('=').next().unwrap_or_default();
        assert!(
            ["PATH", "LC_ALL", "PWD", "SHLVL", "_"].contains(&name),
            "ffprobe saw {name}: {env}"
        );
    }
}
