//! Cairn desktop app.
