//! The app menu: File → New Window (Ctrl+Shift+N) and Close Window.

use tauri::menu::{MenuBuilder, MenuEvent, MenuItemBuilder, PredefinedMenuItem, SubmenuBuilder};
use tauri::{AppHandle, Runtime};

/// Id of File → New Window.
pub const NEW_WINDOW: &str = "new-window";

/// Installs the app menu.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let new_window = MenuItemBuilder::with_id(NEW_WINDOW, "New Window")
        .accelerator("CmdOrCtrl+Shift+N")
        .build(app)?;
    let file = SubmenuBuilder::new(app, "File")
        .item(&new_window)
        .item(&PredefinedMenuItem::close_window(
            app,
            Some("Close Window"),
        )?)
        .build()?;
    let menu = MenuBuilder::new(app).item(&file).build()?;
    app.set_menu(menu)?;
    Ok(())
}

/// Handles a menu choice.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    if event.id() == NEW_WINDOW {
        if let Err(e) = crate::windows::open_window(app, None) {
            tracing::warn!(error = %e, "cannot open a window");
        }
    }
}
