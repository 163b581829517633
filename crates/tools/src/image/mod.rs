//! Images: loading, size-capping and resizing for vision models; `read_image` (the image as an
//! image part of the tool result, for vision session models) and `describe_image` (a text
//! description through the configured vision model, for text-only session models).

mod describe;
mod load;
mod read;

pub(crate) use describe::ask_vision;
pub use describe::{describe_image_tool, DescribeImage, VisionConfig};
pub use load::{prepare_image, PreparedImage, MAX_EDGE, MAX_FILE_BYTES, MAX_SEND_BYTES};
pub use read::ReadImage;
