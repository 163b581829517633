//! Cairn desktop app entry point.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    cairn_app::bench::mark_process_start();
    cairn_app::prefer_software_rendering();
    cairn_app::apply_prompt_language();
    cairn_app::run();
}
