//! `cairn acp`: an Agent Client Protocol (v1) agent over stdio, for editors (Zed, JetBrains,
//! Neovim, Emacs) and other ACP clients. A face that is transport only, like `cairn serve`:
//! every ACP session is a [`cairn_runtime::host::SessionHandle`]; `session/prompt` goes
//! through [`SessionHandle::submit`](cairn_runtime::host::SessionHandle::submit), approvals
//! are answered by their `requestId`, `session/load` replays the history API, and the
//! session's events become `session/update` notifications.
//!
//! The SDK (`agent-client-protocol` 5.2) runs its dispatch loop on any tokio runtime; its
//! handlers hold that loop, so a turn runs in a task of its own and answers its
//! `session/prompt` when it ends.

mod buffers;
mod config;
mod handlers;
mod mcp;
mod modes;
mod permission;
mod prompt;
mod state;
mod turn;
mod updates;

use std::sync::Arc;

use agent_client_protocol::ByteStreams;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

pub use crate::config::{AcpConfig, LlmFactory};
use crate::state::State;

/// Why the agent stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The connection failed (the transport broke).
    #[error("ACP connection: {0}")]
    Connection(String),
}

/// An ACP agent over one connection: the sessions it opened live in its host.
#[derive(Clone)]
pub struct AcpAgent {
    state: Arc<State>,
    /// Ends serving as the end of input does ([`AcpAgent::stop`]).
    stop: tokio_util::sync::CancellationToken,
}

impl AcpAgent {
    /// An agent with no session open.
    pub fn new(config: AcpConfig) -> AcpAgent {
        AcpAgent {
            state: Arc::new(State::new(config)),
            stop: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Serves JSON-RPC lines read from `input`, writing to `output`, until `input` ends;
    /// then closes every session (saved).
    pub async fn serve<R, W>(&self, input: R, output: W) -> Result<(), AcpError>
    where
        R: tokio::io::AsyncRead + Send + 'static,
        W: tokio::io::AsyncWrite + Send + 'static,
    {
        let transport = ByteStreams::new(output.compat_write(), input.compat());
        let connection = handlers::agent(self.state.clone()).connect_to(transport);
        let served = tokio::select! {
            served = connection => served,
            _ = self.stop.cancelled() => Ok(()),
        };
        // Every session is closed (saved) before serving ends, also after a stop.
        self.shutdown().await;
        served.map_err(|e| AcpError::Connection(e.to_string()))
    }

    /// Interrupts every running turn (what SIGINT does: the client cancels, the agent
    /// stays).
    pub fn interrupt_all(&self) {
        self.state.interrupt_all();
    }

    /// Makes [`AcpAgent::serve`] end as if its input had ended: running turns are
    /// interrupted, every session is closed and saved, then `serve` returns (SIGTERM).
    pub fn stop(&self) {
        self.interrupt_all();
        self.stop.cancel();
    }

    /// Closes every session (saved); what the end of input and SIGTERM do.
    pub async fn shutdown(&self) {
        self.state.host.shutdown().await;
    }
}
