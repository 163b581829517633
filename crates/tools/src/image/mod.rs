//! Images: loading, size-capping and resizing for vision models, and `describe_image` (a text
//! description through the configured vision model, for text-only session models).
//!
//! `read_image` (an image part handed back to a vision model) needs tool results that can
//! carry images; the engine's `ToolOutput` is text-only today, so [`prepare_image`] is the
//! ready half of it.

mod describe;
mod load;

pub use describe::{describe_image_tool, DescribeImage, VisionConfig};
pub use load::{prepare_image, PreparedImage, MAX_EDGE, MAX_FILE_BYTES, MAX_SEND_BYTES};
