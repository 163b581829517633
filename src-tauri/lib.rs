//! Cairn desktop app: a thin Tauri shell over the Cairn engine.
//!
//! Each window owns one workspace and one engine session ([`runtime::SessionRuntime`]); the
//! page drives it through typed commands ([`commands`]) and receives each turn's events
//! over one `tauri::ipc::Channel`, text deltas batched ([`forward`]). Approvals go to a
//! native dialog and the in-chat card at once ([`approver`]); API keys live only in the OS
//! keyring ([`keys`]). Closing a window interrupts its turn, denies what is pending and
//! saves its session.

pub mod attention;
pub mod commands;
pub mod dialogs;
pub mod egl;
pub mod error;
pub mod logging;
pub mod memory;
pub mod menu;
pub mod notifications;
pub mod runtime;
pub mod state;
pub mod terminals;
pub mod types;
pub mod windows;

pub use cairn_runtime::workspace::{files, preview, watch};
pub use cairn_runtime::{bench, face_settings as settings, keys, mcp_view as mcp, timeline};

/// The one list of command names (also read by the build script).
pub mod command_names {
    include!("command_names.rs");
}

use tauri::{Manager, Runtime, WindowEvent};

use crate::dialogs::TauriDialogs;
use crate::state::{AppConfig, AppState};

/// Registers Cairn's plugins, state, commands and window handling on a builder (shared by
/// [`run`] and the tests).
pub fn register<R: Runtime>(builder: tauri::Builder<R>, config: AppConfig) -> tauri::Builder<R> {
    let dialogs = TauriDialogs::<R>::new();
    let state = AppState::new(config, dialogs.clone());
    builder
        .plugin(tauri_plugin_dialog::init())
        .manage(state)
        .setup(move |app| {
            egl::restore_gl_environment();
            dialogs.attach(app.handle().clone());
            let handle = app.handle().clone();
            app.state::<AppState>()
                .attention
                .on_click(move |id| commands::board::request_open(&handle, &id));
            if let Err(e) = menu::install(app.handle()) {
                tracing::warn!(error = %e, "no app menu: File → New Window is only a button");
            }
            windows::restore(app.handle());
            Ok(())
        })
        .on_menu_event(menu::on_event)
        .on_window_event(on_window_event)
        .invoke_handler(tauri::generate_handler![
            commands::app::app_info,
            commands::app::bootstrap,
            commands::app::bench_mark,
            commands::workspace::pick_folder,
            commands::workspace::open_workspace,
            commands::workspace::close_workspace,
            commands::workspace::forget_workspace,
            commands::workspace::list_sessions,
            commands::session::new_session,
            commands::session::open_session,
            commands::session::session_status,
            commands::session::session_history,
            commands::session::session_history_from,
            commands::session::session_history_at_turn,
            commands::session::search_session,
            commands::session::rename_session,
            commands::session::delete_session,
            commands::board::watch_board,
            commands::turn::run_turn,
            commands::turn::retry_turn,
            commands::turn::resume_turn,
            commands::turn::interrupt,
            commands::turn::queue_steering,
            commands::turn::remove_steering,
            commands::turn::session_budget,
            commands::turn::set_budget,
            commands::turn::join_spend_batch,
            commands::turn::list_commands,
            commands::extensions::get_extensions,
            commands::extensions::trust_project_hooks,
            commands::extensions::enable_claude_user_files,
            commands::session::set_mode,
            commands::session::answer_approval,
            commands::session::allow_in_project,
            commands::session::approval_card_at,
            commands::session::answer_question,
            commands::session::answer_plan,
            commands::session::answer_directory,
            commands::session::answer_elicitation,
            commands::session::edit_preview,
            commands::session::tool_result,
            commands::session::permission_rules,
            commands::session::revoke_tool,
            commands::session::revoke_command,
            commands::session::revoke_rule,
            commands::settings::get_settings,
            commands::settings::save_settings,
            commands::settings::set_setting,
            commands::settings::unset_setting,
            commands::vault::vault_list,
            commands::vault::vault_set,
            commands::vault::vault_remove,
            commands::settings::set_api_key,
            commands::settings::remove_api_key,
            commands::settings::trust_mcp_server,
            commands::settings::connect_mcp_server,
            commands::settings::usage_report,
            commands::endpoint::check_endpoint,
            commands::timeline::session_timeline,
            commands::timeline::checkpoint_diff,
            commands::timeline::restore_checkpoint,
            commands::timeline::rewind_conversation,
            commands::terminal::terminal_list,
            commands::terminal::terminal_open,
            commands::terminal::terminal_attach,
            commands::terminal::terminal_write,
            commands::terminal::terminal_resize,
            commands::terminal::terminal_close,
            commands::clipboard::clipboard_read,
            commands::clipboard::clipboard_write,
            commands::app::new_window,
            commands::files::list_dir,
            commands::files::workspace_files,
            commands::files::watch_files,
            commands::files::read_attachment,
            commands::worktrees::new_worktree_session,
            commands::worktrees::worktree_review,
            commands::worktrees::review_message,
            commands::worktrees::apply_worktree,
            commands::worktrees::propose_commit,
            commands::worktrees::commit_worktree,
            commands::worktrees::remove_worktree,
            commands::worktrees::worktree_disk,
            commands::worktrees::set_worktree_budget,
            commands::worktrees::update_worktree,
            commands::worktrees::handoff_session,
            commands::app::open_link,
            commands::diagnostics::run_diagnostics,
        ])
}

/// Closes a window's sessions: takes them out of the window's slot, denies what is
/// pending, interrupts their turns (killing their processes) and saves them. `None` when the
/// window had none.
pub fn close_window_session(
    state: &AppState,
    label: &str,
) -> Option<tauri::async_runtime::JoinHandle<()>> {
    let slot = state.take_slot(label)?;
    let all: Vec<_> = slot.session.into_iter().chain(slot.background).collect();
    if all.is_empty() {
        return None;
    }
    for session in &all {
        session.pending().close();
        session.interrupt();
    }
    let host = state.host.clone();
    Some(tauri::async_runtime::spawn(async move {
        for session in all {
            if let Err(e) = host.close(&session.id()).await {
                tracing::warn!(error = %e, "could not save the session on close");
            }
        }
    }))
}

/// How many sessions of window `label` (of every window: `None`) a close would stop: turns
/// running, waiting for a slot or for the user.
pub fn running_sessions(state: &AppState, label: Option<&str>) -> usize {
    state
        .open_sessions()
        .iter()
        .filter(|(l, r)| label.is_none_or(|w| w == l) && r.is_active())
        .count()
}

/// Asks first (a native dialog) when closing or quitting would stop `running` sessions;
/// `proceed` runs if the user agrees (their turns are then interrupted and saved).
pub fn ask_before_stopping(
    state: &AppState,
    running: usize,
    quitting: bool,
    proceed: Box<dyn FnOnce() + Send>,
) {
    let sessions = if running == 1 {
        "1 session is".to_string()
    } else {
        format!("{running} sessions are")
    };
    let (title, yes) = if quitting {
        ("Quit Cairn?", "Stop and quit")
    } else {
        ("Close this window?", "Stop and close")
    };
    let message = format!(
        "{sessions} still working. Their turns will be stopped and saved; you can continue them later."
    );
    state.dialogs.confirm(
        title,
        &message,
        yes,
        Box::new(move |ok| {
            if ok {
                proceed();
            }
        }),
    );
}

/// Quits (File → Quit, Ctrl+Q), asking first while sessions run.
pub fn quit<R: Runtime>(app: &tauri::AppHandle<R>) {
    let state = app.state::<AppState>();
    let running = running_sessions(&state, None);
    if running == 0 {
        app.exit(0);
        return;
    }
    let app = app.clone();
    ask_before_stopping(&state, running, true, Box::new(move || app.exit(0)));
}

/// Closing a window closes its sessions first: the close is held until their turns stopped,
/// pending requests were denied and the sessions were saved. While sessions run, the user is
/// asked first.
fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    match event {
        WindowEvent::CloseRequested { api, .. } => {
            let state = window.state::<AppState>();
            let running = running_sessions(&state, Some(window.label()));
            if running > 0 && !state.take_close_confirmed(window.label()) {
                api.prevent_close();
                let w = window.clone();
                ask_before_stopping(
                    &state,
                    running,
                    false,
                    Box::new(move || {
                        w.state::<AppState>().confirm_close(w.label());
                        if let Err(e) = w.close() {
                            tracing::warn!(error = %e, "cannot close the window");
                        }
                    }),
                );
                return;
            }
            // A window closed while others stay open is not reopened at the next start.
            let others = window.app_handle().webview_windows().len() > 1;
            let closing = close_window_session(&state, window.label());
            if others && window.label() != windows::MAIN {
                windows::remember(&state);
            }
            let Some(closing) = closing else {
                return;
            };
            api.prevent_close();
            let window = window.clone();
            tauri::async_runtime::spawn(async move {
                let _ = closing.await;
                if let Err(e) = window.destroy() {
                    tracing::warn!(error = %e, "cannot close the window");
                }
            });
        }
        WindowEvent::Destroyed => {
            // A window destroyed without a close request (app exit): close its session too.
            let state = window.state::<AppState>();
            let _ = close_window_session(&state, window.label());
        }
        _ => {}
    }
}

/// Without a GPU (no `/dev/dri`, e.g. a VM or Xvfb), WebKitGTK's accelerated compositing
/// falls back to software GL and paints several times slower than its plain software path,
/// and its DMA-BUF renderer only adds a software GL stack to the app process (~5 MiB, no
/// speed-up); pick the plain path unless the user chose (either variable set). Call before
/// any thread starts.
pub fn prefer_software_rendering() -> bool {
    let no_gpu = cfg!(target_os = "linux") && !std::path::Path::new("/dev/dri").exists();
    if !no_gpu {
        return false;
    }
    let mut changed = false;
    for var in [
        "WEBKIT_DISABLE_COMPOSITING_MODE",
        "WEBKIT_DISABLE_DMABUF_RENDERER",
    ] {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, "1");
            changed = true;
        }
    }
    // Painting in software, the app process has no use for Mesa (the web process keeps it).
    if std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_some_and(|v| v != "0") {
        changed |= egl::keep_software_gl_out_of_app_process();
    }
    changed
}

/// The prompt language follows the UI language saved in the settings: the runtime reads the
/// `language` key of the user's `config.toml` (which the Settings write) whenever it builds a
/// session's prompt, after `CAIRN_LANG`; so there is nothing to set at start any more, and a
/// change made in the Settings applies to the next session. Kept for the start-up sequence.
pub fn apply_prompt_language() {}

/// Starts the desktop app and blocks until its last window closes.
pub fn run() {
    let config = AppConfig::from_env();
    // Dropped in the exit handler, so the log's last lines are flushed before the process ends.
    let log_guard = std::sync::Mutex::new(logging::init(&config.state_dir));
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        state_dir = %config.state_dir.display(),
        approvals = ?config.host,
        webkit_compositing = std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none(),
        "Cairn desktop starting"
    );
    if config.host != types::ApprovalHost::Native {
        tracing::warn!(host = ?config.host, "CAIRN_TEST_APPROVER is set: approvals do not use native dialogs");
    }
    let app = register(tauri::Builder::default(), config).build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(error) => {
            tracing::error!(%error, "cannot start the desktop app");
            eprintln!("cairn: cannot start the desktop app: {error}");
            std::process::exit(1);
        }
    };
    app.run(move |handle, event| {
        if let tauri::RunEvent::Exit = event {
            // Save every session still open (their turns are interrupted first).
            let host = handle.state::<AppState>().host.clone();
            tauri::async_runtime::block_on(async move { host.shutdown().await });
            tracing::info!("Cairn desktop stopped");
            drop(log_guard.lock().unwrap_or_else(|e| e.into_inner()).take());
        }
    });
}
