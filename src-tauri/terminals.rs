//! The terminal panel's side of the PTY manager: the user's terminals of a workspace (the same
//! ones the agent's `terminal_list` / `terminal_read` see there) and the agent's command
//! sessions of a window's session, which the user can take over to answer a prompt. Output
//! goes to the page over a channel: what was printed so far, then live chunks.

use std::path::Path;
use std::sync::Arc;

use cairn_tools::{CommandSessions, TerminalManager, TerminalSource};
use tokio::sync::broadcast;

use crate::types::{TerminalKind, TerminalTab};

/// The project id the terminals of `workspace` are filed under (its canonical path).
pub fn project_id(workspace: &Path) -> String {
    workspace.display().to_string()
}

/// Whether `id` names an agent command session (`cmd-N`) rather than a user terminal.
pub fn is_command_session(id: &str) -> bool {
    id.starts_with("cmd-")
}

/// The tabs the panel can show for `workspace`: the user's terminals, then the agent's
/// command sessions of the window's session.
pub fn tabs(
    manager: &TerminalManager,
    workspace: &Path,
    commands: Option<&CommandSessions>,
) -> Vec<TerminalTab> {
    let mut out: Vec<TerminalTab> = manager
        .list(&project_id(workspace))
        .into_iter()
        .map(|t| TerminalTab {
            id: t.id,
            title: t.title,
            kind: TerminalKind::User,
            running: t.running,
        })
        .collect();
    if let Some(c) = commands {
        out.extend(c.list().into_iter().map(|s| TerminalTab {
            id: s.id,
            title: s.command,
            kind: TerminalKind::Agent,
            running: s.running,
        }));
    }
    out
}

/// Sends `replay` and then every live chunk of `live` to `send` until the output ends or
/// `send` fails (the page is gone). Chunks lost to a slow page are skipped, not fatal.
pub async fn pump<F, E>(replay: Vec<u8>, mut live: broadcast::Receiver<Arc<[u8]>>, mut send: F)
where
    F: FnMut(Vec<u8>) -> Result<(), E>,
{
    if !replay.is_empty() && send(replay).is_err() {
        return;
    }
    loop {
        match live.recv().await {
            Ok(chunk) => {
                if send(chunk.to_vec()).is_err() {
                    return;
                }
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::debug!(skipped = n, "terminal view fell behind");
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn command_sessions_are_told_apart_from_terminals() {
        assert!(is_command_session("cmd-2"));
        assert!(!is_command_session("term-2"));
    }

    #[tokio::test]
    async fn the_pump_replays_then_forwards_until_closed() {
        let (tx, rx) = broadcast::channel(8);
        tx.send(Arc::from(&b"live"[..])).unwrap();
        drop(tx);
        let mut got = Vec::new();
        pump(b"old".to_vec(), rx, |c| {
            got.push(String::from_utf8(c).unwrap());
            Ok::<(), String>(())
        })
        .await;
        assert_eq!(got, ["old", "live"]);
    }

    #[tokio::test]
    async fn the_pump_stops_when_the_page_is_gone() {
        let (tx, rx) = broadcast::channel(8);
        let mut calls = 0;
        pump(b"old".to_vec(), rx, |_| {
            calls += 1;
            Err("gone".to_string())
        })
        .await;
        assert_eq!(calls, 1);
        drop(tx);
    }

    #[tokio::test]
    async fn a_users_terminal_is_listed_for_its_workspace_only() {
        let ws = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let manager = TerminalManager::new();
        let opts = cairn_tools::TerminalOptions {
            argv: vec!["sh".into()],
            ..cairn_tools::TerminalOptions::shell(ws.path())
        };
        let info = manager.open(&project_id(ws.path()), opts).unwrap();
        let listed = tabs(&manager, ws.path(), None);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, info.id);
        assert_eq!(listed[0].kind, TerminalKind::User);
        assert!(tabs(&manager, other.path(), None).is_empty());
        manager.close_project(&project_id(ws.path())).await;
    }
}
