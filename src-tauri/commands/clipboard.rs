//! The system clipboard for the terminal panel's copy and paste (Ctrl+Shift+C / Ctrl+Shift+V
//! and its context menu). Cairn's own commands, so the capability grants no clipboard plugin;
//! on Linux they use the GTK clipboard already in the tree, on the GTK main thread.

use crate::error::{ErrorCode, IpcError, IpcResult};
use tauri::{AppHandle, Runtime};

/// The clipboard cannot be reached, for this reason.
fn unavailable(message: impl Into<String>) -> IpcError {
    IpcError::new(ErrorCode::Unavailable, message)
}

/// Largest text copied or pasted (a bigger paste into a shell is almost surely a mistake).
pub const MAX_CLIPBOARD_BYTES: usize = 1 << 20;

/// Longest wait for the clipboard's owner to hand over its text.
#[cfg(target_os = "linux")]
const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn check_size(text: &str) -> IpcResult<()> {
    if text.len() > MAX_CLIPBOARD_BYTES {
        return Err(IpcError::invalid(format!(
            "The text is too large for the clipboard ({} bytes; at most {MAX_CLIPBOARD_BYTES}).",
            text.len()
        )));
    }
    Ok(())
}

/// Puts `text` on the system clipboard.
#[tauri::command]
pub async fn clipboard_write<R: Runtime>(app: AppHandle<R>, text: String) -> IpcResult<()> {
    check_size(&text)?;
    write(app, text).await
}

/// The system clipboard's text (empty when it holds none).
#[tauri::command]
pub async fn clipboard_read<R: Runtime>(app: AppHandle<R>) -> IpcResult<String> {
    let text = read(app).await?;
    check_size(&text)?;
    Ok(text)
}

#[cfg(target_os = "linux")]
async fn write<R: Runtime>(app: AppHandle<R>, text: String) -> IpcResult<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.run_on_main_thread(move || {
        let clipboard = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD);
        clipboard.set_text(&text);
        let _ = tx.send(());
    })
    .map_err(|e| unavailable(format!("The clipboard is not available: {e}")))?;
    rx.await
        .map_err(|_| unavailable("The clipboard is not available."))
}

#[cfg(target_os = "linux")]
async fn read<R: Runtime>(app: AppHandle<R>) -> IpcResult<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.run_on_main_thread(move || {
        let clipboard = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD);
        clipboard.request_text(move |_, text| {
            let _ = tx.send(text.map(str::to_string));
        });
    })
    .map_err(|e| unavailable(format!("The clipboard is not available: {e}")))?;
    match tokio::time::timeout(READ_TIMEOUT, rx).await {
        Ok(Ok(text)) => Ok(text.unwrap_or_default()),
        Ok(Err(_)) => Err(IpcError::invalid("The clipboard is not available.")),
        Err(_) => Err(IpcError::invalid(
            "The clipboard's owner did not answer in time.",
        )),
    }
}

#[cfg(not(target_os = "linux"))]
async fn write<R: Runtime>(_app: AppHandle<R>, _text: String) -> IpcResult<()> {
    Err(IpcError::invalid(
        "Cairn's clipboard bridge is Linux-only; the page uses the browser clipboard.",
    ))
}

#[cfg(not(target_os = "linux"))]
async fn read<R: Runtime>(_app: AppHandle<R>) -> IpcResult<String> {
    Err(IpcError::invalid(
        "Cairn's clipboard bridge is Linux-only; the page uses the browser clipboard.",
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn oversized_text_is_refused() {
        assert!(check_size("hello").is_ok());
        let big = "x".repeat(MAX_CLIPBOARD_BYTES + 1);
        assert!(check_size(&big).unwrap_err().message.contains("too large"));
    }
}
