//! A workspace as a face browses it: folder listings and the file index (files.rs), a
//! live watch of the shown folders (watch.rs), and diff previews of edits waiting for
//! approval (preview.rs), and the repository it belongs to (repository.rs).

pub mod files;
pub mod preview;
pub mod repository;
pub mod types;
pub mod watch;
