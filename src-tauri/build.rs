//! Build script: generates Tauri's context and the permission set of Cairn's own commands.

include!("command_names.rs");

fn main() {
    // Declaring the app's commands makes each one need an explicit grant in `capabilities/`.
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        // A build script reports failure by panicking; print the cause first.
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}
