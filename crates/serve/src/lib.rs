//! `cairn serve`: the session host behind HTTP + Server-Sent Events, as the contract
//! `serve.md` specifies (seed §9.3, §18.1, §18.3, §19). A face that is transport only: every
//! session is a [`cairn_runtime::host::SessionHandle`]; routes map to its calls and its event
//! stream becomes SSE frames carrying the lines `cairn run --json` prints.

mod approver;
mod body;
pub mod config;
mod error;
mod guard;
mod hub;
mod listen;
mod live;
mod openapi;
mod routes;
mod runs;
mod server;
mod sse;
mod state;
mod tenants;
mod token;

pub use config::{ApprovePolicy, LlmSource, ServeConfig, ServeError};
pub use openapi::{document as openapi_document, ROUTES};
pub use server::{run, start, Running};
