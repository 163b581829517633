//! Cairn desktop app entry point.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // `cairn-app __net-bridge …` inside a sandbox runs the network bridge and exits;
    // otherwise this executable is the bridge of the sandboxes the app starts.
    cairn_runtime::netproxy::bridge::main_if_bridge();
    // Before any thread starts: API keys leave the environment block (commands and
    // `/proc/<pid>/environ` never see them); the process becomes non-dumpable.
    let sealed = cairn_runtime::secret_env::seal_process();
    cairn_app::bench::mark_process_start();
    cairn_app::prefer_software_rendering();
    cairn_app::memory::tune_web_process_gc();
    cairn_app::apply_prompt_language();
    for problem in &sealed.problems {
        eprintln!("cairn: protecting secrets: {problem}");
    }
    cairn_app::run();
}
