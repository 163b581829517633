//! The former integration-test files, one module each.

mod auth;
mod builtin;
mod everything;
mod faults;
mod http;
mod malformed;
mod session;
mod stdio;
