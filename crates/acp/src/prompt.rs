//! A `session/prompt`'s content blocks as the runtime's [`Prompt`]: text as typed, links to
//! files of the workspace as `@path` mentions, embedded resources as quoted context, images
//! as attachments.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use cairn_runtime::attach::ImageUpload;
use cairn_runtime::host::Prompt;

/// The prompt the blocks make in `workspace`; an error message for what cannot be sent.
pub(crate) fn prompt_of(workspace: &Path, blocks: Vec<ContentBlock>) -> Result<Prompt, String> {
    let mut text = String::new();
    let mut images = Vec::new();
    let mut push = |s: &str| {
        if !text.is_empty() && !text.ends_with('\n') && !s.starts_with('\n') {
            text.push(' ');
        }
        text.push_str(s);
    };
    for block in blocks {
        match block {
            ContentBlock::Text(t) => push(&t.text),
            ContentBlock::ResourceLink(link) => match mention(workspace, &link.uri) {
                Some(rel) => push(&format!("@{rel}")),
                None => push(&format!("[{}]({})", link.name, link.uri)),
            },
            ContentBlock::Resource(r) => match r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    let name = mention(workspace, &t.uri).unwrap_or(t.uri.clone());
                    push(&format!(
                        "\n\n<context source=\"{name}\">\n{}\n</context>\n",
                        t.text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    return Err(format!("binary resource `{}` cannot be sent", b.uri));
                }
                _ => return Err("unsupported embedded resource".into()),
            },
            ContentBlock::Image(img) => {
                let ext = img
                    .mime_type
                    .rsplit('/')
                    .next()
                    .unwrap_or("png")
                    .to_string();
                images.push(ImageUpload {
                    name: format!("image.{ext}"),
                    data_url: format!("data:{};base64,{}", img.mime_type, img.data),
                    mime_type: img.mime_type,
                });
            }
            ContentBlock::Audio(_) => return Err("audio prompts are not supported".into()),
            _ => return Err("unsupported content block".into()),
        }
    }
    if text.trim().is_empty() && images.is_empty() {
        return Err("the prompt is empty: say what the agent should do".into());
    }
    let prompt = Prompt::text(text);
    if images.is_empty() {
        Ok(prompt)
    } else {
        prompt.with_images(images).map_err(|e| e.to_string())
    }
}

/// The workspace-relative path of a `file://` URI inside `workspace`.
fn mention(workspace: &Path, uri: &str) -> Option<String> {
    let path = uri.strip_prefix("file://")?;
    let path = percent_decode(path)?;
    let rel = Path::new(&path).strip_prefix(workspace).ok()?;
    let rel = rel.to_str()?;
    (!rel.is_empty() && !rel.contains(char::is_whitespace)).then(|| rel.to_string())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn file_links_inside_the_workspace_become_mentions() {
        let ws = Path::new("/w");
        assert_eq!(mention(ws, "file:///w/src/a%20b.rs"), None);
        assert_eq!(mention(ws, "file:///w/src/a.rs").unwrap(), "src/a.rs");
        assert_eq!(mention(ws, "file:///elsewhere/a.rs"), None);
        assert_eq!(mention(ws, "https://x/a.rs"), None);
    }
}
