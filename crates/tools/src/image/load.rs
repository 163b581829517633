//! Reads an image file for a model: png, jpeg, gif or webp; resized (and re-encoded) when it is
//! larger than models accept; base64 for the request.

use std::io::Cursor;
use std::path::Path;

use base64::Engine as _;
use cairn_engine::ToolError;
use image::{GenericImageView, ImageFormat};

/// Largest image file read.
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// Longest edge sent to a model (larger images are scaled down).
pub const MAX_EDGE: u32 = 1568;
/// Largest encoded image sent to a model (larger ones are re-encoded smaller).
pub const MAX_SEND_BYTES: usize = 4 * 1024 * 1024;

/// An image ready for a model request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    /// `image/png`, `image/jpeg`, ...
    pub mime_type: String,
    /// The encoded image, base64.
    pub data_base64: String,
    /// Size of the original.
    pub original: (u32, u32),
    /// Size sent.
    pub sent: (u32, u32),
    /// Encoded bytes sent.
    pub sent_bytes: usize,
}

impl PreparedImage {
    /// Whether the image was scaled down or re-encoded.
    pub fn resized(&self) -> bool {
        self.original != self.sent
    }
}

fn mime(format: ImageFormat) -> Option<&'static str> {
    match format {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Gif => Some("image/gif"),
        ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

/// Loads `path` (`shown` names it in errors) and prepares it for a model.
pub fn prepare_image(path: &Path, shown: &str) -> Result<PreparedImage, ToolError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NotFound(format!("{shown} (no such file)")))
        }
        Err(e) => return Err(ToolError::io(format!("cannot read {shown}"), e)),
    };
    if !meta.is_file() {
        return Err(ToolError::Failed(format!("`{shown}` is not a file")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::Failed(format!(
            "`{shown}` is {} MB; images up to {} MB can be read",
            meta.len() / (1024 * 1024),
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
    let format = image::guess_format(&bytes).ok();
    let Some(mime_type) = format.and_then(mime) else {
        return Err(ToolError::Failed(format!(
            "`{shown}` is not a PNG, JPEG, GIF or WebP image"
        )));
    };
    let format = format.ok_or_else(|| ToolError::Failed(format!("`{shown}`: unknown format")))?;
    let img = image::load_from_memory_with_format(&bytes, format).map_err(|e| {
        ToolError::Failed(format!("`{shown}` could not be decoded as an image: {e}"))
    })?;
    let (w, h) = img.dimensions();
    if w <= MAX_EDGE && h <= MAX_EDGE && bytes.len() <= MAX_SEND_BYTES {
        return Ok(PreparedImage {
            mime_type: mime_type.into(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            original: (w, h),
            sent: (w, h),
            sent_bytes: bytes.len(),
        });
    }
    let scale = (MAX_EDGE as f64 / w.max(h) as f64).min(1.0);
    let (nw, nh) = (
        ((w as f64 * scale).round() as u32).max(1),
        ((h as f64 * scale).round() as u32).max(1),
    );
    let small = img.resize(nw, nh, image::imageops::FilterType::Triangle);
    // Opaque images as JPEG (small), the others as PNG (keeps transparency).
    let (fmt, out_mime) = if small.color().has_alpha() {
        (ImageFormat::Png, "image/png")
    } else {
        (ImageFormat::Jpeg, "image/jpeg")
    };
    let small = if fmt == ImageFormat::Jpeg {
        image::DynamicImage::ImageRgb8(small.to_rgb8())
    } else {
        small
    };
    let mut out = Cursor::new(Vec::new());
    small
        .write_to(&mut out, fmt)
        .map_err(|e| ToolError::Failed(format!("cannot re-encode `{shown}`: {e}")))?;
    let out = out.into_inner();
    if out.len() > MAX_SEND_BYTES {
        return Err(ToolError::Failed(format!(
            "`{shown}` is still {} bytes after scaling to {nw}×{nh}; too large to send",
            out.len()
        )));
    }
    Ok(PreparedImage {
        mime_type: out_mime.into(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(&out),
        original: (w, h),
        sent: small.dimensions(),
        sent_bytes: out.len(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn png(dir: &Path, name: &str, w: u32, h: u32) -> std::path::PathBuf {
        let p = dir.join(name);
        image::RgbImage::from_pixel(w, h, image::Rgb([200, 10, 10]))
            .save_with_format(&p, ImageFormat::Png)
            .unwrap();
        p
    }

    #[test]
    fn small_images_pass_through() {
        let d = tempfile::tempdir().unwrap();
        let p = png(d.path(), "a.png", 40, 20);
        let img = prepare_image(&p, "a.png").unwrap();
        assert_eq!(img.mime_type, "image/png");
        assert_eq!((img.original, img.sent), ((40, 20), (40, 20)));
        assert!(!img.resized());
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&img.data_base64)
            .unwrap();
        assert_eq!(raw, std::fs::read(&p).unwrap());
    }

    #[test]
    fn large_images_are_scaled_down() {
        let d = tempfile::tempdir().unwrap();
        let p = png(d.path(), "big.png", 2000, 400);
        let img = prepare_image(&p, "big.png").unwrap();
        assert_eq!(img.sent, (MAX_EDGE, 314));
        assert_eq!(img.mime_type, "image/jpeg");
        assert!(img.resized());
    }

    #[test]
    fn non_images_and_missing_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.txt");
        std::fs::write(&p, "hello").unwrap();
        let e = prepare_image(&p, "t.txt").unwrap_err().to_string();
        assert!(e.contains("not a PNG"), "{e}");
        let e = prepare_image(&d.path().join("nope.png"), "nope.png").unwrap_err();
        assert!(matches!(e, ToolError::NotFound(_)), "{e}");
    }
}
