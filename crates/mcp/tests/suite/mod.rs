//! The former integration-test files, one module each.

mod asks;
mod auth;
mod builtin;
pub(crate) mod everything;
mod faults;
mod http;
mod malformed;
mod session;
mod stdio;
