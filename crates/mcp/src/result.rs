//! Turns an MCP `CallToolResult` into the text a tool result carries: text as is, images and
//! audio described (`[image: image/png, 1234 bytes]`), resources inlined or described.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The text for the model, in content order; structured content when there is nothing else.
pub fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.is_empty() {
        if let Some(s) = &result.structured_content {
            parts.push(s.to_string());
        }
    }
    parts.join("\n")
}

/// Largest image (decoded bytes) handed to the model as an image; a larger one stays the text
/// placeholder (as `read_image` refuses what it cannot scale under the providers' limits).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The image blocks of `result` the model can be shown as images: PNG, JPEG, GIF or WebP, at
/// most [`MAX_IMAGE_BYTES`] each, valid base64; the rest stay text placeholders only.
pub fn image_parts(result: &CallToolResult) -> Vec<cairn_protocol::ContentPart> {
    use base64::Engine as _;
    const SHOWN: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(i) if SHOWN.contains(&i.mime_type.as_str()) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&i.data)
                    .ok()?;
                (!bytes.is_empty() && bytes.len() <= MAX_IMAGE_BYTES).then(|| {
                    cairn_protocol::ContentPart::Image {
                        mime_type: i.mime_type.clone(),
                        data: i.data.clone(),
                    }
                })
            }
            _ => None,
        })
        .collect()
}

/// Whether the server marked the result as an error.
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error.unwrap_or(false)
}

pub(crate) fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => {
            format!("[image: {}, {} bytes]", i.mime_type, decoded_len(&i.data))
        }
        ContentBlock::Audio(a) => {
            format!("[audio: {}, {} bytes]", a.mime_type, decoded_len(&a.data))
        }
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => {
                format!(
                    "[resource: {uri}{}]\n{text}",
                    mime_suffix(mime_type.as_deref())
                )
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource: {uri}{}, {} bytes]",
                mime_suffix(mime_type.as_deref()),
                decoded_len(blob)
            ),
            other => format!(
                "[resource: {}]",
                serde_json::to_string(other).unwrap_or_default()
            ),
        },
        ContentBlock::ResourceLink(l) => {
            let mut s = format!("[resource link: {}", l.uri);
            if !l.name.is_empty() && l.name != l.uri {
                s.push_str(&format!(" ({})", l.name));
            }
            s.push_str(&mime_suffix(l.mime_type.as_deref()));
            if let Some(d) = l.description.as_deref().filter(|d| !d.is_empty()) {
                s.push_str(&format!(" — {d}"));
            }
            s.push_str("] (read it through this server's read_resource tool)");
            s
        }
        other => serde_json::to_string(other).unwrap_or_else(|_| "[unsupported content]".into()),
    }
}

fn mime_suffix(m: Option<&str>) -> String {
    m.map(|m| format!(", {m}")).unwrap_or_default()
}

/// Bytes a base64 text decodes to (padding and whitespace ignored), without decoding it.
pub fn decoded_len(b64: &str) -> usize {
    let n = b64
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    n * 3 / 4
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use base64::Engine;
    use rmcp::model::Resource;

    use super::*;

    #[test]
    fn only_shown_kinds_of_sound_images_become_image_parts() {
        use base64::Engine as _;
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
        let r = CallToolResult::success(vec![
            ContentBlock::text("t"),
            ContentBlock::image(b64(10), "image/png"),
            ContentBlock::image(b64(10), "image/svg+xml"),
            ContentBlock::image("not base64!".to_string(), "image/jpeg"),
            ContentBlock::image(b64(MAX_IMAGE_BYTES + 1), "image/webp"),
        ]);
        let parts = image_parts(&r);
        assert_eq!(parts.len(), 1, "{parts:?}");
        assert!(matches!(
            &parts[0],
            cairn_protocol::ContentPart::Image { mime_type, .. } if mime_type == "image/png"
        ));
        // Every image still has its placeholder in the text.
        assert_eq!(result_text(&r).matches("[image: ").count(), 4);
    }

    #[test]
    fn maps_every_content_kind() {
        let png = base64::engine::general_purpose::STANDARD.encode([0u8; 10]);
        let mut link = Resource::new("file:///a.txt", "a.txt");
        link.mime_type = Some("text/plain".into());
        let r = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image(png.clone(), "image/png"),
            ContentBlock::audio(png, "audio/wav"),
            ContentBlock::embedded_text("mem://note", "inline text"),
            ContentBlock::resource(
                ResourceContents::blob("AAAA", "mem://bin")
                    .with_mime_type("application/octet-stream"),
            ),
            ContentBlock::resource_link(link),
        ]);
        let t = result_text(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "hello");
        assert_eq!(lines[1], "[image: image/png, 10 bytes]");
        assert_eq!(lines[2], "[audio: audio/wav, 10 bytes]");
        assert!(lines[3].starts_with("[resource: mem://note"), "{t}");
        assert_eq!(lines[4], "inline text");
        assert_eq!(
            lines[5],
            "[resource: mem://bin, application/octet-stream, 3 bytes]"
        );
        assert_eq!(
            lines[6],
            "[resource link: file:///a.txt (a.txt), text/plain] (read it through this server's \
             read_resource tool)"
        );
        assert!(!is_error(&r));
    }

    #[test]
    fn structured_only_and_error_flag() {
        let mut r = CallToolResult::error(vec![]);
        r.structured_content = Some(serde_json::json!({"a": 1}));
        assert_eq!(result_text(&r), r#"{"a":1}"#);
        assert!(is_error(&r));
    }
}
