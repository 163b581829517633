//! Video metadata: `ffprobe` (FFmpeg) when it is installed, else the MP4/QuickTime header read
//! with the `mp4` crate; other containers without ffprobe get a clear "cannot read" answer.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_engine::{ToolContext, ToolError};
use serde_json::Value;

/// Longest ffprobe run.
const FFPROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Where external helpers are looked up: system folders only, never `PATH` (which may hold
/// `~/.cargo/bin`, `~/.local/bin` or a workspace folder, where a sandboxed command or a
/// repository can plant a program of that name).
pub const SYSTEM_BIN_DIRS: &[&str] = &["/usr/bin", "/usr/local/bin", "/bin"];

/// The `ffprobe` program: explicit (`CAIRN_FFPROBE`, the user's choice), else the one in
/// [`SYSTEM_BIN_DIRS`].
pub fn find_ffprobe(explicit: Option<&Path>) -> Option<PathBuf> {
    match explicit {
        Some(p) => Some(p.to_path_buf()).filter(|p| p.is_file()),
        None => SYSTEM_BIN_DIRS
            .iter()
            .map(|d| Path::new(d).join("ffprobe"))
            .find(|p| p.is_file()),
    }
}

/// Metadata of the video at `path` as readable lines.
pub async fn metadata(
    path: &Path,
    shown: &str,
    ffprobe: Option<&Path>,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    if let Some(program) = ffprobe {
        return run_ffprobe(program, path, shown, ctx).await;
    }
    let p = path.to_path_buf();
    let name = shown.to_string();
    tokio::task::spawn_blocking(move || mp4_metadata(&p, &name))
        .await
        .map_err(|e| ToolError::Failed(format!("media task failed: {e}")))?
}

async fn run_ffprobe(
    program: &Path,
    path: &Path,
    shown: &str,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    // Inside the session's sandbox when there is one, with an empty environment: a media
    // file is hostile input, and the helper needs none of Cairn's variables (API keys).
    let mut argv = vec![program.display().to_string()];
    argv.extend(
        [
            "-v",
            "error",
            "-print_format",
            "json",
            "-show_format",
            "-show_streams",
        ]
        .map(String::from),
    );
    argv.push(path.display().to_string());
    let (mut cmd, wrapped) = ctx.host.helper_command(argv)?;
    let _guard = wrapped.guard;
    let out = tokio::select! {
        r = tokio::time::timeout(FFPROBE_TIMEOUT, cmd.output()) => match r {
            Ok(Ok(o)) => o,
            Ok(Err(e)) => return Err(ToolError::io("cannot run ffprobe", e)),
            Err(_) => return Err(ToolError::Timeout { ms: FFPROBE_TIMEOUT.as_millis() as u64, detail: " (ffprobe)".into() }),
        },
        _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
    };
    if !out.status.success() {
        return Err(ToolError::Failed(format!(
            "ffprobe could not read {shown}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| ToolError::Failed(format!("ffprobe printed no JSON for {shown}: {e}")))?;
    Ok(format_ffprobe(&v))
}

/// Readable lines from ffprobe's `-show_format -show_streams` JSON.
pub fn format_ffprobe(v: &Value) -> String {
    let f = &v["format"];
    let s = |x: &Value| x.as_str().map(str::to_string);
    let mut lines = vec![format!(
        "container: {}",
        s(&f["format_long_name"])
            .or_else(|| s(&f["format_name"]))
            .unwrap_or_else(|| "unknown".into())
    )];
    if let Some(d) = s(&f["duration"]).and_then(|d| d.parse::<f64>().ok()) {
        lines.push(format!("duration: {d:.2} s"));
    }
    if let Some(b) = s(&f["bit_rate"]).and_then(|b| b.parse::<u64>().ok()) {
        lines.push(format!("bit rate: {} kb/s", b / 1000));
    }
    for st in v["streams"].as_array().into_iter().flatten() {
        let kind = st["codec_type"].as_str().unwrap_or("data");
        let codec = st["codec_name"].as_str().unwrap_or("?");
        let mut line = format!("stream {}: {kind} {codec}", st["index"]);
        if let (Some(w), Some(h)) = (st["width"].as_u64(), st["height"].as_u64()) {
            line.push_str(&format!(", {w}×{h}"));
        }
        if let Some(fps) = st["avg_frame_rate"].as_str().and_then(rate) {
            line.push_str(&format!(", {fps:.2} fps"));
        }
        if let Some(rate) = s(&st["sample_rate"]) {
            line.push_str(&format!(", {rate} Hz"));
        }
        if let Some(ch) = st["channels"].as_u64() {
            line.push_str(&format!(", {ch} channels"));
        }
        lines.push(line);
    }
    lines.join("\n")
}

fn rate(r: &str) -> Option<f64> {
    let (n, d) = r.split_once('/')?;
    let (n, d) = (n.parse::<f64>().ok()?, d.parse::<f64>().ok()?);
    (d > 0.0 && n > 0.0).then(|| n / d)
}

/// Metadata of an MP4 / QuickTime file from its header.
pub fn mp4_metadata(path: &Path, shown: &str) -> Result<String, ToolError> {
    let file =
        std::fs::File::open(path).map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
    let size = file
        .metadata()
        .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?
        .len();
    let reader = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), size).map_err(|e| {
        ToolError::Failed(format!(
            "{shown} is not a readable MP4/QuickTime file ({e}); install ffprobe (FFmpeg) to \
             read other video containers"
        ))
    })?;
    let mut lines = vec![
        format!("container: MP4/QuickTime (brand {})", reader.major_brand()),
        format!("duration: {:.2} s", reader.duration().as_secs_f64()),
    ];
    let mut tracks: Vec<_> = reader.tracks().iter().collect();
    tracks.sort_by_key(|(id, _)| **id);
    for (id, t) in tracks {
        let kind = match t.track_type() {
            Ok(mp4::TrackType::Video) => "video",
            Ok(mp4::TrackType::Audio) => "audio",
            Ok(mp4::TrackType::Subtitle) => "subtitle",
            Err(_) => "other",
        };
        let codec = t
            .box_type()
            .map(|b| b.to_string())
            .unwrap_or_else(|_| "?".into());
        let mut line = format!("track {id}: {kind} {codec}");
        if kind == "video" {
            line.push_str(&format!(", {}×{}", t.width(), t.height()));
            let fps = t.frame_rate();
            if fps.is_finite() && fps > 0.0 {
                line.push_str(&format!(", {fps:.2} fps"));
            }
        }
        line.push_str(&format!(", {:.2} s", t.duration().as_secs_f64()));
        lines.push(line);
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn ffprobe_json_becomes_readable_lines() {
        let v = json!({
            "format": {"format_long_name": "QuickTime / MOV", "duration": "12.500000", "bit_rate": "800000"},
            "streams": [
                {"index": 0, "codec_type": "video", "codec_name": "h264", "width": 1280, "height": 720, "avg_frame_rate": "30000/1001"},
                {"index": 1, "codec_type": "audio", "codec_name": "aac", "sample_rate": "48000", "channels": 2, "avg_frame_rate": "0/0"}
            ]
        });
        let t = format_ffprobe(&v);
        assert_eq!(
            t,
            "container: QuickTime / MOV\nduration: 12.50 s\nbit rate: 800 kb/s\n\
             stream 0: video h264, 1280×720, 29.97 fps\nstream 1: audio aac, 48000 Hz, 2 channels"
        );
    }

    #[test]
    fn non_mp4_without_ffprobe_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("clip.mkv");
        std::fs::write(&p, b"\x1a\x45\xdf\xa3 not an mp4").unwrap();
        let e = mp4_metadata(&p, "clip.mkv").unwrap_err().to_string();
        assert!(
            e.contains("not a readable MP4") && e.contains("ffprobe"),
            "{e}"
        );
    }
}
