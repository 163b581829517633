//! Cairn desktop app: a thin Tauri shell over the Cairn engine.
//!
//! For now the app exposes [`commands::app_info`] and [`commands::ping_events`], which streams
//! a short, real sequence of protocol [`cairn_protocol::Event`]s through a Tauri channel so the
//! UI's event path is exercised end to end before the engine is wired in.

pub mod commands;

/// Registers Cairn's commands on a Tauri builder (shared by [`run`] and the tests).
pub fn register<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.invoke_handler(tauri::generate_handler![
        commands::app_info,
        commands::ping_events
    ])
}

/// Starts the desktop app and blocks until its last window closes.
pub fn run() {
    let app = register(tauri::Builder::default()).build(tauri::generate_context!());
    match app {
        Ok(app) => app.run(|_handle, _event| {}),
        Err(error) => {
            eprintln!("cairn: cannot start the desktop app: {error}");
            std::process::exit(1);
        }
    }
}
