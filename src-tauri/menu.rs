//! The app menu: File (New Window, Close Window, Quit) and Edit (Undo, Redo, Cut, Copy,
//! Paste, Select All). GTK has no native Close Window, Quit, Undo or Redo items (muda shows
//! them greyed out), so those are Cairn's own items acting on the focused window.

use tauri::menu::{MenuBuilder, MenuEvent, MenuItemBuilder, PredefinedMenuItem, SubmenuBuilder};
use tauri::{AppHandle, Manager, Runtime};

/// Id of File → New Window.
pub const NEW_WINDOW: &str = "new-window";
/// Id of File → Close Window.
pub const CLOSE_WINDOW: &str = "close-window";
/// Id of File → Quit.
pub const QUIT: &str = "quit";
/// Id of Edit → Undo.
pub const UNDO: &str = "undo";
/// Id of Edit → Redo.
pub const REDO: &str = "redo";

/// Installs the app menu.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let new_window = MenuItemBuilder::with_id(NEW_WINDOW, "New Window")
        .accelerator("CmdOrCtrl+Shift+N")
        .build(app)?;
    // Ctrl+Shift+W, as terminals do: Ctrl+W deletes a word in the terminal panel.
    let close = MenuItemBuilder::with_id(CLOSE_WINDOW, "Close Window")
        .accelerator("CmdOrCtrl+Shift+W")
        .build(app)?;
    let quit = MenuItemBuilder::with_id(QUIT, "Quit")
        .accelerator("CmdOrCtrl+Q")
        .build(app)?;
    let file = SubmenuBuilder::new(app, "File")
        .item(&new_window)
        .item(&close)
        .separator()
        .item(&quit)
        .build()?;
    // Undo and Redo carry no accelerator: the page's own Ctrl+Z / Ctrl+Shift+Z must keep
    // reaching text fields and the terminal panel.
    let undo = MenuItemBuilder::with_id(UNDO, "Undo").build(app)?;
    let redo = MenuItemBuilder::with_id(REDO, "Redo").build(app)?;
    let edit = SubmenuBuilder::new(app, "Edit")
        .item(&undo)
        .item(&redo)
        .separator()
        .item(&PredefinedMenuItem::cut(app, None)?)
        .item(&PredefinedMenuItem::copy(app, None)?)
        .item(&PredefinedMenuItem::paste(app, None)?)
        .item(&PredefinedMenuItem::select_all(app, None)?)
        .build()?;
    let menu = MenuBuilder::new(app).item(&file).item(&edit).build()?;
    app.set_menu(menu)?;
    Ok(())
}

/// The window the user is working in (the focused one, else the main window).
fn focused<R: Runtime>(app: &AppHandle<R>) -> Option<tauri::WebviewWindow<R>> {
    let windows = app.webview_windows();
    windows
        .values()
        .find(|w| w.is_focused().unwrap_or(false))
        .cloned()
        .or_else(|| windows.get(crate::windows::MAIN).cloned())
        .or_else(|| windows.values().next().cloned())
}

/// Handles a menu choice.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    let id = event.id().as_ref();
    match id {
        NEW_WINDOW => {
            if let Err(e) = crate::windows::open_window(app, None) {
                tracing::warn!(error = %e, "cannot open a window");
            }
        }
        // Closing goes through the window's close request: its session is stopped and saved.
        CLOSE_WINDOW => match focused(app) {
            Some(w) => {
                if let Err(e) = w.close() {
                    tracing::warn!(error = %e, "cannot close the window");
                }
            }
            None => tracing::warn!("Close Window: no window"),
        },
        // Asked first while sessions run; exiting saves every open session (see `run`).
        QUIT => crate::quit(app),
        UNDO | REDO => {
            let script = format!("document.execCommand({:?})", id);
            if let Some(w) = focused(app) {
                if let Err(e) = w.eval(&script) {
                    tracing::warn!(error = %e, "cannot {id}");
                }
            }
        }
        _ => {}
    }
}
